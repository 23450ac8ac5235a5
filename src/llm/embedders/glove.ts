/**
 * GloVe-based word vectors (100 dimensions, the 100k most frequent words, public domain) as an
 * offline resource: the sentence embedder (SIF-weighted mean, glove-embedder.ts) and query
 * expansion by nearest corpus words (memory/retrieval/query-expansion.ts) share one copy per
 * process.
 *
 * They ship with engram in the form it reads (resources.ts, decision 0040): int8 rows, each
 * scaled by its largest component, and the words one per line in row order. The words (with
 * their shipped hash index, word-table.ts) are read whole the first time a process needs vectors
 * (2.3 MB, a few milliseconds); the rows are read from the file a page of 64 rows at a time, the
 * first time one of them is used, into a buffer whose untouched pages the operating system never
 * backs: a process holds the rows its texts use, not the 10 MB. A row is normalised as it is used
 * (its length computed once), so no float copy of the matrix is ever made.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { readResource, resourcePath } from '../../text/resources.ts'
import { WordTable } from '../../text/word-table.ts'

/**
 * Word vectors, rows in frequency order (row = rank). Row `r`'s unit vector is
 * `components[r * dimensions + j] * scale(r)`; `scale(r)` must be asked first: the shipped vectors
 * read a row from disk then.
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
  /** 1 / the length of row `row`'s components (1 for a zero row), the row's components loaded. */
  scale(row: number): number
}

/**
 * SIF weight a / (a + p(w)) of the word at frequency rank `row`, with p(w) estimated by Zipf's law
 * (0.1 / (rank + 10)): frequent words weigh little in a sentence vector (Arora et al. 2017).
 */
export function sifWeight(row: number, a = 1e-3): number {
  return a / (a + 0.1 / (row + 10))
}

/**
 * Word vectors over `components` (rows × dimensions) and the words of `table` (one per row).
 * `load(row)`, when given, fills row `row` of `components` (called once per row before its use).
 */
export function wordVectorsOver(table: WordTable, components: Int8Array | Float32Array, load?: (row: number) => void): WordVectors {
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
        load?.(row)
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

/** Rows read from disk per read: 6.4 KB, so a text's words cost a few reads, a full scan ~1,600. */
const PAGE_ROWS = 64

/**
 * int8 rows of the file at `path`, read a page at a time on first use. The file stays open for the
 * life of the process (one descriptor), as a memory-mapped file would.
 */
function pagedRows(path: string, rows: number): { components: Int8Array; load: (row: number) => void } {
  const fd = openSync(path, 'r')
  const bytes = fstatSync(fd).size
  const dimensions = bytes / rows
  if (rows === 0 || !Number.isInteger(dimensions)) {
    closeSync(fd)
    throw new RangeError(`${path}: ${bytes} bytes do not divide into ${rows} rows`)
  }
  // Zero-filled and untouched: the pages a process never reads into are never resident.
  const components = new Int8Array(bytes)
  const loaded = new Uint8Array(Math.ceil(rows / PAGE_ROWS))
  return {
    components,
    load: (row) => {
      const page = Math.floor(row / PAGE_ROWS)
      if (loaded[page]) return
      const start = page * PAGE_ROWS * dimensions
      const end = Math.min(bytes, start + PAGE_ROWS * dimensions)
      for (let at = start; at < end; ) {
        const read = readSync(fd, components, at, end - at, at)
        if (read === 0) throw new RangeError(`${path}: ended at byte ${at} of ${bytes}`)
        at += read
      }
      loaded[page] = 1
    },
  }
}

let installed: WordVectors | undefined

/** The word vectors shipped with engram (read on first use). Throws `unsupported` when the files are missing. */
export function installedWordVectors(): WordVectors {
  if (installed) return installed
  const words = readResource('glove-100d.words.txt')
  const path = resourcePath('glove-100d.i8')
  let rows: ReturnType<typeof pagedRows> | undefined
  const table = words ? WordTable.read(words, readResource('glove-100d.words.idx')) : undefined
  try {
    if (table) rows = pagedRows(path, table.size)
  } catch {
    // Missing or truncated: reported below.
  }
  if (!table || !rows) {
    throw new EngramError({
      code: ErrorCode.unsupported,
      category: 'system',
      message: `The GloVe offline embedder needs the word vectors shipped with engram (${path}), which are missing or damaged: the installation is incomplete.`,
      fix: 'Reinstall engram, or set embed.model / ENGRAM_EMBED_MODEL to hash-v1 (or embed.provider / ENGRAM_EMBED_PROVIDER to none).',
    })
  }
  installed = wordVectorsOver(table, rows.components, rows.load)
  return installed
}
