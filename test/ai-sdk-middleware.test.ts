/**
 * The one-line integration: `wrapLanguageModel({ model, middleware: engramMiddleware(...) })` with
 * the AI SDK's own `generateText` / `streamText` against the fake model server. A user message is
 * primed once however many steps its tool loop takes, and the whole turn — tool calls, their
 * results, the answer — is recorded after it, streamed or not. A new middleware per request, as a
 * server creates it.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { after, before, beforeEach, test } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai'
import { ManualClock } from '../src/core/clock.ts'
import { partsOf } from '../src/core/message-parts.ts'
import type { StoredMessage } from '../src/core/message.ts'
import { engramMiddleware } from '../src/interfaces/ai-sdk/middleware.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

let tmp: TempHome
let server: FakeOpenAiServer
let mind: MindInternals
const clock = new ManualClock('2026-03-02T09:00:00Z')

before(async () => {
  tmp = makeTempHome()
  server = await startFakeOpenAiServer()
  mind = await openMindInternals({ home: tmp.home, env: tmp.env, clock })
})
after(async () => {
  await mind?.close()
  await server?.close()
  tmp?.cleanup()
})
beforeEach(() => server.reset())

/** A model wrapped for one request of one conversation, as a server would build it. */
function wrapped(sessionId: string, options: { history?: 'engram' | 'host' } = {}) {
  const memory = engramMiddleware({ mind, sessionId, user: 'ada', ...options })
  const base = createOpenAICompatible({ name: 'agent', baseURL: server.url, apiKey: 'test' })('agent-model')
  return { memory, model: wrapLanguageModel({ model: base, middleware: memory }) }
}

async function stored(sessionId: string): Promise<StoredMessage[]> {
  const conversation = await mind.backend.context.findConversation(sessionId, 'default')
  return conversation ? mind.backend.context.messages(conversation.id, {}) : []
}

type WireMessage = { role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }
const sent = (index: number): WireMessage[] => server.requests[index]?.body.messages

test('a tool loop is primed once and recorded whole: call, result, answer', async () => {
  server.enqueue({ toolCalls: [{ id: 'call_m', name: 'memorize', input: { entries: [{ text: 'Miso the cat is allergic to chicken', kind: 'lesson' }] } }] }, { text: 'Noted.' })
  const { memory, model } = wrapped('loop')
  const result = await generateText({ model, tools: memory.tools, prompt: 'Please remember that Miso is allergic to chicken', stopWhen: stepCountIs(3) })
  assert.equal(result.text, 'Noted.')
  await mind.idle()

  // Two model calls, one priming: the same system prompt in both, the user's message stored once.
  assert.equal(server.requests.length, 2)
  const [first, second] = [sent(0), sent(1)]
  assert.equal(first[0]?.role, 'system')
  assert.equal(second[0]?.content, first[0]?.content)
  assert.deepEqual(second.slice(1).map((m) => m.role), ['user', 'assistant', 'tool'])
  assert.deepEqual(server.requests[0]?.body.tools.map((t: { function: { name: string } }) => t.function.name).sort(), Object.keys(memory.tools).sort())

  const messages = await stored('loop')
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant'])
  assert.deepEqual(partsOf(messages[1]?.meta)?.map((part) => part.type), ['tool-call'])
  assert.match(messages[2]?.content ?? '', /^\[tool result memorize call_m\] /, messages[2]?.content)
  assert.equal(messages[3]?.content, 'Noted.')

  // The next request (a new middleware) sends only its message: engram supplies the conversation —
  // the earlier tool call included — and the memorized lesson is in the system prompt.
  server.enqueue({ text: 'Tuna, not chicken.' })
  const next = wrapped('loop')
  const answer = await generateText({ model: next.model, tools: next.memory.tools, prompt: 'What should Miso eat?' })
  assert.equal(answer.text, 'Tuna, not chicken.')
  const replayed = sent(2)
  assert.match(replayed[0]?.content ?? '', /Miso the cat is allergic to chicken/)
  assert.deepEqual(replayed.slice(1).map((m) => m.role), ['user', 'assistant', 'tool', 'assistant', 'user'])
  assert.equal(replayed.find((m) => m.tool_calls)?.tool_calls?.[0]?.id, 'call_m')
  await mind.idle()
})

