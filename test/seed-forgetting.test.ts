/**
 * The rest of the seed's active forgetting (decision 0050), through the agent's path — createMind → a
 * new Session per turn for two users → maintain() every few days on a clock moved by months:
 *
 * - the daily run writes the low-activity mark into a memory's frontmatter (`activity_level: low`,
 *   `low_activity_since`) and takes it off when the memory is recalled again;
 * - monthly forgetting takes old episodes too — compressed by the weekly run and unaccessed as the
 *   seed's thresholds say (90 days, fewer than 3 accesses, then 60 more) — into the owner's
 *   `archive/forgotten/`, out of the index, restorable; an episode its user recalled stays;
 * - the weekly run merges low-activity memories that are alike with a model (one text holding
 *   both; the other archived in `archive/merged/`, restorable); offline it merges duplicates only
 *   and says the rest waits for a model. Never across users.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import type { DocKind, Frontmatter } from '../src/core/memory-doc.ts'
import type { Owner } from '../src/core/owner.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { call } from './support/tool-calls.ts'

const DAY = 86_400_000
const START = Date.parse('2026-01-05T09:00:00Z')

/** Where the memory is kept: the home's files, or PostgreSQL rows (the same assertions through the stores). */
type Backend = { name: 'embedded' } | { name: 'postgres'; url: string }

function envFor(backend: Backend, temp: TempHome): Record<string, string> {
  return backend.name === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: backend.url, ENGRAM_DATABASE_SCHEMA: freshSchema() } : temp.env
}

/** A live document of `owner` (null when it is not live). */
const live = (mind: Mind, owner: Owner, kind: DocKind, slug: string) => mind.backend.owned(owner).documents.read(kind, slug)
const frontmatterOf = async (mind: Mind, owner: Owner, kind: DocKind, slug: string): Promise<Frontmatter> => (await live(mind, owner, kind, slug))?.frontmatter ?? {}
/** The text archived at `inner` (`forgotten/episode/<day>.md`) in `owner`'s tree, or null. */
async function archived(mind: Mind, owner: Owner, inner: string): Promise<string | null> {
  const tree = owner === 'agent' ? `agents/${mind.agent}` : `agents/${mind.agent}/users/${owner.slice('user:'.length)}`
  return (await mind.backend.owned(owner).documents.readArchived?.(`${tree}/archive/${inner}`)) ?? null
}

/** One turn of `user` in a new Session object, with an optional tool call; the session ends. */
async function turn(mind: Mind, sessionId: string, user: string, message: string, act?: (tools: Awaited<ReturnType<ReturnType<Mind['session']>['begin']>>['tools']) => Promise<void>): Promise<void> {
  const session = mind.session(sessionId, { user })
  const begun = await session.begin(message)
  await act?.(begun.tools)
  await session.end(begun, 'Noted, thank you.')
}

async function maintainOn(mind: Mind, clock: ManualClock, day: number) {
  clock.set(new Date(START + day * DAY))
  return mind.maintain()
}

