import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startChild } from '../files/test-support/run-children.ts'
import { ManualClock } from '../../core/clock.ts'
import { createPostgresLifecycle } from './lifecycle.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

const CLAIM_WORKER = join(import.meta.dirname, 'test-support', 'pg-claim-worker.ts')

onPostgres('Lifecycle rows', (url) => {
  test('three processes draining one queue run each of 300 jobs exactly once', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    const dir = mkdtempSync(join(tmpdir(), 'engram-pg-claims-'))
    try {
      const lifecycle = createPostgresLifecycle(handle, { clock: new ManualClock('2026-03-02T09:00:00Z') })
      for (let i = 0; i < 300; i++) await lifecycle.enqueue({ agent: 'agent', kind: 'work', key: `work:${i}`, payload: { i }, runAfter: '2026-01-01T00:00:00.000Z' })
      const startFile = join(dir, 'start')
      const workers = ['A', 'B', 'C'].map((owner) => {
        const child = startChild(CLAIM_WORKER, [url, handle.schema, owner, startFile], `worker ${owner}`)
        return { ready: child.ready, ran: child.lastLine.then((line) => JSON.parse(line || '[]') as number[]) }
      })
      await Promise.all(workers.map((w) => w.ready))
      writeFileSync(startFile, 'go')
      const ran = await Promise.all(workers.map((w) => w.ran))
      const all = ran.flat().sort((a, b) => a - b)
      assert.equal(all.length, 300, 'every job ran')
      assert.equal(new Set(all).size, 300, 'no job ran twice')
      assert.ok(ran.filter((ids) => ids.length > 0).length >= 2, `the workers really competed: ${ran.map((ids) => ids.length).join(', ')}`)
      const jobs = await lifecycle.jobs('agent')
      assert.ok(jobs.every((job) => job.status === 'done' && job.attempts === 1))
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await cleanup()
    }
  })

  test('concurrent first touches, closes and counts of one session agree', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const lifecycle = createPostgresLifecycle(handle, { clock: new ManualClock('2026-03-02T09:00:00Z') })
      const at = '2026-03-02T09:00:00.000Z'
      const opened = await Promise.all(Array.from({ length: 8 }, () => lifecycle.beginTurn('a', 's', { at, user: 'ada' })))
      assert.equal(opened.filter((result) => result.opened).length, 1, 'one of them created it')
      assert.deepEqual(opened.map((result) => result.session.turns).sort((x, y) => x - y), [1, 2, 3, 4, 5, 6, 7, 8])
      const closes = await Promise.all(
        Array.from({ length: 8 }, (_, i) => lifecycle.closeSession('a', 's', { at, reason: 'idle', enqueue: [{ kind: 'boundary', key: `b:${i}`, payload: {}, runAfter: at }] })),
      )
      assert.equal(closes.filter(Boolean).length, 1, 'closed once')
      assert.equal((await lifecycle.jobs('a')).length, 1, 'its boundary work queued once')
      const counts = await Promise.all(Array.from({ length: 20 }, () => lifecycle.increment('a', 'ada', 'n', at)))
      assert.deepEqual(counts.sort((x, y) => x - y), Array.from({ length: 20 }, (_, i) => i + 1))
      const beats = await Promise.all(Array.from({ length: 4 }, (_, i) => lifecycle.recordHeartbeat('a', `2026-03-02T09:0${i}:00.000Z`)))
      assert.equal(beats.filter((previous) => previous === undefined).length, 1, 'one heartbeat was the first')
    } finally {
      await cleanup()
    }
  })
})
