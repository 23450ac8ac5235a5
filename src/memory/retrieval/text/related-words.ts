/**
 * Related words indexed beside a unit's own text (the `related` field). Filled by WordNet
 * hypernyms once their compact map is loaded (see wordnet.ts); empty until then, so indexing
 * never waits on a dictionary.
 */
import { STOP_WORDS, stem, words } from './analyse.ts'

export type HypernymLookup = (word: string) => readonly string[]

let lookup: HypernymLookup | undefined

/** Install the hypernym lookup used by indexing (process-wide: the dictionary is the same for every mind). */
export function setHypernymLookup(next: HypernymLookup | undefined): void {
  lookup = next
}

/** Stems of the hypernyms of each distinct content word of `text` ([] without a lookup). */
export function relatedTerms(text: string): string[] {
  if (!lookup) return []
  const out: string[] = []
  const seen = new Set<string>()
  for (const word of words(text)) {
    if (STOP_WORDS.has(word) || seen.has(word)) continue
    seen.add(word)
    for (const related of lookup(word)) for (const part of words(related)) if (!STOP_WORDS.has(part)) out.push(stem(part))
  }
  return out
}
