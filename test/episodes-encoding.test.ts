/**
 * Immediate encoding at session boundaries, through the mind (`createMind` → activity → boundary):
 * the idle boundary, a heartbeat, an explicit end, a restart between a conversation and its
 * boundary, a crash between writing an episode and recording its cursor, and the LLM summary with
 * its marked fallbacks.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, afterEach, before, beforeEach, describe, it } from 'node:test'
import type { ConfigValues } from '../src/config/resolve.ts'
import { ManualClock } from '../src/core/clock.ts'
import type { Llm } from '../src/llm/contracts.ts'
import { createLlm } from '../src/llm/create-llm.ts'
import { createNoneLlm } from '../src/llm/none-llm.ts'
import { parseEpisodeSections } from '../src/memory/episodes/episode-format.ts'
import type { ActivityRecorder } from '../src/memory/episodes/recorder.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import type { Backend } from '../src/storage/contracts.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const MINUTE = 60_000

interface Rig {
  mind: MindInternals
  backend: Backend
  recorder: ActivityRecorder
}

async function rig(temp: TempHome, clock: ManualClock, llm: Llm): Promise<Rig> {
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, llm, embedder: null, reindexOnOpen: false })
  return { mind, backend: mind.backend, recorder: mind.activity }
}

function read(temp: TempHome, rel: string): string {
  return readFileSync(join(temp.home, 'agents', 'default', ...rel.split('/')), 'utf8')
}

function resolutionLines(temp: TempHome): Array<Record<string, unknown>> {
  const file = join(temp.home, 'shared', 'resolutions.jsonl')
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

async function deployConversation(recorder: ActivityRecorder, clock: ManualClock, session: string): Promise<void> {
  await recorder.messageReceived('The staging deploy fails with an expired token, can you look?', { session, from: 'ada' })
  clock.advance(20_000)
  await recorder.toolUse('shell', { input: { command: 'cat deploy.log', padding: 'x'.repeat(800) }, result: `token expired\n${'log '.repeat(900)}`, ok: true }, { session })
  clock.advance(20_000)
  await recorder.responseSent('I renewed the deploy token and the staging deploy works again.\ndone: staging deploy fails\nTODO: rotate the deploy token every 90 days', { session, to: 'ada' })
}

describe('immediate encoding offline (extractive)', () => {
  let temp: TempHome
  let clock: ManualClock
  let r: Rig
  beforeEach(async () => {
    temp = makeTempHome()
    clock = new ManualClock('2026-03-02T09:00:00Z')
    r = await rig(temp, clock, createNoneLlm())
  })
  afterEach(async () => {
    await r.mind.close()
    temp.cleanup()
  })

  it('logs tool use cut to 500/2000 characters and never throws on a bad event', async () => {
    await deployConversation(r.recorder, clock, 'chat-1')
    await r.recorder.record({ type: 'not_a_type' as never, content: 'x' })
    const records = await r.backend.activity.read()
    assert.equal(records.length, 3)
    const tool = records.find((record) => record.type === 'tool_use')
    assert.equal(String(tool?.meta?.input).length, 500)
    assert.equal(String(tool?.meta?.result).length, 2000)
    assert.ok(((tool?.meta?.truncated as { input?: number } | undefined)?.input ?? 0) > 500)
  })

  it('ends a session after 10 idle minutes, records it once, updates the state and propagates the resolution', async () => {
    await r.backend.documents.write('state', 'current_task', {}, '# Current task\n\n- [ ] staging deploy fails\n- [ ] write the release notes\n')
    await deployConversation(r.recorder, clock, 'chat-1')
    assert.deepEqual((await r.mind.sessions.open()).map((session) => session.sessionId), ['chat-1'], 'activity opened the session in the store')

    clock.advance(5 * MINUTE)
    assert.deepEqual((await r.mind.maintain()).boundaries, [], 'not idle yet after 5 minutes')
    clock.advance(6 * MINUTE)
    const maintained = await r.mind.maintain()
    assert.deepEqual(maintained.closed, [{ session: 'chat-1', user: undefined, reason: 'idle' }])
    const [outcome] = maintained.boundaries
    assert.equal(outcome?.kind, 'recorded')
    if (outcome?.kind !== 'recorded') return
    assert.equal(outcome.reason, 'idle')
    assert.equal(outcome.method, 'extractive')
    assert.match(outcome.fallback ?? '', /no LLM configured/)
    assert.deepEqual(outcome.turns, [1, 1])
    assert.equal(outcome.events, 3)
    assert.equal(outcome.episode, 'episodes/2026-03-02.md#09:00 — The staging deploy fails with an expired token, can you look?')
    const replay = maintained.jobs.find((job) => job.kind === 'sleep-replay')
    assert.equal(replay?.status, 'skipped')
    assert.match(replay?.reason ?? '', /too short \(1 steps\)/)

    const episode = read(temp, 'episodes/2026-03-02.md')
    assert.ok(episode.startsWith('# 2026-03-02\n'))
    const sections = parseEpisodeSections(episode).filter((section) => section.heading !== '')
    assert.equal(sections.length, 1)
    assert.equal(sections[0]?.marker?.session, 'chat-1')
    assert.equal(sections[0]?.marker?.method, 'extractive')
    assert.match(sections[0]?.body ?? '', /Extractive summary/)
    assert.match(sections[0]?.body ?? '', /tools used: shell/)

    const state = read(temp, 'state/current_task.md')
    assert.match(state, /- \[x\] staging deploy fails \(resolved 2026-03-02\)/)
    assert.match(state, /- \[ \] write the release notes/)
    assert.match(state, /- \[ \] rotate the deploy token every 90 days/)
    assert.equal(outcome.state.kind, 'updated')

    const resolutions = resolutionLines(temp)
    assert.equal(resolutions.length, 1)
    assert.equal(resolutions[0]?.issue, 'staging deploy fails')
    assert.equal(resolutions[0]?.agent, 'default')
    const resolved = await r.backend.activity.read({ types: ['issue_resolved'] })
    assert.equal(resolved.length, 1)
    assert.equal(resolved[0]?.content, 'staging deploy fails')
    assert.equal((await r.mind.sessions.get('chat-1'))?.status, 'closed')

    // Every later boundary finds nothing new: nothing is recorded twice.
    const again = await r.mind.maintain()
    assert.deepEqual([again.closed, again.boundaries, again.jobs], [[], [], []])
    assert.equal((await r.mind.sessions.end('chat-1')).kind, 'nothing_new')
    assert.equal((await r.mind.heartbeat()).boundaries.length, 0)
    assert.equal(read(temp, 'episodes/2026-03-02.md'), episode)
    assert.equal(resolutionLines(temp).length, 1)
    assert.equal((await r.backend.activity.read({ types: ['issue_resolved'] })).length, 1)
    assert.equal(await r.mind.sessions.lastFinalizedTurn('chat-1'), 1)
  })

  it('summarises only the turns not yet recorded when the session goes on', async () => {
    await deployConversation(r.recorder, clock, 'chat-1')
    assert.equal((await r.mind.sessions.end('chat-1')).kind, 'recorded')
    const first = read(temp, 'episodes/2026-03-02.md')

    clock.advance(30 * MINUTE)
    await r.recorder.messageReceived('Please also update the runbook for token renewal', { session: 'chat-1', from: 'ada' })
    assert.equal((await r.mind.sessions.get('chat-1'))?.status, 'open', 'new activity reopens the session')
    clock.advance(MINUTE)
    await r.recorder.responseSent('The runbook now has a token renewal section.', { session: 'chat-1', to: 'ada' })
    clock.advance(MINUTE)
    await r.recorder.messageReceived('Thanks, and check the nightly backup too', { session: 'chat-1', from: 'ada' })
    const second = await r.mind.sessions.end('chat-1')
    assert.equal(second.kind, 'recorded')
    if (second.kind !== 'recorded') return
    assert.deepEqual(second.turns, [2, 3])
    assert.equal(second.events, 3)
    const text = read(temp, 'episodes/2026-03-02.md')
    assert.ok(text.startsWith(first), 'the first section is untouched')
    const sections = parseEpisodeSections(text).filter((section) => section.heading !== '')
    assert.equal(sections.length, 2)
    assert.doesNotMatch(sections[1]?.body ?? '', /expired token/, 'the second summary does not repeat the first turn')
    assert.match(sections[1]?.body ?? '', /runbook/)
    assert.equal(await r.mind.sessions.lastFinalizedTurn('chat-1'), 3)
    // Without explicit markers the offline state update is skipped, and says so.
    assert.equal(second.state.kind, 'skipped')
  })

  it('a heartbeat ends the sessions quiet since the previous one, never a live one; a restarted process loses no session', async () => {
    await deployConversation(r.recorder, clock, 'chat-1')
    await r.recorder.messageReceived('What is on the calendar today?', { session: 'chat-2', from: 'bob' })
    clock.advance(MINUTE)
    const first = await r.mind.heartbeat()
    assert.equal(first.previous, undefined)
    assert.deepEqual(first.closed, [], 'the first heartbeat only sets the mark')

    clock.advance(MINUTE)
    await r.recorder.messageReceived('Book a room for Friday', { session: 'chat-3', from: 'ada' })
    clock.advance(MINUTE)
    const second = await r.mind.heartbeat()
    assert.equal(second.previous, first.at)
    assert.deepEqual(second.boundaries.map((o) => [o.session, o.kind, o.reason]).sort(), [
      ['chat-1', 'recorded', 'heartbeat'],
      ['chat-2', 'recorded', 'heartbeat'],
    ])
    assert.deepEqual((await r.mind.sessions.open()).map((s) => s.sessionId), ['chat-3'], 'the live conversation is not cut')
    const beats = await r.backend.activity.read({ types: ['heartbeat_start', 'heartbeat_end'] })
    assert.deepEqual(beats.map((event) => event.type), ['heartbeat_start', 'heartbeat_end', 'heartbeat_start', 'heartbeat_end'])
    assert.match(beats[3]?.summary ?? '', /closed 2 session\(s\): chat-1, chat-2/)

    // The process dies before chat-3 reaches a boundary; the next one finds it in the store.
    await r.mind.close()
    r = await rig(temp, clock, createNoneLlm())
    clock.advance(11 * MINUTE)
    const idle = await r.mind.maintain()
    assert.deepEqual(idle.boundaries.map((o) => [o.session, o.kind]), [['chat-3', 'recorded']])
    const sessions = parseEpisodeSections(read(temp, 'episodes/2026-03-02.md'))
      .map((section) => section.marker?.session)
      .filter(Boolean)
    assert.deepEqual(sessions.sort(), ['chat-1', 'chat-2', 'chat-3'])
  })

  it('repairs a crash between writing the episode and recording its cursor without writing it twice', async () => {
    await deployConversation(r.recorder, clock, 'chat-1')
    assert.equal((await r.mind.sessions.end('chat-1')).kind, 'recorded')
    const episode = read(temp, 'episodes/2026-03-02.md')
    await r.mind.close()
    // Losing the database loses every cursor: exactly the state a crash before `jobs.record` leaves.
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(temp.home, `engram.db${suffix}`), { force: true })
    r = await rig(temp, clock, createNoneLlm())
    const again = await r.mind.sessions.end('chat-1')
    assert.equal(again.kind, 'nothing_new')
    assert.ok(again.kind === 'nothing_new' && again.repaired?.startsWith('episodes/2026-03-02.md#09:00'))
    assert.equal(read(temp, 'episodes/2026-03-02.md'), episode)
    assert.equal(resolutionLines(temp).length, 1, 'the resolution is not propagated twice')
    assert.equal((await r.backend.activity.read({ types: ['issue_resolved'] })).length, 1)
    assert.equal(await r.mind.sessions.lastFinalizedTurn('chat-1'), 1)
  })
})

describe('immediate encoding through an LLM (fake server)', () => {
  let server: FakeOpenAiServer
  let temp: TempHome
  let clock: ManualClock
  let r: Rig
  before(async () => {
    server = await startFakeOpenAiServer()
  })
  after(async () => {
    await server.close()
  })
  beforeEach(async () => {
    server.reset()
    temp = makeTempHome()
    clock = new ManualClock('2026-03-02T14:30:00Z')
    const config: ConfigValues['llm'] = { provider: 'openai-compatible', baseUrl: server.url, apiKey: 'k', model: 'planner', fastModel: 'fast', timeoutMs: 400, maxRetries: 0 }
    r = await rig(temp, clock, createLlm(config, { retryBaseDelayMs: 1 }))
  })
  afterEach(async () => {
    await r.mind.close()
    temp.cleanup()
  })

  it('writes the LLM summary with the fast model, updates the state and propagates what it resolved', async () => {
    server.enqueue({
      json: {
        title: 'Fixed the login bug',
        summary: 'Ada reported that login failed for SSO users; the agent found a stale certificate and replaced it.',
        resolved: ['login fails for SSO users'],
        newTasks: ['add a regression test for SSO login'],
      },
    })
    await r.recorder.messageReceived('Login fails for SSO users since this morning', { session: 'chat-9', from: 'ada' })
    clock.advance(MINUTE)
    await r.recorder.responseSent('The certificate was stale; I replaced it and SSO login works.', { session: 'chat-9', to: 'ada' })
    const outcome = await r.mind.sessions.end('chat-9')
    assert.equal(outcome.kind, 'recorded')
    if (outcome.kind !== 'recorded') return
    assert.equal(outcome.method, 'llm')
    assert.equal(outcome.heading, '14:30 — Fixed the login bug')
    assert.equal(server.requests[0]?.body.model, 'fast')
    const prompt = JSON.stringify(server.requests[0]?.body.messages)
    assert.match(prompt, /MSG< ada: Login fails for SSO users/)

    const episode = read(temp, 'episodes/2026-03-02.md')
    assert.match(episode, /## 14:30 — Fixed the login bug\n\nAda reported that login failed/)
    assert.match(episode, /Resolved:\n- login fails for SSO users/)
    assert.match(episode, /"method":"llm"/)
    assert.match(read(temp, 'state/current_task.md'), /- \[ \] add a regression test for SSO login/)
    assert.deepEqual(resolutionLines(temp).map((line) => line.issue), ['login fails for SSO users'])
  })

  for (const [name, step] of [
    ['a 500 error', { fail: { status: 500 } }],
    ['text that is not JSON', { invalidJson: true }],
    ['JSON that violates the schema', { json: { title: 3 } }],
    ['a hung request (timeout)', { hang: true }],
  ] as const) {
    it(`falls back to a marked extractive summary on ${name}, leaving every file readable`, async () => {
      server.enqueue(step)
      await r.recorder.messageReceived('Remind me what we decided about the offsite', { session: 'chat-5', from: 'ada' })
      clock.advance(MINUTE)
      await r.recorder.responseSent('We picked Lisbon in May.\nTODO: book the venue', { session: 'chat-5' })
      const outcome = await r.mind.sessions.end('chat-5')
      assert.equal(outcome.kind, 'recorded')
      if (outcome.kind !== 'recorded') return
      assert.equal(outcome.method, 'extractive')
      assert.match(outcome.fallback ?? '', /LLM call failed/)
      const episode = read(temp, 'episodes/2026-03-02.md')
      const sections = parseEpisodeSections(episode).filter((section) => section.heading !== '')
      assert.equal(sections.length, 1)
      assert.equal(sections[0]?.marker?.method, 'extractive')
      assert.match(sections[0]?.marker?.fallback ?? '', /LLM call failed/)
      assert.match(read(temp, 'state/current_task.md'), /- \[ \] book the venue/)
      assert.equal(await r.mind.sessions.lastFinalizedTurn('chat-5'), 1)
    })
  }
})