async function forgettingOverMonths(backend: Backend, t: { after(fn: () => unknown): void }): Promise<void> {
  const temp = makeTempHome('engram-seed-forgetting-')
  t.after(temp.cleanup)
  const clock = new ManualClock(new Date(START))
  // No embedder: with a handful of memories a vector KNN would return (and so count as recalled) every one.
  const mind = await createMind({ home: temp.home, env: envFor(backend, temp), ignoreConfigFile: true, clock, embedder: null })
  t.after(() => mind.close())
  assert.equal(mind.backend.name, backend.name)

  // Day 0: long conversations of Ada and Bob (their episodes), and two notes of Ada's.
  const talk = (topic: string) =>
    `We spent the morning on the ${topic}. The first attempt failed because the credentials had expired overnight. ` +
    `After rotating them we retried, and the second attempt got further but stalled on a slow disk. ` +
    `We moved the job to a faster volume and it finished in forty minutes. Next time we should check the credentials before starting.`
  await turn(mind, 'ada-0', 'ada', talk('kestrel data migration'), async (tools) => {
    for (const [path, content] of [
      ['knowledge/vpn-port.md', '# Staging VPN\nThe staging VPN listens on port 1194.\n'],
      ['knowledge/billing-limit.md', '# Billing API\nThe billing API rate-limits at 50 requests per minute.\n'],
    ] as const) {
      const written = await call(tools, 'write_memory_file', { path, content })
      assert.notEqual(written.isError, true, written.text)
    }
  })
  await turn(mind, 'ada-0', 'ada', talk('kestrel dashboard rebuild'))
  await turn(mind, 'bob-0', 'bob', talk('heron invoice backfill'))
  await turn(mind, 'bob-0', 'bob', talk('heron report archive'))
  for (const user of ['ada', 'bob']) await mind.sessions.end(`${user}-0`)
  await maintainOn(mind, clock, 0)
  const day0 = new Date(START).toISOString().slice(0, 10)
  assert.ok((await live(mind, 'user:ada', 'episode', day0)) && (await live(mind, 'user:bob', 'episode', day0)))

  // Day 5: a short exchange of Bob's, an episode with nothing to cut.
  clock.set(new Date(START + 5 * DAY))
  await turn(mind, 'bob-5', 'bob', 'Lunch at noon?')
  await mind.sessions.end('bob-5')
  const day5 = new Date(START + 5 * DAY).toISOString().slice(0, 10)
  assert.ok(await live(mind, 'user:bob', 'episode', day5))

  // Day 40: the weekly run compresses the episodes older than 30 days (the short one has nothing to cut).
  await maintainOn(mind, clock, 40)
  for (const owner of ['user:ada', 'user:bob'] as const) assert.equal((await frontmatterOf(mind, owner, 'episode', day0)).compressed, true, `${owner}'s episode compressed`)
  assert.equal((await frontmatterOf(mind, 'user:bob', 'episode', day5)).compressed, undefined)

  // Day 95: the daily run marks the knowledge unaccessed for 90 days, in the document.
  await maintainOn(mind, clock, 95)
  const day90 = new Date(START + 90 * DAY).toISOString().slice(0, 10)
  for (const slug of ['vpn-port', 'billing-limit']) {
    const fm = await frontmatterOf(mind, 'user:ada', 'knowledge', slug)
    assert.deepEqual([fm.activity_level, fm.low_activity_since], ['low', day90], slug)
  }
  assert.match((await live(mind, 'user:ada', 'knowledge', 'vpn-port'))?.body ?? '', /listens on port 1194/, 'the text is as it was')

  // Day 100: Ada recalls the billing limit and her own episode; the next daily run takes the billing mark off.
  clock.set(new Date(START + 100 * DAY))
  await turn(mind, 'ada-100', 'ada', 'What was the billing API rate limit, and how did the kestrel migration go?', async (tools) => {
    assert.match((await call(tools, 'search_memory', { query: 'billing API rate limit requests per minute' })).text, /billing-limit\.md/)
    assert.match((await call(tools, 'search_memory', { query: 'kestrel data migration credentials expired' })).text, /episodes\//)
  })
  await maintainOn(mind, clock, 101)
  assert.equal((await frontmatterOf(mind, 'user:ada', 'knowledge', 'billing-limit')).activity_level, undefined, 'recalled: the mark is taken off')
  assert.equal((await frontmatterOf(mind, 'user:ada', 'knowledge', 'vpn-port')).activity_level, 'low')

  // Day 160: the month's forgetting takes the VPN note and Bob's unaccessed episode; Ada's recalled episode stays.
  const report = await maintainOn(mind, clock, 160)
  const monthly = report.jobs.find((job) => job.kind === 'consolidation-monthly')
  assert.equal(monthly?.status, 'done', JSON.stringify(report.jobs))
  assert.equal(await live(mind, 'user:ada', 'knowledge', 'vpn-port'), null)
  assert.match((await archived(mind, 'user:ada', 'forgotten/knowledge/vpn-port.md')) ?? '', /port 1194/)
  assert.equal(await live(mind, 'user:bob', 'episode', day0), null, "Bob's episode left the live tree")
  assert.match((await archived(mind, 'user:bob', `forgotten/episode/${day0}.md`)) ?? '', /heron/, "in Bob's archive/forgotten/")
  assert.ok(await live(mind, 'user:ada', 'episode', day0), 'an episode recalled at day 100 is not forgotten')
  assert.equal(await live(mind, 'user:bob', 'episode', day5), null, 'a short episode, as short as compression makes it, is forgotten too (155 days)')
  assert.match((await archived(mind, 'user:bob', `forgotten/episode/${day5}.md`)) ?? '', /Lunch at noon/)
  const bobSearch = async () => (await call(mind.agentTools({ sessionId: 'bob-160', user: 'bob' }), 'search_memory', { query: 'heron invoice backfill credentials' })).text
  assert.doesNotMatch(await bobSearch(), /episodes\//, 'out of the index')
  const bobLog = JSON.stringify(await mind.backend.owned('user:bob').activity.read({ types: ['memory_write'] }))
  assert.match(bobLog, /monthly forgetting: unaccessed for 160 days/)
  assert.doesNotMatch(JSON.stringify(await mind.backend.owned('user:ada').activity.read({ types: ['memory_write'] })), /heron/)

  // Once a month: a forced run changes nothing more. Restored, Bob finds it again; Ada never does.
  assert.equal((await mind.consolidate('monthly')).forgotten.length, 0)
  await mind.restore(`episodes/${day0}.md`, { user: 'bob' })
  assert.ok(await live(mind, 'user:bob', 'episode', day0))
  assert.equal(await archived(mind, 'user:bob', `forgotten/episode/${day0}.md`), null)
  assert.match(await bobSearch(), /episodes\//)
  const ada = await call(mind.agentTools({ sessionId: 'ada-161', user: 'ada' }), 'search_memory', { query: 'heron invoice backfill' })
  assert.doesNotMatch(ada.text.split('\n').slice(1).join('\n'), /heron/, "Bob's episode never reaches Ada (the first line repeats the query)")
}

/** A model that merges two texts into one holding both (and answers the other steps with nothing). */
function mergingModel(request: FakeChatRequest): FakeChatStep {
  const body = request.body as { response_format?: { json_schema?: { name?: string } }; messages?: Array<{ content?: unknown }> }
  const asked = (body.messages ?? []).map((message) => String(message.content)).join('\n')
  switch (body.response_format?.json_schema?.name) {
    case 'merge': {
      const texts = [...asked.matchAll(/### Text \d\n([\s\S]*?)(?=\n\n### Text|$)/g)].map((m) => (m[1] ?? '').replace(/^#.*\n/gm, '').trim())
      return { json: { content: `# Staging database\n${texts.join(' ')}` } }
    }
    case 'contradiction':
      return { json: { relation: 'unrelated', reason: 'different things' } }
    case 'episode':
      return { json: { title: 'Conversation', summary: 'They talked.', resolved: [], newTasks: [] } }
    default:
      return { json: { items: [], procedures: [], facts: [], lessons: [], rules: [], drop: [] } }
  }
}

const STAGING = [
  ['knowledge/staging-db.md', '# Staging database\nThe staging database db-staging-1 runs PostgreSQL 15 for the billing service.\n'],
  ['knowledge/staging-db-backups.md', '# Staging database\nThe staging database db-staging-1 for the billing service is backed up nightly.\n'],
] as const

async function writeNotes(mind: Mind, user: string, notes: ReadonlyArray<readonly [string, string]>): Promise<void> {
  await turn(mind, `${user}-notes`, user, 'Please keep these notes.', async (tools) => {
    for (const [path, content] of notes) assert.notEqual((await call(tools, 'write_memory_file', { path, content })).isError, true)
  })
}

async function lowActivityMerge(backend: Backend, t: { after(fn: () => unknown): void }): Promise<void> {
  const server = await startFakeOpenAiServer({ onChat: mergingModel })
  t.after(() => server.close())
  for (const online of [true, false]) {
    const temp = makeTempHome('engram-low-activity-merge-')
    t.after(temp.cleanup)
    const clock = new ManualClock(new Date(START))
    const base = envFor(backend, temp)
    const env = online ? { ...base, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake', ENGRAM_LLM_MAX_RETRIES: '0' } : base
    const mind = await createMind({ home: temp.home, env, ignoreConfigFile: true, clock, embedder: null })
    t.after(() => mind.close())
    await writeNotes(mind, 'ada', STAGING)
    // Bob's note is as alike, but his: never merged with Ada's.
    await writeNotes(mind, 'bob', [['knowledge/staging-db.md', '# Staging database\nThe staging database db-staging-1 runs PostgreSQL 15 for the billing service, Bob says.\n']])
    await maintainOn(mind, clock, 0)

    // Day 95: the daily run marks them; the week's integration (same maintain, after it) reads the marks.
    const report = await maintainOn(mind, clock, 95)
    const weekly = report.jobs.find((job) => job.kind === 'consolidation-weekly')
    if (!online) {
      assert.ok((await live(mind, 'user:ada', 'knowledge', 'staging-db')) && (await live(mind, 'user:ada', 'knowledge', 'staging-db-backups')), 'offline: not duplicates, so not merged')
      assert.match(JSON.stringify(weekly?.result?.pending), /low-activity merge: no model configured/)
      assert.equal((await frontmatterOf(mind, 'user:ada', 'knowledge', 'staging-db-backups')).activity_level, 'low')
      continue
    }
    assert.equal(weekly?.status, 'done', JSON.stringify(report.jobs))
    const survivor = await live(mind, 'user:ada', 'knowledge', 'staging-db')
    assert.match(survivor?.body ?? '', /PostgreSQL 15/)
    assert.match(survivor?.body ?? '', /backed up nightly/)
    const fm = survivor?.frontmatter ?? {}
    assert.deepEqual([fm.merge_method, fm.merged_from, fm.activity_level], ['llm', ['staging-db-backups'], undefined])
    assert.equal(await live(mind, 'user:ada', 'knowledge', 'staging-db-backups'), null, 'the other left the live tree')
    assert.match((await archived(mind, 'user:ada', 'merged/knowledge/staging-db-backups.md')) ?? '', /merged_into: staging-db/)
    assert.match((await live(mind, 'user:bob', 'knowledge', 'staging-db'))?.body ?? '', /Bob says/, "Bob's note is his own")
    const prompts = server.requests.filter((request) => JSON.stringify(request.body).includes('rarely used memories'))
    assert.ok(prompts.length >= 1)
    assert.ok(prompts.every((request) => !JSON.stringify(request.body).includes('Bob says')), "Bob's note never reaches a merge of Ada's")

    // Restorable, and a second week does not merge again what is no longer low-activity.
    await mind.restore('knowledge/staging-db-backups.md', { user: 'ada' })
    assert.ok(await live(mind, 'user:ada', 'knowledge', 'staging-db-backups'))
    assert.equal((await mind.consolidate('weekly')).merged.filter((item) => item.why.includes('low-activity')).length, 0, 'the survivor is fresh; the restored one alone has no partner')
  }
}

test('daily marks, monthly forgetting of compressed unaccessed episodes, restorable, per user', (t) => forgettingOverMonths({ name: 'embedded' }, t))
test('weekly integration merges low-activity memories that are alike with a model, per user, restorably; offline only duplicates', (t) => lowActivityMerge({ name: 'embedded' }, t))
onPostgres('the seed\'s forgetting (marks, episodes, low-activity merge)', (url) => {
  test('daily marks, monthly forgetting of compressed unaccessed episodes, on PostgreSQL', (t) => forgettingOverMonths({ name: 'postgres', url }, t))
  test('low-activity merge with a model, offline duplicates only, on PostgreSQL', (t) => lowActivityMerge({ name: 'postgres', url }, t))
})
