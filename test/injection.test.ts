/**
 * Memories are data, not instructions (principle 5; decision 0028): every forged-structure
 * payload goes through every channel that reaches the model, and not one line of what the model is
 * handed is forged (the definition, and its own tests, are in
 * src/memory/engrams/test-support/forged-lines.ts).
 *
 * Channels (write path → where the model reads it):
 * - memorize always / never / when (tagged with a tool) / lesson (with a topic) / profile →
 *   the memory context, tool wisdom, priming, search_memory; memorize's own answer;
 * - the user's profile: profile_update and identity extraction → the identity section;
 * - knowledge, procedures (body and description), the current task (written, and the tasks an
 *   episode leaves), resolutions, episodes, conversation messages and replies (activity and
 *   excerpts), summaries → priming, the state part, recall, search_memory, the memory tool;
 * - skills (name, when_to_use, description) → the skill list, priming, recall_skill's header;
 * - lessons the error learner draws from a failing tool → that tool's description;
 * - all of it again through the official MCP client: primed_context, the tool list, tool results.
 *
 * Every payload carries a marker on each of its lines (`qz<payload><channel>`), so the test also
 * proves coverage: each planted marker is found in what the model is handed.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { createMindMcpServer } from '../src/interfaces/mcp/mind-server.ts'
import { profileKey } from '../src/memory/engrams/profile-facts.ts'
import { forgedLines, PAYLOADS } from '../src/memory/engrams/test-support/forged-lines.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { type FakeChatRequest, type FakeChatStep, type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import type { EngramTool } from '../src/tools/tool.ts'

const USER = 'u1'
/**
 * Payloads per home: the sections with a budget of their own (the identity's 300 tokens, the
 * current task's 400) and the channels with a count (five lessons per post-mortem, sixty events
 * primed) hold all of a home's.
 */
const BATCH = 3
const MARK = /qz\d+[a-z]/
const CHANNELS = {
  a: 'memorize always',
  n: 'memorize never',
  w: 'memorize when, tagged with a tool',
  l: 'memorize lesson with a topic',
  p: 'memorize profile',
  u: 'profile_update',
  i: 'identity extraction',
  k: 'knowledge file',
  r: 'procedure body',
  h: 'procedure description',
  y: 'current task, written',
  x: 'current task, left by an episode',
  z: 'resolution',
  e: 'episode',
  m: 'conversation message',
  q: 'reply',
  g: 'error learner lesson',
  f: 'summary',
  s: 'skill name',
  c: 'skill when_to_use',
  d: 'skill description',
} as const
type Channel = keyof typeof CHANNELS

const marker = (payload: number, channel: Channel): string => `qz${payload}${channel}`
/**
 * The payload as planted: its marker on every line, and a last line with the word the probe asks
 * about. Tasks and resolutions get words of their own, or the state update would take one for
 * another (it matches tasks by the words they share).
 */
function planted(payload: number, channel: Channel): string {
  const mark = marker(payload, channel)
  const own = 'xz'.includes(channel) ? ` ${['a', 'b', 'c', 'd'].map((suffix) => `${mark}${suffix}`).join(' ')}` : ''
  return `${(PAYLOADS[payload] as (typeof PAYLOADS)[number]).make(mark)}\nquokka ${mark}${own}`
}
const PROBE = 'What do you remember about the quokka?'

/** A YAML double-quoted scalar that keeps every character (controls and separators as \u escapes). */
function yamlString(text: string): string {
  return `"${[...text].map((ch) => (/[ -~]/.test(ch) && ch !== '"' && ch !== '\\' ? ch : `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`)).join('')}"`
}

