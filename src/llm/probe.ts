/**
 * One small live check of the configured LLM and embedder, for `engram doctor`.
 */
import { describeError, EngramError } from '../core/errors.ts'
import type { Embedder, Llm, ProbeResult } from './contracts.ts'
import { CONFIGURE_LLM_FIX } from './none-llm.ts'

/** Ask the fast tier for a one-field JSON object; reports the model and the time taken. */
export async function probeLlm(llm: Llm): Promise<ProbeResult> {
  if (!llm.available) return { ok: false, detail: 'no LLM configured (offline paths in use)', fix: CONFIGURE_LLM_FIX }
  // zod loads here, not at start-up (~60 ms that most commands never need).
  const { z } = await import('zod')
  const probeSchema = z.object({ ok: z.boolean().describe('always true') })
  const started = performance.now()
  try {
    await llm.generateObject({
      schema: probeSchema,
      name: 'probe',
      system: 'You are a health check.',
      messages: [{ role: 'user', content: 'Reply with {"ok": true}.' }],
      tier: 'fast',
    })
    const ms = Math.round(performance.now() - started)
    return { ok: true, detail: `${llm.provider} ${llm.modelFor('fast')} answered structured output in ${ms} ms`, ms }
  } catch (error) {
    return failure(error, 'check the llm.* settings (ENGRAM_LLM_*)')
  }
}

/** Embed one string; reports the embedder id, its dimensions and the time taken. */
export async function probeEmbedder(embedder: Embedder | null): Promise<ProbeResult> {
  if (embedder === null) {
    return { ok: false, detail: 'embeddings disabled (embed.provider is none); recall is lexical only', fix: 'set ENGRAM_EMBED_PROVIDER=offline (needs nothing) or openai-compatible / onnx' }
  }
  const started = performance.now()
  try {
    const [vector] = await embedder.embed(['engram embedding probe'], 'query')
    const ms = Math.round(performance.now() - started)
    if (!vector || vector.length !== embedder.dimensions) {
      return { ok: false, detail: `${embedder.id} returned ${vector?.length ?? 0} dimensions, expected ${embedder.dimensions}`, fix: 'set embed.dimensions / ENGRAM_EMBED_DIMENSIONS to what the model returns' }
    }
    return { ok: true, detail: `${embedder.id}: ${embedder.dimensions} dimensions in ${ms} ms`, ms }
  } catch (error) {
    return failure(error, 'check the embed.* settings (ENGRAM_EMBED_*)')
  }
}

function failure(error: unknown, defaultFix: string): ProbeResult {
  if (EngramError.is(error)) return { ok: false, detail: error.message, fix: error.fix ?? defaultFix }
  return { ok: false, detail: describeError(error), fix: defaultFix }
}
