/**
 * Embeddings from any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, LM Studio, vLLM,
 * llama.cpp, TEI). Plain fetch rather than the AI SDK: the request is one small JSON POST, and
 * batching, ordering, dimension checks and error codes are ours either way.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Embedder } from '../contracts.ts'
import { l2Normalize } from './vector-math.ts'

/** Inputs per request: under the smallest common server limit (Cohere-style 96). */
export const EMBED_BATCH_SIZE = 96
/** Retries of a batch after 429 / 5xx / a network error. */
const EMBED_RETRIES = 2
const RETRY_BASE_DELAY_MS = 250

export const EMBED_FIX =
  'check embed.baseUrl / ENGRAM_EMBED_BASE_URL, embed.apiKey / ENGRAM_EMBED_API_KEY and embed.model / ENGRAM_EMBED_MODEL, or set ENGRAM_EMBED_PROVIDER=offline'

/** Output sizes of well-known embedding models, used when embed.dimensions is not set. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
  'bge-m3': 1024,
  'snowflake-arctic-embed': 1024,
}

export interface OpenAiCompatibleEmbedderSettings {
  baseUrl: string
  model: string
  apiKey: string | undefined
  /** Asked of the API (`dimensions`) when set; otherwise the known size of the model. */
  dimensions: number | undefined
  timeoutMs: number
  fetch?: typeof fetch
  /** First retry delay in ms, doubling per retry (default 250). */
  retryBaseDelayMs?: number
}

/** The dimensions an embedder for `model` will have, or undefined when they must be configured. */
export function knownEmbeddingDimensions(model: string): number | undefined {
  const bare = model.replace(/:latest$/, '')
  return KNOWN_DIMENSIONS[bare] ?? KNOWN_DIMENSIONS[bare.split('/').at(-1) ?? bare]
}

/** An embedder over `{baseUrl}/embeddings`, id `openai-compatible:<model>:<dimensions>`. */
export function createOpenAiCompatibleEmbedder(settings: OpenAiCompatibleEmbedderSettings): Embedder {
  const dimensions = settings.dimensions ?? knownEmbeddingDimensions(settings.model)
  if (dimensions === undefined) {
    throw new EngramError({
      code: ErrorCode.configInvalid,
      category: 'user',
      message: `the output size of embedding model "${settings.model}" is not known`,
      fix: 'set embed.dimensions / ENGRAM_EMBED_DIMENSIONS to the size of the vectors the model returns',
      details: { model: settings.model },
    })
  }
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/embeddings`
  const doFetch = settings.fetch ?? fetch
  const retryBaseDelayMs = settings.retryBaseDelayMs ?? RETRY_BASE_DELAY_MS

  async function embedBatch(batch: string[]): Promise<Float32Array[]> {
    const body = JSON.stringify({ model: settings.model, input: batch, encoding_format: 'float', ...(settings.dimensions !== undefined ? { dimensions: settings.dimensions } : {}) })
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`

    for (let attempt = 0; ; attempt++) {
      let response: Response
      let text: string
      try {
        response = await doFetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(settings.timeoutMs) })
        text = await response.text()
      } catch (error) {
        const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')
        if (!timedOut && attempt < EMBED_RETRIES) {
          await delay(retryBaseDelayMs * 2 ** attempt)
          continue
        }
        const reason = timedOut ? `no answer within ${settings.timeoutMs} ms (embed.timeoutMs / ENGRAM_EMBED_TIMEOUT_MS)` : `network error: ${describeCause(error)}`
        throw embedFailed(`${reason}`, settings, { url, attempts: attempt + 1 })
      }
      if (!response.ok) {
        const retryable = response.status === 429 || response.status >= 500
        if (retryable && attempt < EMBED_RETRIES) {
          await delay(retryBaseDelayMs * 2 ** attempt)
          continue
        }
        throw embedFailed(`HTTP ${response.status}: ${providerMessage(text)}`, settings, { url, status: response.status, attempts: attempt + 1 })
      }
      return parseEmbeddings(text, batch.length, dimensions as number, settings)
    }
  }

  return {
    specificationVersion: 'engram-embedder-v1',
    id: `openai-compatible:${settings.model}:${dimensions}`,
    dimensions,
    kind: 'remote',
    async embed(texts: string[]): Promise<Float32Array[]> {
      const vectors: Float32Array[] = []
      for (let start = 0; start < texts.length; start += EMBED_BATCH_SIZE) {
        vectors.push(...(await embedBatch(texts.slice(start, start + EMBED_BATCH_SIZE))))
      }
      return vectors
    },
  }
}

function parseEmbeddings(text: string, expected: number, dimensions: number, settings: OpenAiCompatibleEmbedderSettings): Float32Array[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw embedFailed(`the response is not JSON: ${redact(text.slice(0, 120), settings.apiKey)}`, settings)
  }
  const data = (parsed as { data?: unknown } | null)?.data
  if (!Array.isArray(data) || data.length !== expected) {
    throw embedFailed(`expected ${expected} embeddings in "data", got ${Array.isArray(data) ? data.length : 'none'}`, settings)
  }
  const vectors: (Float32Array | undefined)[] = new Array(expected)
  for (const [position, item] of data.entries()) {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown }
    // Servers may answer out of order; `index` is authoritative, the position a fallback.
    const slot = typeof index === 'number' ? index : position
    if (!Array.isArray(embedding) || !embedding.every((value) => typeof value === 'number')) {
      throw embedFailed(`embedding ${slot} is not a list of numbers (base64 encoding is not supported)`, settings)
    }
    if (embedding.length !== dimensions) {
      throw embedFailed(`the model returned ${embedding.length} dimensions but ${dimensions} are expected; set embed.dimensions / ENGRAM_EMBED_DIMENSIONS to ${embedding.length}`, settings)
    }
    if (slot < 0 || slot >= expected || vectors[slot] !== undefined) throw embedFailed(`embedding index ${slot} is out of range or repeated`, settings)
    vectors[slot] = l2Normalize(Float32Array.from(embedding))
  }
  return vectors as Float32Array[]
}

function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown }
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message)
    if (typeof message === 'string') return message.slice(0, 300)
  } catch {
    // not JSON: show the start of the body
  }
  return text.slice(0, 200) || '(empty body)'
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${error.message}${cause}`
}

function redact(text: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text
}

function embedFailed(reason: string, settings: OpenAiCompatibleEmbedderSettings, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({
    code: ErrorCode.embedFailed,
    category: 'provider',
    message: redact(`embedding with ${settings.model} at ${settings.baseUrl} failed: ${reason}`, settings.apiKey),
    fix: EMBED_FIX,
    details: { model: settings.model, ...details },
  })
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
