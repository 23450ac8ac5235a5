/**
 * Decision 0049, "What reaches the model is clean", through the paths a host takes: `createMind` →
 * `mind.session(id, { user })` with a new Session per turn and two users, the AI SDK middleware,
 * `engram mcp` with the official MCP client in a child process, and sleep replay at a boundary.
 */
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { engramMiddleware } from '../src/interfaces/ai-sdk/middleware.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import type { Turn } from '../src/session/turn.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'

const MINUTE = 60_000
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

function open(tmp: TempHome, clock: ManualClock, options: { project?: string; mode?: string; env?: Record<string, string> } = {}): Promise<MindInternals> {
  return openMindInternals({
    home: tmp.home,
    env: options.env ?? tmp.env,
    ignoreConfigFile: true,
    clock,
    embedder: null,
    ...(options.project ? { project: options.project } : {}),
    ...(options.mode ? { settings: { 'memory.mode': options.mode } } : {}),
  })
}

/** One turn on a new Session object, as a stateless host runs it. */
async function say(mind: MindInternals, sessionId: string, user: string, message: string, reply = 'Noted.') {
  const session = mind.session(sessionId, { user })
  const turn = await session.begin(message)
  const end = await session.end(turn, reply)
  return { turn, end }
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1
}

const toolText = async (turn: Turn, name: string, input: unknown): Promise<string> => {
  const tool = turn.tools.find((candidate) => candidate.name === name)
  assert.ok(tool, `${name} is one of the turn's tools`)
  return (await tool.execute(input)).text
}

describe('the system prompt', () => {
  test('the project instructions file is in turn.system exactly once, last, and not in the memory part', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    mkdirSync(tmp.project, { recursive: true })
    writeFileSync(join(tmp.project, 'AGENTS.md'), 'Answer in German. Run the linter before committing.\n')
    const mind = await open(tmp, new ManualClock('2026-03-02T09:00:00Z'), { project: tmp.project })
    t.after(() => mind.close())
    await mind.encode([{ text: 'Use metric units', kind: 'always', scope: 'global', confidence: 'high', source: 'user' }])
    for (const user of ['ada', 'bob']) {
      const { turn } = await say(mind, `chat-${user}`, user, 'How should I write the report?')
      assert.equal(occurrences(turn.system, 'Answer in German.'), 1, turn.system)
      assert.equal(occurrences(turn.system, '## Project instructions'), 1)
      assert.equal(turn.systemParts.memory.includes('Answer in German'), false, 'the memory part holds the memory only')
      assert.match(turn.systemParts.memory, /Use metric units/)
      assert.ok(turn.system.endsWith('Answer in German. Run the linter before committing.'), 'the instructions come last, so they win')
      assert.match(turn.provenance.layers.instructions ?? '', /AGENTS\.md$/)
      assert.equal(turn.provenance.memory.some((section) => section.name === 'Project instructions'), false)
    }
  })

  test('the base prompt names only tools the model has, and profile_update as an action of the memory tool', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const mind = await open(tmp, new ManualClock('2026-03-02T09:00:00Z'))
    t.after(() => mind.close())
    const { turn } = await say(mind, 's1', 'ada', 'hello')
    const names = new Set(turn.tools.map((tool) => tool.name))
    const memory = turn.tools.find((tool) => tool.name === 'memory')
    assert.ok(memory, 'a session with a user has the memory tool')
    const actions = (memory.jsonSchema as { properties?: { action?: { enum?: string[] } } }).properties?.action?.enum ?? []
    for (const [identifier] of turn.systemParts.base.matchAll(/\b[a-z]+_[a-z_]+\b/g)) {
      if (names.has(identifier)) continue
      assert.ok(actions.includes(identifier), `${identifier} is neither a tool nor an action of the memory tool`)
      const sentence = turn.systemParts.base.split(/(?<=\.)\s/).find((part) => part.includes(identifier)) ?? ''
      assert.match(sentence, /memory tool/, `"${identifier}" is named as the memory tool's action: ${sentence}`)
    }
    assert.ok(actions.includes('profile_update'))
  })
})

