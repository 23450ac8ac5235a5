/**
 * Every failed call to the LLM or the embedder, seen in one place. The memory systems catch model
 * failures and take their deterministic path (principle 4), which is right for the turn and wrong
 * for the operator: a wrong API key used to degrade every summary in silence. `watchLlm` and
 * `watchEmbedder` wrap the models `createMind` hands out, describe each failure (what kind, which
 * task, the fix) to an observer, and rethrow it untouched, so every caller behaves as before.
 *
 * An authentication failure (HTTP 401/403) is not retried by anyone: the provider code already
 * treats it as final within a call, and after one the wrapper stops calling that model for
 * AUTH_PAUSE_MS — each call in that time fails at once with the same error (still reported), and
 * no request goes out. A wrong key does not heal by asking again; a key fixed on the provider's
 * side (billing, permissions) is picked up after the pause.
 */
import type { Clock } from '../core/clock.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { Embedder, GenerateObjectOptions, GenerateTextOptions, Llm } from './contracts.ts'

/** How long a model that refused its key is left alone. */
export const AUTH_PAUSE_MS = 10 * 60_000

export type ModelSource = 'llm' | 'embedder'

export type ModelFailureKind = 'auth' | 'rate_limit' | 'server_error' | 'rejected' | 'timeout' | 'network' | 'invalid_output' | 'other'

/** One failed model call, described for people: what, where, and what to do. */
export interface ModelFailure {
  source: ModelSource
  kind: ModelFailureKind
  /** The engram error code (`llm_call_failed`, `llm_timeout`, `embed_failed`, …; `internal` for anything else thrown). */
  code: ErrorCode
  /** The HTTP status, when the server answered. */
  status?: number
  /** What the call was for: the structured output's name (`episode`, `identity_facts`) or the embedding purpose. */
  task?: string
  /** One line, the same for every failure of its kind: `LLM authentication failed (HTTP 401)`. */
  title: string
  /** What happened, as the provider code said it (the API key already redacted). */
  message: string
  /** What to do, naming the option and its environment variable. */
  fix: string
  /** Not sent: the model is paused after refusing its key (AUTH_PAUSE_MS). */
  paused?: boolean
}

type FailureObserver = (failure: ModelFailure) => void | Promise<void>

export interface WatchOptions {
  onFailure: FailureObserver
  clock: Clock
}

const NAMES: Readonly<Record<ModelSource, string>> = { llm: 'LLM', embedder: 'embedder' }

/**
 * Describe a thrown value as a model failure, or `undefined` when it is not one: a call to the
 * `none` LLM is a programming slip the caller already guards against, not a model failing.
 */
function describeModelFailure(source: ModelSource, error: unknown, task?: string): ModelFailure | undefined {
  if (EngramError.is(error) && error.code === ErrorCode.llmNotConfigured) return undefined
  const code = EngramError.is(error) ? error.code : ErrorCode.internal
  const rawStatus = EngramError.is(error) ? error.details.status : undefined
  const status = typeof rawStatus === 'number' ? rawStatus : undefined
  // The message alone: the fix is the failure's own (`fix` below), worded for its kind.
  const message = withoutContent(error instanceof Error ? error.message : String(error))
  const kind = kindOf(code, status, message)
  const name = NAMES[source]
  const http = status !== undefined ? ` (HTTP ${status})` : ''
  const titles: Record<ModelFailureKind, string> = {
    auth: `${name} authentication failed${http}`,
    rate_limit: `${name} rate limit reached${http}`,
    server_error: `${name} server error${http}`,
    rejected: `${name} request rejected${http}`,
    timeout: `${name} timed out`,
    network: `${name} unreachable`,
    invalid_output: source === 'llm' ? 'LLM answered with invalid output' : 'embedder answered with an unusable response',
    other: `${name} call failed${http}`,
  }
  const ownFix = EngramError.is(error) ? error.fix : undefined
  return {
    source,
    kind,
    code,
    ...(status !== undefined ? { status } : {}),
    ...(task !== undefined ? { task } : {}),
    title: titles[kind],
    message,
    fix: kind === 'auth' ? authFix(source) : (ownFix ?? genericFix(source)),
    ...(EngramError.is(error) && error.details.paused === true ? { paused: true } : {}),
  }
}

/** Longest failure message kept: a provider's error text, not a document. */
const FAILURE_MESSAGE_CHARS = 400

/**
 * A failure is recorded where every session of the agent reads it (the next turn's warnings,
 * doctor), whoever's work failed, so it must not carry what the model was shown or answered: that
 * is one user's memory (decision 0017). The excerpt of an invalid answer is dropped; a long
 * provider message is cut.
 */
export function withoutContent(message: string): string {
  const cut = message.replace(/\. Answer began: [\s\S]*$/, '. (The answer is not kept: it may hold what a user said.)')
  return cut.length > FAILURE_MESSAGE_CHARS ? `${cut.slice(0, FAILURE_MESSAGE_CHARS - 1)}…` : cut
}

