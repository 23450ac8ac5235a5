/**
 * Contention that degrades, not fails (issue 13, decision 0027), with real agent processes on one
 * home: each opens it with `createMind` and calls the `memorize` tool through sessions, all calls in
 * flight at once. Every call must be answered honestly (saved or duplicate), every text stored
 * exactly once in its owner's file, and no memory file may be left unreadable. Times are measured
 * by `scripts/bench/robustness/contention.ts`; the generous bounds here only catch a regression to
 * the stale-lock wait (10 s) this replaced.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createMind } from '../src/mind.ts'
import { type ContentionCheck, checkContention, runKilledHolder, runMemorizers } from '../src/memory/engrams/test-support/memorize-contention.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

async function openedHome(): Promise<TempHome> {
  const temp = makeTempHome('engram-contention-')
  // Create the home (and migrate its database) once, so the processes race only on memory.
  await (await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true })).close()
  return temp
}

function assertStoredOnce(check: ContentionCheck): void {
  assert.deepEqual(check.lost, [], 'texts reported saved but missing from their files')
  assert.deepEqual(check.misplaced, [], 'texts stored twice or in the wrong file')
  assert.deepEqual(check.dishonest, [], 'texts whose reports disagree with the files')
  assert.deepEqual(check.problems, [], 'unreadable lines in memory files')
  assert.equal(check.storedOnce, check.texts)
}

describe('memorize under contention', () => {
  test('8 processes × 200 memorize calls all in flight at once: exactly 1,600 saved, each once', { timeout: 300_000 }, async () => {
    const temp = await openedHome()
    try {
      const options = { home: temp.home, env: temp.env, workers: 8, count: 200, how: 'in-flight', owners: 'agent' } as const
      const { tallies } = await runMemorizers(options)
      const check = checkContention(temp.home, options, tallies)
      assert.equal(check.rejected, 0, tallies.flatMap((tally) => tally.reasons).join('\n'))
      assert.equal(check.saved, 1600)
      assert.equal(check.duplicates, 0)
      assert.equal(check.texts, 1600)
      assertStoredOnce(check)
    } finally {
      temp.cleanup()
    }
  })

  test('three users and the agent, texts every process saves too: each stored once in its owner’s tree, one saved and seven duplicates', { timeout: 300_000 }, async () => {
    const temp = await openedHome()
    try {
      // Every tenth call of every process saves the same text: 20 such texts, each tried 8 times.
      const options = { home: temp.home, env: temp.env, workers: 8, count: 200, how: 'in-flight', owners: 'users', sharedEvery: 10 } as const
      const { tallies } = await runMemorizers(options)
      const check = checkContention(temp.home, options, tallies)
      assert.equal(check.rejected, 0, tallies.flatMap((tally) => tally.reasons).join('\n'))
      assert.equal(check.texts, 1600 - 7 * 20)
      assert.equal(check.saved, check.texts)
      assert.equal(check.duplicates, 7 * 20)
      assertStoredOnce(check)
    } finally {
      temp.cleanup()
    }
  })

  test('a lock holder killed with SIGKILL lets the waiting processes through at once', { timeout: 300_000 }, async () => {
    const temp = await openedHome()
    try {
      const run = await runKilledHolder({ home: temp.home, env: temp.env, workers: 4, count: 100 })
      assert.equal(run.check.rejected, 0)
      assert.equal(run.check.saved, 400)
      assertStoredOnce(run.check)
      // The goal is under a second (the bench measures it); this bound only fails on a stale-time wait.
      assert.ok(run.allWaitersMs < 3000, `the waiters were blocked ${run.allWaitersMs} ms after the holder died`)
    } finally {
      temp.cleanup()
    }
  })
})
