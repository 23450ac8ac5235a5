import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { startChild } from '../files/test-support/run-children.ts'
import { ManualClock } from '../../core/clock.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { openSqlite } from './database.ts'
import { createSqliteLifecycle } from './lifecycle.ts'

const CLAIM_WORKER = join(import.meta.dirname, 'test-support', 'claim-worker.ts')

function openTemp() {
  const temp = makeTempHome('engram-sqlite-lifecycle-')
  mkdirSync(temp.home, { recursive: true })
  const path = join(temp.home, 'engram.db')
  const handle = openSqlite(path)
  return {
    path,
    handle,
    cleanup: () => {
      handle.close()
      temp.cleanup()
    },
  }
}

test('three processes draining one queue run each of 300 jobs exactly once', async () => {
  const { path, handle, cleanup } = openTemp()
  try {
    const lifecycle = createSqliteLifecycle(handle, { clock: new ManualClock('2026-03-02T09:00:00Z') })
    for (let i = 0; i < 300; i++) await lifecycle.enqueue({ agent: 'agent', kind: 'work', key: `work:${i}`, payload: { i }, runAfter: '2026-01-01T00:00:00.000Z' })
    const startFile = `${path}.start`
    const workers = ['A', 'B', 'C'].map((owner) => {
      const child = startChild(CLAIM_WORKER, [path, owner, startFile], `worker ${owner}`)
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
    cleanup()
  }
})
