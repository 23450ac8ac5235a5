import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { z } from 'zod'
import type { ConfigValues } from '../config/resolve.ts'
import { EngramError } from '../core/errors.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../testing/fake-openai-server.ts'
import { createLlm } from './create-llm.ts'

const API_KEY = 'sk-test-secret-key-0123456789'
const summarySchema = z.object({
  summary: z.string().describe('one sentence'),
  tags: z.array(z.string()).optional(),
})
const ask = [{ role: 'user' as const, content: 'Summarise: the user likes green tea.' }]

function llmConfig(server: FakeOpenAiServer, overrides: Partial<ConfigValues['llm']> = {}): ConfigValues['llm'] {
  return { provider: 'openai-compatible', baseUrl: server.url, apiKey: API_KEY, model: 'planner-model', fastModel: 'fast-model', timeoutMs: 5_000, maxRetries: 2, ...overrides }
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<EngramError> {
  try {
    await promise
  } catch (error) {
    assert.ok(EngramError.is(error), `expected an EngramError, got ${String(error)}`)
    assert.equal(error.code, code, error.message)
    return error
  }
  assert.fail(`expected ${code}, but the call succeeded`)
}

describe('createLlm through the fake server', () => {
  let server: FakeOpenAiServer
  before(async () => {
    server = await startFakeOpenAiServer()
  })
  after(async () => {
    await server.close()
  })
  beforeEach(() => server.reset())

  for (const provider of ['openai', 'openai-compatible'] as const) {
    it(`${provider}: structured output round-trips and is validated`, async () => {
      const llm = createLlm(llmConfig(server, { provider }))
      server.enqueue({ json: { summary: 'The user likes green tea.', tags: ['preference'] } })
      const result = await llm.generateObject({ schema: summarySchema, name: 'summary', system: 'Be brief.', messages: ask })
      assert.deepEqual(result, { summary: 'The user likes green tea.', tags: ['preference'] })

      const request = server.requests[0]
      assert.equal(request?.path, '/v1/chat/completions')
      assert.equal(request.headers.authorization, `Bearer ${API_KEY}`)
      assert.equal(request.body.response_format.type, 'json_schema')
      assert.equal(request.body.response_format.json_schema.strict, false)
      // The schema also travels in the system prompt, for servers that ignore response_format.
      const system = request.body.messages[0]
      assert.equal(system.role, 'system')
      assert.match(system.content, /^Be brief\./)
      assert.match(system.content, /"summary"/)
      assert.deepEqual(request.body.messages[1], { role: 'user', content: ask[0]?.content })
    })
  }

  it('anthropic: structured output round-trips through /v1/messages', async () => {
    const llm = createLlm(llmConfig(server, { provider: 'anthropic', model: 'claude-sonnet-4-5', fastModel: 'claude-haiku-4-5' }))
    server.enqueue({ json: { summary: 'tea' } }, { text: 'plain answer' })
    assert.deepEqual(await llm.generateObject({ schema: summarySchema, messages: ask, tier: 'fast' }), { summary: 'tea' })
    assert.equal(await llm.generateText({ messages: ask }), 'plain answer')
    const [objectCall, textCall] = server.requests
    assert.equal(objectCall?.path, '/v1/messages')
    assert.equal(objectCall.headers['x-api-key'], API_KEY)
    assert.equal(objectCall.body.model, 'claude-haiku-4-5')
    assert.equal(textCall?.body.model, 'claude-sonnet-4-5')
  })

  it('tiers pick their model; fast falls back to the planning model', async () => {
    const llm = createLlm(llmConfig(server))
    assert.equal(llm.modelFor('planning'), 'planner-model')
    assert.equal(llm.modelFor('fast'), 'fast-model')
    server.enqueue({ json: { summary: 'a' } }, { json: { summary: 'b' } }, { text: 'c' })
    await llm.generateObject({ schema: summarySchema, messages: ask, tier: 'planning' })
    await llm.generateObject({ schema: summarySchema, messages: ask, tier: 'fast' })
    await llm.generateText({ messages: ask, tier: 'fast' })
    assert.deepEqual(server.requests.map((request) => request.body.model), ['planner-model', 'fast-model', 'fast-model'])

    const single = createLlm(llmConfig(server, { fastModel: undefined }))
    assert.equal(single.modelFor('fast'), 'planner-model')
  })

  it('generateText returns the text and passes maxOutputTokens', async () => {
    const llm = createLlm(llmConfig(server))
    server.enqueue({ text: 'Hello, Ada.' })
    assert.equal(await llm.generateText({ system: 'Greet.', messages: ask, maxOutputTokens: 50 }), 'Hello, Ada.')
    assert.equal(server.requests[0]?.body.max_tokens, 50)
    assert.equal(server.requests[0]?.body.response_format, undefined)
  })

  it('retries a 5xx and then succeeds', async () => {
    const llm = createLlm(llmConfig(server), { retryBaseDelayMs: 1 })
    server.enqueue({ fail: { status: 503 } }, { fail: { status: 500 } }, { json: { summary: 'third time' } })
    assert.deepEqual(await llm.generateObject({ schema: summarySchema, messages: ask }), { summary: 'third time' })
    assert.equal(server.requests.length, 3)
  })

  it('5xx exhausting the retries is llm_call_failed with the status and the provider message, never the key', async () => {
    const llm = createLlm(llmConfig(server, { maxRetries: 1 }), { retryBaseDelayMs: 1 })
    const body = { error: { message: `upstream overloaded (key ${API_KEY})`, type: 'server_error' } }
    server.enqueue({ fail: { status: 502, body } }, { fail: { status: 502, body } }, { json: { summary: 'never reached' } })
    const error = await rejectsWithCode(llm.generateObject({ schema: summarySchema, messages: ask }), 'llm_call_failed')
    assert.equal(server.requests.length, 2)
    assert.equal(error.category, 'provider')
    assert.match(error.message, /502/)
    assert.match(error.message, /upstream overloaded/)
    assert.match(error.fix ?? '', /ENGRAM_LLM_BASE_URL/)
    assert.match(error.fix ?? '', /ENGRAM_LLM_API_KEY/)
    assert.doesNotMatch(JSON.stringify(error.toJSON()), new RegExp(API_KEY))
    assert.doesNotMatch(error.message, new RegExp(API_KEY))
  })

  it('a 4xx is not retried', async () => {
    const llm = createLlm(llmConfig(server), { retryBaseDelayMs: 1 })
    server.enqueue({ fail: { status: 404, body: { error: { message: 'model "planner-model" not found' } } } })
    const error = await rejectsWithCode(llm.generateText({ messages: ask }), 'llm_call_failed')
    assert.equal(server.requests.length, 1)
    assert.match(error.message, /404.*not found/)
    assert.equal(error.details.status, 404)
  })

  it('a Retry-After header sets the backoff', async () => {
    const llm = createLlm(llmConfig(server), { retryBaseDelayMs: 60_000 })
    server.enqueue({ fail: { status: 429, headers: { 'retry-after-ms': '5' } } }, { text: 'ok' })
    assert.equal(await llm.generateText({ messages: ask }), 'ok')
  })

  it('a hanging server is llm_timeout within the configured timeout', async () => {
    const llm = createLlm(llmConfig(server, { timeoutMs: 300 }))
    server.enqueue({ hang: true })
    const started = performance.now()
    const error = await rejectsWithCode(llm.generateObject({ schema: summarySchema, messages: ask }), 'llm_timeout')
    const elapsed = performance.now() - started
    assert.ok(elapsed >= 250 && elapsed < 2_000, `took ${elapsed} ms`)
    assert.equal(error.category, 'provider')
    assert.match(error.fix ?? '', /ENGRAM_LLM_TIMEOUT_MS/)
  })

  it('the per-call timeoutMs overrides the configured one', async () => {
    const llm = createLlm(llmConfig(server, { timeoutMs: 60_000 }))
    server.enqueue({ hang: true })
    await rejectsWithCode(llm.generateText({ messages: ask, timeoutMs: 200 }), 'llm_timeout')
  })

  it("the caller's abort signal rejects with the caller's reason", async () => {
    const llm = createLlm(llmConfig(server))
    server.enqueue({ hang: true })
    const controller = new AbortController()
    const reason = new Error('user cancelled')
    setTimeout(() => controller.abort(reason), 50)
    await assert.rejects(llm.generateText({ messages: ask, signal: controller.signal }), (error) => error === reason)
  })

  it('a provider returning garbage is a typed error: llm_invalid_output', async () => {
    const llm = createLlm(llmConfig(server), { retryBaseDelayMs: 1 })

    server.enqueue({ invalidJson: true })
    const notJson = await rejectsWithCode(llm.generateObject({ schema: summarySchema, messages: ask }), 'llm_invalid_output')
    assert.match(notJson.message, /Here is what you asked for/) // a short excerpt of the answer

    server.enqueue({ json: { summary: 42 } })
    const wrongShape = await rejectsWithCode(llm.generateObject({ schema: summarySchema, messages: ask }), 'llm_invalid_output')
    assert.match(wrongShape.message, /summary/)

    server.enqueue({ raw: '{"choices": [oops' })
    await rejectsWithCode(llm.generateObject({ schema: summarySchema, messages: ask }), 'llm_invalid_output')

    server.enqueue({ text: 'I cannot help with that.' })
    await rejectsWithCode(llm.generateObject({ schema: summarySchema, messages: ask }), 'llm_invalid_output')
    assert.equal(server.requests.length, 4) // invalid output is not retried
  })

  it('JSON wrapped in code fences or prose is still read, then validated', async () => {
    const llm = createLlm(llmConfig(server))
    server.enqueue({ text: '```json\n{"summary": "fenced"}\n```' }, { text: 'Here you go: {"summary": "in prose"} Hope it helps!' })
    assert.deepEqual(await llm.generateObject({ schema: summarySchema, messages: ask }), { summary: 'fenced' })
    assert.deepEqual(await llm.generateObject({ schema: summarySchema, messages: ask }), { summary: 'in prose' })
  })

  it('an unreachable server is llm_call_failed after the retries', async () => {
    const closed = await startFakeOpenAiServer()
    const url = closed.url
    await closed.close()
    const llm = createLlm({ ...llmConfig(server), baseUrl: url, maxRetries: 1 }, { retryBaseDelayMs: 1 })
    const error = await rejectsWithCode(llm.generateText({ messages: ask }), 'llm_call_failed')
    assert.equal(error.details.attempts, 2)
  })

  it('uses the injected fetch', async () => {
    let calls = 0
    const countingFetch: typeof fetch = (input, init) => {
      calls++
      return fetch(input, init)
    }
    const llm = createLlm(llmConfig(server), { fetch: countingFetch })
    server.enqueue({ text: 'hi' })
    await llm.generateText({ messages: ask })
    assert.equal(calls, 1)
  })
})

describe('createLlm without a server', () => {
  it('none is unavailable and its calls throw llm_not_configured naming ENGRAM_LLM_PROVIDER', async () => {
    const llm = createLlm({ provider: 'none', baseUrl: undefined, apiKey: undefined, model: undefined, fastModel: undefined, timeoutMs: 1000, maxRetries: 0 })
    assert.equal(llm.available, false)
    assert.equal(llm.provider, 'none')
    assert.equal(llm.modelFor('planning'), undefined)
    const error = await rejectsWithCode(llm.generateObject({ schema: summarySchema, messages: ask }), 'llm_not_configured')
    assert.match(error.fix ?? '', /ENGRAM_LLM_PROVIDER/)
    await rejectsWithCode(llm.generateText({ messages: ask }), 'llm_not_configured')
  })

  it('missing model, base URL or API key is config_invalid naming the variable', () => {
    const base: ConfigValues['llm'] = { provider: 'openai', baseUrl: undefined, apiKey: 'k', model: 'm', fastModel: undefined, timeoutMs: 1000, maxRetries: 0 }
    const cases: [Partial<ConfigValues['llm']>, RegExp][] = [
      [{ model: undefined }, /ENGRAM_LLM_MODEL/],
      [{ apiKey: undefined }, /ENGRAM_LLM_API_KEY/],
      [{ provider: 'anthropic', apiKey: undefined }, /ENGRAM_LLM_API_KEY/],
      [{ provider: 'openai-compatible', baseUrl: undefined }, /ENGRAM_LLM_BASE_URL/],
    ]
    for (const [override, fix] of cases) {
      assert.throws(
        () => createLlm({ ...base, ...override }),
        (error) => EngramError.is(error) && error.code === 'config_invalid' && fix.test(error.fix ?? ''),
      )
    }
    // openai-compatible servers (Ollama, llama.cpp) usually need no key
    assert.equal(createLlm({ ...base, provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', apiKey: undefined }).available, true)
  })
})
