/** The public entry points load, export what the docs promise, and the build produces them. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as engram from '../src/index.ts'
import * as testing from '../src/test.ts'

test('the root entry exports the session API, config and errors', () => {
  for (const name of ['createMind', 'resolveConfig', 'EngramError', 'ErrorCode', 'createLlm', 'createEmbedder', 'openEmbeddedBackend', 'countTokens']) {
    assert.equal(typeof (engram as Record<string, unknown>)[name], name === 'ErrorCode' ? 'object' : 'function', name)
  }
})

test('engram/test exports the fake server, fake models, a manual clock and temp homes', async () => {
  const server = await testing.startFakeOpenAiServer()
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/)
  } finally {
    await server.close()
  }
  const clock = new testing.ManualClock('2026-01-01T00:00:00Z')
  clock.advanceDays(30)
  assert.equal(clock.now().toISOString(), '2026-01-31T00:00:00.000Z')
  const embedder = testing.createFakeEmbedder(8)
  assert.equal((await embedder.embed(['x']))[0]?.length, 8)
  const tmp = testing.makeTempHome()
  tmp.cleanup()
})
