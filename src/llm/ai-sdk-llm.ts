/**
 * The `Llm` implementation over an AI SDK language model: two tiers, one deadline per call, our
 * own retries (the SDK's are turned off so the deadline, the backoff and the error codes are ours),
 * and structured output that is validated again before it is returned.
 */
import { generateText, type LanguageModel, Output } from 'ai'
import type { z } from 'zod'
import { EngramError } from '../core/errors.ts'
import type { GenerateObjectOptions, GenerateTextOptions, Llm, LlmMessage, LlmTier } from './contracts.ts'
import { classifyFailure, type FailureKind, type LlmCallContext, llmCallFailedError, llmInvalidOutputError, llmTimeoutError } from './llm-errors.ts'
import { salvageStructuredOutput, structuredSystemPrompt } from './structured-output.ts'

type ProviderOptions = NonNullable<Parameters<typeof generateText>[0]['providerOptions']>

export interface AiSdkLlmSettings {
  /** Provider name reported by the Llm (`openai`, `anthropic`, `openai-compatible`). */
  provider: string
  /** Build the AI SDK model for a model id. */
  languageModel: (modelId: string) => Promise<LanguageModel>
  planningModel: string
  fastModel: string
  baseUrl: string | undefined
  /** Only used to keep the key out of error messages. */
  apiKey: string | undefined
  timeoutMs: number
  maxRetries: number
  /** First backoff delay; doubles per retry. A server's Retry-After wins when it sends one. */
  retryBaseDelayMs: number
  /** Provider options sent with structured-output calls (e.g. non-strict JSON schema). */
  objectProviderOptions?: ProviderOptions
}

const MAX_RETRY_DELAY_MS = 20_000

/** Create an `Llm` backed by AI SDK models. Used by `createLlm`; not called directly. */
export function createAiSdkLlm(settings: AiSdkLlmSettings): Llm {
  const modelFor = (tier: LlmTier): string => (tier === 'fast' ? settings.fastModel : settings.planningModel)
  const contextFor = (model: string): LlmCallContext => ({ provider: settings.provider, model, baseUrl: settings.baseUrl, apiKey: settings.apiKey })

  return {
    specificationVersion: 'engram-llm-v1',
    provider: settings.provider,
    available: true,
    modelFor,

    async generateObject<T>(options: GenerateObjectOptions<T>): Promise<T> {
      const modelId = modelFor(options.tier ?? 'planning')
      const context = contextFor(modelId)
      const schema = options.schema as z.ZodType<T>
      const instructions = structuredSystemPrompt(options.system, schema as z.ZodType<unknown>, options.name)
      const model = await settings.languageModel(modelId)
      return withRetries(settings, context, options, async (abortSignal) => {
        try {
          const result = await generateText({
            model,
            instructions,
            messages: toModelMessages(options.messages),
            output: Output.object({ schema, ...(options.name ? { name: options.name } : {}) }),
            maxRetries: 0,
            abortSignal,
            ...(settings.objectProviderOptions ? { providerOptions: settings.objectProviderOptions } : {}),
          })
          return result.output as T
        } catch (error) {
          // The SDK's parser is strict (no fences, no prose); give the answer one careful reading.
          const failure = classifyFailure(error)
          if (failure.kind !== 'invalid_output' || !failure.fromModel || failure.text === undefined) throw error
          const salvaged = salvageStructuredOutput(failure.text, schema)
          if (salvaged.ok) return salvaged.value
          throw llmInvalidOutputError(context, salvaged.detail, failure.text)
        }
      })
    },

    async generateText(options: GenerateTextOptions): Promise<string> {
      const modelId = modelFor(options.tier ?? 'planning')
      const context = contextFor(modelId)
      const model = await settings.languageModel(modelId)
      return withRetries(settings, context, options, async (abortSignal) => {
        const result = await generateText({
          model,
          ...(options.system ? { instructions: options.system } : {}),
          messages: toModelMessages(options.messages),
          ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
          maxRetries: 0,
          abortSignal,
        })
        return result.text
      })
    },
  }
}

function toModelMessages(messages: LlmMessage[]): { role: 'user' | 'assistant'; content: string }[] {
  return messages.map((message) => ({ role: message.role, content: message.content }))
}

/**
 * Run `attempt` until it succeeds, a non-retryable failure, `maxRetries` retries, or the deadline
 * (`timeoutMs` for the whole call, retries included — a caller waits at most that long).
 * A caller's own abort is rethrown as its abort reason, not turned into an EngramError.
 */
async function withRetries<T>(
  settings: AiSdkLlmSettings,
  context: LlmCallContext,
  options: { timeoutMs?: number; signal?: AbortSignal },
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? settings.timeoutMs
  const deadline = AbortSignal.timeout(timeoutMs)
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline
  const endsAt = performance.now() + timeoutMs

  for (let attemptIndex = 0; ; attemptIndex++) {
    if (options.signal?.aborted) throw options.signal.reason
    if (deadline.aborted) throw llmTimeoutError(context, timeoutMs)
    let failure: FailureKind
    try {
      return await attempt(signal)
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason
      if (deadline.aborted) throw llmTimeoutError(context, timeoutMs)
      if (EngramError.is(error)) throw error
      failure = classifyFailure(error)
    }
    if (failure.kind === 'invalid_output') throw llmInvalidOutputError(context, failure.message, failure.text)
    const attempts = attemptIndex + 1
    if (failure.kind === 'http' || attemptIndex >= settings.maxRetries) throw llmCallFailedError(context, failure, attempts)
    const delay = Math.min(failure.retryAfterMs ?? settings.retryBaseDelayMs * 2 ** attemptIndex, MAX_RETRY_DELAY_MS)
    // A retry that could not start before the deadline would only turn a clear failure into a timeout.
    if (performance.now() + delay >= endsAt) throw llmCallFailedError(context, failure, attempts)
    await sleep(delay, signal)
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
