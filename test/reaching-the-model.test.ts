/**
 * Everything engram knows must reach the model (decision 0020), checked the way a host runs it:
 * `createMind` → `mind.session(id)` created anew on every turn → `turn.tools` handed to the model
 * through each adapter (the real AI SDK against the fake OpenAI-compatible server, OpenAI-style
 * functions, the official MCP client) → `session.end`.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { generateText, stepCountIs } from 'ai'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { EngramError } from '../src/core/errors.ts'
import { countTokens } from '../src/core/tokens.ts'
import { toAiSdkTools } from '../src/tools/ai-sdk-tools.ts'
import { createMindMcpServer } from '../src/interfaces/mcp/mind-server.ts'
import { MCP_TURN_GAP_MS } from '../src/interfaces/mcp/mcp-turns.ts'
import { NUDGE_HEADER } from '../src/memory/learning/pattern-monitor.ts'
import { createMind, type Mind } from '../src/mind.ts'
import type { Turn } from '../src/session/turn.ts'
import { type FakeChatRequest, type FakeChatStep, type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { executeToolCall, toEngramTools, toOpenAiFunctions } from '../src/tools/adapters.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import { type CallResult, textOf } from './support/tool-calls.ts'

/** The agent's own tools: a deploy that keeps failing, and a scratchpad workspace. */
const deploy: ToolDefinition<{ target: string }> = {
  name: 'deploy',
  description: 'Deploy a build to a target.',
  inputSchema: z.object({ target: z.string() }),
  async run({ target }) {
    return { isError: true, text: `Deploy refused for target='${target}': no build artifact.` }
  },
}
const scratchpad: ToolDefinition<{ name: string; code?: string; reset?: boolean }> = {
  name: 'scratchpad',
  description: 'Run Python in a named scratchpad.',
  inputSchema: z.object({ name: z.string(), code: z.string().optional(), reset: z.boolean().optional() }),
  workspace: { nameOf: (input) => (input as { name?: string }).name, payloadOf: (input) => (input as { code?: string }).code, isReset: (input) => (input as { reset?: boolean }).reset === true },
  async run({ reset }) {
    return { text: reset ? 'scratchpad reset' : 'ok' }
  },
}

/** A chat-completions response whose assistant message calls one tool. */
function callTool(name: string, args: unknown, id: string): FakeChatStep {
  return {
    raw: JSON.stringify({
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'agent-model',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }),
    contentType: 'application/json',
  }
}


async function mcpClient(mind: Mind, user: string): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'test', version: '1.0.0' })
  await Promise.all([createMindMcpServer(mind, { session: { sessionId: `mcp-${user}`, user } }).connect(serverSide), client.connect(clientSide)])
  return client
}

