/**
 * Related words indexed beside a unit's own text (the `related` field, BM25 weight
 * `retrieval.relatedWeight`): WordNet hypernyms of its content words, and for named instances what
 * they are part or a member of (wordnet.ts). The dictionary map, shipped with engram, is read lazily,
 * the first time a unit is indexed — never per mind open. It is process-wide rather than injected per index:
 * the dictionary is the same for every mind, and the index must analyse a unit identically
 * whichever mind wrote it.
 */
import { STOP_WORDS, stem, words } from './analyse.ts'
import { hypernymLookup, installedHypernymMap } from './wordnet.ts'

export type HypernymLookup = (word: string) => readonly string[]

/** `undefined`: not loaded yet (the installed WordNet is loaded on first use); `null`: the shipped map is missing. */
let lookup: HypernymLookup | null | undefined

function currentLookup(): HypernymLookup | null {
  if (lookup === undefined) {
    const map = installedHypernymMap()
    lookup = map ? hypernymLookup(map) : null
  }
  return lookup
}

/**
 * Stems of the hypernyms of each distinct content word of `text` ([] without a dictionary). `find`
 * is the shipped WordNet map unless given (tests pass a fixture's).
 */
export function relatedTerms(text: string, find: HypernymLookup | null = currentLookup()): string[] {
  if (!find) return []
  const out: string[] = []
  const seen = new Set<string>()
  for (const word of words(text)) {
    if (STOP_WORDS.has(word) || seen.has(word)) continue
    seen.add(word)
    for (const related of find(word)) for (const part of words(related)) if (!STOP_WORDS.has(part)) out.push(stem(part))
  }
  return out
}
