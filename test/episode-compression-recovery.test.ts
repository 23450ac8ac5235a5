// @slow: a weekly consolidation in fresh minds, on PostgreSQL too
/**
 * Episode compression cut by a crash is finished once, at its own instant (decision 0085): the
 * weekly run appends each compression's record before it writes the file, so a process killed
 * between the two leaves the record of a file still whole. The next weekly run — a fresh mind, an
 * hour later, offline — goes on with the killed run: it compresses that file at the record's
 * instant (its `compressed_at` and its saved version), appends no second record, and a run after
 * it changes nothing. Both backends; the SIGKILL runs are test/consolidation-kill.test.ts.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { ownerOfUser } from '../src/core/owner.ts'
import { compressEpisodeText } from '../src/memory/consolidation/episode-compression.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const KILLED_AT = '2026-03-04T18:00:00.000Z'
const RESUMED_AT = '2026-03-04T19:00:00.000Z'
const DAY = '2026-01-20'
const PATH = `users/ada/episodes/${DAY}.md`
const ada = ownerOfUser('ada')

const section = (time: string, topic: string): string =>
  `## ${time} — ${topic}\n\n${topic} took the whole meeting. The budget came first, line by line, with every quote we had. Then the venue, the rooms and the travel days of each team. Lunch was last, and it ran long.\n`

type Backend = { name: 'embedded' } | { name: 'postgres'; url: string }

async function finishesTheCompression(backend: Backend, t: { after(fn: () => unknown): void }): Promise<void> {
  const temp = makeTempHome('engram-compression-recovery-')
  t.after(temp.cleanup)
  const env = backend.name === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: backend.url, ENGRAM_DATABASE_SCHEMA: freshSchema() } : temp.env
  const open = (at: string) => openMindInternals({ home: temp.home, env, ignoreConfigFile: true, clock: new ManualClock(at), settings: { 'llm.provider': 'none', 'jobs.eager': false } })

  // What a weekly run killed between a compression's record and its write leaves.
  const killed = await open(KILLED_AT)
  const body = `# ${DAY}\n\n${section('10:00', 'Offsite planning')}\n${section('15:00', 'Deploy review')}`
  await killed.backend.owned(ada).documents.write('episode', DAY, { date: DAY }, body)
  await killed.backend.jobs.record({ job: 'consolidation-weekly-run', agent: killed.agent, startedAt: KILLED_AT, finishedAt: KILLED_AT, status: 'ok', details: { run: 'killed-run', state: 'started' } })
  const before = Buffer.byteLength((await killed.backend.owned(ada).documents.read('episode', DAY))?.body ?? '')
  const after = Buffer.byteLength(compressEpisodeText((await killed.backend.owned(ada).documents.read('episode', DAY))?.body ?? '').body)
  assert.ok(after < before)
  const reason = `compressed ${before} → ${after} bytes; the full text stays in archive/versions/`
  await killed.backend.owned(ada).activity.append({ ts: KILLED_AT, type: 'memory_write', content: PATH, summary: `${reason} — ${PATH}`, meta: { action: 'consolidate', period: 'weekly', path: PATH, reason } })
  await killed.close()

  const mind = await open(RESUMED_AT)
  t.after(() => mind.close())
  const run = await mind.consolidate('weekly')
  assert.deepEqual(run.compressed.map((item) => item.path), [PATH])

  const doc = await mind.backend.owned(ada).documents.read('episode', DAY)
  assert.equal(doc?.frontmatter.compressed, true)
  assert.equal(doc?.frontmatter.compressed_at, KILLED_AT, 'compressed at the instant its record says, not when the run resumed')
  assert.equal(Buffer.byteLength(doc?.body ?? ''), after)
  const versions = await mind.backend.owned(ada).documents.versions('episode', DAY)
  assert.equal(versions.length, 1, JSON.stringify(versions))
  assert.equal(Date.parse(versions[0]?.archivedAt ?? ''), Date.parse(KILLED_AT), JSON.stringify(versions))
  const records = async () => (await mind.backend.owned(ada).activity.read({ types: ['memory_write'] })).filter((event) => event.content === PATH)
  assert.deepEqual(
    (await records()).map((event) => [event.ts, event.meta?.reason]),
    [[KILLED_AT, reason]],
    'one record of the compression, the killed run\'s',
  )

  // The run ended: the next one starts afresh and finds nothing to compress.
  const again = await mind.consolidate('weekly')
  assert.deepEqual(again.compressed, [])
  assert.equal((await records()).length, 1)
  assert.equal((await mind.backend.owned(ada).documents.versions('episode', DAY)).length, 1)
}

test('a compression whose record a killed weekly run appended is finished once, at the record\'s instant, by the next weekly run (embedded)', (t) => finishesTheCompression({ name: 'embedded' }, t))

onPostgres('a compression cut by a crash is finished once', (url) => {
  test('a compression whose record a killed weekly run appended is finished once, at the record\'s instant, by the next weekly run, on PostgreSQL', (t) => finishesTheCompression({ name: 'postgres', url }, t))
})