function kindOf(code: string, status: number | undefined, message: string): ModelFailureKind {
  if (status === 401 || status === 403) return 'auth'
  if (status === 429) return 'rate_limit'
  if (status !== undefined && status >= 500) return 'server_error'
  if (status !== undefined && status >= 400) return 'rejected'
  if (code === ErrorCode.llmTimeout || /no answer within/.test(message)) return 'timeout'
  if (code === ErrorCode.llmInvalidOutput || /not JSON|not a list of numbers|dimensions but|expected \d+ embeddings/.test(message)) return 'invalid_output'
  if (/network error|fetch failed|ECONNREFUSED|ENOTFOUND/i.test(message)) return 'network'
  return 'other'
}

function authFix(source: ModelSource): string {
  return source === 'llm'
    ? 'set a valid key in llm.apiKey / ENGRAM_LLM_API_KEY (the server refused this one: wrong, expired, or without access to llm.model / ENGRAM_LLM_MODEL); until then summaries, episodes and lessons use the offline paths, marked as such'
    : 'set a valid key in embed.apiKey / ENGRAM_EMBED_API_KEY (the server refused this one), or use the built-in embedder with ENGRAM_EMBED_PROVIDER=offline; until then recall is lexical only'
}

function genericFix(source: ModelSource): string {
  return source === 'llm' ? 'check the llm.* settings (ENGRAM_LLM_*) and run `engram doctor`' : 'check the embed.* settings (ENGRAM_EMBED_*) and run `engram doctor`'
}

/**
 * Runs calls of one model, reporting each failure, and pausing the model after an authentication
 * failure (see the file comment).
 */
function createGuard(source: ModelSource, options: WatchOptions) {
  let refused: { at: number; until: number; failure: ModelFailure } | undefined

  async function report(failure: ModelFailure): Promise<void> {
    try {
      await options.onFailure(failure)
    } catch {
      // Reporting a failure must never replace it with another one.
    }
  }

  return async function guarded<T>(task: string | undefined, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    const now = options.clock.now().getTime()
    if (refused && now < refused.until) {
      const error = pausedError(source, refused)
      const failure = describeModelFailure(source, error, task)
      if (failure) await report(failure)
      throw error
    }
    try {
      return await call()
    } catch (error) {
      // The caller's own abort is its decision, not the model failing.
      if (signal?.aborted) throw error
      const failure = describeModelFailure(source, error, task)
      if (failure) {
        if (failure.kind === 'auth') refused = { at: now, until: now + AUTH_PAUSE_MS, failure }
        await report(failure)
      }
      throw error
    }
  }
}

function pausedError(source: ModelSource, refused: { at: number; until: number; failure: ModelFailure }): EngramError {
  const what = source === 'llm' ? 'the LLM' : 'the embedder'
  return new EngramError({
    code: refused.failure.code,
    category: 'provider',
    message: `${what} was not called: it refused its API key at ${new Date(refused.at).toISOString()}${refused.failure.status !== undefined ? ` (HTTP ${refused.failure.status})` : ''}, and engram asks again after ${new Date(refused.until).toISOString()} (a wrong key does not heal by retrying)`,
    fix: refused.failure.fix,
    details: { ...(refused.failure.status !== undefined ? { status: refused.failure.status } : {}), paused: true },
  })
}

/** The same LLM, with every failed call described to `onFailure` (and rethrown as it was). */
export function watchLlm(llm: Llm, options: WatchOptions): Llm {
  if (!llm.available) return llm
  const guarded = createGuard('llm', options)
  return {
    specificationVersion: llm.specificationVersion,
    provider: llm.provider,
    available: llm.available,
    modelFor: (tier) => llm.modelFor(tier),
    generateObject: <T>(call: GenerateObjectOptions<T>) => guarded(call.name, call.signal, () => llm.generateObject(call)),
    generateText: (call: GenerateTextOptions) => guarded('text', call.signal, () => llm.generateText(call)),
  }
}

/**
 * The same embedder, with every failed call described to `onFailure` (and rethrown as it was).
 * The built-in offline embedders are returned as they are: they compute in this process, call no
 * service, and retrieval finds their word vectors by the embedder's identity.
 */
export function watchEmbedder(embedder: Embedder, options: WatchOptions): Embedder {
  if (embedder.kind === 'offline') return embedder
  const guarded = createGuard('embedder', options)
  return {
    specificationVersion: embedder.specificationVersion,
    id: embedder.id,
    dimensions: embedder.dimensions,
    kind: embedder.kind,
    embed: (texts, purpose) => guarded(purpose === undefined ? 'embedding' : `${purpose} embedding`, undefined, () => embedder.embed(texts, purpose)),
  }
}