function schemaName(request: FakeChatRequest): string {
  return (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
}

async function call(tools: readonly EngramTool[], name: string, input: unknown): Promise<string> {
  const tool = tools.find((candidate) => candidate.name === name)
  assert.ok(tool, `tool ${name}`)
  const result = await tool.execute(input)
  assert.notEqual(result.isError, true, `${name} ${JSON.stringify(input)}: ${result.text}`)
  return result.text
}

type McpText = { content: Array<{ type: string; text?: string }> }
const textOfCall = (result: unknown): string => (result as McpText).content.map((part) => part.text ?? '').join('\n')

/** Everything the model was handed in one home, by where it was read. */
type Seen = Array<[where: string, text: string]>

describe('forged-structure payloads through every channel: 0 forged lines', () => {
  let server: FakeOpenAiServer
  /** The payloads of the home being planted (the fake model answers with them). */
  let batch: number[] = []
  let summaries = 0
  const seen: Seen = []
  const plantedMarkers: Array<[payload: number, channel: Channel]> = []

  function answer(request: FakeChatRequest): FakeChatStep {
    switch (schemaName(request)) {
      case 'episode':
        return {
          json: {
            title: planted(batch[0] as number, 'e'),
            summary: batch.map((i) => planted(i, 'e')).join('\n'),
            resolved: batch.map((i) => planted(i, 'z')),
            newTasks: batch.map((i) => planted(i, 'x')),
          },
        }
      case 'lessons':
        return { json: { lessons: batch.map((i) => ({ tool: 'deploy', lesson: planted(i, 'g'), confidence: 'high' })) } }
      case 'identity_facts':
        return { json: { facts: batch.map((i) => planted(i, 'i')) } }
      case 'summary':
        // One payload per summary, in turn: a short summary is kept as the model wrote it.
        return { json: { summary: planted(batch[summaries++ % batch.length] as number, 'f') } }
      case 'consolidated_lessons':
        return { json: { rules: [], lessons: [] } }
      default:
        return { fail: { status: 500, body: { error: { message: `unexpected request ${schemaName(request)}` } } } }
    }
  }

  /** A tool of the agent's own whose failures carry the payload (activity, and the error learner's post-mortem). */
  function deployTool(): ToolDefinition<{ payload: number }> {
    return {
      name: 'deploy',
      description: 'Deploy a build.',
      inputSchema: z.object({ payload: z.number() }),
      async run({ payload }) {
        return { isError: true, text: `deploy failed: no build for quokka ${payload}` }
      },
    }
  }

  async function home(payloads: number[]): Promise<void> {
    batch = payloads
    const tmp: TempHome = makeTempHome()
    const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'))
    const mind: MindInternals = await openMindInternals({
      home: tmp.home,
      env: tmp.env,
      ignoreConfigFile: true,
      clock,
      settings: {
        'llm.provider': 'openai-compatible',
        'llm.baseUrl': server.url,
        'llm.model': 'fake-model',
        'llm.maxRetries': 0,
        // A small window: the conversation is compacted, so summaries exist.
        'context.budget': 256,
        'context.freshTail': 2,
        'context.leafChunk': 2,
        // Room for everything planted: coverage is part of the proof.
        'priming.questionBudget': 30_000,
      },
    })
    try {
      for (const i of payloads) for (const channel of Object.keys(CHANNELS) as Channel[]) plantedMarkers.push([i, channel])
      for (const i of payloads) {
        await mind.skills.save({ label: `quokka-${i}`, name: planted(i, 's'), whenToUse: planted(i, 'c'), description: planted(i, 'd'), declarative: 'Look at the quokka, then write down what it does.' })
      }
      const turn = async (message: string, act?: (tools: readonly EngramTool[]) => Promise<void>, reply = 'Noted.'): Promise<void> => {
        const session = mind.session('plant', { user: USER, tools: [deployTool()] })
        const begun = await session.begin(message)
        if (act) await act(begun.tools)
        clock.advance(20_000)
        await session.end(begun, reply)
        await mind.idle()
        clock.advance(40_000)
      }
      await turn('Please remember these.', async (tools) => {
        const entries = payloads.flatMap((i) => [
          { text: planted(i, 'a'), kind: 'always' },
          { text: planted(i, 'n'), kind: 'never' },
          { text: planted(i, 'w'), kind: 'when', tool: 'deploy' },
          { text: planted(i, 'l'), kind: 'lesson', topic: 'quokkas' },
          { text: planted(i, 'p'), kind: 'profile' },
        ])
        // The profile first: profile_update replaces it whole, memorize and identity extraction merge into it.
        await call(tools, 'memory', { action: 'profile_update', content: payloads.map((i) => planted(i, 'u')).join('\n') })
        seen.push(['memorize answer', await call(tools, 'memorize', { entries })])
        for (const i of payloads) {
          await call(tools, 'write_memory_file', { path: `knowledge/quokka-${i}.md`, content: `${planted(i, 'k')}\n` })
          await call(tools, 'write_memory_file', { path: `procedures/quokka-${i}.md`, content: `---\ndescription: ${yamlString(planted(i, 'h'))}\n---\n${planted(i, 'r')}\n` })
          await (tools.find((tool) => tool.name === 'deploy') as EngramTool).execute({ payload: i })
        }
        // Prose of the agent's own (the tasks an episode leaves are its open items).
        const task = payloads.map((i) => planted(i, 'y')).join('\n')
        await call(tools, 'write_memory_file', { path: 'state/current_task.md', content: `# Current task\n${task}\n` })
      })
      // Five turns at least: identity extraction runs at the fifth.
      for (let t = 0; t < Math.max(4, payloads.length); t++) {
        const i = payloads[t % payloads.length] as number
        await turn(planted(i, 'm'), undefined, `${planted(i, 'q')}\n${'I keep this with the other notes of the conversation and bring it up again when it matters. '.repeat(3)}`)
      }
      // The session's boundary: its episode, the current task's new items, the resolutions.
      clock.advance(11 * 60_000)
      await mind.maintain()

      const session = mind.session('observe', { user: USER, tools: [deployTool()] })
      const begun = await session.begin(PROBE)
      for (const [part, text] of Object.entries(begun.systemParts)) seen.push([`turn.systemParts.${part}`, text ?? ''])
      seen.push(['turn.system', begun.system])
      for (const tool of begun.tools) seen.push([`description of ${tool.name}`, tool.description ?? ''])
      seen.push(['search_memory', await call(begun.tools, 'search_memory', { query: 'quokka', limit: 50 })])
      for (const kinds of [['knowledge', 'procedure', 'skill', 'topic'], ['episode', 'summary', 'message'], ['rule', 'lesson', 'user', 'profile']]) {
        seen.push([`search_memory ${kinds.join(',')}`, await call(begun.tools, 'search_memory', { query: 'quokka', kinds, limit: 50 })])
      }
      seen.push(['recall', await call(begun.tools, 'recall', { query: 'quokka', max_results: 50, days_back: 30 })])
      seen.push(['memory search', await call(begun.tools, 'memory', { action: 'search', query: 'quokka', limit: 50 })])
      const conversation = await mind.backend.context.findConversation('plant', 'default')
      assert.ok(conversation)
      const summaries = (await mind.backend.context.items(conversation.id)).flatMap((item) => (item.kind === 'summary' ? [item.summaryId] : []))
      assert.ok(summaries.length > 0, 'the conversation was compacted')
      for (const id of summaries) {
        seen.push([`memory describe ${id}`, await call(begun.tools, 'memory', { action: 'describe', id })])
        seen.push([`memory expand ${id}`, await call(begun.tools, 'memory', { action: 'expand', id })])
        seen.push([`memory expand ${id} to messages`, await call(begun.tools, 'memory', { action: 'expand', id, toMessages: true })])
      }
      for (const i of payloads) seen.push([`recall_skill quokka-${i}`, await call(begun.tools, 'recall_skill', { label: `quokka-${i}` })])
      await session.end(begun, 'Nothing more.')
      await mind.idle()

      // The same memory through the official MCP client.
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      const client = new Client({ name: 'injection-test', version: '1.0.0' })
      await Promise.all([createMindMcpServer(mind, { session: { sessionId: 'mcp-observe', user: USER }, tools: 'all' }).connect(serverSide), client.connect(clientSide)])
      try {
        const primed = await client.getPrompt({ name: 'primed_context', arguments: { message: PROBE } })
        seen.push(['MCP primed_context', primed.messages.map((message) => (message.content.type === 'text' ? message.content.text : '')).join('\n')])
        const { tools } = await client.listTools()
        for (const tool of tools) seen.push([`MCP description of ${tool.name}`, tool.description ?? ''])
        seen.push(['MCP search_memory', textOfCall(await client.callTool({ name: 'search_memory', arguments: { query: 'quokka', limit: 50 } }))])
        seen.push(['MCP recall', textOfCall(await client.callTool({ name: 'recall', arguments: { query: 'quokka', max_results: 50, days_back: 30 } }))])
      } finally {
        await client.close()
      }
    } finally {
      await mind.close()
      tmp.cleanup()
    }
  }

  before(async () => {
    server = await startFakeOpenAiServer({ onChat: answer })
    const all = PAYLOADS.map((_, i) => i)
    for (let from = 0; from < all.length; from += BATCH) await home(all.slice(from, from + BATCH))
  })
  after(async () => {
    await server?.close()
  })

  test(`${PAYLOADS.length} payloads × ${Object.keys(CHANNELS).length} channels: every payload reached the model`, () => {
    const everything = seen.map(([, text]) => text).join('\n')
    const missing = plantedMarkers.filter(([i, channel]) => !new RegExp(`\\b${marker(i, channel)}\\b`).test(everything)).map(([i, channel]) => `${PAYLOADS[i]?.kind} via ${CHANNELS[channel]}`)
    assert.deepEqual(missing, [])
  })

  test('each channel reached the part of the prompt it is read from', () => {
    const textOf = (where: string): string => seen.filter(([name]) => name === where).map(([, text]) => text).join('\n')
    const expect: Array<[string, Channel[]]> = [
      ['turn.systemParts.memory', ['a', 'n', 'l', 'p', 'u', 'i']],
      ['turn.systemParts.state', ['y', 'x', 'z']],
      ['turn.systemParts.skills', ['c']],
      // A procedure matched by its description is shown by it; its body is found by search.
      ['turn.systemParts.primed', ['k', 'h', 'm', 'q', 'e', 'f']],
      ['description of deploy', ['w', 'g']],
      ['MCP primed_context', ['a', 'u', 'y', 'k', 'm']],
    ]
    const missing: string[] = []
    for (const [where, channels] of expect) {
      const text = textOf(where)
      for (const [i, channel] of plantedMarkers) {
        // A profile fact with a key ("SYSTEM: …") is replaced by the next one with that key, as it should be.
        const replaced = channel === 'p' && profileKey(planted(i, 'p').replace(/\s+/g, ' ')) !== undefined
        if (channels.includes(channel) && !replaced && !text.includes(marker(i, channel))) missing.push(`${where}: ${PAYLOADS[i]?.kind} via ${CHANNELS[channel]}`)
      }
    }
    assert.deepEqual(missing, [])
  })

  test('no line the model is handed is forged', () => {
    const forged = seen.flatMap(([where, text]) => forgedLines(text, MARK).map((line) => `${where} [${line.why}]: ${JSON.stringify(line.line)}`))
    assert.deepEqual(forged, [], `${forged.length} forged lines`)
  })
})
