import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { z } from 'zod'
import { ManualClock } from '../core/clock.ts'
import { EngramError } from '../core/errors.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../testing/fake-openai-server.ts'
import { createLlm } from './create-llm.ts'
import { createEmbedder } from './embedders/create-embedder.ts'
import { createNoneLlm } from './none-llm.ts'
import { AUTH_PAUSE_MS, type ModelFailure, watchEmbedder, watchLlm } from './model-failures.ts'

const RIGHT_KEY = 'sk-right-0123456789'
const WRONG_KEY = 'sk-wrong-0123456789'
const schema = z.object({ summary: z.string() })
const ask = [{ role: 'user' as const, content: 'Summarise: the user likes green tea.' }]

async function failure(promise: Promise<unknown>): Promise<EngramError> {
  try {
    await promise
  } catch (error) {
    assert.ok(EngramError.is(error), String(error))
    return error
  }
  assert.fail('expected the call to fail')
}

describe('watched models, through the real provider code and the fake server', () => {
  let server: FakeOpenAiServer
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  before(async () => {
    server = await startFakeOpenAiServer({ apiKey: RIGHT_KEY })
  })
  after(async () => {
    await server.close()
  })
  beforeEach(() => server.reset())

  const llmWith = (apiKey: string) =>
    createLlm({ provider: 'openai-compatible', baseUrl: server.url, apiKey, model: 'm', fastModel: undefined, timeoutMs: 5_000, maxRetries: 2 }, { retryBaseDelayMs: 1 })
  const chatRequests = () => server.requests.filter((request) => request.path === '/v1/chat/completions').length

  it('a wrong key: described as an authentication failure with its fix, not retried, then the model is paused', async () => {
    const seen: ModelFailure[] = []
    const llm = watchLlm(llmWith(WRONG_KEY), { clock, onFailure: (f) => void seen.push(f) })
    const first = await failure(llm.generateObject({ schema, name: 'episode', messages: ask }))
    assert.equal(first.code, 'llm_call_failed', 'the caller gets the provider error as it was')
    assert.equal(chatRequests(), 1, 'a 401 is not retried')
    assert.equal(seen.length, 1)
    const [auth] = seen
    assert.equal(auth?.kind, 'auth')
    assert.equal(auth?.status, 401)
    assert.equal(auth?.task, 'episode')
    assert.equal(auth?.title, 'LLM authentication failed (HTTP 401)')
    assert.match(auth?.fix ?? '', /llm\.apiKey \/ ENGRAM_LLM_API_KEY/)
    assert.match(auth?.message ?? '', /Incorrect API key/)
    assert.doesNotMatch(JSON.stringify(seen), new RegExp(WRONG_KEY), 'the key never appears')

    // During the pause no request goes out; each call still fails, and is still reported.
    const paused = await failure(llm.generateText({ messages: ask }))
    assert.equal(paused.code, 'llm_call_failed')
    assert.match(paused.message, /was not called: it refused its API key at 2026-03-02T09:00:00.000Z \(HTTP 401\)/)
    assert.equal(chatRequests(), 1)
    assert.equal(seen[1]?.kind, 'auth')
    assert.equal(seen[1]?.status, 401, 'grouped with the refusal that caused it')
    assert.equal(seen[1]?.paused, true)

    clock.advance(AUTH_PAUSE_MS)
    await failure(llm.generateObject({ schema, name: 'identity_facts', messages: ask }))
    assert.equal(chatRequests(), 2, 'after the pause the model is asked again')
  })

  it('the right key works and reports nothing; a 503 is retried and described with the provider fix; a caller abort is not a failure', async () => {
    const seen: ModelFailure[] = []
    const llm = watchLlm(llmWith(RIGHT_KEY), { clock, onFailure: (f) => void seen.push(f) })
    server.enqueue({ json: { summary: 'tea' } })
    assert.deepEqual(await llm.generateObject({ schema, name: 'summary', messages: ask }), { summary: 'tea' })
    server.enqueue({ fail: { status: 503 } }, { fail: { status: 503 } }, { fail: { status: 503 } })
    await failure(llm.generateObject({ schema, name: 'summary', messages: ask }))
    assert.equal(seen.length, 1)
    assert.equal(seen[0]?.kind, 'server_error')
    assert.equal(seen[0]?.title, 'LLM server error (HTTP 503)')
    assert.match(seen[0]?.fix ?? '', /ENGRAM_LLM_BASE_URL/)

    server.enqueue({ hang: true })
    const controller = new AbortController()
    const call = llm.generateText({ messages: ask, signal: controller.signal })
    setTimeout(() => controller.abort(new Error('the user stopped')), 20)
    await assert.rejects(call, /the user stopped/)
    assert.equal(seen.length, 1, 'the caller stopping is not the model failing')
    const none = createNoneLlm()
    assert.equal(watchLlm(none, { clock, onFailure: () => {} }), none, 'no model, nothing to watch')
  })

  it('a remote embedder with a wrong key is reported as the embedder, with the embed.* fix; the built-in one is left as it is', async () => {
    const seen: ModelFailure[] = []
    const remote = createEmbedder({ provider: 'openai-compatible', baseUrl: server.url, apiKey: WRONG_KEY, model: 'e', dimensions: 16, path: undefined, timeoutMs: 5_000 })
    assert.ok(remote)
    const embedder = watchEmbedder(remote, { clock: new ManualClock(), onFailure: (f) => void seen.push(f) })
    assert.equal(embedder.id, remote.id)
    const error = await failure(embedder.embed(['hello'], 'query'))
    assert.equal(error.code, 'embed_failed')
    assert.equal(seen[0]?.source, 'embedder')
    assert.equal(seen[0]?.title, 'embedder authentication failed (HTTP 401)')
    assert.equal(seen[0]?.task, 'query embedding')
    assert.match(seen[0]?.fix ?? '', /embed\.apiKey \/ ENGRAM_EMBED_API_KEY/)

    const offline = createEmbedder({ provider: 'offline', baseUrl: undefined, apiKey: undefined, model: 'hash-v1', dimensions: undefined, path: undefined, timeoutMs: 1 })
    assert.ok(offline)
    assert.equal(watchEmbedder(offline, { clock, onFailure: () => {} }), offline)
  })
})
