import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai'
import { fakeEmbeddingVector, startFakeOpenAiServer } from './fake-openai-server.ts'

async function post(url: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) })
}

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read field by field in assertions
async function readJson(response: Response): Promise<any> {
  return response.json()
}

describe('fake OpenAI-compatible server', () => {
  it('answers chat from the queue, then onChat, then a 500 saying nothing was scripted', async () => {
    const server = await startFakeOpenAiServer({ onChat: (request) => ({ text: `default for ${request.model}` }) })
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/)
      server.enqueue({ json: { a: 1 } })
      const first = await readJson(await post(`${server.url}/chat/completions`, { model: 'm1', messages: [{ role: 'user', content: 'hi' }] }))
      assert.equal(first.choices[0].message.content, '{"a":1}')
      assert.equal(first.choices[0].finish_reason, 'stop')
      const second = await readJson(await post(`${server.url}/chat/completions`, { model: 'm2', messages: [] }))
      assert.equal(second.choices[0].message.content, 'default for m2')
      assert.deepEqual(server.requests.map((request) => [request.method, request.path, request.body.model]), [['POST', '/v1/chat/completions', 'm1'], ['POST', '/v1/chat/completions', 'm2']])
    } finally {
      await server.close()
    }
    const bare = await startFakeOpenAiServer()
    try {
      const response = await post(`${bare.url}/chat/completions`, { model: 'm', messages: [] })
      assert.equal(response.status, 500)
      assert.match((await readJson(response)).error.message, /no scripted chat response/)
    } finally {
      await bare.close()
    }
  })

  it('answers a forced tool call with the JSON as arguments, and streams SSE when asked', async () => {
    const server = await startFakeOpenAiServer()
    try {
      server.script([{ json: { ok: true } }, { text: 'streamed text that is longer than sixteen characters' }])
      const tool = await readJson(await post(`${server.url}/chat/completions`, { model: 'm', messages: [], tools: [{ type: 'function', function: { name: 'answer', parameters: {} } }], tool_choice: { type: 'function', function: { name: 'answer' } } }))
      assert.equal(tool.choices[0].finish_reason, 'tool_calls')
      assert.deepEqual(JSON.parse(tool.choices[0].message.tool_calls[0].function.arguments), { ok: true })

      const stream = await post(`${server.url}/chat/completions`, { model: 'm', messages: [], stream: true, stream_options: { include_usage: true } })
      assert.equal(stream.headers.get('content-type'), 'text/event-stream')
      const events = (await stream.text()).split('\n\n').filter(Boolean).map((line) => line.replace(/^data: /, ''))
      assert.equal(events.at(-1), '[DONE]')
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event))
      const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')
      assert.equal(text, 'streamed text that is longer than sixteen characters')
      assert.ok(chunks.at(-1).usage.total_tokens > 0)
    } finally {
      await server.close()
    }
  })

  it('speaks Anthropic messages: text, forced tool use, and its error shape', async () => {
    const server = await startFakeOpenAiServer()
    try {
      server.enqueue({ text: 'hello' }, { json: { x: 1 } }, { fail: { status: 529 } })
      const text = await readJson(await post(`${server.url}/messages`, { model: 'claude', system: 'sys', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }))
      assert.deepEqual(text.content, [{ type: 'text', text: 'hello' }])
      assert.equal(text.stop_reason, 'end_turn')
      const tool = await readJson(await post(`${server.url}/messages`, { model: 'claude', messages: [], tools: [{ name: 'json', input_schema: {} }], tool_choice: { type: 'any' } }))
      assert.deepEqual(tool.content[0].input, { x: 1 })
      assert.equal(tool.stop_reason, 'tool_use')
      const failed = await post(`${server.url}/messages`, { model: 'claude', messages: [] })
      assert.equal(failed.status, 529)
      assert.equal((await readJson(failed)).type, 'error')
    } finally {
      await server.close()
    }
  })

  it('embeddings: deterministic unit vectors, configurable dims, scripted vectors and failures', async () => {
    const server = await startFakeOpenAiServer({ embeddingDimensions: 12 })
    try {
      const one = await readJson(await post(`${server.url}/embeddings`, { model: 'e', input: ['a', 'b'] }))
      assert.deepEqual(one.data.map((item: { index: number }) => item.index), [0, 1])
      assert.deepEqual(one.data[0].embedding, fakeEmbeddingVector('a', 12))
      assert.ok(Math.abs(Math.hypot(...one.data[1].embedding) - 1) < 1e-9)
      const sized = await readJson(await post(`${server.url}/embeddings`, { model: 'e', input: 'a', dimensions: 5 }))
      assert.equal(sized.data[0].embedding.length, 5)
      server.enqueueEmbeddings({ vectors: [[1, 2]] }, { fail: { status: 400 } })
      assert.deepEqual((await readJson(await post(`${server.url}/embeddings`, { input: ['x'] }))).data[0].embedding, [1, 2])
      assert.equal((await post(`${server.url}/embeddings`, { input: ['x'] })).status, 400)
      const models = await readJson(await fetch(`${server.url}/models`))
      assert.deepEqual(models.data.map((model: { id: string }) => model.id), ['fake-model', 'fake-embedding'])
    } finally {
      await server.close()
    }
  })

  it('with apiKey: a wrong or missing key gets the provider\'s 401 on every endpoint, the right key passes', async () => {
    const server = await startFakeOpenAiServer({ apiKey: 'sk-right', onChat: () => ({ text: 'hi' }) })
    try {
      const call = (path: string, headers: Record<string, string>) =>
        fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'm', messages: [], input: ['x'] }) })
      const wrong = await call('/chat/completions', { authorization: 'Bearer sk-wrong' })
      assert.equal(wrong.status, 401)
      assert.equal((await readJson(wrong)).error.code, 'invalid_api_key')
      assert.equal((await call('/embeddings', {})).status, 401)
      const anthropic = await call('/messages', { 'x-api-key': 'sk-wrong' })
      assert.equal(anthropic.status, 401)
      assert.equal((await readJson(anthropic)).error.type, 'authentication_error')
      assert.equal((await call('/chat/completions', { authorization: 'Bearer sk-right' })).status, 200)
      assert.equal((await call('/embeddings', { 'x-api-key': 'sk-right' })).status, 200)
      assert.equal(server.requests.length, 5, 'refused requests are recorded too')
    } finally {
      await server.close()
    }
  })

  it('scripted tool calls reach the AI SDK, generated and streamed', async () => {
    const server = await startFakeOpenAiServer()
    try {
      const model = createOpenAICompatible({ name: 'fake', baseURL: server.url, apiKey: 'k' })('m')
      const tools = { lookup: tool({ inputSchema: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } } }), execute: async ({ q }) => `found ${q}` }) }
      server.enqueue({ toolCalls: [{ name: 'lookup', input: { q: 'tea' }, id: 'call_a' }], text: 'Looking.' }, { text: 'Tea it is.' })
      const generated = await generateText({ model, tools, prompt: 'tea?', stopWhen: stepCountIs(2) })
      assert.deepEqual(generated.steps[0]?.toolCalls.map((call) => [call.toolCallId, call.toolName, call.input]), [['call_a', 'lookup', { q: 'tea' }]])
      assert.equal(generated.steps[0]?.text, 'Looking.')
      assert.equal(generated.text, 'Tea it is.')
      assert.equal(server.requests[1]?.body.messages.at(-1).content, 'found tea')

      server.enqueue({ toolCalls: [{ name: 'lookup', input: { q: 'milk' } }] }, { text: 'Milk too.' })
      const streamed = streamText({ model, tools, prompt: 'milk?', stopWhen: stepCountIs(2) })
      assert.equal(await streamed.text, 'Milk too.')
      assert.deepEqual((await streamed.steps)[0]?.toolCalls.map((call) => call.input), [{ q: 'milk' }])
    } finally {
      await server.close()
    }
  })

  it('raw and invalid-JSON steps send what they promise', async () => {
    const server = await startFakeOpenAiServer()
    try {
      server.enqueue({ raw: '{"broken' }, { invalidJson: true })
      assert.equal(await (await post(`${server.url}/chat/completions`, { messages: [] })).text(), '{"broken')
      const content = (await readJson(await post(`${server.url}/chat/completions`, { messages: [] }))).choices[0].message.content
      assert.throws(() => JSON.parse(content))
    } finally {
      await server.close()
    }
  })

  it('close() ends hung requests and returns promptly; calling it twice is fine', async () => {
    const server = await startFakeOpenAiServer()
    server.enqueue({ hang: true })
    const pending = post(`${server.url}/chat/completions`, { messages: [] })
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const started = performance.now()
    await server.close()
    await server.close()
    assert.ok(performance.now() - started < 1_000)
    await assert.rejects(pending) // the client sees the connection drop
  })
})
