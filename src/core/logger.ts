/**
 * engram's log: a few lines on stderr about what went wrong or degraded (a model that refused its
 * key, background work that failed), at the level `log.level` / `ENGRAM_LOG_LEVEL` asks for.
 *
 * Our own ~80 lines rather than pino (decision 0021): engram writes a handful of lines, never on
 * a hot loop, so pino's speed and worker transports buy nothing, and it would bring ten packages.
 * The methods take `(fields, message)` — the calling convention of pino and bunyan — so a host
 * passes its own logger to `createMind({ logger })` and engram's lines join its log; and the JSON
 * lines we write have pino's shape (`level` as a number, `time` in ms, `msg`), so the tools that
 * read pino's output read ours. Nothing is ever written to stdout: MCP speaks on it.
 */
import { EngramError } from './errors.ts'

export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export type LogFields = Record<string, unknown>

/** Where engram's log lines go. Each method takes structured fields first, then the message. */
export interface Logger {
  error(fields: LogFields, message: string): void
  warn(fields: LogFields, message: string): void
  info(fields: LogFields, message: string): void
  debug(fields: LogFields, message: string): void
}

type Method = Exclude<LogLevel, 'silent'>
const METHODS: readonly Method[] = ['error', 'warn', 'info', 'debug']
/** pino's numbers, so its tools can read our JSON lines. */
const PINO_LEVEL: Readonly<Record<Method, number>> = { error: 50, warn: 40, info: 30, debug: 20 }
const RANK: Readonly<Record<LogLevel, number>> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 }

export interface LineLoggerOptions {
  level: LogLevel
  /** Receives each finished line, newline included (stderr in production, an array in tests). */
  write(line: string): void
  /**
   * `json` (default): one pino-shaped object per line, for collectors and pipes. `text`: for a
   * person at a terminal, `engram warn: message (key=value …)`.
   */
  format?: 'json' | 'text'
  now?: () => Date
}

/** A logger that writes one line per call at `level` or more severe. Never throws. */
export function createLineLogger(options: LineLoggerOptions): Logger {
  const now = options.now ?? (() => new Date())
  const line = (method: Method, fields: LogFields, message: string): string => {
    if (options.format === 'text') {
      const shown = Object.entries(fields)
        .filter(([, value]) => value !== undefined && (typeof value !== 'object' || value === null))
        .map(([key, value]) => `${key}=${String(value)}`)
      return `engram ${method}: ${message}${shown.length > 0 ? ` (${shown.join(' ')})` : ''}\n`
    }
    return `${safeJson({ level: PINO_LEVEL[method], time: now().getTime(), name: 'engram', ...fields, msg: message })}\n`
  }
  return levelled(options.level, (method, fields, message) => {
    try {
      options.write(line(method, fields, message))
    } catch {
      // A closed or broken stderr must not turn a log line into a failure of the work it describes.
    }
  })
}

/** A host's logger, called only for lines at `level` or more severe. */
export function withLevel(logger: Logger, level: LogLevel): Logger {
  return levelled(level, (method, fields, message) => {
    try {
      logger[method](fields, message)
    } catch {
      // Same as above: the host's logger failing is not engram's work failing.
    }
  })
}

function levelled(level: LogLevel, emit: (method: Method, fields: LogFields, message: string) => void): Logger {
  const entries = METHODS.map((method) => [method, RANK[method] <= RANK[level] ? (fields: LogFields, message: string) => emit(method, fields, message) : () => {}] as const)
  return Object.fromEntries(entries) as unknown as Logger
}

function safeJson(value: Record<string, unknown>): string {
  try {
    return JSON.stringify(value, (_key, field: unknown) => (typeof field === 'bigint' ? field.toString() : field instanceof Error ? { name: field.name, message: field.message, ...(EngramError.is(field) && field.fix ? { fix: field.fix } : {}) } : field))
  } catch {
    return JSON.stringify({ level: value.level, time: value.time, name: 'engram', msg: String(value.msg) })
  }
}
