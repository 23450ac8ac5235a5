/**
 * Build the `Llm` the configuration asks for. Vendor SDKs stay behind this function: memory
 * systems only ever see the `Llm` interface.
 */
import type { LanguageModel } from 'ai'
import type { ConfigValues } from '../config/resolve.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { AiSdkLlmSettings } from './ai-sdk-llm.ts'
import type { Llm } from './contracts.ts'
import { createNoneLlm } from './none-llm.ts'

export interface CreateLlmOptions {
  /** fetch used for every HTTP call (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch
  /** First retry delay in ms, doubling per retry (default 1000). Tests make it small. */
  retryBaseDelayMs?: number
}

const DEFAULT_RETRY_BASE_DELAY_MS = 1000

/**
 * Create the configured `Llm`. `none` gives an unavailable Llm whose calls throw
 * `llm_not_configured`; the others call the provider's chat API with two tiers (`planning` uses
 * `llm.model`, `fast` uses `llm.fastModel ?? llm.model`). Throws `config_invalid` when a provider
 * lacks its model, base URL or API key.
 */
export function createLlm(config: ConfigValues['llm'], options: CreateLlmOptions = {}): Llm {
  if (config.provider === 'none') return createNoneLlm()

  const model = required(config.model, 'llm.model', 'ENGRAM_LLM_MODEL', config.provider)
  const fetchOption = options.fetch ? { fetch: options.fetch } : {}
  // Provider SDKs are imported on the first call (start-up of every command stays fast).
  let languageModel: (modelId: string) => Promise<LanguageModel>
  let objectProviderOptions: Record<string, Record<string, boolean>> | undefined

  switch (config.provider) {
    case 'openai': {
      const apiKey = required(config.apiKey, 'llm.apiKey', 'ENGRAM_LLM_API_KEY', config.provider)
      languageModel = async (modelId) => {
        const { createOpenAI } = await import('@ai-sdk/openai')
        return createOpenAI({ apiKey, ...(config.baseUrl ? { baseURL: config.baseUrl } : {}), ...fetchOption }).chat(modelId)
      }
      // Strict mode rejects zod schemas with optional fields; we validate the answer ourselves.
      objectProviderOptions = { openai: { strictJsonSchema: false } }
      break
    }
    case 'anthropic': {
      const apiKey = required(config.apiKey, 'llm.apiKey', 'ENGRAM_LLM_API_KEY', config.provider)
      languageModel = async (modelId) => {
        const { createAnthropic } = await import('@ai-sdk/anthropic')
        return createAnthropic({ apiKey, ...(config.baseUrl ? { baseURL: config.baseUrl } : {}), ...fetchOption }).messages(modelId)
      }
      break
    }
    case 'openai-compatible': {
      const baseURL = required(config.baseUrl, 'llm.baseUrl', 'ENGRAM_LLM_BASE_URL', config.provider)
      languageModel = async (modelId) => {
        const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible')
        return createOpenAICompatible({
          name: 'openai-compatible',
          baseURL,
          ...(config.apiKey ? { apiKey: config.apiKey } : {}),
          // Ollama, LM Studio, vLLM and llama.cpp accept json_schema response formats; servers that
          // ignore it still get the schema in the system prompt.
          supportsStructuredOutputs: true,
          ...fetchOption,
        }).chatModel(modelId)
      }
      objectProviderOptions = { openaiCompatible: { strictJsonSchema: false } }
      break
    }
    default: {
      const unknown: string = config.provider
      throw new EngramError({
        code: ErrorCode.configInvalid,
        category: 'user',
        message: `unknown LLM provider "${unknown}"`,
        fix: 'set llm.provider / ENGRAM_LLM_PROVIDER to none, openai, anthropic or openai-compatible',
      })
    }
  }

  const settings: AiSdkLlmSettings = {
    provider: config.provider,
    languageModel,
    planningModel: model,
    fastModel: config.fastModel ?? model,
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs,
    maxRetries: config.maxRetries,
    retryBaseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS,
    ...(objectProviderOptions ? { objectProviderOptions } : {}),
  }
  // The AI SDK (and everything it pulls in) loads on the first call, so opening a mind or running
  // a command that never calls the LLM stays fast.
  let implementation: Promise<Llm> | undefined
  const load = (): Promise<Llm> => {
    implementation ??= import('./ai-sdk-llm.ts').then((module) => module.createAiSdkLlm(settings))
    return implementation
  }
  return {
    specificationVersion: 'engram-llm-v1',
    provider: config.provider,
    available: true,
    modelFor: (tier) => (tier === 'fast' ? settings.fastModel : settings.planningModel),
    generateObject: async (options) => (await load()).generateObject(options),
    generateText: async (options) => (await load()).generateText(options),
  }
}

function required(value: string | undefined, key: string, env: string, provider: string): string {
  if (value !== undefined && value !== '') return value
  throw new EngramError({
    code: ErrorCode.configInvalid,
    category: 'user',
    message: `llm.provider is ${provider} but ${key} is not set`,
    fix: `set ${key} or ${env}`,
    details: { key, env },
  })
}