describe('nudges reach the model in active mode, through every adapter', () => {
  let tmp: TempHome
  let server: FakeOpenAiServer
  let mind: Mind
  const clock = new ManualClock('2026-03-02T09:00:00Z')

  before(async () => {
    tmp = makeTempHome()
    server = await startFakeOpenAiServer()
    mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null, settings: { 'learning.patternMonitorMode': 'active' } })
  })
  after(async () => {
    await mind?.close()
    await server?.close()
    tmp?.cleanup()
  })

  /** One turn of a host that creates the session anew on every turn. */
  async function begin(message: string): Promise<{ session: ReturnType<Mind['session']>; turn: Turn }> {
    const session = mind.session('chat', { user: 'ada', tools: [deploy, scratchpad] })
    return { session, turn: await session.begin(message) }
  }

  test('AI SDK: generateText with toAiSdkTools(turn.tools) sends the nudge to the model with the tool result', async () => {
    const { session, turn } = await begin('Deploy the build to staging, please.')
    server.script([callTool('deploy', { target: 'staging' }, 'c1'), callTool('deploy', { target: 'staging-2' }, 'c2'), { text: 'The deploy keeps failing: there is no build artifact.' }])
    const start = server.requests.length
    const result = await generateText({
      model: createOpenAICompatible({ name: 'agent', baseURL: server.url, apiKey: 'test' })('agent-model'),
      system: turn.system,
      messages: turn.messages,
      tools: toAiSdkTools(turn.tools),
      stopWhen: stepCountIs(4),
    })
    await session.end(turn, result.text)
    await mind.idle()

    const requests = server.requests.slice(start).filter((request) => request.path === '/v1/chat/completions')
    const toolMessages = (index: number) => ((requests[index]?.body.messages ?? []) as Array<{ role: string; tool_call_id?: string; content: string }>).filter((m) => m.role === 'tool')
    const first = toolMessages(1).find((m) => m.tool_call_id === 'c1')?.content ?? ''
    const second = toolMessages(2).find((m) => m.tool_call_id === 'c2')?.content ?? ''
    assert.match(first, /^Error: Deploy refused/)
    assert.ok(!first.includes(NUDGE_HEADER), 'one failure is not a pattern')
    // The second failure in a row fires repeated_tool_error: the model reads it with that result.
    assert.match(second, /^Error: Deploy refused for target='staging-2'[\s\S]*\n\n\[Note from your memory's self-check, not part of the tool's output[^\n]*\]\n- When a tool call fails twice in a row, read the error and change the approach .* \(self-check: repeated_tool_error\)$/)
    // Passive learning still happens at the end of the turn.
    // Learned in ada's session: the rule is hers (decision 0017).
    assert.match(readFileSync(join(tmp.home, 'agents/default/users/ada/memory/rules.md'), 'utf8'), /## When\n- When a tool call fails twice in a row/)
  })

  test('OpenAI functions: executeToolCall returns the nudge in the tool message text, a never-rule as never', async () => {
    const { session, turn } = await begin('Clean up the analysis scratchpad.')
    const functions = toOpenAiFunctions(turn.tools)
    assert.ok(functions.some((f) => f.function.name === 'scratchpad'))
    const tools = toEngramTools(turn.tools)
    const first = await executeToolCall(tools, 'scratchpad', JSON.stringify({ name: 'analysis', reset: true }))
    assert.equal(first.text, 'scratchpad reset')
    const second = await executeToolCall(tools, 'scratchpad', JSON.stringify({ name: 'analysis', reset: true }))
    // reset_churn learns a never-rule; the model must read it as one.
    assert.match(second.text, /^scratchpad reset\n\n\[Note from your memory's self-check[^\n]*\]\n- Never: Reset a workspace to escape an error: .* \(self-check: reset_churn\)$/)
    assert.equal(second.nudges, undefined, 'the nudges are in the text, once')
    const third = await executeToolCall(tools, 'scratchpad', JSON.stringify({ name: 'analysis', reset: true }))
    assert.equal(third.text, 'scratchpad reset', 'one nudge per detector per turn')
    await session.end(turn, 'Reset it.')
    await mind.idle()
    assert.match(readFileSync(join(tmp.home, 'agents/default/users/ada/memory/rules.md'), 'utf8'), /## Never\n- Reset a workspace to escape an error/)
  })

  test('MCP: a client calling the tools gets the nudge in the result text; a quiet spell starts a new turn', async () => {
    const client = await mcpClient(mind, 'ada')
    try {
      const read = (path: string) => client.callTool({ name: 'read_memory_file', arguments: { path } })
      const first = await read('knowledge/missing-1.md')
      assert.equal((first as CallResult).isError, true)
      assert.ok(!textOf(first).includes(NUDGE_HEADER))
      const second = await read('knowledge/missing-2.md')
      assert.equal((second as CallResult).isError, true)
      assert.match(textOf(second), /\n\n\[Note from your memory's self-check[^\n]*\]\n- When a tool call fails twice in a row, .* \(self-check: repeated_tool_error\)$/)
      assert.doesNotMatch(textOf(await read('knowledge/missing-3.md')), /repeated_tool_error/, 'once per detector per turn')

      clock.advance(MCP_TURN_GAP_MS)
      assert.ok(!textOf(await read('knowledge/missing-4.md')).includes(NUDGE_HEADER), 'a new turn starts counting again')
      assert.match(textOf(await read('knowledge/missing-5.md')), /self-check: repeated_tool_error/)
    } finally {
      await client.close()
    }
  })

  test('passive mode learns the rule but sends no nudge', async () => {
    const passiveHome = makeTempHome()
    const passive = await createMind({ home: passiveHome.home, env: passiveHome.env, ignoreConfigFile: true, clock, embedder: null })
    try {
      const session = passive.session('chat', { tools: [deploy] })
      const turn = await session.begin('Deploy it.')
      const tools = toEngramTools(turn.tools)
      for (const target of ['a', 'b', 'c']) assert.ok(!(await executeToolCall(tools, 'deploy', JSON.stringify({ target }))).text.includes(NUDGE_HEADER))
      await session.end(turn, 'It failed.')
      await passive.idle()
      assert.match(readFileSync(join(passiveHome.home, 'agents/default/memory/rules.md'), 'utf8'), /When a tool call fails twice in a row/)
    } finally {
      await passive.close()
      passiveHome.cleanup()
    }
  })
})

describe('a host reports what only it sees: history repairs and an exhausted round cap', () => {
  let tmp: TempHome
  let server: FakeOpenAiServer
  let mind: Mind
  const clock = new ManualClock('2026-03-03T09:00:00Z')

  before(async () => {
    tmp = makeTempHome()
    // A model that never stops calling tools.
    server = await startFakeOpenAiServer({ onChat: (request: FakeChatRequest) => callTool('deploy', { target: `t${request.messages.length}` }, `c${request.messages.length}`) })
    mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null, settings: { 'learning.patternMonitorMode': 'active' } })
  })
  after(async () => {
    await mind?.close()
    await server?.close()
    tmp?.cleanup()
  })

  test('cap_exhausted: the loop stops at its step cap, the host reports it, the rule is in the next turn', async () => {
    const session = mind.session('loop', { tools: [deploy] })
    const turn = await session.begin('Deploy everything.')
    const cap = 3
    const result = await generateText({
      model: createOpenAICompatible({ name: 'agent', baseURL: server.url, apiKey: 'test' })('agent-model'),
      system: turn.system,
      prompt: turn.message,
      tools: toAiSdkTools(turn.tools),
      stopWhen: stepCountIs(cap),
    })
    assert.equal(result.steps.length, cap)
    assert.equal(result.finishReason, 'tool-calls', 'the model still wanted to go on')
    const { nudges } = session.report({ kind: 'cap_exhausted', round: cap })
    assert.deepEqual(
      nudges.map((nudge) => /\(self-check: (\w+)\)$/.exec(nudge)?.[1]),
      ['cap_exhausted'],
    )
    assert.match(nudges[0] ?? '', /^When a task needs many tool rounds, plan the steps first/)
    await session.end(turn, 'I ran out of steps.')
    await mind.idle()

    const next = await mind.session('loop').begin('Try again.')
    assert.match(next.systemParts.memory, /- When a task needs many tool rounds, plan the steps first/)
  })

  test('history_repair: three repairs in a turn fire repair_churn', async () => {
    const session = mind.session('repairs')
    const turn = await session.begin('Go on.')
    assert.deepEqual(session.report({ kind: 'history_repair', reason: 'dangling tool call without a result', round: 0 }).nudges, [])
    assert.deepEqual(session.report({ kind: 'history_repair', reason: 'dangling tool call without a result', round: 1 }).nudges, [])
    const { nudges } = session.report({ kind: 'history_repair', reason: 'tool result for an unknown call', round: 2 })
    assert.match(nudges.join('\n'), /^Always make complete tool calls, one at a time, .* \(self-check: repair_churn\)$/)
    await session.end(turn, 'Done.')
    await mind.idle()
    assert.match(readFileSync(join(tmp.home, 'agents/default/memory/rules.md'), 'utf8'), /## Always\n- Always make complete tool calls/)

    // Anything else is not the host's to report (tool calls are observed already).
    assert.throws(
      () => mind.session('repairs').report({ kind: 'tool_result' } as never),
      (error) => EngramError.is(error) && error.code === 'invalid_argument' && /history_repair, cap_exhausted/.test(error.fix ?? ''),
    )
  })
})

describe('the current task and recently resolved issues are in the prompt (layer 2)', () => {
  let tmp: TempHome
  let mind: Mind
  const clock = new ManualClock('2026-03-04T09:00:00Z')

  before(async () => {
    tmp = makeTempHome()
    mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null })
  })
  after(async () => {
    await mind?.close()
    tmp?.cleanup()
  })

  async function say(sessionId: string, user: string, message: string, reply: string): Promise<Turn> {
    const session = mind.session(sessionId, { user })
    const turn = await session.begin(message)
    await session.end(turn, reply)
    clock.advance(60_000)
    return turn
  }

  test('a session boundary writes them; the next turn of that user has them in turn.system, with provenance', async () => {
    await say('monday', 'ada', 'TODO: migrate the billing cron to the new queue', 'Noted, it is on the list.')
    await say('monday', 'ada', 'done: fixed the login redirect loop', 'Great, ticked off.')
    await say('bob-chat', 'bob', 'done: fixed the VPN split tunnel', 'Good.')
    // Both sessions end at the idle boundary (offline: the extractive summary keeps explicit TODO / done lines).
    clock.advance(11 * 60_000)
    const report = await mind.maintain()
    assert.deepEqual(report.boundaries.map((b) => b.kind), ['recorded', 'recorded'])
    const registry = readFileSync(join(tmp.home, 'shared/resolutions.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { issue: string; user?: string })
    assert.deepEqual(registry.map((r) => [r.issue, r.user]).sort(), [['fixed the VPN split tunnel', 'bob'], ['fixed the login redirect loop', 'ada']])

    const turn = await mind.session('tuesday', { user: 'ada' }).begin('What is left to do?')
    assert.match(turn.systemParts.state, /^<memory>\n[\s\S]*## Your memory — Current task\n- \[ \] migrate the billing cron to the new queue\n\n## Your memory — Recently resolved\n- \[2026-03-04\] fixed the login redirect loop \(-> episodes\/2026-03-04\.md#[^\n]*\)\n<\/memory>$/)
    assert.doesNotMatch(turn.systemParts.state, /VPN/, "another user's resolution")
    // Its place: after the memory context, before what priming recalled for this message.
    const at = turn.system.indexOf(turn.systemParts.state)
    assert.ok(at >= 0)
    if (turn.systemParts.primed !== '') assert.ok(at < turn.system.indexOf(turn.systemParts.primed))
    assert.deepEqual(
      turn.provenance.state.map(({ name, source, entries }) => ({ name, source, entries })),
      [
        { name: 'Current task', source: 'agents/default/users/ada/state/current_task.md', entries: 1 },
        { name: 'Recently resolved', source: 'shared/resolutions.jsonl', entries: 1 },
      ],
    )
    assert.equal(turn.budgets.state.tokens > 0 && turn.budgets.state.tokens <= 700, true)

    const bob = await mind.session('bob-tuesday', { user: 'bob' }).begin('Anything new?')
    assert.match(bob.systemParts.state, /fixed the VPN split tunnel/)
    assert.doesNotMatch(bob.systemParts.state, /login redirect loop/)

    // An MCP client's primed_context has them too.
    const client = await mcpClient(mind, 'ada')
    try {
      const primed = await client.getPrompt({ name: 'primed_context', arguments: { message: 'What is left to do?', user: 'ada' } })
      const text = String((primed.messages[0]?.content as { text?: string } | undefined)?.text)
      assert.match(text, /## Your memory — Current task\n- \[ \] migrate the billing cron/)
      assert.match(text, /## Your memory — Recently resolved\n- \[2026-03-04\] fixed the login redirect loop/)
    } finally {
      await client.close()
    }
  })
})

describe('a never-rule reads as never wherever it is shown', () => {
  let tmp: TempHome
  let mind: Mind
  const clock = new ManualClock('2026-03-05T09:00:00Z')

  before(async () => {
    tmp = makeTempHome()
    mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null })
  })
  after(async () => {
    await mind?.close()
    tmp?.cleanup()
  })

  /** Every line that shows the rule's words must show its polarity too (the memorize call's own JSON input says it by its kind). */
  function assertReadsAsNever(where: string, text: string): void {
    const lines = text.split('\n').filter((line) => line.includes('Use time.sleep() in scratchpad cells'))
    assert.ok(lines.length > 0, `${where} shows the rule:\n${text}`)
    for (const line of lines) assert.ok(line.includes('Never: Use time.sleep() in scratchpad cells') || line.includes('"kind":"never"'), `${where}: ${line}`)
  }

  test('memory context, priming, search_memory, recall and MCP primed_context', async () => {
    const first = mind.session('chat', { user: 'ada' })
    const turn = await first.begin('From now on, no sleeping in scratchpad cells.')
    const saved = await executeToolCall(toEngramTools(turn.tools), 'memorize', JSON.stringify({ entries: [{ text: 'Use time.sleep() in scratchpad cells', kind: 'never' }] }))
    assertReadsAsNever('memorize result', saved.text)
    await first.end(turn, 'Understood.')
    await mind.idle()
    clock.advance(60_000)

    const session = mind.session('chat', { user: 'ada' })
    const next = await session.begin('Can a scratchpad cell wait with time.sleep() between API calls?')
    assertReadsAsNever('memory context', next.systemParts.memory)
    assertReadsAsNever('priming', next.systemParts.primed)
    assert.ok(next.provenance.primed.some((item) => item.kind === 'rule' && item.channel === 'related'), JSON.stringify(next.provenance.primed))
    const tools = toEngramTools(next.tools)
    assertReadsAsNever('search_memory', (await executeToolCall(tools, 'search_memory', JSON.stringify({ query: 'time.sleep scratchpad cells' }))).text)
    assertReadsAsNever('recall', (await executeToolCall(tools, 'recall', JSON.stringify({ query: 'time.sleep scratchpad cells' }))).text)
    await session.end(next, 'No: never time.sleep() in a scratchpad cell.')

    const client = await mcpClient(mind, 'ada')
    try {
      const primed = await client.getPrompt({ name: 'primed_context', arguments: { message: 'time.sleep in scratchpad cells?', user: 'ada' } })
      assertReadsAsNever('MCP primed_context', String((primed.messages[0]?.content as { text?: string } | undefined)?.text))
      assertReadsAsNever('MCP search_memory', textOf(await client.callTool({ name: 'search_memory', arguments: { query: 'time.sleep scratchpad' } })))
    } finally {
      await client.close()
    }
  })
})

describe('tool wisdom is on the tool it names only, and bounded for the whole request', () => {
  let tmp: TempHome
  let mind: Mind
  const clock = new ManualClock('2026-03-06T09:00:00Z')
  const ownTools = [deploy, scratchpad]

  before(async () => {
    tmp = makeTempHome()
    mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null })
  })
  after(async () => {
    await mind?.close()
    tmp?.cleanup()
  })

  const rule = (i: number) => `If step ${i} of a release fails, check the release notes of that step and the logs of the last run before retrying it`
  /** Tokens the tool descriptions of a turn gained, measured against the bare descriptions. */
  async function measure(): Promise<{ turn: Turn; added: number; tools: number }> {
    const turn = await mind.session('work', { tools: ownTools }).begin('Release the new version.')
    const baseline = new Map(mind.agentTools({ sessionId: 'work' }).map((tool) => [tool.name, tool.description]))
    for (const tool of ownTools) baseline.set(tool.name, tool.description)
    let added = 0
    for (const tool of turn.tools) added += countTokens(tool.description) - countTokens(baseline.get(tool.name) ?? '')
    return { turn, added, tools: turn.tools.length }
  }

  test('12 untagged "when" rules over 11 tools add nothing to the tool descriptions; they are in the memory context', async (t) => {
    await mind.encode(Array.from({ length: 12 }, (_, i) => ({ text: rule(i), kind: 'when' as const, scope: 'global' as const, confidence: 'high' as const, source: 'user' as const })))
    const { turn, added, tools } = await measure()
    t.diagnostic(`12 untagged rules, ${tools} tools: ${added} tokens added to tool descriptions; memory context ${turn.budgets.memory.tokens} tokens`)
    assert.equal(tools, 11)
    assert.equal(added, 0)
    assert.deepEqual(turn.provenance.toolWisdom, [])
    assert.deepEqual(turn.budgets.toolWisdom, { budget: 500, tokens: 0 })
    for (let i = 0; i < 12; i++) assert.ok(turn.systemParts.memory.includes(`- ${rule(i)}`), `rule ${i} in the memory context`)
  })

  test('tagged wisdom goes to its tool only; 12 tagged rules and 40 lessons over 11 tools stay within ~500 tokens', async (t) => {
    const toolNames = ['deploy', 'scratchpad', 'memorize', 'recall', 'search_memory', 'read_memory_file', 'write_memory_file', 'recall_skill', 'report_procedure_outcome', 'memory', 'forget_memory']
    await mind.encode(
      Array.from({ length: 12 }, (_, i) => ({ text: `${rule(i)} (${toolNames[i % 8]})`, kind: 'when' as const, scope: 'global' as const, confidence: 'high' as const, source: 'user' as const, tool: toolNames[i % 8] })),
    )
    await mind.encode(
      Array.from({ length: 40 }, (_, i) => ({ text: `Deploy lesson ${i}: the ${i}th target needs its own artifact and a warm cache before it accepts a release`, kind: 'lesson' as const, scope: 'global' as const, confidence: 'high' as const, source: 'llm' as const, tool: 'deploy' })),
    )
    const { turn, added, tools } = await measure()
    t.diagnostic(`12 tagged rules + 40 deploy lessons, ${tools} tools: ${added} tokens added to tool descriptions (wisdom ${turn.budgets.toolWisdom.tokens} of ${turn.budgets.toolWisdom.budget}); ${JSON.stringify(turn.provenance.toolWisdom.map((s) => [s.tool, s.entries, s.tokens]))}`)
    assert.ok(turn.budgets.toolWisdom.tokens <= 500, `${turn.budgets.toolWisdom.tokens}`)
    assert.ok(added <= 500 + 2 * turn.provenance.toolWisdom.length, `${added}`)
    for (const tool of turn.tools) {
      const own = new RegExp(`\\(${tool.name}\\)`)
      for (const other of toolNames.filter((name) => name !== tool.name)) assert.doesNotMatch(tool.description, new RegExp(`before retrying it \\(${other}\\)`), `${other}'s rule on ${tool.name}`)
      if (toolNames.indexOf(tool.name) < 8) assert.match(tool.description, own, `${tool.name} has its own rule`)
      if (tool.name !== 'deploy') assert.doesNotMatch(tool.description, /Deploy lesson/)
    }
    // Forty lessons for one tool do not crowd out the others: each tool with wisdom got its share.
    assert.equal(turn.provenance.toolWisdom.length, 8)
    assert.ok(turn.provenance.toolWisdom.every((share) => share.entries >= 1))
    assert.equal(turn.provenance.toolWisdom.find((share) => share.tool === 'deploy')?.truncated, true)
  })
})
