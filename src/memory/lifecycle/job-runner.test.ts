import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import type { Lifecycle } from '../../storage/contracts.ts'
import { openSqlite } from '../../storage/sqlite/database.ts'
import { createSqliteLifecycle } from '../../storage/sqlite/lifecycle.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { createJobRunner, type JobHandler, type JobOutcome } from './job-runner.ts'

function openLifecycle(t: { after(fn: () => void): void }): { lifecycle: Lifecycle; clock: ManualClock } {
  const temp = makeTempHome('engram-job-runner-')
  mkdirSync(temp.home, { recursive: true })
  const handle = openSqlite(join(temp.home, 'engram.db'))
  t.after(() => {
    handle.close()
    temp.cleanup()
  })
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  return { lifecycle: createSqliteLifecycle(handle, { clock }), clock }
}

const now = (clock: ManualClock) => clock.now().toISOString()

test('a handler that throws is retried later while attempts remain; an unknown kind fails at once', async (t) => {
  const { lifecycle, clock } = openLifecycle(t)
  let calls = 0
  const flaky: JobHandler = async () => {
    calls++
    if (calls < 3) throw new Error(`model timed out (${calls})`)
    return { status: 'done', result: { calls } }
  }
  const settled: JobOutcome[] = []
  const runner = createJobRunner({ lifecycle, agent: 'a', clock, handlers: { flaky }, owner: 'me', onSettled: (outcome) => settled.push(outcome) })
  await lifecycle.enqueue({ agent: 'a', kind: 'flaky', payload: { session: 's1' }, runAfter: now(clock) })
  await lifecycle.enqueue({ agent: 'a', kind: 'from-the-future', payload: {}, runAfter: now(clock) })

  const first = await runner.drain()
  assert.deepEqual(
    first.map((outcome) => [outcome.kind, outcome.status, outcome.session]),
    [
      ['flaky', 'retrying', 's1'],
      ['from-the-future', 'failed', undefined],
    ],
  )
  assert.match(first[0]?.reason ?? '', /model timed out \(1\)/)
  assert.match(first[1]?.reason ?? '', /no handler for jobs of kind "from-the-future"/)
  assert.deepEqual(await runner.drain(), [], 'not due again yet')
  clock.advance(60_000)
  assert.deepEqual((await runner.drain()).map((outcome) => outcome.status), ['retrying'])
  clock.advance(9 * 60_000)
  assert.deepEqual(await runner.drain(), [], 'the second retry waits longer')
  clock.advance(60_000)
  const third = await runner.drain()
  assert.deepEqual(third.map((outcome) => [outcome.status, outcome.result]), [['done', { calls: 3 }]])
  assert.equal(settled.length, 4, 'every settled job was reported')
  const [job] = await lifecycle.jobs('a', { kind: 'flaky' })
  assert.deepEqual([job?.status, job?.attempts, job?.error], ['done', 3, 'Error: model timed out (2)'])
})

test('a skipped job records its reason and is never retried; a job whose lease another process took is reported lost', async (t) => {
  const { lifecycle, clock } = openLifecycle(t)
  const offline: JobHandler = async () => ({ status: 'skipped', reason: 'no LLM configured' })
  const slow: JobHandler = async (job) => {
    // Meanwhile the lease expires and another process takes the job over.
    clock.advance(20 * 60_000)
    await lifecycle.claim('a', { owner: 'other', now: now(clock), leaseMs: 60_000, id: job.id })
    return { status: 'done' }
  }
  const runner = createJobRunner({ lifecycle, agent: 'a', clock, handlers: { offline, slow }, owner: 'me' })
  await lifecycle.enqueue({ agent: 'a', kind: 'offline', payload: {}, runAfter: now(clock) })
  const [skipped] = await runner.drain()
  assert.deepEqual([skipped?.status, skipped?.reason], ['skipped', 'no LLM configured'])
  assert.deepEqual((await lifecycle.jobs('a'))[0]?.result, { reason: 'no LLM configured' })

  await lifecycle.enqueue({ agent: 'a', kind: 'slow', payload: {}, runAfter: now(clock) })
  const [lost] = await runner.drain()
  assert.equal(lost?.status, 'lost')
  assert.deepEqual((await lifecycle.jobs('a', { kind: 'slow' })).map((job) => [job.status, job.leaseOwner]), [['running', 'other']])
})

test('kick drains in the background and picks up jobs queued while it runs; a non-eager runner only drains when asked', async (t) => {
  const { lifecycle, clock } = openLifecycle(t)
  const ran: number[] = []
  let queueMore = true
  const work: JobHandler = async (job) => {
    ran.push(job.payload.n as number)
    if (queueMore) {
      queueMore = false
      await lifecycle.enqueue({ agent: 'a', kind: 'work', payload: { n: 2 }, runAfter: now(clock) })
      runner.kick()
    }
    return { status: 'done' }
  }
  const runner = createJobRunner({ lifecycle, agent: 'a', clock, handlers: { work } })
  await lifecycle.enqueue({ agent: 'a', kind: 'work', payload: { n: 1 }, runAfter: now(clock) })
  runner.kick()
  runner.kick()
  await runner.idle()
  assert.deepEqual(ran, [1, 2])

  const lazy = createJobRunner({ lifecycle, agent: 'a', clock, handlers: { work }, eager: false })
  await lifecycle.enqueue({ agent: 'a', kind: 'work', payload: { n: 3 }, runAfter: now(clock) })
  lazy.kick()
  await lazy.idle()
  assert.deepEqual(ran, [1, 2], 'nothing ran in the background')
  assert.equal((await lazy.drain()).length, 1)
  assert.deepEqual(ran, [1, 2, 3])
})

test('release hands a job still running back to the queue: another runner takes it at once, the first one loses it', async (t) => {
  const { lifecycle, clock } = openLifecycle(t)
  let answer: (() => void) | undefined
  const slow: JobHandler = () => new Promise((resolve) => (answer = () => resolve({ status: 'done' })))
  const quick: JobHandler = async () => ({ status: 'done', result: { by: 'second' } })
  const stopping = createJobRunner({ lifecycle, agent: 'a', clock, handlers: { post: slow }, owner: 'stopping' })
  const later = createJobRunner({ lifecycle, agent: 'a', clock, handlers: { post: quick }, owner: 'later' })
  await lifecycle.enqueue({ agent: 'a', kind: 'post', payload: {}, runAfter: now(clock) })

  const first = stopping.drain()
  while (!answer) await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(await later.drain(), [], 'held by its lease')
  assert.equal(await stopping.release('stopping'), 1)
  const second = await later.drain()
  assert.deepEqual(second.map((outcome) => [outcome.status, outcome.result?.by]), [['done', 'second']])
  answer()
  assert.deepEqual((await first).map((outcome) => outcome.status), ['lost'])
  assert.equal(await stopping.release('nothing running'), 0)
})
