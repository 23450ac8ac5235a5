/**
 * Contract suite for Locks: file locks, SQLite/PostgreSQL advisory locks must all pass it.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Locks } from '../contracts.ts'

export interface LocksFixture {
  locks: Locks
  cleanup(): Promise<void>
}

/** Registers the Locks contract tests under `describe(name)`. */
export function runLocksContract(name: string, make: () => Promise<LocksFixture>): void {
  async function withLocks(fn: (locks: Locks) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture.locks)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`Locks contract: ${name}`, () => {
    test('returns the value of the function it ran', () =>
      withLocks(async (locks) => {
        assert.deepEqual(await locks.withLock('a', async () => 42), { kind: 'done', value: 42 })
        assert.deepEqual(await locks.withLock('a', async () => 'again'), { kind: 'done', value: 'again' }, 'released after use')
      }))

    test('holders of one name never overlap', () =>
      withLocks(async (locks) => {
        let inside = 0
        let maxInside = 0
        let runs = 0
        await Promise.all(
          Array.from({ length: 8 }, () =>
            locks.withLock('shared', async () => {
              inside++
              maxInside = Math.max(maxInside, inside)
              await sleep(5)
              runs++
              inside--
            }),
          ),
        )
        assert.equal(runs, 8)
        assert.equal(maxInside, 1)
      }))

    test('without wait, a held lock reports busy at once', () =>
      withLocks(async (locks) => {
        let release!: () => void
        const held = new Promise<void>((resolve) => {
          release = resolve
        })
        const holder = locks.withLock('busy', () => held)
        await sleep(20)
        const started = performance.now()
        const outcome = await locks.withLock('busy', async () => 'ran', { wait: false })
        assert.equal(outcome.kind, 'busy')
        assert.ok(performance.now() - started < 1000, 'did not wait')
        release()
        await holder
        assert.deepEqual(await locks.withLock('busy', async () => 'ran', { wait: false }), { kind: 'done', value: 'ran' })
      }))

    test('waiting past the timeout throws lock_busy', () =>
      withLocks(async (locks) => {
        let release!: () => void
        const held = new Promise<void>((resolve) => {
          release = resolve
        })
        const holder = locks.withLock('slow', () => held)
        await sleep(20)
        let ran = false
        await assert.rejects(
          locks.withLock(
            'slow',
            async () => {
              ran = true
            },
            { timeoutMs: 200 },
          ),
          { code: 'lock_busy' },
        )
        assert.equal(ran, false)
        release()
        await holder
      }))

    test('different names nest; a throwing function releases its lock', () =>
      withLocks(async (locks) => {
        const outcome = await locks.withLock('outer', async () => {
          const inner = await locks.withLock('inner', async () => 'inner value', { wait: false })
          return inner.kind === 'done' ? inner.value : 'busy'
        })
        assert.deepEqual(outcome, { kind: 'done', value: 'inner value' })
        await assert.rejects(
          locks.withLock('boom', async () => {
            throw new Error('boom')
          }),
          /boom/,
        )
        assert.equal((await locks.withLock('boom', async () => 1, { wait: false })).kind, 'done')
      }))
  })
}
