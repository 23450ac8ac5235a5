/**
 * WordNet hypernyms for document expansion: a turn that says "clarinet" is also indexed with
 * "woodwind" and "instrument" (down-weighted, the `related` field), so "What instruments does she
 * play?" can find it. First noun sense only, up two hypernym levels (@ and @i), as measured in the
 * research prototype (docs/decisions/0012-offline-retrieval-pipeline.md): more senses or verbs
 * added noise.
 *
 * A named instance (a city, a country, a team: a first sense with an @i pointer) also brings what
 * it is part of or a member of, up two levels (#p and #m holonyms): "Paris" is indexed with
 * "France" and "Europe", "Chicago" with "Illinois" and "United States", so "How many times has
 * she been to France?" finds "I bought it in Paris". Common nouns do not: their holonyms ("eye" →
 * "face") were measured to match questions no more often than chance (decision 0012, addendum of
 * the third session of 2026-11-23).
 *
 * The map is derived from WordNet 3.1 by scripts/build-resources.ts and ships with engram as a text
 * file, one sorted line per lemma (`lemma related related…`, resources/wordnet-related.txt,
 * 2.8 MB): it is read as it is the first time a unit is indexed, and a lemma is found through a
 * hash over the file's own bytes (word-table.ts, shipped beside it), not copied into a Map of
 * strings.
 */
import { readResource } from './resources.ts'
import { WordTable } from './word-table.ts'

/** What expansion needs of a lemma → related-words map (a `Map` in tests). */
export interface HypernymMap {
  has(lemma: string): boolean
  get(lemma: string): readonly string[] | undefined
}

/** Plural-stripping lemmatiser over the map's keys ("children" → "child", "berries" → "berry"). */
export function nounLemma(word: string, has: (lemma: string) => boolean): string | undefined {
  const candidates = [word, word.replace(/ren$/, ''), word.replace(/ies$/, 'y'), word.replace(/es$/, ''), word.replace(/s$/, ''), word.replace(/ves$/, 'f')]
  for (const candidate of candidates) if (candidate.length > 2 && has(candidate)) return candidate
  return undefined
}

/** Words whose lookup is remembered: indexing asks for the same words unit after unit. */
const LOOKUP_MEMO_LIMIT = 50_000

/** A lookup word → hypernym words over `map` (lemmatised; [] for unknown words). */
export function hypernymLookup(map: HypernymMap): (word: string) => readonly string[] {
  const has = (lemma: string) => map.has(lemma)
  const memo = new Map<string, readonly string[]>()
  return (word) => {
    let related = memo.get(word)
    if (related === undefined) {
      const lemma = nounLemma(word, has)
      related = lemma === undefined ? [] : (map.get(lemma) ?? [])
      if (memo.size >= LOOKUP_MEMO_LIMIT) memo.clear()
      memo.set(word, related)
    }
    return related
  }
}

/** The map over the lines of the shipped file (`lemma related related…`). */
export function hypernymMapOver(table: WordTable): HypernymMap {
  return {
    has: (lemma) => table.find(lemma) >= 0,
    get: (lemma) => {
      const line = table.find(lemma)
      return line < 0 ? undefined : table.rest(line).split(' ')
    },
  }
}

let loaded: HypernymMap | null | undefined

/**
 * The hypernym map shipped with engram (read on first use). `null` when the file is missing (a
 * damaged install: expansion is then off; nothing else changes).
 */
export function installedHypernymMap(): HypernymMap | null {
  if (loaded !== undefined) return loaded
  const bytes = readResource('wordnet-related.txt')
  loaded = bytes ? hypernymMapOver(WordTable.read(bytes, readResource('wordnet-related.idx'))) : null
  return loaded
}