describe('recalled episodes, offline', () => {
  test('no marker JSON and no extractive notice in the primed text or search results; degraded said once, in provenance', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock)
    t.after(() => mind.close())
    for (const [session, topic] of [['mon', 'invoice export'], ['tue', 'invoice archive'], ['wed', 'invoice reminders']] as const) {
      await say(mind, session, 'ada', `The ${topic} for the billing API failed with HTTP 429.`, `The billing API rate-limits the ${topic}; batch the calls.`)
      clock.advance(2 * MINUTE)
      await say(mind, session, 'ada', `Batching fixed the ${topic}.`, 'Glad it works.')
      clock.advance(15 * MINUTE)
      await mind.maintain()
    }
    const episodes = readFileSync(join(tmp.home, 'agents/default/users/ada/episodes/2026-03-02.md'), 'utf8')
    assert.equal(occurrences(episodes, '_Extractive summary (no LLM summary'), 3, 'the file itself says it, where a person reads it')
    assert.equal(occurrences(episodes, '<!-- episode {'), 3)

    clock.advanceDays(1)
    const session = mind.session('thu', { user: 'ada' })
    const turn = await session.begin('Why did the billing API invoice export fail with 429?')
    const primed = turn.systemParts.primed
    const episodesPrimed = turn.provenance.primed.filter((item) => item.kind === 'episode')
    assert.ok(episodesPrimed.length >= 2, JSON.stringify(turn.provenance.primed))
    assert.doesNotMatch(turn.system, /<!-- episode|"session":|"untilTs"/)
    assert.doesNotMatch(turn.system, /Extractive summary \(no LLM summary/)
    assert.equal(occurrences(primed, 'extractive summaries written without an LLM'), 1, primed)
    assert.equal(occurrences(JSON.stringify(turn.provenance.primed), 'degraded'), 0, 'not on every memory')
    assert.equal(turn.provenance.degraded?.length, 1, JSON.stringify(turn.provenance.degraded))
    assert.match(turn.provenance.degraded?.[0]?.reason ?? '', /^extractive summary \(no LLM summary: no LLM configured/)
    assert.deepEqual(new Set(turn.provenance.degraded?.[0]?.memories), new Set(episodesPrimed.map((item) => item.id)))

    const found = await toolText(turn, 'search_memory', { query: 'billing API 429 invoice', kinds: ['episode'] })
    assert.match(found, /\[episode 2026-03-02\]/)
    assert.doesNotMatch(found, /<!-- episode|"session":|Extractive summary \(no LLM/)
    const recalled = await toolText(turn, 'recall', { query: 'billing API 429 invoice' })
    assert.match(recalled, /invoice export/)
    assert.doesNotMatch(recalled, /<!-- episode|_Extractive summary \(no LLM/)
    assert.equal(occurrences(recalled, '(Degraded — results '), 1, recalled)
    await session.end(turn, 'The rate limit.')
  })
})

describe('search_memory in a turn', () => {
  test('limit 1 never answers with the message being answered, for either user', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock)
    t.after(() => mind.close())
    await say(mind, 'a1', 'ada', 'The quokka feeding schedule is at 7am and 5pm.')
    await say(mind, 'b1', 'bob', 'The quokka feeding schedule for the night shift is at 11pm.')
    clock.advance(MINUTE)
    for (const [user, expected] of [['ada', /7am and 5pm/], ['bob', /night shift is at 11pm/]] as const) {
      const session = mind.session(`${user}-2`, { user })
      const turn = await session.begin('What is the quokka feeding schedule?')
      // The tool as the host runs it on a new Session object in the same turn.
      const text = await toolText(turn, 'search_memory', { query: 'quokka feeding schedule', limit: 1 })
      assert.doesNotMatch(text, /What is the quokka feeding schedule\?/, text)
      assert.match(text, expected, text)
      const again = await mind.session(`${user}-2`, { user }).execute('search_memory', { query: 'quokka feeding schedule', limit: 1 })
      assert.doesNotMatch(again.text, /What is the quokka feeding schedule\?/, again.text)
      await session.end(turn, 'See above.')
    }
  })
})

