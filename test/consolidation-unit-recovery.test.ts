/**
 * A consolidation unit a killed process left half written is finished by the next consolidation,
 * in a fresh mind, on both backends (decision 0053). The state is what a daily
 * run killed after its first write leaves: Ada's plan stored in her tree (a fact superseded by a
 * new one, a duplicate merged into the archive), the first document and its activity record
 * written, nothing else. The next run — offline: recovery needs no model — writes the rest once:
 * the successor with its `supersedes` link, the merged copy in `archive/merged/`, each activity
 * record once, the unit's completion once; the first document is not written (nor versioned) again.
 * The SIGKILL test itself is test/consolidation-kill.test.ts.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { ownerOfUser } from '../src/core/owner.ts'
import { createMind } from '../src/mind.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const AT = '2026-03-04T18:00:00.000Z'
const ada = ownerOfUser('ada')

type Backend = { name: 'embedded' } | { name: 'postgres'; url: string }

async function finishesTheUnit(backend: Backend, t: { after(fn: () => unknown): void }, recover: 'consolidate' | 'maintain' = 'consolidate'): Promise<void> {
  const temp = makeTempHome('engram-unit-recovery-')
  t.after(temp.cleanup)
  const env = backend.name === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: backend.url, ENGRAM_DATABASE_SCHEMA: freshSchema() } : temp.env
  const open = () => createMind({ home: temp.home, env, ignoreConfigFile: true, clock: new ManualClock(AT), settings: { 'llm.provider': 'none', 'jobs.eager': false } })

  const killed = await open()
  // The day's and the week's scheduled consolidations have run: the next maintain has none to run.
  await killed.maintain()
  const documents = killed.backend.owned(ada).documents
  const old = { created_at: '2026-02-01T09:00:00.000Z', updated_at: '2026-02-01T09:00:00.000Z', version: 1 }
  await documents.write('knowledge', 'deploys', old, '# Deploys\n\nStaging is deployed with Kamal.\n')
  await documents.write('knowledge', 'tea-old', old, '# Tea\n\nAda drinks green tea.\n')
  const record = (path: string, reason: string) => ({ ts: AT, type: 'memory_write' as const, content: path, summary: `daily consolidation: ${path} — ${reason}`, meta: { action: 'consolidate', period: 'daily', path, reason, unit: 'daily 2026-03-04' } })
  const changes = [
    { kind: 'knowledge', slug: 'deploys', frontmatter: { ...old, superseded_by: 'deploys-2', valid_until: AT, updated_at: AT }, body: '# Deploys\n\nStaging is deployed with Kamal.\n', reason: 'superseded by deploys-2' },
    { kind: 'knowledge', slug: 'deploys-2', frontmatter: { created_at: AT, updated_at: AT, version: 1, supersedes: 'deploys', valid_from: AT }, body: '# Deploys\n\nStaging is deployed with Fly.io.\n', reason: 'extracted from episodes' },
    { kind: 'knowledge', slug: 'tea-old', frontmatter: { ...old, merged_into: 'tea', updated_at: AT }, body: '# Tea\n\nAda drinks green tea.\n', reason: 'merged into tea' },
  ].map((change) => ({ ...change, activity: record(`users/ada/knowledge/${change.slug}.md`, change.reason) }))
  const plan = {
    format: 1,
    unit: 'daily 2026-03-04',
    at: AT,
    changes,
    merged: [{ kind: 'knowledge', slug: 'tea-old' }],
    completion: { job: 'consolidation-episodes', agent: killed.agent, startedAt: AT, finishedAt: AT, status: 'ok', details: { unit: 'daily 2026-03-04', owner: 'ada-digest', day: '2026-03-04', sections: ['section-1'] } },
  }
  // What the killed run had done: stored the plan, written the first document and its record.
  await documents.append('state', 'consolidation-plan', `${JSON.stringify(plan)}\n`, { kind: 'consolidation-plan' })
  const first = changes[0] as (typeof changes)[number]
  await documents.write('knowledge', 'deploys', first.frontmatter, first.body, { reason: first.reason, at: AT })
  await killed.backend.owned(ada).activity.append(first.activity)
  await killed.close()

  const mind = await open()
  t.after(() => mind.close())
  // `engram consolidate daily`, or `engram maintain` on a day whose consolidation has run.
  if (recover === 'consolidate') await mind.consolidate('daily')
  else await mind.maintain()
  const docs = mind.backend.owned(ada).documents
  assert.equal((await docs.read('knowledge', 'deploys'))?.frontmatter.superseded_by, 'deploys-2')
  assert.equal((await docs.versions('knowledge', 'deploys')).length, 1, 'the first write was not made (nor versioned) again')
  assert.equal((await docs.read('knowledge', 'deploys-2'))?.frontmatter.supersedes, 'deploys')
  assert.equal(await docs.read('knowledge', 'tea-old'), null)
  const archived = await docs.readArchived?.('agents/default/users/ada/archive/merged/knowledge/tea-old.md')
  assert.match(archived ?? '', /merged_into: tea/)
  assert.equal(await docs.read('state', 'consolidation-plan'), null, 'the plan is gone once applied')
  const writes = (await mind.backend.owned(ada).activity.read({ since: AT, until: AT })).filter((event) => event.meta?.unit === 'daily 2026-03-04')
  assert.deepEqual(
    writes.map((event) => event.content),
    ['users/ada/knowledge/deploys.md', 'users/ada/knowledge/deploys-2.md', 'users/ada/knowledge/tea-old.md'],
  )
  const done = (await mind.backend.jobs.runs({ job: 'consolidation-episodes', agent: mind.agent })).filter((run) => run.details.unit === 'daily 2026-03-04')
  assert.equal(done.length, 1)

  // A second run finds nothing left to finish and writes nothing of the unit again.
  await mind.consolidate('daily')
  assert.equal((await docs.versions('knowledge', 'deploys')).length, 1)
  assert.equal((await mind.backend.jobs.runs({ job: 'consolidation-episodes', agent: mind.agent })).filter((run) => run.details.unit === 'daily 2026-03-04').length, 1)
}

test('a half-written consolidation unit is finished once by the next run, in a fresh mind (embedded)', (t) => finishesTheUnit({ name: 'embedded' }, t))
test('a half-written consolidation unit is finished once by the next maintain, in a fresh mind (embedded)', (t) => finishesTheUnit({ name: 'embedded' }, t, 'maintain'))
onPostgres('a half-written consolidation unit is finished once by the next run', (url) => {
  test('a half-written consolidation unit is finished once by the next run, in a fresh mind, on PostgreSQL', (t) => finishesTheUnit({ name: 'postgres', url }, t))
  test('a half-written consolidation unit is finished once by the next maintain, in a fresh mind, on PostgreSQL', (t) => finishesTheUnit({ name: 'postgres', url }, t, 'maintain'))
})

test('a plan that cannot be finished holds back its owner only, reported, and is kept', async (t) => {
  const temp = makeTempHome('engram-unit-stuck-')
  t.after(temp.cleanup)
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock: new ManualClock(AT), settings: { 'llm.provider': 'none', 'jobs.eager': false } })
  t.after(() => mind.close())
  const documents = mind.backend.owned(ada).documents
  await documents.append('state', 'consolidation-plan', '{"format": 1, "unit": "daily 2026-03-04", "at": "cut here', { kind: 'consolidation-plan' })
  const run = await mind.consolidate('daily')
  const pending = run.knowledge.pending.find((step) => step.step === 'unfinished unit')
  assert.match(pending?.reason ?? '', /users\/ada\/state\/consolidation-plan\.md holds a consolidation plan that could not be finished \(it cannot be read/)
  assert.match((await documents.read('state', 'consolidation-plan'))?.body ?? '', /cut here/, 'kept for a person to look at')
  const weekly = await mind.consolidate('weekly')
  assert.ok(weekly.pending.some((step) => step.step === 'unfinished unit'))
})
