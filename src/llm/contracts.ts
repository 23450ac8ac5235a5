/**
 * The model seams: structured output from an LLM, and embeddings. Small versioned interfaces
 * (as the AI SDK's providers): memory systems call these, never a vendor SDK.
 *
 * Every call can fail; callers always have a deterministic path or a clean skip, and mark
 * whatever that path produced as degraded.
 */
import type { z } from 'zod'

/** `planning` for consolidation and compaction, `fast` for summaries and extraction. */
export type LlmTier = 'planning' | 'fast'

export interface LlmMessage {
  role: 'user' | 'assistant'
  content: string
}

export interface GenerateObjectOptions<T> {
  /** zod schema; its field descriptions are the instructions. */
  schema: z.ZodType<T>
  /** Short name of what is produced (`summary`, `lessons`), sent with the schema. */
  name?: string
  system?: string
  messages: LlmMessage[]
  tier?: LlmTier
  timeoutMs?: number
  signal?: AbortSignal
}

export interface GenerateTextOptions {
  system?: string
  messages: LlmMessage[]
  tier?: LlmTier
  maxOutputTokens?: number
  timeoutMs?: number
  signal?: AbortSignal
}

export interface Llm {
  readonly specificationVersion: 'engram-llm-v1'
  /** `none`, `openai`, `anthropic`, `openai-compatible`, or a fake's name. */
  readonly provider: string
  /** False for the `none` provider: callers go straight to their deterministic path. */
  readonly available: boolean
  /** The model used for a tier, for records and `engram doctor`. */
  modelFor(tier: LlmTier): string | undefined
  /**
   * Structured output validated against `schema`. Throws an EngramError: `llm_not_configured`,
   * `llm_timeout`, `llm_call_failed` (network, 4xx/5xx after retries) or `llm_invalid_output`
   * (not JSON, or JSON that violates the schema).
   */
  generateObject<T>(options: GenerateObjectOptions<T>): Promise<T>
  generateText(options: GenerateTextOptions): Promise<string>
}

export type EmbedPurpose = 'query' | 'document'

export interface Embedder {
  readonly specificationVersion: 'engram-embedder-v1'
  /** Identifies the vector space (`provider:model:dimensions`); vectors of another id are rebuilt. */
  readonly id: string
  readonly dimensions: number
  /** offline = built in, needs nothing; remote = an API; local = a model folder on disk. */
  readonly kind: 'offline' | 'remote' | 'local'
  /** Unit-length vectors, one per text, in order. Throws `embed_failed` on failure. */
  embed(texts: string[], purpose?: EmbedPurpose): Promise<Float32Array[]>
}

/** Result of probing a provider (for `engram doctor`). */
export type ProbeResult = { ok: true; detail: string; ms: number } | { ok: false; detail: string; fix: string }