describe('recent activity', () => {
  test('after many tool calls, a question primes lines that say what was done, to what, with what result, grouped', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock)
    t.after(() => mind.close())
    const runSql: ToolDefinition<{ query: string }> = {
      name: 'run_sql',
      description: 'Run a SQL query.',
      inputSchema: z.object({ query: z.string() }),
      async run({ query }) {
        if (query.includes('missing')) throw new Error('relation "missing" does not exist')
        return { text: `${query.length} rows` }
      },
    }
    const session = mind.session('ops', { user: 'ada', tools: [runSql] })
    const turn = await session.begin('Count the invoices per month.')
    for (let i = 0; i < 24; i++) {
      await session.execute('run_sql', { query: i === 5 ? 'select * from missing' : `select count(*) from invoices where month = ${(i % 12) + 1}` })
      await session.execute('search_memory', { query: `invoice month ${i}` })
    }
    await session.end(turn, 'Counted.')
    clock.advance(5 * MINUTE)

    const { turn: question } = await say(mind, 'q', 'ada', 'What is the billing API rate limit?')
    const activity = /### Recent activity\n([\s\S]*?)(?:\n\n|$)/.exec(question.systemParts.primed)?.[1] ?? ''
    assert.match(activity, /TOOL run_sql x24, 1 failed: .*select count\(\*\) from invoices/, activity)
    assert.match(activity, /TOOL run_sql x24.*\| last: ok: \d+ rows/, 'how the last call ended')
    assert.match(activity, /TOOL search_memory x24: query=invoice month/, activity)
    for (const line of activity.split('\n').filter((line) => line.startsWith('['))) {
      assert.doesNotMatch(line, /^\[[\d:-]+\] TOOL [a-z_]+:?$/, `a line that carries nothing: ${line}`)
    }
    const items = question.provenance.primed.filter((item) => item.channel === 'activity')
    assert.ok(items.length <= 4, `grouped: ${items.length} activity items`)
    assert.ok(items.some((item) => item.why.group === 'session' && item.why.events === 50), JSON.stringify(items))
    assert.doesNotMatch(question.system, /used a tool/)
  })

  test('a stretch too long for the channel is primed in brief, not left out', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock)
    t.after(() => mind.close())
    const tools: Array<ToolDefinition<{ path: string }>> = Array.from({ length: 8 }, (_, n) => ({
      name: `tool_${n}`,
      description: `Tool number ${n}.`,
      inputSchema: z.object({ path: z.string() }),
      async run({ path }) {
        return { text: `processed ${path} and wrote a long report about everything found there, line after line` }
      },
    }))
    const session = mind.session('ops', { user: 'ada', tools })
    const turn = await session.begin('Process every archive folder.')
    for (let round = 0; round < 3; round++) {
      for (const tool of tools) await session.execute(tool.name, { path: `/srv/archive/${'deeply/nested/'.repeat(4)}folder-${round}-${tool.name}` })
    }
    await session.end(turn, 'All folders processed.')
    clock.advance(5 * MINUTE)
    const { turn: question } = await say(mind, 'q', 'ada', 'What is the billing API rate limit?')
    const activity = /### Recent activity\n([\s\S]*?)(?:\n\n|$)/.exec(question.systemParts.primed)?.[1] ?? ''
    for (let n = 0; n < 8; n++) assert.match(activity, new RegExp(`TOOL tool_${n} x3 \\| last: ok: processed`), activity)
    assert.match(activity, /MSG ada, session ops \(2 messages, 24 tool calls\):/)
  })
})

