import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createEmbedder } from './create-embedder.ts'
import { createOfflineHashEmbedder, hashEmbed } from './offline-hash-embedder.ts'
import { stem, textFeatures, words } from './text-features.ts'
import { cosineSimilarity } from './vector-math.ts'

const similarity = (left: string, right: string) => cosineSimilarity(hashEmbed(left, 384), hashEmbed(right, 384))

describe('offline hashing embedder', () => {
  it('is picked by embed.model hash-v1: 384 dimensions, id offline:hash-v1:384 (the default offline embedder is GloVe, decision 0012)', async () => {
    const fallback = createEmbedder({ provider: 'offline', baseUrl: undefined, apiKey: undefined, model: undefined, dimensions: undefined, path: undefined, timeoutMs: 1000 })
    assert.match(fallback?.id ?? '', /^offline:glove/)
    const embedder = createEmbedder({ provider: 'offline', baseUrl: undefined, apiKey: undefined, model: 'hash-v1', dimensions: undefined, path: undefined, timeoutMs: 1000 })
    assert.ok(embedder)
    assert.equal(embedder.id, 'offline:hash-v1:384')
    assert.equal(embedder.kind, 'offline')
    assert.equal(embedder.dimensions, 384)
    const custom = createEmbedder({ provider: 'offline', baseUrl: undefined, apiKey: undefined, model: 'hash-v1', dimensions: 256, path: undefined, timeoutMs: 1000 })
    assert.equal(custom?.id, 'offline:hash-v1:256')
  })

  it('is deterministic and gives unit vectors, in order', async () => {
    const embedder = createOfflineHashEmbedder()
    const texts = ['The user prefers dark mode', '', '!!!', 'the a of']
    const first = await embedder.embed(texts)
    const second = await createOfflineHashEmbedder().embed(texts)
    assert.deepEqual(first, second)
    for (const vector of first) {
      assert.equal(vector.length, 384)
      assert.ok(Math.abs(Math.hypot(...vector) - 1) < 1e-5)
    }
  })

  it('is stable across versions (stored vectors depend on it; a change needs a new id, hash-v2)', () => {
    const vector = hashEmbed('Dark mode', 64)
    const nonZero = [...vector.entries()].filter(([, value]) => value !== 0).map(([index, value]) => [index, Number(value.toFixed(4))])
    assert.deepEqual(nonZero, [[5, -0.4364], [12, -0.2182], [16, -0.2182], [20, -0.2182], [25, -0.2182], [26, -0.2182], [38, 0.2182], [52, 0.2182], [61, -0.2182], [63, 0.6547]])
  })

  it('puts similar texts closer than unrelated ones', () => {
    const related = similarity('The user prefers dark mode in the editor', 'User likes dark mode for the editor')
    const unrelated = similarity('The user prefers dark mode in the editor', 'Deploy the database migration on Friday')
    assert.ok(related > 0.5, `related ${related}`)
    assert.ok(Math.abs(unrelated) < 0.2, `unrelated ${unrelated}`)
    assert.ok(similarity('memories are stored', 'memory storing') > 0.6)
  })

  it('keeps a typo’d word close', () => {
    const typo = similarity('database migration failed', 'databse migration failed')
    const other = similarity('database migration failed', 'garden party tomorrow')
    assert.ok(typo > 0.6, `typo ${typo}`)
    assert.ok(similarity('database', 'databse') > similarity('database', 'kitten') + 0.2)
    assert.ok(typo > other + 0.5)
  })

  it('rejects nonsense dimensions, and an unknown offline model is config_invalid', () => {
    assert.throws(() => createOfflineHashEmbedder(4), RangeError)
    assert.throws(
      () => createEmbedder({ provider: 'offline', baseUrl: undefined, apiKey: undefined, model: 'glove', dimensions: undefined, path: undefined, timeoutMs: 1000 }),
      (error: { code?: string; fix?: string }) => error.code === 'config_invalid' && /hash-v1/.test(error.fix ?? ''),
    )
  })

  it('none gives no embedder', () => {
    assert.equal(createEmbedder({ provider: 'none', baseUrl: undefined, apiKey: undefined, model: undefined, dimensions: undefined, path: undefined, timeoutMs: 1000 }), null)
  })
})

describe('text features', () => {
  it('folds case and accents, drops stop words, stems lightly', () => {
    assert.deepEqual(words('Café CRÈME, 2 cups!'), ['cafe', 'creme', '2', 'cups'])
    assert.deepEqual(
      ['running', 'stopped', 'memories', 'classes', 'bus', 'analysis', 'quickly', 'tested', 'falling', 'cats', 'was'].map(stem),
      ['run', 'stop', 'memory', 'class', 'bus', 'analysis', 'quick', 'test', 'fall', 'cat', 'was'],
    )
    const features = textFeatures('The cats are sleeping')
    assert.deepEqual(features.unigrams, ['cat', 'sleep'])
    assert.deepEqual(features.bigrams, ['cat sleep'])
    assert.deepEqual(features.trigramsByWord[0], ['^ca', 'cat', 'ats', 'ts$'])
    assert.deepEqual(textFeatures('it is').unigrams, ['it', 'is']) // stop words only: kept
  })
})
