/**
 * Monthly forgetting after a kill (decision 0053): `engram consolidate monthly`
 * (monthly-child.ts) forgets two users' due knowledge, procedures and compressed episodes and
 * moves a procedure's versions beyond the five newest; the child is killed with SIGKILL at random
 * points, at least 20 times, and each time a fresh process runs it again. The recovered home must
 * equal an unkilled run's byte for byte (the same comparison as test/consolidation-kill.test.ts).
 *
 * ENGRAM_KILL_SEED=<n> repeats a run's kill points; ENGRAM_MONTHLY_KILLS=<n> changes how many.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runKillTrials } from '../src/memory/consolidation/test-support/consolidation-kills.ts'
import { MONTHLY_FORGETTING } from '../src/memory/consolidation/test-support/monthly-kills.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const KILLS = Number(process.env.ENGRAM_MONTHLY_KILLS ?? 24)
const SEED = Number(process.env.ENGRAM_KILL_SEED ?? Date.now() % 1_000_000)

test(`monthly forgetting killed ${KILLS} times at random points ends, after a recovery run, byte for byte where an unkilled run ends (seed ${SEED})`, async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const dir = join(tmp.home, '..', 'kills')

  const run = await runKillTrials({ dir, env: tmp.env, url: 'http://127.0.0.1:9/v1', kills: KILLS, seed: SEED, scenario: MONTHLY_FORGETTING })

  // The unkilled run forgot what was due, in both users' trees, and kept what was not.
  for (const user of ['ada', 'bob']) {
    const tree = join(dir, 'unkilled', 'agents', 'default', 'users', user)
    for (const slug of ['printer', 'parking', 'lunch']) assert.ok(existsSync(join(tree, 'archive/forgotten/knowledge', `${user}-${slug}.md`)), `${user}-${slug} forgotten`)
    assert.ok(existsSync(join(tree, 'knowledge', `${user}-recent.md`)))
    assert.ok(existsSync(join(tree, 'archive/forgotten/procedure', `${user}-old-backup.md`)))
    assert.equal(readdirSync(join(tree, 'archive/forgotten/episode')).length, 2)
  }
  const ada = join(dir, 'unkilled', 'agents', 'default', 'users', 'ada')
  assert.equal(readdirSync(join(ada, 'archive/forgotten/versions/procedure')).filter((name) => name.startsWith('deploy.')).length, 2)

  const summary = run.trials.map((trial, i) => `#${i} kill ${trial.delayMs} ms ${trial.point} → ${trial.leftAt}; differ after recovery: ${trial.differ.join(', ') || 'nothing'}${trial.recoveryCode === 0 ? '' : `; recovery exited ${trial.recoveryCode}: ${trial.recoveryStderr}`}`)
  const context = `seed ${SEED}, unkilled monthly run ${run.unkilledMs} ms, ${run.written} files written\n${summary.join('\n')}`
  const killed = run.trials.filter((trial) => trial.leftAt !== 'not-killed')
  assert.ok(killed.length >= 20, `only ${killed.length} of ${KILLS} children were killed before they finished\n${context}`)
  assert.ok(run.trials.some((trial) => trial.leftAt === 'partial'), `no kill left a half-forgotten home\n${context}`)
  for (const trial of run.trials) assert.equal(trial.recoveryCode, 0, context)
  assert.deepEqual(
    run.trials.flatMap((trial, i) => trial.differ.map((path) => `#${i}: ${path}`)),
    [],
    context,
  )
  t.diagnostic(context)
})
