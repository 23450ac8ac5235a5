import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import type { ConfigValues } from '../../config/resolve.ts'
import { EngramError } from '../../core/errors.ts'
import { type FakeOpenAiServer, fakeEmbeddingVector, startFakeOpenAiServer } from '../../testing/fake-openai-server.ts'
import { createEmbedder } from './create-embedder.ts'
import { EMBED_BATCH_SIZE, knownEmbeddingDimensions } from './openai-compatible-embedder.ts'

const API_KEY = 'emb-secret-key-0123456789'

function embedConfig(server: FakeOpenAiServer, overrides: Partial<ConfigValues['embed']> = {}): ConfigValues['embed'] {
  return { provider: 'openai-compatible', baseUrl: server.url, apiKey: API_KEY, model: 'fake-embedding', dimensions: 24, path: undefined, timeoutMs: 5_000, ...overrides }
}

function norm(vector: Float32Array): number {
  return Math.hypot(...vector)
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<EngramError> {
  try {
    await promise
  } catch (error) {
    assert.ok(EngramError.is(error), `expected an EngramError, got ${String(error)}`)
    assert.equal(error.code, code, error.message)
    return error
  }
  assert.fail(`expected ${code}`)
}

describe('openai-compatible embedder through the fake server', () => {
  let server: FakeOpenAiServer
  before(async () => {
    server = await startFakeOpenAiServer()
  })
  after(async () => {
    await server.close()
  })
  beforeEach(() => server.reset())

  it('embeds in order, unit length, sending model, dimensions and the key', async () => {
    const embedder = createEmbedder(embedConfig(server))
    assert.ok(embedder)
    assert.equal(embedder.id, 'openai-compatible:fake-embedding:24')
    assert.equal(embedder.kind, 'remote')
    assert.equal(embedder.dimensions, 24)
    server.enqueueEmbeddings({ deterministic: true, reverse: true }) // the server lists items last-first
    const texts = ['first memory', 'second memory', 'third memory']
    const vectors = await embedder.embed(texts, 'document')
    assert.equal(vectors.length, 3)
    for (const [index, vector] of vectors.entries()) {
      assert.equal(vector.length, 24)
      assert.ok(Math.abs(norm(vector) - 1) < 1e-5)
      const expected = fakeEmbeddingVector(texts[index] as string, 24)
      assert.ok(expected.every((value, column) => Math.abs(value - (vector[column] as number)) < 1e-5), `vector ${index} is out of order`)
    }
    const request = server.requests[0]
    assert.equal(request?.path, '/v1/embeddings')
    assert.deepEqual(request.body.input, texts)
    assert.equal(request.body.model, 'fake-embedding')
    assert.equal(request.body.dimensions, 24)
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`)
  })

  it('normalises vectors the server sends unnormalised', async () => {
    const embedder = createEmbedder(embedConfig(server, { dimensions: 8 }))
    assert.ok(embedder)
    server.enqueueEmbeddings({ vectors: [[3, 4, 0, 0, 0, 0, 0, 0]] })
    const [vector] = await embedder.embed(['x'])
    assert.deepEqual(Array.from(vector ?? []), [0.6, 0.8, 0, 0, 0, 0, 0, 0].map((value) => Math.fround(value)))
  })

  it(`batches more than ${EMBED_BATCH_SIZE} inputs and keeps the overall order`, async () => {
    const embedder = createEmbedder(embedConfig(server, { dimensions: 8 }))
    assert.ok(embedder)
    const texts = Array.from({ length: 200 }, (_, index) => `text number ${index}`)
    const vectors = await embedder.embed(texts)
    assert.deepEqual(server.requests.map((request) => request.body.input.length), [96, 96, 8])
    assert.equal(vectors.length, 200)
    const expectedLast = fakeEmbeddingVector('text number 199', 8)
    assert.ok(expectedLast.every((value, column) => Math.abs(value - (vectors[199]?.[column] as number)) < 1e-5))
    assert.deepEqual(await embedder.embed([]), [])
  })

  it('a known model needs no dimensions, and none is sent', async () => {
    const embedder = createEmbedder(embedConfig(server, { model: 'nomic-embed-text:latest', dimensions: undefined }))
    assert.equal(embedder?.dimensions, 768)
    server.enqueueEmbeddings({ vectors: [fakeEmbeddingVector('hello', 768)] })
    assert.equal((await embedder?.embed(['hello']))?.[0]?.length, 768)
    assert.equal(server.requests[0]?.body.dimensions, undefined)
    assert.equal(knownEmbeddingDimensions('openai/text-embedding-3-small'), 1536)
  })

  it('an unknown model without dimensions is config_invalid naming ENGRAM_EMBED_DIMENSIONS', () => {
    assert.throws(
      () => createEmbedder(embedConfig(server, { model: 'my-custom-model', dimensions: undefined })),
      (error) => EngramError.is(error) && error.code === 'config_invalid' && /ENGRAM_EMBED_DIMENSIONS/.test(error.fix ?? ''),
    )
  })

  it('an HTTP error is embed_failed with the status and the fix, never the key', async () => {
    const embedder = createEmbedder(embedConfig(server))
    assert.ok(embedder)
    server.enqueueEmbeddings({ fail: { status: 401, body: { error: { message: `invalid api key ${API_KEY}` } } } })
    const error = await rejectsWithCode(embedder.embed(['a']), 'embed_failed')
    assert.equal(error.category, 'provider')
    assert.match(error.message, /HTTP 401: invalid api key/)
    assert.doesNotMatch(error.message, new RegExp(API_KEY))
    assert.match(error.fix ?? '', /ENGRAM_EMBED_BASE_URL/)
    assert.equal(server.requests.length, 1) // 4xx is not retried
  })

  it('retries a 5xx, then fails with embed_failed when it persists', async () => {
    const embedder = createEmbedder(embedConfig(server), { retryBaseDelayMs: 1 })
    assert.ok(embedder)
    server.enqueueEmbeddings({ fail: { status: 503 } }, { deterministic: true })
    assert.equal((await embedder.embed(['a'])).length, 1)
    server.reset()
    server.enqueueEmbeddings({ fail: { status: 500 } }, { fail: { status: 500 } }, { fail: { status: 500 } })
    await rejectsWithCode(embedder.embed(['a']), 'embed_failed')
    assert.equal(server.requests.length, 3)
  })

  it('a malformed body, a wrong count or wrong dimensions is embed_failed', async () => {
    const embedder = createEmbedder(embedConfig(server, { dimensions: 8 }))
    assert.ok(embedder)
    server.enqueueEmbeddings({ raw: 'not json at all' })
    await rejectsWithCode(embedder.embed(['a']), 'embed_failed')
    server.enqueueEmbeddings({ vectors: [[1, 0, 0, 0, 0, 0, 0, 0]] })
    await rejectsWithCode(embedder.embed(['a', 'b']), 'embed_failed')
    server.enqueueEmbeddings({ vectors: [[1, 0, 0]] })
    const error = await rejectsWithCode(embedder.embed(['a']), 'embed_failed')
    assert.match(error.message, /3 dimensions but 8/)
  })

  it('a hanging server is embed_failed after embed.timeoutMs', async () => {
    const embedder = createEmbedder(embedConfig(server, { timeoutMs: 200 }))
    assert.ok(embedder)
    server.enqueueEmbeddings({ hang: true })
    const error = await rejectsWithCode(embedder.embed(['a']), 'embed_failed')
    assert.match(error.message, /ENGRAM_EMBED_TIMEOUT_MS/)
  })
})
