/**
 * Episodic memory can be switched off (decision 0050; the seed's ANTON_EPISODIC_MEMORY), as a config
 * setting: `memory.episodic` / ENGRAM_EPISODIC_MEMORY=false. Through the agent's path (createMind →
 * a new Session per turn, two users, a tool call, the session's end, maintain at the idle
 * boundary): nothing of the conversation reaches any activity log, and no episode is written; the
 * memories the agent saves on purpose, and the conversation kept for the context window, are. The
 * same path with the default writes both, so the switch is what made the difference.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { z } from 'zod'
import { EPISODIC_TYPES } from '../src/memory/episodes/recorder.ts'
import { ManualClock } from '../src/core/clock.ts'
import type { Owner } from '../src/core/owner.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import { call } from './support/tool-calls.ts'

const MINUTE = 60_000
const OWNERS: Owner[] = ['agent', 'user:ada', 'user:bob']

const deploy: ToolDefinition<{ service: string }> = {
  name: 'deploy',
  description: 'Deploy a service.',
  inputSchema: z.object({ service: z.string() }),
  async run({ service }) {
    return { text: `deployed ${service}` }
  },
}

/** Two users' conversations: each turn a new Session object; Ada's uses a tool and memorizes a lesson; both end. */
async function conversations(mind: Mind, clock: ManualClock): Promise<string[]> {
  const outcomes: string[] = []
  for (const [user, messages] of [
    ['ada', ['Deploy the billing service to staging, please.', 'Remember that billing deploys need the migrations first.']],
    ['bob', ['What is on my reading list?', 'Thanks, that is all.']],
  ] as const) {
    for (const message of messages) {
      const session = mind.session(`${user}-chat`, { user, tools: [deploy] })
      const turn = await session.begin(message)
      if (message.startsWith('Deploy')) await session.execute('deploy', { service: 'billing' })
      if (message.startsWith('Remember')) assert.notEqual((await call(turn.tools, 'memorize', { entries: [{ text: 'Billing deploys need the database migrations first', kind: 'lesson' }] })).isError, true)
      await session.end(turn, 'Done.')
      clock.advance(MINUTE)
    }
  }
  outcomes.push((await mind.sessions.end('ada-chat')).kind)
  clock.advance(11 * MINUTE)
  const report = await mind.maintain()
  outcomes.push(...report.boundaries.map((boundary) => boundary.kind))
  return outcomes
}

async function episodic(mind: Mind): Promise<{ events: number; episodes: number }> {
  let events = 0
  let episodes = 0
  for (const owner of OWNERS) {
    const owned = mind.backend.owned(owner)
    events += (await owned.activity.read({})).filter((event) => EPISODIC_TYPES.has(event.type)).length
    episodes += (await owned.documents.slugs('episode')).length
  }
  return { events, episodes }
}

async function switchedOff(t: { after(fn: () => unknown): void }, storage: Record<string, string> = {}): Promise<void> {
  const temp = makeTempHome('engram-episodic-off-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env: { ...temp.env, ...storage, ENGRAM_EPISODIC_MEMORY: 'false' }, ignoreConfigFile: true, clock, embedder: null })
  t.after(() => mind.close())
  assert.equal(mind.config.values.memory.episodic, false)
  assert.equal(mind.config.sources['memory.episodic'], 'env')

  const outcomes = await conversations(mind, clock)
  await mind.idle()
  assert.deepEqual(await episodic(mind), { events: 0, episodes: 0 }, 'no message, reply or tool call logged; no episode written')
  assert.ok(outcomes.every((kind) => kind === 'nothing_new'), JSON.stringify(outcomes))
  assert.deepEqual(await mind.sessions.open(), [], 'sessions still reach their boundaries')

  // What the agent saved on purpose is memory, not an episode: kept, and found by its user only.
  const found = await call(mind.agentTools({ sessionId: 'later', user: 'ada' }), 'search_memory', { query: 'billing deploys migrations' })
  assert.match(found.text, /database migrations first/)
  const bob = await call(mind.agentTools({ sessionId: 'later-bob', user: 'bob' }), 'search_memory', { query: 'billing deploys migrations' })
  assert.doesNotMatch(bob.text, /database migrations first/)
  // The conversation itself is still kept for the context window (working memory, not episodic).
  const conversation = await mind.backend.context.findConversation('ada-chat', mind.agent)
  assert.ok(conversation && (await mind.backend.context.messages(conversation.id)).length > 0)
}

test('ENGRAM_EPISODIC_MEMORY=false: sessions of two users write no activity of the conversation and no episode; what the agent saves on purpose is kept', (t) => switchedOff(t))
onPostgres('episodic memory switched off', (url) => {
  test('ENGRAM_EPISODIC_MEMORY=false on PostgreSQL: no conversation rows in any activity log, no episode', (t) => switchedOff(t, { ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: freshSchema() }))
})

test('by default (memory.episodic true) the same sessions log their activity and write episodes', async (t) => {
  const temp = makeTempHome('engram-episodic-on-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
  t.after(() => mind.close())
  assert.equal(mind.config.values.memory.episodic, true)
  const outcomes = await conversations(mind, clock)
  await mind.idle()
  const written = await episodic(mind)
  assert.ok(written.events >= 6, JSON.stringify(written))
  assert.equal(written.episodes, 2, "one day file in Ada's tree, one in Bob's")
  assert.deepEqual(outcomes.sort(), ['recorded', 'recorded'])
})