test('streamed: recorded when the stream finishes, the journal closed; tool wisdom on its tool', async () => {
  await mind.encode([{ text: 'search_memory finds pet facts under the pet name', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', tool: 'search_memory' }])
  server.enqueue({ toolCalls: [{ id: 'call_s', name: 'search_memory', input: { query: 'Miso' } }], text: 'Let me check.' }, { text: 'Miso eats tuna; no chicken, ever.' })
  const { memory, model } = wrapped('stream')
  const result = streamText({ model, tools: memory.tools, prompt: 'What does Miso eat?', stopWhen: stepCountIs(3) })
  let streamedText = ''
  let journaled = false
  let journalPath: string | undefined
  for await (const delta of result.textStream) {
    streamedText += delta
    const open = mind.journals.find({ sessionId: 'stream' })
    journaled ||= open?.isOpen === true
    journalPath ??= open?.path
  }
  assert.ok(journaled, 'the stream is written to the journal while it runs')
  assert.equal(streamedText, 'Let me check.Miso eats tuna; no chicken, ever.')
  await mind.idle()
  assert.equal(server.requests.length, 2)
  assert.equal(sent(1)[0]?.content, sent(0)[0]?.content, 'primed once')
  const described = Object.fromEntries(server.requests[0]?.body.tools.map((t: { function: { name: string; description: string } }) => [t.function.name, t.function.description]))
  assert.match(described.search_memory, /Lessons from past sessions[\s\S]*finds pet facts under the pet name/)
  assert.doesNotMatch(described.recall, /finds pet facts/)

  const messages = await stored('stream')
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant'])
  assert.equal(messages[1]?.content, 'Let me check.\n[tool call search_memory call_s] {"query":"Miso"}')
  assert.match(messages[2]?.content ?? '', /^\[tool result search_memory call_s\] /)
  assert.equal(messages[3]?.content, 'Miso eats tuna; no chicken, ever.')
  assert.equal(mind.journals.find({ sessionId: 'stream' }), undefined, 'finalized when the turn was recorded')
  assert.equal(existsSync(journalPath as string), false)
})

test('a retried call does not store the message twice', async () => {
  server.enqueue({ fail: { status: 503, headers: { 'retry-after-ms': '10' } } }, { text: 'Hello again.' })
  const { model } = wrapped('retry')
  assert.equal((await generateText({ model, prompt: 'Hello?' })).text, 'Hello again.')
  await mind.idle()
  assert.equal(server.requests.length, 2)
  assert.deepEqual((await stored('retry')).map((m) => [m.role, m.content]), [['user', 'Hello?'], ['assistant', 'Hello again.']])
})

test('a loop cut off after a tool call is recorded, with the result, by the next message or flush()', async () => {
  // The AI SDK's default stops after one step: the tool ran, but no model call followed it.
  server.enqueue({ toolCalls: [{ id: 'call_r', name: 'recall', input: { query: 'vet' } }] })
  const first = wrapped('cut')
  const cut = await generateText({ model: first.model, tools: first.memory.tools, prompt: 'When was the vet?' })
  assert.equal(cut.finishReason, 'tool-calls')
  assert.deepEqual((await stored('cut')).map((m) => m.role), ['user'])

  server.enqueue({ text: 'Next Tuesday.' })
  const second = wrapped('cut')
  await generateText({ model: second.model, tools: second.memory.tools, prompt: 'And the next one?' })
  await mind.idle()
  const messages = await stored('cut')
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'user', 'assistant'])
  assert.match(messages[2]?.content ?? '', /^\[tool result recall call_r\] /)

  server.enqueue({ toolCalls: [{ id: 'call_f', name: 'recall', input: { query: 'food' } }] })
  const third = wrapped('cut')
  await generateText({ model: third.model, tools: third.memory.tools, prompt: 'And food?' })
  const ended = await third.memory.flush()
  assert.equal(ended?.messageIds.length, 2)
  assert.equal(await third.memory.flush(), undefined, 'nothing left open')
  await mind.idle()
})

test("history 'host': the host's messages as sent, engram's memory in the system prompt", async () => {
  server.enqueue({ text: 'Yes.' })
  const { model } = wrapped('host', { history: 'host' })
  await generateText({
    model,
    system: 'Answer in one word.',
    messages: [
      { role: 'user', content: 'Is Miso a cat?' },
      { role: 'assistant', content: 'Yes.' },
      { role: 'user', content: 'Still?' },
    ],
  })
  const wire = sent(0)
  assert.deepEqual(wire.map((m) => m.role), ['system', 'user', 'assistant', 'user'])
  assert.match(wire[0]?.content ?? '', /## Your memory[\s\S]*Answer in one word\.$/, "engram's prompt first, the host's instructions last")
  await mind.idle()
  assert.deepEqual((await stored('host')).map((m) => m.content), ['Still?', 'Yes.'])
})
