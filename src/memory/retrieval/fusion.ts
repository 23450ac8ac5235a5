/**
 * Fusion: one relevance in [0, 1] from the lexical (BM25) and dense (cosine) channels.
 *
 * - `weighted`: each channel's score divided by the best score of that channel among the
 *   candidates (BM25 has no fixed scale; cosine is clipped at 0), then a weighted sum; the
 *   weights are renormalised over the channels that ran, so lexical-only retrieval still reaches 1.
 * - `rrf`: reciprocal rank fusion, Σ w / (k + rank), scaled so that first place in every channel
 *   that ran is 1.
 * The choice and its measurement are in docs/decisions/0011-retrieval-hot-path.md.
 */
import type { FusionMethod } from './settings.ts'

export interface ChannelScores {
  id: string
  lexical?: number
  dense?: number
}

export interface FusionOptions {
  method: FusionMethod
  lexicalWeight: number
  denseWeight: number
  rrfK: number
  /** Which channels ran (a channel can run and find nothing for a candidate). */
  channels: { lexical: boolean; dense: boolean }
}

/** The fused relevance of every candidate, by id. */
export function fuseScores(candidates: readonly ChannelScores[], options: FusionOptions): Map<string, number> {
  const wL = options.channels.lexical ? options.lexicalWeight : 0
  const wD = options.channels.dense ? options.denseWeight : 0
  const total = wL + wD
  const out = new Map<string, number>()
  if (total === 0) {
    for (const candidate of candidates) out.set(candidate.id, 0)
    return out
  }
  if (options.method === 'weighted') {
    let maxLexical = 0
    let maxDense = 0
    for (const c of candidates) {
      if (c.lexical !== undefined && c.lexical > maxLexical) maxLexical = c.lexical
      if (c.dense !== undefined && c.dense > maxDense) maxDense = c.dense
    }
    for (const c of candidates) {
      const lexical = c.lexical !== undefined && maxLexical > 0 ? Math.max(0, c.lexical) / maxLexical : 0
      const dense = c.dense !== undefined && maxDense > 0 ? Math.max(0, c.dense) / maxDense : 0
      out.set(c.id, (wL * lexical + wD * dense) / total)
    }
    return out
  }
  const rankOf = (key: 'lexical' | 'dense'): Map<string, number> => {
    const ranked = candidates.filter((c) => c[key] !== undefined).sort((a, b) => (b[key] as number) - (a[key] as number))
    return new Map(ranked.map((c, i) => [c.id, i + 1]))
  }
  const lexicalRanks = rankOf('lexical')
  const denseRanks = rankOf('dense')
  const k = options.rrfK
  const best = total / (k + 1)
  for (const c of candidates) {
    const rl = lexicalRanks.get(c.id)
    const rd = denseRanks.get(c.id)
    const sum = (rl !== undefined ? wL / (k + rl) : 0) + (rd !== undefined ? wD / (k + rd) : 0)
    out.set(c.id, sum / best)
  }
  return out
}
