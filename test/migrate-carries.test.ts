/**
 * Decision 0052 ("carry what a user would lose"): `engram migrate` carries what
 * forgetting, merging and rewriting keep — forgotten documents and lessons, a forgotten topic, a
 * merged document, earlier versions — the access counts of the indexed memory and the jobs
 * waiting in the lifecycle's queue, into
 * PostgreSQL and into another home. On the target, through the real CLI in child processes,
 * `engram restore` brings the forgotten ones back, `engram history` lists the earlier versions,
 * and the access counts are the source's; a migration killed with SIGKILL and run again ends with
 * the same rows and digest as an unkilled one.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { ExitCode } from '../src/interfaces/cli/io.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { systemClock } from '../src/core/clock.ts'
import type { Owner } from '../src/core/owner.ts'
import type { Backend } from '../src/storage/contracts.ts'
import { openPostgresBackend } from '../src/storage/postgres/backend.ts'
import { buildMigrationHome, dropKillRunSchema, killRunSchema, killTrial, referenceRun, runMigrate } from '../src/memory/portability/test-support/migrate-kill.ts'
import { onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const BIN = fileURLToPath(new URL('../src/interfaces/cli/bin.ts', import.meta.url))
const OWNERS: Owner[] = ['agent', 'user:ada', 'user:bob', 'shared']

interface CliRun {
  code: number | null
  json: { ok: boolean; data?: Record<string, unknown>; error?: unknown } | undefined
  stderr: string
}

/** The real CLI in a child process, `--json`. */
function engram(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, '--json'], { env: { ...env, ENGRAM_LLM_PROVIDER: 'none' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? ''
      let json: CliRun['json']
      try {
        json = last === '' ? undefined : JSON.parse(last)
      } catch {
        json = undefined
      }
      resolve({ code, json, stderr: stderr.slice(-4000) })
    })
  })
}

/** What a backend's archive holds, per owner: path → text as it reads it; and the recalled memory units: id → count@last. */
async function archiveAndAccess(backend: Backend): Promise<{ archive: Record<string, string[]>; access: Record<string, string>; waiting: string[] }> {
  const archive: Record<string, string[]> = {}
  for (const owner of OWNERS) {
    const documents = backend.owned(owner).documents
    const forgotten = backend.owned(owner).engrams('global')?.archive
    archive[owner] = [...((await documents.archivedPaths?.()) ?? []), ...((await forgotten?.list()) ?? []).map((name) => `engram archive ${name}`)]
  }
  await backend.index.flush?.()
  const access: Record<string, string> = {}
  for (const unit of await backend.index.list({}, { limit: 10_000 })) {
    if (unit.accessCount > 0 && unit.kind !== 'message' && unit.kind !== 'summary' && (unit.agent === undefined || unit.agent === 'default')) access[unit.id] = `${unit.accessCount}@${unit.lastAccessAt}`
  }
  // The jobs buildMigrationHome left waiting in the lifecycle's queue (due in 2099).
  const waiting = (await backend.lifecycle.jobs('default'))
    .filter((job) => job.runAfter.startsWith('2099') && job.status === 'queued')
    .map((job) => `${job.kind} ${job.key ?? '(no key)'} ${JSON.stringify(job.payload)}`)
    .sort()
  return { archive, access, waiting }
}

