// @slow: kills daily and weekly consolidation with SIGKILL at many points, each followed by a rerun
/**
 * Consolidation after a kill (decision 0053): the daily consolidation (knowledge
 * extraction and validation, a fact superseding another, a procedure distilled and one
 * reconsolidated) and the weekly integration (a duplicate merge into `archive/merged/`, a
 * contradiction resolved by the full scan) run in a child process at a fixed instant against the
 * fake model server; the child is killed with SIGKILL at random points, at least 20 times, and
 * each time a fresh process runs the same consolidation again. The recovered home must equal an
 * unkilled run's byte for byte: every file of the agent's, the users' and the shared trees (the
 * SQLite databases and lock files are not compared: their bytes depend on the process history,
 * not on what is remembered — see `compared` in the harness).
 *
 * On PostgreSQL, where documents, versions and activity are rows, the same trials compare the
 * rows through the stores (consolidation-kills-postgres.ts).
 *
 * ENGRAM_KILL_SEED=<n> repeats a run's kill points; ENGRAM_CONSOLIDATION_KILLS=<n> and
 * ENGRAM_CONSOLIDATION_KILLS_PG=<n> change how many.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parseFrontmatter } from '../src/core/frontmatter.ts'
import { CONSOLIDATED_AT, consolidationModel, LIVED_AT, runKillTrials } from '../src/memory/consolidation/test-support/consolidation-kills.ts'
import { runPostgresKillTrials } from '../src/memory/consolidation/test-support/consolidation-kills-postgres.ts'
import { onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

/** The day `days` before the home was lived in (the scenario's old episode days). */
const dated = (days: number): string => new Date(Date.parse(LIVED_AT) - days * 86_400_000).toISOString().slice(0, 10)

const KILLS = Number(process.env.ENGRAM_CONSOLIDATION_KILLS ?? 24)
const SEED = Number(process.env.ENGRAM_KILL_SEED ?? Date.now() % 1_000_000)

test(`consolidation killed ${KILLS} times at random points ends, after a recovery run, byte for byte where an unkilled run ends (seed ${SEED})`, async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: consolidationModel })
  t.after(() => server.close())
  const dir = join(tmp.home, '..', 'kills')

  const run = await runKillTrials({ dir, env: tmp.env, url: server.url, kills: KILLS, seed: SEED })

  // The unkilled run wrote what the issue's kills broke: links both ways, a reconsolidated
  // procedure at version 2, a merge into the archive.
  const ada = join(dir, 'unkilled', 'agents', 'default', 'users', 'ada')
  const read = (path: string) => parseFrontmatter(readFileSync(join(ada, path), 'utf8')).frontmatter
  assert.equal(read('knowledge/staging-deploys.md').superseded_by, 'staging-deploys-2')
  assert.equal(read('knowledge/staging-deploys-2.md').supersedes, 'staging-deploys')
  assert.equal(read('procedures/deploy-staging.md').version, 2)
  assert.equal(read('procedures/deploy-staging.md').confidence, 0.5)
  assert.equal(read('archive/merged/knowledge/tea-habit.md').merged_into, 'tea-habits')
  const bob = join(dir, 'unkilled', 'agents', 'default', 'users', 'bob')
  assert.equal(parseFrontmatter(readFileSync(join(bob, 'knowledge/office-hours.md'), 'utf8')).frontmatter.superseded_by, 'office-opening')
  // …and compressed the old days of episodes, each with its version and its record.
  const day = dated(45)
  assert.equal(read(`episodes/${day}.md`).compressed, true)
  assert.ok(readdirSync(join(ada, 'archive/versions/episode')).some((name) => name.startsWith(`${day}.`)))
  assert.match(readFileSync(join(dir, 'unkilled', 'agents', 'default', 'users', 'ada', 'activity', `${CONSOLIDATED_AT.slice(0, 10)}.jsonl`), 'utf8'), new RegExp(`compressed \\d+ → \\d+ bytes.*episodes/${day}\\.md`))
  assert.ok(run.written >= 15, `the unkilled run changed ${run.written} files`)

  const summary = run.trials.map((trial, i) => `#${i} kill ${trial.delayMs} ms ${trial.point} → ${trial.leftAt}; differ after recovery: ${trial.differ.join(', ') || 'nothing'}${trial.recoveryCode === 0 ? '' : `; recovery exited ${trial.recoveryCode}: ${trial.recoveryStderr}`}`)
  const context = `seed ${SEED}, unkilled consolidation ${run.unkilledMs} ms\n${summary.join('\n')}`
  const killed = run.trials.filter((trial) => trial.leftAt !== 'not-killed')
  assert.ok(killed.length >= 20, `only ${killed.length} of ${KILLS} children were killed before they finished\n${context}`)
  // Kills aimed at the unkilled run's write instants land among the writes: the point of the test.
  assert.ok(run.trials.some((trial) => trial.leftAt === 'partial'), `no kill left a half-written home\n${context}`)
  for (const trial of run.trials) assert.equal(trial.recoveryCode, 0, context)
  assert.deepEqual(
    run.trials.flatMap((trial, i) => trial.differ.map((path) => `#${i}: ${path}`)),
    [],
    context,
  )
  t.diagnostic(context)
})

const PG_KILLS = Number(process.env.ENGRAM_CONSOLIDATION_KILLS_PG ?? 12)

onPostgres('consolidation killed at random points ends, after a recovery run, row for row where an unkilled run ends', (databaseUrl) => {
  test(`consolidation killed ${PG_KILLS} times at random points ends, after a recovery run, row for row where an unkilled run ends, on PostgreSQL (seed ${SEED})`, async (t) => {
    const tmp = makeTempHome()
    t.after(tmp.cleanup)
    const server = await startFakeOpenAiServer({ onChat: consolidationModel })
    t.after(() => server.close())
    const run = await runPostgresKillTrials({ dir: join(tmp.home, '..', 'kills'), env: tmp.env, url: server.url, databaseUrl, kills: PG_KILLS, seed: SEED, requests: () => server.requests.length })
    const context = `seed ${SEED}, unkilled consolidation ${run.unkilledMs} ms\n${run.trials.map((trial, i) => `#${i} kill ${trial.delayMs} ms ${trial.point} → ${trial.leftAt}; differ after recovery: ${trial.differ.join(', ') || 'nothing'}${trial.recoveryCode === 0 ? '' : `; recovery exited ${trial.recoveryCode}: ${trial.recoveryStderr}`}`).join('\n')}`
    assert.ok(run.trials.some((trial) => trial.leftAt === 'partial'), `no kill left half-written rows\n${context}`)
    for (const trial of run.trials) assert.equal(trial.recoveryCode, 0, context)
    assert.deepEqual(
      run.trials.flatMap((trial, i) => trial.differ.map((row) => `#${i}: ${row}`)),
      [],
      context,
    )
    t.diagnostic(context)
  })
})
