/**
 * The session lifecycle through the public API (`createMind` → `mind.session(id)` → begin / execute
 * / end), with state only in the store: turn numbers and identity extraction for a host that makes
 * a new Session every turn (and restarts), a heartbeat message that ends quiet sessions but never
 * a live one, sleep replay at the idle boundary from the logged tool calls, memory-file compaction
 * queued at session start, and the provenance of a past turn read back.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { isHeartbeatMessage } from '../src/memory/priming/classify.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { type FakeChatRequest, type FakeChatStep, type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'

const MINUTE = 60_000

function open(tmp: TempHome, clock: ManualClock, env: Record<string, string> = tmp.env): Promise<MindInternals> {
  return openMindInternals({ home: tmp.home, env, ignoreConfigFile: true, clock, embedder: null })
}

async function say(mind: MindInternals, sessionId: string, user: string | undefined, message: string, reply = 'Noted.') {
  // A stateless host: a new Session object for every turn.
  const session = mind.session(sessionId, user !== undefined ? { user } : {})
  const turn = await session.begin(message)
  const end = await session.end(turn, reply)
  return { turn, end }
}

function file(tmp: TempHome, rel: string): string {
  try {
    return readFileSync(join(tmp.home, 'agents/default', rel), 'utf8')
  } catch {
    return ''
  }
}

describe('a host that creates mind.session(id) anew on every turn', () => {
  test('turn numbers come from the store and go on after a restart; identity extraction runs at the fifth turn of the user', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    let mind = await open(tmp, clock)
    const numbers: number[] = []
    const scheduled: string[][] = []
    for (const message of ['Hi, my name is Ada Lovelace.', 'I work at the billing team.', 'Can you check invoice 12?']) {
      const { turn, end } = await say(mind, 's1', 'ada', message)
      numbers.push(turn.number)
      scheduled.push(end.scheduled)
      clock.advance(MINUTE)
    }
    await mind.close()

    mind = await open(tmp, clock)
    t.after(() => mind.close())
    const fourth = await say(mind, 's1', 'ada', 'And invoice 13?')
    numbers.push(fourth.turn.number)
    scheduled.push(fourth.end.scheduled)
    await say(mind, 'bob-chat', 'bob', 'Hello, my name is Bob.')
    // The same user in another session: the counter is per (agent, user), not per session.
    const fifth = await say(mind, 's2', 'ada', 'Thanks, that is all for today.')
    assert.equal(fifth.turn.number, 1, 'a new session starts at turn 1')
    scheduled.push(fifth.end.scheduled)
    await mind.idle()

    assert.deepEqual(numbers, [1, 2, 3, 4])
    assert.deepEqual(
      scheduled.map((kinds) => kinds.includes('identity')),
      [false, false, false, false, true],
    )
    const [identity] = await mind.backend.lifecycle.jobs('default', { kind: 'identity' })
    assert.equal(identity?.status, 'done')
    assert.equal(identity?.payload.user, 'ada')
    // Facts about ada go into her one profile, not the agent's profile.md (decision 0017).
    assert.match(readFileSync(join(tmp.home, 'shared/users/ada.md'), 'utf8'), /Name: Ada Lovelace/, 'the explicit fact, extracted offline')
    assert.equal(file(tmp, 'memory/profile.md'), '', 'nothing about a user in the agent\'s identity')
    assert.throws(() => readFileSync(join(tmp.home, 'shared/users/bob.md')), 'bob has had one turn')
    assert.equal((await mind.sessions.get('s1'))?.turns, 4)
    assert.equal((await mind.sessions.get('s1'))?.user, 'ada')
  })

  test('the provenance of a past turn is read back by turn number and by any of its message ids, after a restart', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    let mind = await open(tmp, clock)
    await mind.encode([{ text: 'The billing export runs at 02:00 UTC', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user' }])
    await mind.indexed()
    const session = mind.session('chat', { user: 'ada' })
    const turn = await session.begin('When does the billing export run?')
    const end = await session.end(turn, [
      { role: 'assistant', content: 'Let me check.' },
      { role: 'assistant', content: 'It runs at 02:00 UTC.' },
    ])
    await mind.close()

    mind = await open(tmp, clock)
    t.after(() => mind.close())
    const stored = await mind.turnProvenance({ sessionId: 'chat', turn: turn.number })
    assert.ok(stored)
    assert.deepEqual(stored.provenance, turn.provenance)
    assert.deepEqual([stored.number, stored.user, stored.messageId, stored.replyIds, stored.type], [1, 'ada', turn.messageId, end.messageIds, turn.type])
    assert.ok(stored.provenance.memory.some((section) => section.name === 'Global lessons' && section.entries === 1), 'the lesson was in the memory context')
    // "Why did the agent say that?" from the id of the reply.
    assert.deepEqual(await mind.turnProvenance({ messageId: end.messageIds[1] as number }), stored)
    assert.deepEqual(await mind.turnProvenance({ messageId: turn.messageId }), stored)
    assert.equal(await mind.turnProvenance({ sessionId: 'chat', turn: 2 }), null)
  })
})

describe('heartbeats', () => {
  test('recognises the heartbeat forms of a trigger, not cron runs or empty text', () => {
    for (const text of ['[heartbeat] check inbox', '[hb]', 'HEARTBEAT: periodic patrol', 'heartbeat', 'periodic patrol of the queues']) assert.equal(isHeartbeatMessage(text), true, text)
    for (const text of ['', 'cron: nightly-backup', 'the heartbeat monitor is red', 'How is the heartbeat service?']) assert.equal(isHeartbeatMessage(text), false, text)
  })

  test('a heartbeat message ends the sessions quiet since the previous heartbeat; a live conversation is not cut', async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock)
    t.after(() => mind.close())
    await say(mind, 'chat-ada', 'ada', 'The nightly backup failed again, please look.', 'The disk was full; I cleaned it and the backup ran.\nresolved: nightly backup failed')
    clock.advance(MINUTE)
    await say(mind, 'patrol', undefined, '[heartbeat] check inbox')
    await mind.idle()
    assert.equal((await mind.sessions.get('chat-ada'))?.status, 'open', 'the first heartbeat only sets the mark')

    clock.advance(2 * MINUTE)
    await say(mind, 'chat-bob', 'bob', 'Can you draft the agenda for Monday?')
    clock.advance(MINUTE)
    await say(mind, 'patrol', undefined, '[heartbeat] check inbox')
    await mind.idle()

    const ada = await mind.sessions.get('chat-ada')
    assert.deepEqual([ada?.status, ada?.closeReason], ['closed', 'heartbeat'], 'quiet since the previous heartbeat: ended')
    assert.equal((await mind.sessions.get('chat-bob'))?.status, 'open', 'active since the previous heartbeat: live')
    assert.equal((await mind.sessions.get('patrol'))?.status, 'open', 'the heartbeat\'s own session is active')
    assert.match(file(tmp, 'users/ada/episodes/2026-03-02.md'), /nightly backup/, "ada's episode, in her tree")
    assert.match(readFileSync(join(tmp.home, 'shared/resolutions.jsonl'), 'utf8'), /nightly backup failed/)
    const [encoding] = await mind.backend.lifecycle.jobs('default', { kind: 'immediate-encoding' })
    assert.deepEqual([encoding?.status, encoding?.payload.session, encoding?.payload.reason, encoding?.payload.user], ['done', 'chat-ada', 'heartbeat', 'ada'])
  })
})

describe('with a model (fake server)', () => {
  let server: FakeOpenAiServer
  let tmp: TempHome
  let env: Record<string, string>
  const name = (request: { body: unknown }): string =>
    (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
  const answers = (request: FakeChatRequest): FakeChatStep => {
    switch (name(request)) {
      case 'lessons':
        return { json: { lessons: [{ tool: 'deploy', lesson: 'Run the database migrations before deploying the billing service.', confidence: 'high' }] } }
      case 'consolidated_lessons':
        return { json: { rules: [{ text: 'Check pending migrations before a deploy', kind: 'always', scope: 'global', confidence: 'high' }], lessons: [] } }
      case 'episode':
        return { json: { title: 'Deploy of the billing service', summary: 'The deploy failed until the migrations ran.', resolved: [], newTasks: [] } }
      case 'compaction':
        return { json: { drop: [{ entry: 22, keptInstead: 1, reason: 'restatement' }] } }
      default:
        return { json: { facts: [] } }
    }
  }
  before(async () => {
    server = await startFakeOpenAiServer({ onChat: answers })
  })
  after(() => server.close())
  beforeEach(() => {
    server.reset()
    tmp = makeTempHome()
    env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake', ENGRAM_LLM_MAX_RETRIES: '0' }
  })

  const deploy: ToolDefinition<{ service: string }> = {
    name: 'deploy',
    description: 'Deploy a service.',
    inputSchema: z.object({ service: z.string() }),
    async run({ service }) {
      if (service === 'billing-before-migrations') throw new Error('migration 0042 is pending')
      return { text: `deployed ${service}` }
    },
  }

  test('the error learner runs after the turn; at the idle boundary the working session is replayed from its logged tool calls', async (t) => {
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock, env)
    t.after(() => mind.close())
    for (const service of ['billing-before-migrations', 'billing']) {
      const session = mind.session('ops', { user: 'ada', tools: [deploy] })
      const turn = await session.begin(`Deploy ${service}, please.`)
      await session.execute('deploy', { service })
      clock.advance(MINUTE)
      await session.end(turn, 'Done.')
    }
    await mind.idle()
    assert.equal(server.requests.filter((request) => name(request) === 'lessons').length, 1, 'the failed turn\'s post-mortem ran in the background')
    assert.match(file(tmp, 'users/ada/memory/lessons.md'), /Run the database migrations before deploying/, "learned in ada's session: hers")
    assert.equal(server.requests.filter((request) => name(request) === 'consolidated_lessons').length, 0, 'no replay before the boundary')

    clock.advance(11 * MINUTE)
    const report = await mind.maintain()
    const replay = report.jobs.find((job) => job.kind === 'sleep-replay')
    assert.equal(replay?.status, 'done', JSON.stringify(report.jobs))
    assert.deepEqual([replay?.result?.steps, replay?.result?.decision], [2, 'error'])
    assert.match(file(tmp, 'users/ada/memory/rules.md'), /Check pending migrations before a deploy/)
    const prompt = JSON.stringify(server.requests.find((request) => name(request) === 'consolidated_lessons')?.body.messages)
    assert.match(prompt, /\[error\] deploy .*billing-before-migrations.*migration 0042 is pending/)
    assert.deepEqual((await mind.maintain()).jobs, [], 'replayed once')
  })

  test('memory-file compaction is checked at session start and runs in the background, once for what a file holds: a file that crosses the threshold later that day is compacted at the next session start', async (t) => {
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock, env)
    t.after(() => mind.close())
    const lesson = (text: string) => ({ text, kind: 'lesson' as const, scope: 'global' as const, confidence: 'high' as const, source: 'user' as const })
    const lessons = Array.from({ length: 21 }, (_, i) => lesson(`Service ${i} answers within ${i + 1} seconds`))
    await mind.encode([...lessons, lesson('Service 0 answers within 1 second')])
    const compactions = () => server.requests.filter((request) => name(request) === 'compaction').length
    const jobs = () => mind.backend.lifecycle.jobs('default', { kind: 'memory-compaction' })

    // Morning: the agent's lessons.md is over 20 entries; Ada's first turn queues its compaction in the background.
    const turn = await mind.session('morning', { user: 'ada' }).begin('Good morning!')
    assert.equal(turn.number, 1)
    await mind.idle()
    const [job] = await jobs()
    assert.deepEqual([job?.status, job?.payload.reason], ['done', 'session-start'])
    assert.doesNotMatch(file(tmp, 'memory/lessons.md'), /within 1 second </)
    assert.equal(compactions(), 1)

    // Bob starts a session: the agent's file is as the compaction left it, Bob's is small; nothing is queued.
    await mind.session('bob-1', { user: 'bob' }).begin('Hi there')
    await mind.idle()
    assert.equal((await jobs()).length, 1, 'a file as its compaction left it is not compacted again')

    // At noon Ada's own lessons.md crosses the threshold (her memorize calls, one turn after another).
    clock.advance(3 * 60 * MINUTE)
    const hers = Array.from({ length: 21 }, (_, i) => lesson(`Ada's report ${i} is due on day ${i + 1} of the month`))
    await mind.scope('ada').encoder.encode([...hers, lesson("Ada's report 0 is due on day 1 of each month")])
    assert.equal((await jobs()).length, 1, 'writing a memory never compacts by itself')
    const bobTurn = await mind.session('bob-2', { user: 'bob' }).begin('Anything new?')
    await mind.idle()
    assert.equal((await jobs()).length, 1, "Bob's session start does not look at Ada's files")
    assert.ok(bobTurn.number >= 1)

    // Her next session start, the same day, queues the compaction of her file: not tomorrow.
    const afternoon = await mind.session('afternoon', { user: 'ada' }).begin('Hello again')
    assert.equal(compactions(), 1, 'begin never waits for a model call')
    await mind.idle()
    const after = await jobs()
    assert.equal(after.length, 2, JSON.stringify(after.map((queued) => queued.key)))
    assert.equal(compactions(), 2, "one model call: Ada's file (the agent's is as its compaction left it)")
    const prompt = JSON.stringify(server.requests.filter((request) => name(request) === 'compaction').at(-1)?.body)
    assert.match(prompt, /Ada's report 0/)
    assert.doesNotMatch(prompt, /Service 0/)
    assert.doesNotMatch(file(tmp, 'users/ada/memory/lessons.md'), /Ada's report 0 is due on day 1 of each month/)
    assert.match(file(tmp, 'users/ada/memory/lessons.md'), /Ada's report 0 is due on day 1 of the month/)
    assert.equal(afternoon.number, 1)

    // A third session start without any change queues nothing.
    await mind.session('evening', { user: 'ada' }).begin('Good evening')
    await mind.idle()
    assert.equal((await jobs()).length, 2)
    assert.equal(compactions(), 2)

    // A host that keeps one session id open (a new Session object per turn): Bob's file crosses the
    // threshold during his session; his next turn's begin queues its compaction.
    const his = Array.from({ length: 21 }, (_, i) => lesson(`Bob's plant ${i} needs water every ${i + 2} days`))
    await mind.scope('bob').encoder.encode([...his, lesson("Bob's plant 0 needs water every two days")])
    await mind.session('bob-2', { user: 'bob' }).begin('One more thing')
    await mind.idle()
    assert.equal(compactions(), 3, 'compacted at the next begin of the same session')
    assert.doesNotMatch(file(tmp, 'users/bob/memory/lessons.md'), /needs water every two days/)
  })

  test('with jobs.eager off (serverless) a turn only queues its work; maintain() runs it', async (t) => {
    t.after(tmp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const mind = await open(tmp, clock, { ...env, ENGRAM_JOBS_EAGER: 'false' })
    t.after(() => mind.close())
    const session = mind.session('ops', { user: 'ada', tools: [deploy] })
    const turn = await session.begin('Deploy billing-before-migrations')
    await session.execute('deploy', { service: 'billing-before-migrations' })
    const end = await session.end(turn, 'It failed.')
    assert.deepEqual(end.scheduled, ['error-learner'])
    await mind.idle()
    assert.equal(server.requests.length, 0, 'nothing ran in the background')
    assert.deepEqual(
      (await mind.backend.lifecycle.jobs('default')).map((job) => [job.kind, job.status]),
      [['error-learner', 'queued']],
    )
    const report = await mind.maintain()
    assert.deepEqual(
      report.jobs.map((job) => [job.kind, job.status]),
      // The day's consolidation, the week's integration and the month's forgetting run at the period's first maintain; nothing to do yet.
      [
        ['error-learner', 'done'],
        ['consolidation-daily', 'skipped'],
        ['consolidation-weekly', 'skipped'],
        ['consolidation-monthly', 'skipped'],
      ],
    )
    assert.match(file(tmp, 'users/ada/memory/lessons.md'), /Run the database migrations/)
  })
})
