/**
 * Token counting. Budgets everywhere in engram (context assembly, priming, memory context) are in
 * tokens of the o200k encoding (GPT-4o and later); other models' tokenizers differ by a few
 * percent, which the budgets' margins absorb.
 */
import { createRequire } from 'node:module'

// The o200k tables take ~80 ms to load; commands that never count tokens should not pay for them,
// so the encoder is required synchronously on first use rather than imported at start-up.
const require = createRequire(import.meta.url)
let o200kCount: ((text: string) => number) | undefined
function encoder(): (text: string) => number {
  o200kCount ??= (require('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens: (text: string) => number }).countTokens
  return o200kCount
}

// Short strings are the common case on the hot path (entries, messages); caching them avoids
// re-encoding the same rule or lesson on every turn. Bounded so that it cannot grow without limit.
const cache = new Map<string, number>()
const CACHE_LIMIT = 20_000
const CACHEABLE_LENGTH = 2_000

/** Exact number of o200k tokens in `text`. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0
  if (text.length > CACHEABLE_LENGTH) return encoder()(text)
  const hit = cache.get(text)
  if (hit !== undefined) return hit
  const n = encoder()(text)
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(text, n)
  return n
}

/** Cheap upper-bound estimate (characters / 3), for sizing work before counting exactly. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3)
}

/**
 * The longest prefix of `text` that fits in `budget` tokens, cut at a sentence or word boundary
 * when one is near. Returns '' when not even one word fits.
 */
export function truncateToTokens(text: string, budget: number): string {
  if (budget <= 0) return ''
  if (countTokens(text) <= budget) return text
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (countTokens(text.slice(0, mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  const cut = text.slice(0, lo)
  const sentence = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('.\n'), cut.lastIndexOf('! '), cut.lastIndexOf('? '))
  if (sentence > cut.length * 0.5) return cut.slice(0, sentence + 1)
  const space = cut.lastIndexOf(' ')
  if (space > cut.length * 0.5) return cut.slice(0, space)
  return cut
}
