/**
 * Offline sentence embedder from word vectors: the SIF-weighted mean of the vectors of a text's
 * content words (stop words dropped), unit length. Knows that "violin" and "cello" are close, which
 * the hashing embedder cannot; measured on LoCoMo in docs/decisions/0012-offline-retrieval-pipeline.md.
 * The vectors load on the first `embed` call, not when the embedder is created.
 */
import { STOP_WORDS, words } from '../../text/analyse.ts'
import type { Embedder } from '../contracts.ts'
import { installedWordVectors, sifWeight, type WordVectors } from './glove.ts'

export const GLOVE_EMBEDDER_MODEL = 'glove-100d-sif'
/** Texts whose embedding is remembered per embedder (about 400 bytes each). */
const EMBEDDING_MEMO_LIMIT = 50_000

/** The SIF embedding of `text` over `vectors` (the zero vector when no word has a vector). */
export function sifEmbed(vectors: WordVectors, text: string): Float32Array {
  const d = vectors.dimensions
  const out = new Float32Array(d)
  for (const word of words(text)) {
    if (STOP_WORDS.has(word)) continue
    const row = vectors.row(word)
    if (row === undefined) continue
    const weight = sifWeight(row) * vectors.scale(row)
    const at = row * d
    for (let j = 0; j < d; j++) out[j] = (out[j] as number) + weight * (vectors.components[at + j] as number)
  }
  let norm = 0
  for (let j = 0; j < d; j++) norm += (out[j] as number) ** 2
  norm = Math.sqrt(norm)
  if (norm > 0) for (let j = 0; j < d; j++) out[j] = (out[j] as number) / norm
  return out
}

const sources = new WeakMap<Embedder, () => WordVectors>()

/** The word vectors behind an embedder made by createGloVeEmbedder (for query expansion), else undefined. */
export function wordVectorsOf(embedder: Embedder): (() => WordVectors) | undefined {
  return sources.get(embedder)
}

/** The GloVe SIF embedder over `load()` (default: the vectors shipped with engram). */
export function createGloVeEmbedder(load: () => WordVectors = installedWordVectors, dimensions = 100): Embedder {
  // Re-ranking embeds the same candidate texts query after query: remember them (bounded).
  const memo = new Map<string, Float32Array>()
  const embedOne = (vectors: WordVectors, text: string): Float32Array => {
    let out = memo.get(text)
    if (out === undefined) {
      out = sifEmbed(vectors, text)
      if (memo.size >= EMBEDDING_MEMO_LIMIT) memo.clear()
      memo.set(text, out)
    }
    return out
  }
  const embedder: Embedder = {
    specificationVersion: 'engram-embedder-v1',
    id: `offline:${GLOVE_EMBEDDER_MODEL}:${dimensions}`,
    dimensions,
    kind: 'offline',
    embed: async (texts) => {
      const vectors = load()
      if (vectors.dimensions !== dimensions) throw new RangeError(`word vectors have ${vectors.dimensions} dimensions, the embedder was created for ${dimensions}`)
      return texts.map((text) => embedOne(vectors, text))
    },
  }
  sources.set(embedder, load)
  return embedder
}
