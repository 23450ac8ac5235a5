/**
 * The default embedder: feature hashing of words, word bigrams and character trigrams into a
 * fixed number of signed buckets. It needs no model, no download and no network, is
 * deterministic, and gives lexical similarity that tolerates inflections and small typos. It does
 * not know synonyms: `car` and `automobile` are unrelated to it.
 */
import type { Embedder } from '../contracts.ts'
import { textFeatures } from './text-features.ts'
import { hashString, l2Normalize } from './vector-math.ts'

export const OFFLINE_HASH_DEFAULT_DIMENSIONS = 384

/** Relative weight of each feature family, chosen so words and their spellings count about equally. */
const WEIGHT = { unigram: 1, bigram: 0.5, trigramsPerWord: 1 } as const
const SIGN_SEED = 0x9e3779b9
/** What an empty text embeds as: a fixed direction, so the vector is still unit length. */
const EMPTY_TEXT_FEATURE = 'e|'

/** The hashing embedder, id `offline:hash-v1:<dimensions>`. */
export function createOfflineHashEmbedder(dimensions = OFFLINE_HASH_DEFAULT_DIMENSIONS): Embedder {
  if (!Number.isInteger(dimensions) || dimensions < 8) throw new RangeError(`offline embedder dimensions must be an integer >= 8, got ${dimensions}`)
  return {
    specificationVersion: 'engram-embedder-v1',
    id: `offline:hash-v1:${dimensions}`,
    dimensions,
    kind: 'offline',
    embed: async (texts) => texts.map((text) => hashEmbed(text, dimensions)),
  }
}

/** The hashing embedding of one text (synchronous; used by the fake embedder too). */
export function hashEmbed(text: string, dimensions: number): Float32Array {
  const weights = new Map<string, number>()
  const add = (feature: string, weight: number) => weights.set(feature, (weights.get(feature) ?? 0) + weight)

  const features = textFeatures(text)
  for (const unigram of features.unigrams) add(`w|${unigram}`, WEIGHT.unigram)
  for (const bigram of features.bigrams) add(`b|${bigram}`, WEIGHT.bigram)
  for (const trigrams of features.trigramsByWord) {
    // Spread a word's trigram weight over its trigrams, so long words do not drown short ones.
    const each = WEIGHT.trigramsPerWord / Math.sqrt(trigrams.length)
    for (const trigram of trigrams) add(`c|${trigram}`, each)
  }
  if (weights.size === 0) add(EMPTY_TEXT_FEATURE, 1)

  const vector = new Float32Array(dimensions)
  for (const [feature, weight] of weights) {
    // Sublinear term frequency: a word said five times is not five times as relevant.
    const damped = weight > 1 ? 1 + Math.log(weight) : weight
    const bucket = hashString(feature) % dimensions
    const sign = (hashString(feature, SIGN_SEED) & 1) === 0 ? 1 : -1
    vector[bucket] = (vector[bucket] as number) + sign * damped
  }
  return l2Normalize(vector)
}