/** On a migrated target (`env` opens it): history lists tea's versions; restore brings back the forgotten document, lesson and topic. */
async function checkTarget(env: Record<string, string>, home: string, sourceVersions: string[]): Promise<void> {
  const history = await engram(['history', 'knowledge/tea.md', '--home', home], env)
  assert.equal(history.code, ExitCode.ok, JSON.stringify(history.json) + history.stderr)
  const versions = ((history.json?.data?.versions ?? []) as Array<{ path: string }>).map((version) => version.path)
  assert.deepEqual(versions, sourceVersions, 'engram history on the target lists the earlier versions of the source')
  assert.ok(versions.length >= 2)

  const office = await engram(['restore', 'knowledge/old-office.md', '--home', home], env)
  assert.equal(office.code, ExitCode.ok, JSON.stringify(office.json) + office.stderr)
  const obsidian = await engram(['restore', 'Bob keeps his notes in Obsidian', '--user', 'bob', '--home', home], env)
  assert.equal(obsidian.code, ExitCode.ok, JSON.stringify(obsidian.json) + obsidian.stderr)
  const mondays = await engram(['restore', 'Ada reviews deploys on Mondays', '--user', 'ada', '--home', home], env)
  assert.equal(mondays.code, ExitCode.ok, JSON.stringify(mondays.json) + mondays.stderr)

  const searched = await engram(['search', 'office Porto', '--home', home], env)
  assert.match(JSON.stringify(searched.json), /The office was in Porto/, 'the restored document is found on the target')
  const found = await engram(['search', 'notes Obsidian', '--user', 'bob', '--home', home], env)
  assert.match(JSON.stringify(found.json), /Bob keeps his notes in Obsidian/, 'the restored lesson is found on the target')
}

