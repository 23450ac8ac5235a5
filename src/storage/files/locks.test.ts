import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { makeTempHome } from '../../testing/temp-home.ts'
import { runLocksContract } from '../contract-tests/locks.contract.ts'
import { createFileLocks, lockFileName } from './locks.ts'

const HOLD_LOCK = join(import.meta.dirname, 'test-support', 'hold-lock.ts')

runLocksContract('files', async () => {
  const temp = makeTempHome()
  return { locks: createFileLocks({ dir: join(temp.home, 'locks') }), cleanup: async () => temp.cleanup() }
})

test('lock names map to distinct, filesystem-safe file names', () => {
  assert.notEqual(lockFileName('a/b'), lockFileName('a_b'))
  assert.match(lockFileName('engrams:../../etc:rules'), /^[A-Za-z0-9._-]+$/)
})

test('a lock held by a SIGKILLed process is taken over once stale', async () => {
  const temp = makeTempHome()
  try {
    const dir = join(temp.home, 'locks')
    const child = spawn(process.execPath, [HOLD_LOCK, dir, 'crashy', '2000'], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('held')) resolve()
      })
      child.on('exit', (code) => reject(new Error(`holder exited early with ${code}`)))
    })
    const locks = createFileLocks({ dir, staleMs: 2000 })
    const busy = await locks.withLock('crashy', async () => 'no', { wait: false })
    assert.equal(busy.kind, 'busy')
    assert.match(busy.kind === 'busy' ? (busy.holder ?? '') : '', new RegExp(`pid ${child.pid}`))

    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    const started = performance.now()
    const outcome = await locks.withLock('crashy', async () => 'taken over', { timeoutMs: 8000 })
    const waited = performance.now() - started
    assert.deepEqual(outcome, { kind: 'done', value: 'taken over' })
    assert.ok(waited < 6000, `took ${Math.round(waited)} ms`)
  } finally {
    temp.cleanup()
  }
})
