/**
 * The agent loop end to end, as an agent built on the AI SDK runs it: several sessions across
 * simulated days, `session.begin` → the model (a fake OpenAI-compatible server, through the real
 * AI SDK provider code) → engram's tools → `session.end`. What was said on day 1 must be primed on
 * day 3 when it is relevant, every prompt part within its budget, with the provenance of each
 * injected memory reported.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, stepCountIs } from 'ai'
import { ManualClock } from '../src/core/clock.ts'
import { hasCompactor } from '../src/memory/context/provider.ts'
import { countTokens } from '../src/core/tokens.ts'
import { toAiSdkTools } from '../src/tools/ai-sdk-tools.ts'
import { createMind, type Mind } from '../src/mind.ts'
import type { Turn } from '../src/session/turn.ts'
import { type FakeChatRequest, type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

/** The scripted model: memorizes when asked to remember, otherwise answers from what it was shown. */
function agentModel(request: FakeChatRequest) {
  const last = request.messages.at(-1)
  if (last?.role === 'tool') return { text: 'Done, I will keep that in mind.' }
  const user = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? ''
  const remember = /please remember (?:that )?(.+)$/i.exec(user)
  if (remember) {
    return {
      raw: JSON.stringify({
        id: 'chatcmpl-x',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'agent-model',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'memorize', arguments: JSON.stringify({ entries: [{ text: remember[1], kind: 'lesson', topic: 'pets' }] }) } }],
            },
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
      contentType: 'application/json',
    }
  }
  const system = request.messages.find((m) => m.role === 'system')?.content ?? ''
  return { text: /chicken/i.test(system) ? 'Not chicken: Miso is allergic to it. Tuna is a safe choice.' : 'Sure.' }
}

let tmp: TempHome
let server: FakeOpenAiServer
let mind: Mind
const clock = new ManualClock('2026-03-02T09:00:00Z')

before(async () => {
  tmp = makeTempHome()
  server = await startFakeOpenAiServer({ onChat: agentModel })
  // The real default offline embedder (GloVe), as an agent gets it out of the box.
  const { ENGRAM_EMBED_MODEL: _small, ...env } = tmp.env
  // Leaf summaries of 4 messages, so that a short day-1 session can be folded and expanded below.
  mind = await createMind({ home: tmp.home, env, clock, settings: { 'context.leafChunk': 4 } })
  assert.equal(mind.embedder?.id.startsWith('offline:glove'), true, mind.embedder?.id)
})
after(async () => {
  await mind?.close()
  await server?.close()
  tmp?.cleanup()
})

async function runTurn(sessionId: string, message: string): Promise<{ turn: Turn; reply: string }> {
  const session = mind.session(sessionId, { user: 'ada' })
  const turn = await session.begin(message)
  const model = createOpenAICompatible({ name: 'agent', baseURL: server.url, apiKey: 'test' })('agent-model')
  const result = await generateText({
    model,
    system: turn.system,
    messages: turn.messages,
    tools: toAiSdkTools(turn.tools),
    stopWhen: stepCountIs(3),
  })
  await session.end(turn, result.responseMessages)
  await mind.idle()
  return { turn, reply: result.text }
}

