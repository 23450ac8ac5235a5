/**
 * The explicit loop with the AI SDK, as its users write it: `messages: turn.messages`,
 * `tools: toAiSdkTools(turn.tools)`, `session.end(turn, result.responseMessages)` — no mapping in
 * between. The assignments below are the type test (tsconfig.check.json type-checks this file):
 * `turn.messages` is a `ModelMessage[]` and the AI SDK's response messages are a `TurnReply`, while
 * the core never imports `ai`. At run time, tool calls survive `end` and reach the model again.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, type ModelMessage, stepCountIs, streamText } from 'ai'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { toAiSdkTools } from '../src/tools/ai-sdk-tools.ts'
import { createMind, type Mind } from '../src/mind.ts'
import type { TurnReply } from '../src/session/turn.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'

let tmp: TempHome
let server: FakeOpenAiServer
let mind: Mind
const clock = new ManualClock('2026-03-02T09:00:00Z')

/** The agent's own tool, handed to the session beside engram's. */
const weather: ToolDefinition<{ city: string }> = {
  name: 'weather',
  description: 'The weather in a city today.',
  inputSchema: z.object({ city: z.string() }),
  run: async ({ city }) => ({ text: `${city}: 14°C, light rain` }),
}

before(async () => {
  tmp = makeTempHome()
  server = await startFakeOpenAiServer()
  mind = await createMind({ home: tmp.home, env: tmp.env, clock })
})
after(async () => {
  await mind?.close()
  await server?.close()
  tmp?.cleanup()
})

const model = () => createOpenAICompatible({ name: 'agent', baseURL: server.url, apiKey: 'test' })('agent-model')

test('turn.messages go in and response messages come back as they are; the tool call is seen again next turn', async () => {
  server.enqueue({ toolCalls: [{ id: 'call_w', name: 'weather', input: { city: 'Lisbon' } }] }, { text: 'Take an umbrella.' })
  const session = mind.session('explicit', { user: 'ada', tools: [weather as ToolDefinition<unknown>] })
  const turn = await session.begin('Do I need an umbrella in Lisbon?')
  const messages: ModelMessage[] = turn.messages
  const result = await generateText({ model: model(), system: turn.system, messages, tools: toAiSdkTools(turn.tools), stopWhen: stepCountIs(3) })
  const reply: TurnReply = result.responseMessages
  // The deprecated `response.messages` (AI SDK 7: the final step's only) is accepted as well.
  const finalStepOnly: TurnReply = result.response.messages
  assert.equal(finalStepOnly.length, 1)
  const ended = await session.end(turn, reply)
  assert.equal(ended.messageIds.length, 3)
  await mind.idle()

  server.enqueue({ text: 'It will still be raining.' })
  const next = mind.session('explicit', { user: 'ada', tools: [weather as ToolDefinition<unknown>] })
  const turn2 = await next.begin('And this evening?')
  assert.deepEqual(
    turn2.messages.map((m) => [m.role, typeof m.content === 'string' ? m.content : m.content.map((part) => part.type)]),
    [
      ['user', 'Do I need an umbrella in Lisbon?'],
      ['assistant', ['tool-call']],
      ['tool', ['tool-result']],
      ['assistant', 'Take an umbrella.'],
      ['user', 'And this evening?'],
    ],
  )
  const streamed = streamText({ model: model(), system: turn2.system, messages: turn2.messages, tools: toAiSdkTools(turn2.tools) })
  assert.equal(await streamed.text, 'It will still be raining.')
  await next.end(turn2, await streamed.responseMessages)
  const wire = server.requests.at(-1)?.body.messages as Array<{ role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }>
  const call = wire.find((m) => m.tool_calls)?.tool_calls?.[0]
  assert.deepEqual([call?.id, call?.function.name, JSON.parse(call?.function.arguments ?? '{}')], ['call_w', 'weather', { city: 'Lisbon' }])
  assert.equal(wire.find((m) => m.role === 'tool')?.content, 'Lisbon: 14°C, light rain')
  await mind.idle()
})

test('a tool call whose result was never recorded reaches the model as text, not as a call the AI SDK refuses', async () => {
  const session = mind.session('unanswered', { user: 'ada' })
  const turn = await session.begin('Look up the vet.')
  // The host recorded the call but not its result (it crashed, or the loop stopped there).
  await session.end(turn, [{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_x', toolName: 'recall', input: { query: 'vet' } }] }])
  const turn2 = await mind.session('unanswered', { user: 'ada' }).begin('Well?')
  assert.deepEqual(turn2.messages[1], { role: 'assistant', content: '[tool call recall call_x] {"query":"vet"}' })
  server.enqueue({ text: 'Let me try again.' })
  const result = await generateText({ model: model(), system: turn2.system, messages: turn2.messages })
  assert.equal(result.text, 'Let me try again.')
})