describe('copilot confirmations reach the host', () => {
  test('TurnEnd and the next Turn carry the pending confirmations of that user only', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock, { mode: 'copilot' })
    t.after(() => mind.close())

    const session = mind.session('ada-1', { user: 'ada' })
    const turn = await session.begin('Remember for every user: the office closes at 6pm on Fridays.')
    assert.deepEqual(turn.confirmations, [])
    await toolText(turn, 'memorize', { entries: [{ text: 'The office closes at 6pm on Fridays', kind: 'lesson', owner: 'agent' }] })
    const ended = await session.end(turn, 'I will ask you to confirm that.')
    assert.deepEqual(ended.confirmations.map((item) => item.engram?.text), ['The office closes at 6pm on Fridays'])
    assert.equal(ended.confirmations[0]?.askedBy, 'ada')

    const bob = await say(mind, 'bob-1', 'bob', 'When does the office close on Fridays?')
    assert.deepEqual(bob.turn.confirmations, [], "ada's confirmations never reach bob's turn")
    assert.deepEqual(bob.end.confirmations, [])

    const next = await mind.session('ada-1', { user: 'ada' }).begin('Yes, save it.')
    assert.deepEqual(next.confirmations.map((item) => item.id), ended.confirmations.map((item) => item.id))
    await mind.confirm({ accept: 'all', user: 'ada' })
    const after = await mind.session('ada-1', { user: 'ada' }).end(next, 'Saved.')
    assert.deepEqual(after.confirmations, [], 'answered ones are gone')
  })

  test('the AI SDK middleware puts them in the answer’s provider metadata, generated or streamed', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const server = await startFakeOpenAiServer()
    t.after(() => server.close())
    const mind = await open(tmp, new ManualClock('2026-03-02T09:00:00Z'), { mode: 'copilot' })
    t.after(() => mind.close())
    const wrapped = (sessionId: string, user: string) => {
      const memory = engramMiddleware({ mind, sessionId, user })
      const base = createOpenAICompatible({ name: 'agent', baseURL: server.url, apiKey: 'test' })('agent-model')
      return { memory, model: wrapLanguageModel({ model: base, middleware: memory }) }
    }
    type Confirmations = Array<{ id: string; engram?: { text: string } }>
    const confirmationsOf = (metadata: unknown): Confirmations => ((metadata as { engram?: { confirmations?: Confirmations } } | undefined)?.engram?.confirmations ?? [])

    server.enqueue({ toolCalls: [{ id: 'call_1', name: 'memorize', input: { entries: [{ text: 'Invoices are due within 30 days', kind: 'lesson', owner: 'agent' }] } }] }, { text: 'I will ask you.' })
    const ada = wrapped('ada-chat', 'ada')
    const generated = await generateText({ model: ada.model, tools: ada.memory.tools, prompt: 'Remember for everyone: invoices are due within 30 days.', stopWhen: stepCountIs(3) })
    assert.deepEqual(confirmationsOf(generated.providerMetadata).map((item) => item.engram?.text), ['Invoices are due within 30 days'])

    server.enqueue({ text: 'Fridays at 6pm.' })
    const bob = wrapped('bob-chat', 'bob')
    const streamed = streamText({ model: bob.model, tools: bob.memory.tools, prompt: 'When does the office close?' })
    assert.equal(await streamed.text, 'Fridays at 6pm.')
    assert.deepEqual(confirmationsOf(await streamed.providerMetadata), [], "nothing of ada's in bob's answer")

    server.enqueue({ text: 'Still waiting for your yes.' })
    const adaAgain = wrapped('ada-chat', 'ada')
    const streamedAda = streamText({ model: adaAgain.model, tools: adaAgain.memory.tools, prompt: 'What did I ask you to remember?' })
    await streamedAda.text
    assert.deepEqual(confirmationsOf(await streamedAda.providerMetadata).map((item) => item.engram?.text), ['Invoices are due within 30 days'])
  })

  test('engram mcp lists them in the primed_context prompt, for the connection’s user', async (t) => {
    const tmp = makeTempHome('engram-mcp-confirm-')
    t.after(tmp.cleanup)
    mkdirSync(tmp.home, { recursive: true })
    const connect = async (user: string) => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', tmp.home, '--user', user], env: { ...tmp.env, ENGRAM_MEMORY_MODE: 'copilot' }, cwd: root, stderr: 'pipe' })
      const client = new Client({ name: 'engram-test', version: '1.0.0' })
      await client.connect(transport)
      t.after(() => client.close())
      return client
    }
    const ada = await connect('ada')
    const saved = (await ada.callTool({ name: 'memorize', arguments: { entries: [{ text: 'Expense reports go to finance by the 5th', kind: 'lesson', owner: 'agent' }] } })) as { content: Array<{ text?: string }> }
    const savedText = saved.content.map((part) => part.text).join('\n')
    assert.match(savedText, /waiting for the user's confirmation/)
    assert.match(savedText, /## Waiting for the user's yes or no\n[\s\S]*1\. \[lesson, global\] Expense reports go to finance by the 5th/, 'the result that queued it lists it')
    const next = (await ada.callTool({ name: 'search_memory', arguments: { query: 'expense reports' } })) as { content: Array<{ text?: string }> }
    assert.doesNotMatch(next.content.map((part) => part.text).join('\n'), /Waiting for the user's yes or no/, 'not repeated after every call')
    const promptText = async (client: Client): Promise<string> => {
      const prompt = await client.getPrompt({ name: 'primed_context', arguments: { message: 'Where do expense reports go?' } })
      return prompt.messages.map((message) => (message.content.type === 'text' ? message.content.text : '')).join('\n')
    }
    const forAda = await promptText(ada)
    assert.match(forAda, /## Waiting for the user's yes or no\n.*engram confirm --user ada --answer/)
    assert.match(forAda, /1\. \[lesson, global\] Expense reports go to finance by the 5th \(id /)
    const bob = await connect('bob')
    assert.doesNotMatch(await promptText(bob), /Waiting for the user's yes or no|Expense reports/)
  })
})

describe('sleep replay of a project-scoped memory with no project open', () => {
  let server: Awaited<ReturnType<typeof startFakeOpenAiServer>>
  const name = (request: { body: unknown }): string =>
    (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
  const answers = (request: FakeChatRequest): FakeChatStep => {
    switch (name(request)) {
      case 'consolidated_lessons':
        return {
          json: {
            rules: [
              { text: 'Check pending migrations before a deploy', kind: 'always', scope: 'global', confidence: 'high' },
              { text: 'Run make migrate in this repository before deploying billing', kind: 'always', scope: 'project', confidence: 'high' },
            ],
            lessons: [],
          },
        }
      case 'episode':
        return { json: { title: 'Deploy', summary: 'The deploy failed until the migrations ran.', resolved: [], newTasks: [] } }
      case 'lessons':
        return { json: { lessons: [] } }
      default:
        return { json: { facts: [] } }
    }
  }
  before(async () => {
    server = await startFakeOpenAiServer({ onChat: answers })
  })
  after(() => server.close())

  test('is saved as global at medium confidence, and the job says so', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake', ENGRAM_LLM_MAX_RETRIES: '0' }
    const mind = await open(tmp, clock, { env })
    t.after(() => mind.close())
    const deploy: ToolDefinition<{ service: string }> = {
      name: 'deploy',
      description: 'Deploy a service.',
      inputSchema: z.object({ service: z.string() }),
      async run({ service }) {
        if (service === 'billing-early') throw new Error('migration 0042 is pending')
        return { text: `deployed ${service}` }
      },
    }
    for (const service of ['billing-early', 'billing']) {
      const session = mind.session('ops', { user: 'ada', tools: [deploy] })
      const turn = await session.begin(`Deploy ${service}, please.`)
      await session.execute('deploy', { service })
      clock.advance(MINUTE)
      await session.end(turn, 'Done.')
    }
    await mind.idle()
    clock.advance(11 * MINUTE)
    const report = await mind.maintain()
    const replay = report.jobs.find((job) => job.kind === 'sleep-replay')
    assert.equal(replay?.status, 'done', JSON.stringify(report.jobs))
    assert.equal(replay?.result?.saved, 2, 'both rules saved, none dropped')
    assert.deepEqual(replay?.result?.rescoped, ['always: Run make migrate in this repository before deploying billing'])
    assert.match(String((replay?.result?.warnings as string[] | undefined)?.[0]), /saved as global at medium confidence: no project was open/)
    const rules = readFileSync(join(tmp.home, 'agents/default/users/ada/memory/rules.md'), 'utf8')
    assert.match(rules, /Run make migrate in this repository before deploying billing <!-- .*confidence:medium/)
  })
})
