import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { makeTempHome } from '../../testing/temp-home.ts'
import { createFileLocks, lockFileName } from './locks.ts'

const HOLD_LOCK = join(import.meta.dirname, 'test-support', 'hold-lock.ts')
const LOCK_HOG = join(import.meta.dirname, 'test-support', 'lock-hog.ts')

test('lock names map to distinct, filesystem-safe file names', () => {
  assert.notEqual(lockFileName('a/b'), lockFileName('a_b'))
  assert.match(lockFileName('engrams:../../etc:rules'), /^[A-Za-z0-9._-]+$/)
})

test('a lock held by a SIGKILLed process is taken over at once', async () => {
  const temp = makeTempHome()
  try {
    const dir = join(temp.home, 'locks')
    const child = spawn(process.execPath, [HOLD_LOCK, dir, 'crashy'], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('held')) resolve()
      })
      child.on('exit', (code) => reject(new Error(`holder exited early with ${code}`)))
    })
    const locks = createFileLocks({ dir })
    const busy = await locks.withLock('crashy', async () => 'no', { wait: false })
    assert.equal(busy.kind, 'busy')
    assert.match(busy.kind === 'busy' ? (busy.holder ?? '') : '', new RegExp(`pid ${child.pid}`))

    // A waiter is already retrying when the holder dies.
    const started = performance.now()
    const waiting = locks.withLock('crashy', async () => performance.now(), { timeoutMs: 8000 })
    await sleep(200)
    const killedAt = performance.now()
    child.kill('SIGKILL')
    const outcome = await waiting
    assert.equal(outcome.kind, 'done')
    const delay = (outcome.kind === 'done' ? outcome.value : Number.POSITIVE_INFINITY) - killedAt
    assert.ok(delay < 1000, `the waiter got the lock ${Math.round(delay)} ms after the holder died`)
    assert.ok(performance.now() - started < 8000)
  } finally {
    temp.cleanup()
  }
})

test('a waiter behind many short holders is never turned away: the timeout counts time without progress', async () => {
  const temp = makeTempHome()
  try {
    const locks = createFileLocks({ dir: join(temp.home, 'locks') })
    const order: number[] = []
    // 40 holders of 20 ms each keep the lock busy for 800 ms, over twice the waiters' timeout.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        locks.withLock(
          'queue',
          async () => {
            order.push(i)
            await sleep(20)
          },
          { timeoutMs: 300 },
        ),
      ),
    )
    assert.deepEqual(
      order,
      Array.from({ length: 40 }, (_, i) => i),
      'callers in one process are served in arrival order',
    )
  } finally {
    temp.cleanup()
  }
})

test('a process that wants a lock back-to-back lets a waiting process in between: it waits a turn, not for the whole queue', async () => {
  const temp = makeTempHome()
  try {
    const dir = join(temp.home, 'locks')
    // 600 callers × 5 ms of work: the hog wants the lock for 3 s without a break.
    const hog = spawn(process.execPath, [LOCK_HOG, dir, 'hot', '600', '5'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let holdings = 0
    let hogDone = false
    const exited = new Promise((resolve) => hog.once('exit', resolve))
    await new Promise<void>((resolve) => {
      hog.stdout.on('data', (chunk: Buffer) => {
        const text = chunk.toString()
        holdings += text.split('held').length - 1
        if (holdings > 0) resolve()
        if (text.includes('done')) hogDone = true
      })
    })
    const locks = createFileLocks({ dir })
    const between: number[] = []
    for (let i = 0; i < 5; i++) {
      const before = holdings
      await locks.withLock('hot', async () => {})
      // The hog's holdings while this caller waited (its output lags a little behind).
      await sleep(20)
      between.push(holdings - before)
    }
    assert.equal(hogDone, false, 'the waiter got its turns while the other process still wanted the lock')
    // A turn comes after one or two of the hog's holdings; left to chance, dozens went by.
    assert.ok(Math.max(...between) <= 6, `the other process held the lock ${between.join(', ')} times while this one waited`)
    hog.kill('SIGKILL')
    await exited
  } finally {
    temp.cleanup()
  }
})

test('a lock file with bytes written into it is emptied and used; nothing is written into lock files, and they are gone once released', async () => {
  const temp = makeTempHome()
  try {
    const dir = join(temp.home, 'locks')
    const locks = createFileLocks({ dir })
    const file = join(dir, `${lockFileName('scribbled')}.lock.db`)
    const whileHeld = (): { size: number; files: string[] } => ({ size: statSync(file).size, files: readdirSync(dir).sort() })
    const first = await locks.withLock('scribbled', async () => whileHeld())
    assert.deepEqual(
      first,
      { kind: 'done', value: { size: 0, files: [`${lockFileName('scribbled')}.holder`, `${lockFileName('scribbled')}.lock.db`] } },
      'while held: a lock file and a note of its holder (and a waiters’ stamp once someone waited), no journal, ever',
    )
    assert.deepEqual(readdirSync(dir), [], 'released: the lock leaves no file')
    writeFileSync(file, 'not a database, '.repeat(200))
    assert.deepEqual(await locks.withLock('scribbled', async () => statSync(file).size), { kind: 'done', value: 0 })
    assert.deepEqual(readdirSync(dir), [])
  } finally {
    temp.cleanup()
  }
})

test('a process waiting on a lock whose holder removes its file takes the new file: two processes never hold one lock', async () => {
  const temp = makeTempHome()
  try {
    const dir = join(temp.home, 'locks')
    // Holders in two processes take one lock 150 times each; each notes its holding in a shared file, and would see the other's note if both held it at once.
    mkdirSync(temp.home, { recursive: true })
    const tally = join(temp.home, 'tally')
    writeFileSync(tally, '')
    const runs = [0, 1].map(
      (worker) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [LOCK_HOG, dir, 'shared', '150', '1', tally, String(worker)], { stdio: ['ignore', 'pipe', 'inherit'] })
          let out = ''
          child.stdout.on('data', (chunk: Buffer) => {
            out += chunk.toString()
          })
          child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker ${worker} exited with ${code}: ${out}`))))
        }),
    )
    const outputs = await Promise.all(runs)
    for (const out of outputs) assert.doesNotMatch(out, /overlap/, out)
    assert.deepEqual(readdirSync(dir), [], 'the last release removed the lock files')
  } finally {
    temp.cleanup()
  }
})
