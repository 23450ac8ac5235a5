/**
 * Turning whatever the AI SDK or the network throws into our four LLM error codes, and deciding
 * what is worth retrying. The API key never appears in a message: every string built from a
 * provider's answer passes through `redact`.
 */
import { APICallError, InvalidResponseDataError, JSONParseError, NoContentGeneratedError, NoObjectGeneratedError, NoOutputGeneratedError, TypeValidationError } from 'ai'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { excerpt } from './structured-output.ts'

/** What an error message needs to know about the call; `apiKey` only so it can be redacted. */
export interface LlmCallContext {
  provider: string
  model: string
  baseUrl: string | undefined
  apiKey: string | undefined
}

/** How a thrown value is handled. */
export type FailureKind =
  | { kind: 'retryable'; status: number | undefined; message: string; retryAfterMs: number | undefined }
  | { kind: 'http'; status: number | undefined; message: string }
  /** `fromModel`: `text` is what the model wrote (worth a careful re-read); else a broken API response. */
  | { kind: 'invalid_output'; message: string; text: string | undefined; fromModel: boolean }

export const LLM_FIX_CALL =
  'check llm.baseUrl / ENGRAM_LLM_BASE_URL, llm.apiKey / ENGRAM_LLM_API_KEY and the model name (llm.model / ENGRAM_LLM_MODEL, llm.fastModel / ENGRAM_LLM_FAST_MODEL)'

/** Classify an error thrown by one AI SDK call (made with `maxRetries: 0`). */
export function classifyFailure(error: unknown): FailureKind {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode
    // A 2xx whose body is not a valid API response: the server answered, with garbage.
    if (status !== undefined && status >= 200 && status < 300) {
      return { kind: 'invalid_output', message: `the server's response is not a valid API response (${firstLine(error.message)})`, text: error.responseBody, fromModel: false }
    }
    const message = providerMessage(error)
    if (error.isRetryable) return { kind: 'retryable', status, message, retryAfterMs: retryAfterMs(error.responseHeaders) }
    return { kind: 'http', status, message }
  }
  if (NoObjectGeneratedError.isInstance(error)) return { kind: 'invalid_output', message: 'the answer is not JSON matching the schema', text: error.text, fromModel: true }
  if (NoContentGeneratedError.isInstance(error) || NoOutputGeneratedError.isInstance(error)) return { kind: 'invalid_output', message: 'the model returned no output', text: undefined, fromModel: false }
  if (TypeValidationError.isInstance(error) || InvalidResponseDataError.isInstance(error) || JSONParseError.isInstance(error)) {
    return { kind: 'invalid_output', message: `the server's response does not have the expected shape (${firstLine(error.message)})`, text: undefined, fromModel: false }
  }
  // Anything else escaped the SDK's own wrapping (an unexpected fetch failure): worth one more try.
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  return { kind: 'retryable', status: undefined, message, retryAfterMs: undefined }
}

/** The provider's own error text with its status, e.g. `HTTP 503: overloaded`. */
function providerMessage(error: APICallError): string {
  const status = error.statusCode !== undefined ? `HTTP ${error.statusCode}` : 'network error'
  return `${status}: ${firstLine(error.message)}`
}

function retryAfterMs(headers: Record<string, string> | undefined): number | undefined {
  if (!headers) return undefined
  const ms = Number(headers['retry-after-ms'])
  if (Number.isFinite(ms) && ms >= 0) return ms
  const seconds = Number(headers['retry-after'])
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  return undefined
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? ''
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}

/** Remove the API key from any text that could hold it (providers sometimes echo it back). */
export function redact(text: string, context: LlmCallContext): string {
  const key = context.apiKey
  if (!key || key.length < 4) return text
  return text.split(key).join('[redacted]')
}

export function llmTimeoutError(context: LlmCallContext, timeoutMs: number): EngramError {
  return new EngramError({
    code: ErrorCode.llmTimeout,
    category: 'provider',
    message: `the ${context.provider} model ${context.model} did not answer within ${timeoutMs} ms`,
    fix: 'raise llm.timeoutMs / ENGRAM_LLM_TIMEOUT_MS, use a faster model, or check that the server at llm.baseUrl / ENGRAM_LLM_BASE_URL is running',
    details: { provider: context.provider, model: context.model, timeoutMs },
  })
}

export function llmCallFailedError(context: LlmCallContext, failure: Extract<FailureKind, { kind: 'retryable' | 'http' }>, attempts: number): EngramError {
  const where = context.baseUrl ? ` at ${context.baseUrl}` : ''
  return new EngramError({
    code: ErrorCode.llmCallFailed,
    category: 'provider',
    message: redact(`the ${context.provider} model ${context.model}${where} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${failure.message}`, context),
    fix: LLM_FIX_CALL,
    details: { provider: context.provider, model: context.model, status: failure.status, attempts },
  })
}

export function llmInvalidOutputError(context: LlmCallContext, message: string, text: string | undefined): EngramError {
  const shown = redact(excerpt(text), context)
  return new EngramError({
    code: ErrorCode.llmInvalidOutput,
    category: 'provider',
    message: redact(`the ${context.provider} model ${context.model} returned invalid output: ${message}. Answer began: ${shown}`, context),
    fix: 'use a model that follows JSON instructions (llm.model / ENGRAM_LLM_MODEL); for a local server, check that it supports response_format or JSON mode',
    details: { provider: context.provider, model: context.model, excerpt: shown },
  })
}
