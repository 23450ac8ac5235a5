/**
 * Build the `Embedder` the configuration asks for, or `null` when vectors are disabled.
 */
import type { ConfigValues } from '../../config/resolve.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Embedder } from '../contracts.ts'
import { createGloVeEmbedder, GLOVE_EMBEDDER_MODEL } from './glove-embedder.ts'
import { createOfflineHashEmbedder } from './offline-hash-embedder.ts'
import { createOnnxEmbedder } from './onnx-embedder.ts'
import { createOpenAiCompatibleEmbedder } from './openai-compatible-embedder.ts'

/**
 * Built-in offline embedders by `embed.model` name: feature hashing (no data at all), and the SIF
 * mean of GloVe word vectors (shipped with engram in resources/, read on first use). Which is the default is decided in docs/decisions/0012-offline-retrieval-pipeline.md.
 */
export const OFFLINE_EMBEDDERS: Readonly<Record<string, (dimensions: number | undefined) => Embedder>> = {
  'hash-v1': (dimensions) => createOfflineHashEmbedder(dimensions),
  [GLOVE_EMBEDDER_MODEL]: (dimensions) => {
    if (dimensions !== undefined && dimensions !== 100) {
      throw configInvalid(`the ${GLOVE_EMBEDDER_MODEL} embedder has 100 dimensions, embed.dimensions is ${dimensions}`, 'unset embed.dimensions / ENGRAM_EMBED_DIMENSIONS, or set it to 100')
    }
    return createGloVeEmbedder()
  },
}
export const DEFAULT_OFFLINE_EMBEDDER = GLOVE_EMBEDDER_MODEL

export interface CreateEmbedderOptions {
  /** fetch used by remote embedders (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch
  /** First retry delay of remote embedders in ms (default 250). Tests make it small. */
  retryBaseDelayMs?: number
}

/**
 * Create the configured embedder: `offline` (default; `embed.model` picks a built-in, default
 * `hash-v1`), `openai-compatible` (`embed.baseUrl`, `embed.model`), `onnx` (`embed.path`), or
 * `null` for `none`. Throws `config_invalid` for missing or unknown settings.
 */
export function createEmbedder(config: ConfigValues['embed'], options: CreateEmbedderOptions = {}): Embedder | null {
  switch (config.provider) {
    case 'none':
      return null
    case 'offline': {
      const name = config.model ?? DEFAULT_OFFLINE_EMBEDDER
      const factory = OFFLINE_EMBEDDERS[name]
      if (!factory) {
        throw configInvalid(`unknown offline embedder "${name}"`, `set embed.model / ENGRAM_EMBED_MODEL to one of: ${Object.keys(OFFLINE_EMBEDDERS).join(', ')} (or leave it unset)`)
      }
      return factory(config.dimensions)
    }
    case 'openai-compatible': {
      if (!config.baseUrl) throw configInvalid('embed.provider is openai-compatible but no base URL is set', 'set embed.baseUrl or ENGRAM_EMBED_BASE_URL (e.g. http://localhost:11434/v1)')
      if (!config.model) throw configInvalid('embed.provider is openai-compatible but no model is set', 'set embed.model or ENGRAM_EMBED_MODEL')
      return createOpenAiCompatibleEmbedder({
        baseUrl: config.baseUrl,
        model: config.model,
        apiKey: config.apiKey,
        dimensions: config.dimensions,
        timeoutMs: config.timeoutMs,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.retryBaseDelayMs !== undefined ? { retryBaseDelayMs: options.retryBaseDelayMs } : {}),
      })
    }
    case 'onnx': {
      if (!config.path) throw configInvalid('embed.provider is onnx but no model folder is set', 'set embed.path or ENGRAM_EMBED_PATH to a folder holding config.json, tokenizer.json and onnx/model.onnx')
      return createOnnxEmbedder({ path: config.path, dimensions: config.dimensions })
    }
    default: {
      const unknown: string = config.provider
      throw configInvalid(`unknown embedding provider "${unknown}"`, 'set embed.provider / ENGRAM_EMBED_PROVIDER to offline, openai-compatible, onnx or none')
    }
  }
}

function configInvalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.configInvalid, category: 'user', message, fix })
}
