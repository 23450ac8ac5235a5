import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { openPostgres } from './connection.ts'
import { createPostgresLocks } from './locks.ts'
import { freshSchema, onPostgres, openTestHandle } from './test-support/test-database.ts'

const HOLD_LOCK = join(import.meta.dirname, 'test-support', 'hold-pg-lock.ts')

/** A child process holding `name` in `schema`; resolves once it holds it. */
async function holder(url: string, schema: string, name: string) {
  const child = spawn(process.execPath, [HOLD_LOCK, url, schema, name], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`holder exited early with ${code}: ${stderr}`)))
  })
  return { child, exited }
}

onPostgres('Locks rows', (url) => {
  test('a lock held by a SIGKILLed process is taken over at once', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const { child, exited } = await holder(url, handle.schema, 'crashy')
      const locks = createPostgresLocks(handle)
      const busy = await locks.withLock('crashy', async () => 'no', { wait: false })
      assert.equal(busy.kind, 'busy')
      assert.match(busy.kind === 'busy' ? (busy.holder ?? '') : '', new RegExp(`engram pid ${child.pid} #1 on .* \\(server pid \\d+\\)`), 'names the holder')

      const waiting = locks.withLock('crashy', async () => performance.now(), { timeoutMs: 8000 })
      await sleep(200)
      const killedAt = performance.now()
      child.kill('SIGKILL')
      await exited
      const outcome = await waiting
      assert.equal(outcome.kind, 'done')
      const delay = (outcome.kind === 'done' ? outcome.value : Number.POSITIVE_INFINITY) - killedAt
      assert.ok(delay < 1000, `the waiter got the lock ${Math.round(delay)} ms after the holder died`)
    } finally {
      await cleanup()
    }
  })

  test('a holder in another process that stays past the timeout makes a waiter throw lock_busy naming it', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const { child, exited } = await holder(url, handle.schema, 'stuck')
      const locks = createPostgresLocks(handle)
      const started = performance.now()
      await assert.rejects(
        locks.withLock('stuck', async () => 'ran', { timeoutMs: 300 }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'lock_busy')
          assert.match(error.message, new RegExp(`held by engram pid ${child.pid}`))
          return true
        },
      )
      const waited = performance.now() - started
      assert.ok(waited >= 290 && waited < 2000, `waited ${Math.round(waited)} ms for a 300 ms timeout`)
      child.kill('SIGKILL')
      await exited
      assert.deepEqual(await locks.withLock('stuck', async () => 'ran', { wait: false }), { kind: 'done', value: 'ran' })
    } finally {
      await cleanup()
    }
  })

  test('two handles in one process exclude each other; the same name in another schema is another lock', async () => {
    const first = await openTestHandle(url)
    const second = await openPostgres({ url, schema: first.handle.schema })
    const elsewhere = await openTestHandle(url)
    try {
      const a = createPostgresLocks(first.handle)
      const b = createPostgresLocks(second)
      const c = createPostgresLocks(elsewhere.handle)
      let inside = 0
      let maxInside = 0
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? a : b).withLock('shared', async () => {
            inside++
            maxInside = Math.max(maxInside, inside)
            assert.equal((await c.withLock('shared', async () => 'free', { wait: false })).kind, 'done', 'another schema, another lock')
            await sleep(5)
            inside--
          }),
        ),
      )
      assert.equal(maxInside, 1)
    } finally {
      await second.close()
      await first.cleanup()
      await elsewhere.cleanup()
    }
  })

  test('a waiter behind many short holders elsewhere is never turned away: the timeout counts time without progress', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    const others = await Promise.all(Array.from({ length: 6 }, () => openPostgres({ url, schema: handle.schema })))
    try {
      const holders = others.map((other) => createPostgresLocks(other))
      const mine = createPostgresLocks(handle)
      // Six handles (each its own line, as six processes would be) take turns holding it 100 ms
      // each: the waiter queues behind several of them, over its 300 ms timeout in all, while the
      // lock changes hands every 100 ms.
      let stop = false
      const busy = holders.map(async (locks) => {
        while (!stop) await locks.withLock('queue', () => sleep(100))
      })
      await sleep(150)
      const started = performance.now()
      const outcome = await mine.withLock('queue', async () => performance.now() - started, { timeoutMs: 300 }).finally(() => {
        stop = true
      })
      await Promise.all(busy)
      assert.equal(outcome.kind, 'done')
      const waited = outcome.kind === 'done' ? outcome.value : 0
      assert.ok(waited > 300, `the waiter waited ${Math.round(waited)} ms, longer than its timeout, and got the lock`)
      assert.equal(outcome.kind, 'done')
    } finally {
      await Promise.all(others.map((other) => other.close()))
      await cleanup()
    }
  })
})

test('advisory keys differ by schema and name', async () => {
  const { advisoryKey } = await import('./advisory-key.ts')
  const schema = freshSchema()
  assert.notEqual(advisoryKey(schema, 'a').key, advisoryKey(schema, 'b').key)
  assert.notEqual(advisoryKey(schema, 'a').key, advisoryKey(freshSchema(), 'a').key)
  const { key, classid, objid } = advisoryKey(schema, 'a')
  assert.equal(BigInt.asUintN(64, BigInt(key)), (BigInt(classid) << 32n) | BigInt(objid))
})
