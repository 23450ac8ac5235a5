/** The public entry points load, export what the docs promise, and the build produces them. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { engramMiddleware } from '../src/ai-sdk.ts'
import * as engram from '../src/index.ts'
import { createMemoryResources, createMindMcpServer } from '../src/mcp.ts'
import * as testing from '../src/test.ts'

test('the root entry exports the session API, config and errors', () => {
  for (const name of ['createMind', 'resolveConfig', 'EngramError', 'ErrorCode', 'createLlm', 'createEmbedder', 'openEmbeddedBackend', 'countTokens']) {
    assert.equal(typeof (engram as Record<string, unknown>)[name], name === 'ErrorCode' ? 'object' : 'function', name)
  }
})

test('the root entry exports these values and no other: what a host uses, named one by one (decision 0062)', () => {
  const values = Object.keys(engram).sort()
  const expected = [
    'ACTIVITY_LABELS', 'ACTIVITY_TYPES', 'CONFIDENCES', 'ENGRAM_KINDS', 'ENGRAM_SCOPES', 'ENGRAM_SOURCES', 'EngramError', 'ErrorCode', 'SETTINGS',
    'countTokens', 'createEmbedder', 'createLlm', 'createMind', 'describeError', 'executeToolCall', 'listAgents', 'openEmbeddedBackend',
    'resolveConfig', 'systemClock', 'toEngramTools', 'toOpenAiFunctions', 'truncateToTokens',
  ]
  assert.deepEqual(values, expected.sort())
  // The internal entry stays internal.
  for (const internal of ['internalsOf', 'openMindInternals', 'homeLayout']) assert.equal((engram as Record<string, unknown>)[internal], undefined, internal)
})

test('a host holding only the public Mind hands it to engram/mcp and engram/ai-sdk; a look-alike is refused', async () => {
  const tmp = testing.makeTempHome()
  const mind: engram.Mind = await engram.createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, embedder: null })
  try {
    assert.equal('backend' in mind, true, 'one object at run time: the internals are there, the type does not show them')
    const server = createMindMcpServer(mind)
    const resources = await createMemoryResources(mind).list()
    assert.ok(Array.isArray(resources))
    await server.close()
    assert.equal(typeof engramMiddleware({ mind, sessionId: 'public-api' }).wrapGenerate, 'function')
    const lookAlike: engram.Mind = { ...mind }
    assert.throws(() => createMindMcpServer(lookAlike), (error: unknown) => engram.EngramError.is(error) && error.code === engram.ErrorCode.invalidArgument && /createMind\(\)/.test(error.fix ?? ''))
  } finally {
    await mind.close()
    tmp.cleanup()
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
