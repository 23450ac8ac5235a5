/**
 * A month of forgetting a killed process left half done is finished by the next mind's first
 * `maintain()` (`engram maintain`), on both backends (decision 0053). The state is
 * what `engram consolidate monthly` killed after its first move leaves: Ada's plan stored in her
 * tree (two facts to forget, her deploy procedure's versions beyond the five newest to retire),
 * the first fact archived and its record written, nothing else. The next maintain — on a day
 * whose scheduled work has run, so only the plan can move anything — archives the second fact,
 * writes each record once, retires the two oldest versions, and removes the plan; a second
 * maintain changes nothing. The SIGKILL test itself is test/monthly-kill.test.ts.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { ownerOfUser } from '../src/core/owner.ts'
import { forgottenDocumentEvent } from '../src/memory/forgetting/forget-memory.ts'
import { createMind } from '../src/mind.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const AT = '2026-05-01T09:00:00.000Z'
const ada = ownerOfUser('ada')

type Backend = { name: 'embedded' } | { name: 'postgres'; url: string }

async function finishesTheMonth(backend: Backend, t: { after(fn: () => unknown): void }): Promise<void> {
  const temp = makeTempHome('engram-month-recovery-')
  t.after(temp.cleanup)
  const env = backend.name === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: backend.url, ENGRAM_DATABASE_SCHEMA: freshSchema() } : temp.env
  const clock = new ManualClock('2026-05-01T08:00:00.000Z')
  const open = () => createMind({ home: temp.home, env, ignoreConfigFile: true, clock, settings: { 'llm.provider': 'none', 'jobs.eager': false } })

  const killed = await open()
  // Today's scheduled work (this month's forgetting included) has run: the next maintain has none to run.
  await killed.maintain()
  const documents = killed.backend.owned(ada).documents
  const old = { created_at: '2025-10-01T09:00:00.000Z', updated_at: '2025-10-01T09:00:00.000Z', version: 1 }
  for (const slug of ['printer', 'parking']) await documents.write('knowledge', slug, old, `# ${slug}\n\nSomething about the ${slug}.\n`)
  for (let version = 1; version <= 8; version++) {
    clock.advance(1_000)
    await documents.write('procedure', 'deploy', { version, protected: true }, `# Deploy\n\n1. Step ${version}\n`)
  }
  clock.set(new Date(AT))
  const step = (slug: string) => {
    const { event } = forgottenDocumentEvent({ kind: 'document', owner: ada, docKind: 'knowledge', slug }, { unitsRemoved: 0, reason: 'monthly forgetting: unaccessed for 212 days, 0 accesses', at: AT })
    return { kind: 'knowledge', slug, source: `agents/default/users/ada/knowledge/${slug}.md`, activity: event }
  }
  const plan = {
    format: 1,
    unit: 'monthly 2026-05',
    at: AT,
    changes: [],
    merged: [],
    forgotten: [step('printer'), step('parking')],
    retained: [{ slug: 'deploy', keep: 5 }],
    completion: { job: 'consolidation-monthly-owner', agent: killed.agent, startedAt: AT, finishedAt: AT, status: 'ok', details: { unit: 'monthly 2026-05', owner: 'ada-digest', run: AT } },
  }
  // What the killed run had done: stored the plan, archived the first fact and written its record.
  await documents.append('state', 'consolidation-plan', `${JSON.stringify(plan)}\n`, { kind: 'consolidation-plan' })
  await documents.archive('knowledge', 'printer', 'forgotten')
  await killed.backend.owned(ada).activity.append(plan.forgotten[0]?.activity as (typeof plan.forgotten)[number]['activity'])
  await killed.close()

  const mind = await open()
  t.after(() => mind.close())
  await mind.maintain()
  const docs = mind.backend.owned(ada).documents
  assert.equal(await docs.read('knowledge', 'printer'), null)
  assert.equal(await docs.read('knowledge', 'parking'), null)
  assert.match((await docs.readArchived?.('agents/default/users/ada/archive/forgotten/knowledge/parking.md')) ?? '', /Something about the parking/)
  assert.equal((await docs.versions('procedure', 'deploy')).length, 5, 'the versions beyond the five newest were retired')
  assert.equal(await docs.read('state', 'consolidation-plan'), null, 'the plan is gone once applied')
  const records = async () => (await mind.backend.owned(ada).activity.read({ since: AT, until: AT })).filter((event) => event.meta?.action === 'forget').map((event) => event.content)
  assert.deepEqual(await records(), ['users/ada/knowledge/printer.md', 'users/ada/knowledge/parking.md'])
  const done = async () => (await mind.backend.jobs.runs({ job: 'consolidation-monthly-owner', agent: mind.agent })).filter((run) => run.details.unit === 'monthly 2026-05').length
  assert.equal(await done(), 1)

  // A forced monthly run afterwards finds nothing more to forget and writes nothing of the unit again.
  const again = await mind.consolidate('monthly')
  assert.equal(again.forgotten.length, 0)
  assert.equal(again.versions.moved, 0)
  assert.deepEqual(await records(), ['users/ada/knowledge/printer.md', 'users/ada/knowledge/parking.md'])
  assert.equal(await done(), 1)
}

test('a half-done month of forgetting is finished once by the next maintain, in a fresh mind (embedded)', (t) => finishesTheMonth({ name: 'embedded' }, t))
onPostgres('a half-done month of forgetting is finished once by the next maintain', (url) => {
  test('a half-done month of forgetting is finished once by the next maintain, in a fresh mind, on PostgreSQL', (t) => finishesTheMonth({ name: 'postgres', url }, t))
})
