/**
 * GloVe-based word vectors (100 dimensions, 341k words in frequency order, public domain) as an
 * offline resource: the sentence embedder (SIF-weighted mean, glove-embedder.ts) and query
 * expansion by nearest corpus words (memory/retrieval/text/query-expansion.ts) share one copy per
 * process.
 *
 * They ship with engram in the form it reads (resources.ts, decision 0040): int8 rows, each
 * scaled by its largest component, and the words one per line in row order. Both files are read
 * as they are (12 MB, a few milliseconds) the first time a process needs vectors; a row is
 * normalised when it is used (its length computed once), so no float copy of the matrix is ever
 * made, and words are found through a hash over the words file's own bytes, shipped beside it
 * (word-table.ts).
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { readResource, resourcePath } from './resources.ts'
import { WordTable } from './word-table.ts'

/**
 * Word vectors, rows in frequency order (row = rank). Row `r`'s unit vector is
 * `components[r * dimensions + j] * scale(r)`.
 */
export interface WordVectors {
  readonly dimensions: number
  /** Rows. */
  readonly size: number
  /** The row of `word`, or undefined. */
  row(word: string): number | undefined
  /** The word of `row`. */
  word(row: number): string
  /** rows × dimensions. */
  readonly components: Int8Array | Float32Array
  /** 1 / the length of row `row`'s components (1 for a zero row). */
  scale(row: number): number
}

/**
 * SIF weight a / (a + p(w)) of the word at frequency rank `row`, with p(w) estimated by Zipf's law
 * (0.1 / (rank + 10)): frequent words weigh little in a sentence vector (Arora et al. 2017).
 */
export function sifWeight(row: number, a = 1e-3): number {
  return a / (a + 0.1 / (row + 10))
}

/** Word vectors over `components` (rows × dimensions) and the words of `table` (one per row). */
export function wordVectorsOver(table: WordTable, components: Int8Array | Float32Array): WordVectors {
  const size = table.size
  const dimensions = size === 0 ? 0 : components.length / size
  if (!Number.isInteger(dimensions)) throw new RangeError(`${components.length} vector components do not divide into ${size} rows`)
  // Lengths are computed on first use: query expansion touches the 100k most frequent rows, an
  // embedding only its words' rows. 0 = not computed yet (a zero row's scale is 1).
  const scales = new Float64Array(size)
  return {
    dimensions,
    size,
    components,
    row: (word) => {
      const row = table.find(word)
      return row < 0 ? undefined : row
    },
    word: (row) => table.key(row),
    scale: (row) => {
      let scale = scales[row] as number
      if (scale === 0) {
        let norm = 0
        const at = row * dimensions
        for (let j = 0; j < dimensions; j++) norm += (components[at + j] as number) ** 2
        scale = 1 / (Math.sqrt(norm) || 1)
        scales[row] = scale
      }
      return scale
    },
  }
}

let installed: WordVectors | undefined

/** The word vectors shipped with engram (read on first use). Throws `unsupported` when the files are missing. */
export function installedWordVectors(): WordVectors {
  if (installed) return installed
  const words = readResource('glove-100d.words.txt')
  const raw = readResource('glove-100d.i8')
  if (!words || !raw) {
    throw new EngramError({
      code: ErrorCode.unsupported,
      category: 'system',
      message: `The GloVe offline embedder needs the word vectors shipped with engram (${resourcePath('glove-100d.i8')}), which are missing: the installation is incomplete.`,
      fix: 'Reinstall engram, or set embed.model / ENGRAM_EMBED_MODEL to hash-v1 (or embed.provider / ENGRAM_EMBED_PROVIDER to none).',
    })
  }
  installed = wordVectorsOver(WordTable.read(words, readResource('glove-100d.words.idx')), new Int8Array(raw.buffer, raw.byteOffset, raw.byteLength))
  return installed
}
