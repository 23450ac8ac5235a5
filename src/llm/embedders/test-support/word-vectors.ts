import type { WordVectors } from '../glove.ts'
import { wordVectorsOver } from '../glove.ts'
import { WordTable } from '../../../text/word-table.ts'

/** Word vectors from (word, vector) pairs in frequency order: the tiny vocabularies of tests. */
export function wordVectorsFrom(entries: ReadonlyArray<readonly [string, ArrayLike<number>]>): WordVectors {
  const dimensions = entries[0]?.[1].length ?? 0
  const components = new Float32Array(entries.length * dimensions)
  entries.forEach(([word, vector], row) => {
    if (vector.length !== dimensions) throw new RangeError(`word vector of "${word}" has ${vector.length} dimensions, expected ${dimensions}`)
    components.set(Array.from(vector), row * dimensions)
  })
  return wordVectorsOver(WordTable.build(Buffer.from(entries.map(([word]) => `${word}\n`).join(''), 'latin1')), components)
}
