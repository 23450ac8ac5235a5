/**
 * Fake models implementing engram's `Llm` and `Embedder` interfaces directly (no HTTP), for unit
 * tests of code that takes a model. Exported at `engram/test`. To test through the real provider
 * code instead, use `startFakeOpenAiServer`.
 *
 * ```ts
 * const llm = createFakeLlm(({ kind, schemaName }) => (kind === 'object' ? { summary: 'tea' } : 'hello'))
 * const embedder = createFakeEmbedder(64)
 * ```
 */
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { Embedder, EmbedPurpose, GenerateObjectOptions, GenerateTextOptions, Llm, LlmTier } from '../llm/contracts.ts'
import { hashEmbed } from '../llm/embedders/offline-hash-embedder.ts'
import { excerpt, summarizeIssues } from '../llm/structured-output.ts'

/** What a fake LLM's responder is called with. */
export type FakeLlmCall =
  | { kind: 'object'; tier: LlmTier; model: string; schemaName: string | undefined; options: GenerateObjectOptions<unknown> }
  | { kind: 'text'; tier: LlmTier; model: string; options: GenerateTextOptions }

/**
 * Returns the answer: for `object` calls a value (validated against the call's schema; a value
 * that fails gives `llm_invalid_output`, as a real model's would), for `text` calls a string.
 * Throw from it to simulate a failure (throw an EngramError to pick the code).
 */
export type FakeLlmResponder = (call: FakeLlmCall) => unknown | Promise<unknown>

export interface FakeLlm extends Llm {
  /** Every call, in order. */
  readonly calls: FakeLlmCall[]
}

export interface FakeLlmOptions {
  /** Reported by `provider` (default `fake`). */
  provider?: string
  /** Model names per tier (default `fake-planning` / `fake-fast`). */
  models?: Partial<Record<LlmTier, string>>
}

/** An available `Llm` whose answers come from `responder`. */
export function createFakeLlm(responder: FakeLlmResponder, options: FakeLlmOptions = {}): FakeLlm {
  const provider = options.provider ?? 'fake'
  const models: Record<LlmTier, string> = { planning: options.models?.planning ?? 'fake-planning', fast: options.models?.fast ?? 'fake-fast' }
  const calls: FakeLlmCall[] = []
  return {
    specificationVersion: 'engram-llm-v1',
    provider,
    available: true,
    calls,
    modelFor: (tier) => models[tier],
    async generateObject<T>(callOptions: GenerateObjectOptions<T>): Promise<T> {
      const tier = callOptions.tier ?? 'planning'
      const call: FakeLlmCall = { kind: 'object', tier, model: models[tier], schemaName: callOptions.name, options: callOptions as GenerateObjectOptions<unknown> }
      calls.push(call)
      callOptions.signal?.throwIfAborted()
      const answer = await responder(call)
      const parsed = callOptions.schema.safeParse(answer)
      if (parsed.success) return parsed.data
      throw new EngramError({
        code: ErrorCode.llmInvalidOutput,
        category: 'provider',
        message: `the ${provider} model ${models[tier]} returned invalid output: ${summarizeIssues(parsed.error)}. Answer began: ${excerpt(JSON.stringify(answer) ?? String(answer))}`,
        fix: 'make the fake responder return a value matching the schema',
      })
    },
    async generateText(callOptions: GenerateTextOptions): Promise<string> {
      const tier = callOptions.tier ?? 'planning'
      const call: FakeLlmCall = { kind: 'text', tier, model: models[tier], options: callOptions }
      calls.push(call)
      callOptions.signal?.throwIfAborted()
      const answer = await responder(call)
      return typeof answer === 'string' ? answer : JSON.stringify(answer)
    },
  }
}

export interface FakeEmbedder extends Embedder {
  /** Every `embed` call's texts and purpose, in order. */
  readonly calls: { texts: string[]; purpose: EmbedPurpose | undefined }[]
}

/**
 * A deterministic embedder (id `fake:hash:<dims>`, default 32 dims) using the offline hashing
 * features, so texts sharing words are closer than unrelated ones — enough for ranking tests.
 */
export function createFakeEmbedder(dimensions = 32): FakeEmbedder {
  const calls: { texts: string[]; purpose: EmbedPurpose | undefined }[] = []
  return {
    specificationVersion: 'engram-embedder-v1',
    id: `fake:hash:${dimensions}`,
    dimensions,
    kind: 'offline',
    calls,
    async embed(texts, purpose) {
      calls.push({ texts: [...texts], purpose })
      return texts.map((text) => hashEmbed(text, dimensions))
    },
  }
}