test('what was said on day 1 is primed on day 3, within budgets, with provenance', async () => {
  // Day 1: the user tells the agent something worth keeping; the model memorizes it through the tool.
  const day1 = await runTurn('day1', 'Please remember that my cat Miso is allergic to chicken')
  assert.equal(day1.reply, 'Done, I will keep that in mind.')
  // Ada's, not the agent's: only her sessions see it (decision 0017).
  assert.match(readFileSync(join(tmp.home, 'agents/default/users/ada/memory/lessons.md'), 'utf8'), /Miso is allergic to chicken <!-- topic:pets/)
  // The tool call and its result were stored as they were and come back as structured messages.
  const followUp = await runTurn('day1', 'Thanks! Also, the vet appointment went fine.')
  const call = followUp.turn.messages.find((m) => m.role === 'assistant' && Array.isArray(m.content))
  assert.deepEqual(Array.isArray(call?.content) ? call.content.map((part) => part.type) : [], ['tool-call'])
  const result = followUp.turn.messages[followUp.turn.messages.indexOf(call!) + 1]
  assert.equal(result?.role, 'tool')
  const sent = server.requests.at(-1)?.body.messages as Array<{ role: string; tool_calls?: Array<{ function: { name: string } }> }>
  assert.equal(sent.find((m) => m.tool_calls)?.tool_calls?.[0]?.function.name, 'memorize', 'the model sees the earlier tool call again')
  assert.ok(sent.some((m) => m.role === 'tool'))

  // Day 2: unrelated work; the day-1 session closes at the idle boundary and becomes an episode.
  clock.advanceDays(1)
  await mind.maintain()
  assert.match(readFileSync(join(tmp.home, 'agents/default/users/ada/episodes/2026-03-02.md'), 'utf8'), /Miso|allergic|chicken/)
  for (const message of ['Can you draft the quarterly report outline?', 'Add a section on hiring.', 'Move the budget table to the end.']) {
    await runTurn('day2', message)
  }

  // Day 3: a new session; the relevant memory must come back unasked.
  clock.advanceDays(1)
  await mind.maintain()
  const { turn, reply } = await runTurn('day3', 'What should I feed Miso tonight?')
  assert.match(turn.systemParts.primed, /allergic to chicken/, 'priming recalls the day-1 memory')
  assert.equal(reply, 'Not chicken: Miso is allergic to it. Tuna is a safe choice.')

  // Provenance: every injected memory says where it came from and why.
  assert.ok(turn.provenance.primed.length > 0)
  for (const item of turn.provenance.primed) {
    assert.ok(item.source.length > 0 && item.channel.length > 0, JSON.stringify(item))
    assert.ok(item.tokens > 0)
    assert.ok(Object.keys(item.why).length > 0)
  }
  const recalled = turn.provenance.primed.find((item) => item.channel === 'related' && /lessons\.md|conv:|episodes/.test(item.source))
  assert.ok(recalled, `a related memory with its source: ${JSON.stringify(turn.provenance.primed)}`)

  // Budgets: priming within its type's budget, the memory context within Anton's section budgets,
  // the conversation within the context budget.
  assert.equal(turn.type, 'question')
  assert.ok(turn.budgets.priming.tokens <= turn.budgets.priming.budget)
  assert.equal(countTokens(turn.systemParts.primed), turn.budgets.priming.tokens)
  assert.ok(turn.budgets.memory.tokens <= 300 + 2 * 1500 + 2 * 1000 + 200, `memory context ${turn.budgets.memory.tokens} tokens`)
  assert.match(turn.systemParts.memory, /## Your memory — Global lessons[\s\S]*allergic to chicken/)
  assert.ok(turn.budgets.context.tokens <= turn.budgets.context.budget)
  assert.equal(turn.messages.at(-1)?.content, 'What should I feed Miso tonight?')

  // Every message of every session was kept.
  const conversations = await mind.backend.context.listConversations('default')
  let total = 0
  for (const conversation of conversations) total += await mind.backend.context.messageCount(conversation.id)
  assert.equal(total, 14, 'six user messages and six replies, one with a tool call and its result')

  // Folded into a summary, the tool call and its result are still there when the agent expands it.
  const day1Session = { sessionId: 'day1', agent: 'default', user: 'ada' }
  if (!hasCompactor(mind.context)) throw new Error('the default context provider compacts')
  const compacted = await mind.context.compact(day1Session, { mode: 'full', freshTail: 0 })
  assert.equal(compacted.kind, 'compacted')
  const later = await mind.session('day1', { user: 'ada' }).begin('What did you note on day one?')
  const summaryId = later.provenance.conversation.find((item) => item.kind === 'summary')?.summaryId
  assert.ok(summaryId)
  const memoryTool = later.tools.find((tool) => tool.name === 'memory')!
  const expanded = await memoryTool.execute({ action: 'expand', id: summaryId, toMessages: true })
  assert.match(expanded.text, /\[tool call memorize call_1\] \{"entries":\[\{"text":"my cat Miso is allergic to chicken"/)
  assert.match(expanded.text, /\[tool result memorize call_1\] /)
})
