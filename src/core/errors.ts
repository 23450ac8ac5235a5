/**
 * One error type for everything engram raises on purpose.
 *
 * Like the AI SDK's errors: a stable string `code` callers can switch on, a `category` that says
 * whose move it is (`user`: fix your input or config; `system`: the machine or a file; `provider`:
 * the LLM or embedding service), the `cause`, structured `details`, and a `fix` sentence.
 * `EngramError.is()` works across copies of the package (a `Symbol.for` marker, not `instanceof`).
 *
 * `message` says what happened and `fix` what to do, each a field of its own (decision 0062):
 * every interface carries them apart (the CLI's JSON, HTTP error bodies, tool results), and what a
 * person reads joins them as `describeError` does ("message\nFix: fix").
 */
const marker = Symbol.for('engram.error')

export type ErrorCategory = 'user' | 'system' | 'provider'

export interface EngramErrorOptions {
  code: ErrorCode
  message: string
  category: ErrorCategory
  /** What the reader should do about it; name the option and the environment variable. */
  fix?: string
  /**
   * The fix for a person at the command line, when `fix` names what only the agent has (a tool:
   * `search_memory`, `profile_get`) or the library's methods. The CLI prints it instead of `fix`
   * (decision 0074); every other interface prints `fix`.
   */
  cliFix?: string
  details?: Record<string, unknown>
  cause?: unknown
}

export class EngramError extends Error {
  readonly [marker] = true
  readonly code: ErrorCode
  readonly category: ErrorCategory
  readonly fix: string | undefined
  readonly cliFix: string | undefined
  readonly details: Record<string, unknown>

  constructor(options: EngramErrorOptions) {
    super(options.message, { cause: options.cause })
    this.name = 'EngramError'
    this.code = options.code
    this.category = options.category
    this.fix = options.fix
    this.cliFix = options.cliFix
    this.details = options.details ?? {}
  }

  static is(value: unknown): value is EngramError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      category: this.category,
      message: this.message,
      fix: this.fix,
      details: this.details,
    }
  }
}

/** Stable error codes. Adding one is a decision: callers and the CLI's exit codes depend on them. */
export const ErrorCode = {
  configInvalid: 'config_invalid',
  homeInvalid: 'home_invalid',
  notFound: 'not_found',
  invalidArgument: 'invalid_argument',
  /** An input over one of the size limits (`limits.*`, decision 0026). */
  limitExceeded: 'limit_exceeded',
  pathOutsideMemory: 'path_outside_memory',
  /** A read or write of another user's memory (decision 0017). */
  accessDenied: 'access_denied',
  /** A request to `engram serve` without a valid credential (decision 0038). */
  unauthorized: 'unauthorized',
  lockBusy: 'lock_busy',
  storageCorrupt: 'storage_corrupt',
  storageUnavailable: 'storage_unavailable',
  unsupported: 'unsupported',
  llmNotConfigured: 'llm_not_configured',
  llmCallFailed: 'llm_call_failed',
  llmTimeout: 'llm_timeout',
  llmInvalidOutput: 'llm_invalid_output',
  embedFailed: 'embed_failed',
  /** A failure engram did not expect (a bug): anything thrown that is not an EngramError. */
  internal: 'internal',
  /** A command line the CLI cannot parse (its `--json` answer and exit code 2). */
  usage: 'usage',
} as const
/** One of the stable codes: `EngramError.code` is always one of these. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]
/** `ErrorCode` under its earlier name. */
export type ErrorCodeValue = ErrorCode

/** What a person reads of an EngramError: its message, then "Fix: …" on a line of its own when it has one. */
export function withFix(message: string, fix: string | undefined): string {
  return fix ? `${message}\nFix: ${fix}` : message
}

/** A readable description of any thrown value, for logs and tool results (an EngramError's fix included). */
export function describeError(error: unknown): string {
  if (EngramError.is(error)) return withFix(error.message, error.fix)
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return String(error)
}

/** The message of any thrown value as a person reads it: an EngramError's followed by its fix. */
export function messageOf(error: unknown): string {
  if (EngramError.is(error)) return withFix(error.message, error.fix)
  return error instanceof Error ? error.message : String(error)
}
