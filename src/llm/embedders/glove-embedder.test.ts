import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createEmbedder } from './create-embedder.ts'
import { createGloVeEmbedder, sifEmbed, wordVectorsOf } from './glove-embedder.ts'
import { installedWordVectors, sifWeight } from './glove.ts'
import { wordVectorsFrom } from './test-support/word-vectors.ts'
import { cosineSimilarity } from './vector-math.ts'

/** A tiny vocabulary in frequency order: music words near each other, outdoor words near each other. */
const FIXTURE = wordVectorsFrom([
  ['play', [1, 1, 1, 0]],
  ['violin', [1, 0.1, 0, 0]],
  ['cello', [0.95, 0.2, 0, 0]],
  ['guitar', [0.9, 0.3, 0, 0.1]],
  ['hiking', [0, 0, 1, 0.2]],
  ['mountains', [0, 0.1, 0.9, 0.3]],
])

const config = (model: string, dimensions?: number) => ({ provider: 'offline' as const, baseUrl: undefined, apiKey: undefined, model, dimensions, path: undefined, timeoutMs: 1000 })

describe('GloVe SIF embedder', () => {
  it('gives unit vectors whose cosine follows the words, ignoring stop words and unknown words', async () => {
    const embedder = createGloVeEmbedder(() => FIXTURE, 4)
    const [violin, cello, hiking, nothing] = await embedder.embed(['I play the violin', 'She plays the cello', 'hiking in the mountains', 'the and of zzz'])
    assert.ok(violin && cello && hiking && nothing)
    assert.ok(Math.abs(Math.hypot(...violin) - 1) < 1e-5)
    assert.ok(cosineSimilarity(violin, cello) > cosineSimilarity(violin, hiking) + 0.3)
    assert.deepEqual([...nothing], [0, 0, 0, 0])
    assert.equal(embedder.id, 'offline:glove-100d-sif:4')
    assert.equal(embedder.kind, 'offline')
  })

  it('weighs frequent words less (SIF)', () => {
    assert.ok(sifWeight(0) < sifWeight(5))
    // "play" is the most frequent fixture word: "play violin" stays closer to violin than to play.
    const vector = sifEmbed(FIXTURE, 'play violin')
    const violin = sifEmbed(FIXTURE, 'violin')
    const play = sifEmbed(FIXTURE, 'play')
    assert.ok(cosineSimilarity(vector, violin) > cosineSimilarity(vector, play))
  })

  it('is registered as embed.model glove-100d-sif, loads nothing until it embeds, and checks dimensions', () => {
    const embedder = createEmbedder(config('glove-100d-sif'))
    assert.equal(embedder?.id, 'offline:glove-100d-sif:100')
    assert.ok(embedder && wordVectorsOf(embedder))
    assert.throws(() => createEmbedder(config('glove-100d-sif', 50)), (error: { code?: string }) => error.code === 'config_invalid')
  })

  it('refuses word vectors of another size', async () => {
    await assert.rejects(createGloVeEmbedder(() => FIXTURE, 100).embed(['violin']), RangeError)
  })

  it('reads the shipped vectors: rows in frequency order, found by word, unit length once scaled', async () => {
    const vectors = installedWordVectors()
    assert.equal(vectors.dimensions, 100)
    assert.equal(vectors.row('the'), 0)
    const violin = vectors.row('violin')
    assert.ok(violin !== undefined && vectors.word(violin) === 'violin')
    assert.equal(vectors.row('zzzqqqxx'), undefined)
    assert.equal(vectors.row('violín'), undefined)
    const scale = vectors.scale(violin) // reads the row from disk
    let norm = 0
    for (let j = 0; j < 100; j++) norm += ((vectors.components[violin * 100 + j] as number) * scale) ** 2
    assert.ok(Math.abs(norm - 1) < 1e-9)
    const [a, b, c] = await createGloVeEmbedder().embed(['she plays the violin', 'he practises the cello', 'we climbed the mountain'])
    assert.ok(a && b && c && cosineSimilarity(a, b) > cosineSimilarity(a, c))
  })
})