describe('engram migrate carries archives, forgotten memory, earlier versions and access counts', () => {
  let tmp: TempHome
  let source: { archive: Record<string, string[]>; access: Record<string, string>; waiting: string[]; versions: string[] }

  before(async () => {
    tmp = makeTempHome('engram-migrate-carries-')
    await buildMigrationHome(tmp.home, tmp.env, { conversations: 1, messages: 24 })
    const mind: MindInternals = await openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, embedder: null, reindexOnOpen: false })
    try {
      source = { ...(await archiveAndAccess(mind.backend)), versions: (await mind.backend.documents.versions('knowledge', 'tea')).map((version) => version.path) }
    } finally {
      await mind.close()
    }
    assert.ok(source.archive.agent?.some((path) => path.includes('/archive/forgotten/knowledge/old-office.md')), JSON.stringify(source.archive))
    assert.ok(source.archive.agent?.some((path) => path.includes('/archive/merged/knowledge/tea-notes.md')))
    assert.ok(source.archive.agent?.includes('engram archive forgotten/topics/deploys'))
    assert.ok(source.archive['user:bob']?.includes('engram archive forgotten/lessons'))
    assert.ok(source.archive.shared?.some((path) => path.startsWith('shared/users/.history/ada/archive/versions/user/')), 'a profile version')
    assert.ok(Object.keys(source.access).length >= 5, JSON.stringify(source.access))
    assert.equal(source.waiting.length, 2, JSON.stringify(source.waiting))
  })
  after(() => tmp?.cleanup())

  test('into another home (migrate --to DIR): restore, history and access counts on the target', async () => {
    const target = join(dirname(tmp.home), 'other-home')
    const run = await engram(['migrate', '--to', target, '--home', tmp.home], tmp.env)
    assert.equal(run.code, ExitCode.ok, JSON.stringify(run.json) + run.stderr)
    assert.equal(run.json?.data?.status, 'complete')
    const notCarried = JSON.stringify(((run.json?.data?.agents ?? []) as Array<{ notMoved: string[] }>)[0]?.notMoved)
    assert.doesNotMatch(notCarried, /forgotten rules|archived documents|earlier versions of documents/, 'what is carried is not listed as left behind')
    // --help promises what is carried and names what is not: no "without loss" (issue 27).
    const help = spawnSync(process.execPath, [BIN, 'migrate', '--help'], { env: tmp.env, encoding: 'utf8' }).stdout
    assert.doesNotMatch(help, /without loss|lossless/i)
    assert.match(help, /archives, earlier versions, forgotten memories and access counts/)
    assert.match(help, /not session records, counters or ended jobs/)
    const mind = await openMindInternals({ home: target, env: tmp.env, ignoreConfigFile: true, embedder: null, reindexOnOpen: false })
    try {
      const there = await archiveAndAccess(mind.backend)
      assert.deepEqual(there.archive, source.archive)
      assert.deepEqual(there.access, source.access, 'access counts equal')
      assert.deepEqual(there.waiting, source.waiting, 'the waiting jobs are queued in the target')
    } finally {
      await mind.close()
    }
    const again = await engram(['migrate', '--to', target, '--home', tmp.home], tmp.env)
    assert.equal(again.json?.data?.status, 'complete', 'a rerun changes nothing and is complete')
    await checkTarget({ ...tmp.env }, target, source.versions)
  })

  onPostgres('into PostgreSQL', (url) => {
    test('migrate --to postgres://…, then from PostgreSQL --to DIR: restore, history and access counts on each target', async () => {
      const schema = killRunSchema('carry')
      try {
        const run = await runMigrate(tmp.home, tmp.env, url, schema)
        assert.equal(run.code, ExitCode.ok, JSON.stringify(run.json) + run.stderr)
        assert.equal(run.json?.data?.status, 'complete')
        assert.deepEqual(run.json?.data?.agents?.[0]?.problems, [])
        const backend = await openPostgresBackend({ url, schema, agent: 'default', clock: systemClock })
        try {
          const there = await archiveAndAccess(backend)
          assert.deepEqual(there.archive, source.archive)
          assert.deepEqual(there.access, source.access, 'access counts equal')
          assert.deepEqual(there.waiting, source.waiting, 'the waiting jobs are queued in the target')
        } finally {
          await backend.close()
        }
        const pgEnv = { ...tmp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }

        // And back out of PostgreSQL into a folder: the same archive and counts, restorable there too.
        const folder = join(dirname(tmp.home), `from-postgres-${schema}`)
        const out = await engram(['migrate', '--to', folder, '--home', tmp.home], pgEnv)
        assert.equal(out.code, ExitCode.ok, JSON.stringify(out.json) + out.stderr)
        assert.equal(out.json?.data?.status, 'complete')
        const mind = await openMindInternals({ home: folder, env: tmp.env, ignoreConfigFile: true, embedder: null, reindexOnOpen: false })
        try {
          assert.equal(mind.backend.name, 'embedded')
          const there = await archiveAndAccess(mind.backend)
          assert.deepEqual(there.archive, source.archive)
          assert.deepEqual(there.access, source.access, 'access counts equal after two moves')
          assert.deepEqual(there.waiting, source.waiting, 'the waiting jobs after two moves')
        } finally {
          await mind.close()
        }
        await checkTarget(tmp.env, folder, source.versions)
        await checkTarget(pgEnv, tmp.home, source.versions)
      } finally {
        await dropKillRunSchema(url, schema)
      }
    })

    test('killed with SIGKILL at three points and run again: the same rows and digest (archives and access counts included) as an unkilled run', async () => {
      const reference = await referenceRun(tmp.home, tmp.env, url, 'carry')
      assert.ok((reference.rows.docs_versions ?? 0) >= 3 && (reference.rows.docs_archived ?? 0) >= 2, JSON.stringify(reference.rows))
      assert.ok(Object.keys(reference.digest.access).length >= 5)
      for (const share of [0.35, 0.6, 0.85]) {
        const delayMs = Math.round(reference.openedAtMs + share * (reference.run.ms - reference.openedAtMs))
        const trial = await killTrial(tmp.home, tmp.env, url, reference, delayMs, 'carry')
        const where = `kill after ${delayMs} ms (${trial.landing})`
        assert.equal(trial.rerun.code, ExitCode.ok, `${where}: ${JSON.stringify(trial.rerun.json)} ${trial.rerun.stderr}`)
        assert.equal(trial.rerun.json?.data?.status, 'complete', where)
        assert.deepEqual(trial.rowsDiffer, [], where)
        assert.ok(trial.digestSame, `${where}: the digest differs from the unkilled run`)
      }
    })
  })
})
