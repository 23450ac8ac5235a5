import type { WordVectors } from '../glove.ts'

/** Word vectors from (word, vector) pairs in frequency order, each normalised: the tiny vocabularies of tests. */
export function wordVectorsFrom(entries: ReadonlyArray<readonly [string, ArrayLike<number>]>): WordVectors {
  const dimensions = entries[0]?.[1].length ?? 0
  const vectors = new Float32Array(entries.length * dimensions)
  const rows = new Map<string, number>()
  const words: string[] = []
  entries.forEach(([word, vector], row) => {
    if (vector.length !== dimensions) throw new RangeError(`word vector of "${word}" has ${vector.length} dimensions, expected ${dimensions}`)
    let norm = 0
    for (let j = 0; j < dimensions; j++) norm += (vector[j] as number) ** 2
    norm = Math.sqrt(norm) || 1
    for (let j = 0; j < dimensions; j++) vectors[row * dimensions + j] = (vector[j] as number) / norm
    if (!rows.has(word)) rows.set(word, row)
    words.push(word)
  })
  return { dimensions, words, rows, vectors }
}
