/**
 * Contract suite for Lifecycle: the SQLite and PostgreSQL implementations must both pass it. It
 * says what any process may rely on: a session is closed (and its boundary work queued) once, a
 * live session is never closed by a stale view of it, a job is claimed by one owner at a time and
 * settled once, a dead owner's job comes back after its lease, and a turn's record is found again.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import type { Lifecycle } from '../contracts.ts'

export interface LifecycleFixture {
  lifecycle: Lifecycle
  cleanup(): Promise<void>
}

const T0 = Date.parse('2026-03-02T09:00:00.000Z')

function at(minute: number): string {
  return new Date(T0 + minute * 60_000).toISOString()
}

/** Registers the Lifecycle contract tests under `describe(name)`. */
export function runLifecycleContract(name: string, make: () => Promise<LifecycleFixture>): void {
  async function withLifecycle(fn: (lifecycle: Lifecycle) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture.lifecycle)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`Lifecycle contract: ${name}`, () => {
    test('turns are counted per session across periods; activity keeps a session open and reopens a closed one', () =>
      withLifecycle(async (lifecycle) => {
        const first = await lifecycle.beginTurn('a', 's1', { at: at(0), user: 'ada' })
        assert.equal(first.opened, true)
        assert.deepEqual(first.session, {
          agent: 'a',
          sessionId: 's1',
          user: 'ada',
          status: 'open',
          openedAt: at(0),
          lastActivityAt: at(0),
          turns: 1,
          closedAt: undefined,
          closeReason: undefined,
        })
        const touched = await lifecycle.touchSession('a', 's1', { at: at(1) })
        assert.equal(touched.opened, false)
        assert.equal(touched.session.turns, 1)
        assert.equal(touched.session.user, 'ada', 'a touch without a user keeps the one recorded')
        assert.equal((await lifecycle.beginTurn('a', 's1', { at: at(2) })).session.turns, 2)
        // An older instant never moves the last activity back.
        assert.equal((await lifecycle.touchSession('a', 's1', { at: at(1) })).session.lastActivityAt, at(2))

        assert.equal(await lifecycle.closeSession('a', 's1', { at: at(20), reason: 'idle' }), true)
        const closed = await lifecycle.session('a', 's1')
        assert.equal(closed?.status, 'closed')
        assert.equal(closed?.closeReason, 'idle')
        assert.equal(closed?.closedAt, at(20))

        const reopened = await lifecycle.beginTurn('a', 's1', { at: at(30) })
        assert.equal(reopened.opened, true)
        assert.equal(reopened.session.turns, 3, 'turn numbers go on after a boundary')
        assert.equal(reopened.session.openedAt, at(30), 'a new open period starts')
        assert.equal(reopened.session.closeReason, undefined)
        assert.equal(await lifecycle.session('a', 'other'), null)
        assert.equal(await lifecycle.session('b', 's1'), null, 'sessions are per agent')
      }))

    test('openSessions lists open sessions least recently active first, or only those quiet since an instant', () =>
      withLifecycle(async (lifecycle) => {
        await lifecycle.touchSession('a', 'late', { at: at(9) })
        await lifecycle.touchSession('a', 'early', { at: at(1) })
        await lifecycle.touchSession('a', 'middle', { at: at(5) })
        await lifecycle.touchSession('b', 'elsewhere', { at: at(0) })
        await lifecycle.touchSession('a', 'closed', { at: at(0) })
        await lifecycle.closeSession('a', 'closed', { at: at(2), reason: 'end' })
        assert.deepEqual(
          (await lifecycle.openSessions('a')).map((s) => s.sessionId),
          ['early', 'middle', 'late'],
        )
        assert.deepEqual(
          (await lifecycle.openSessions('a', { quietSince: at(5) })).map((s) => s.sessionId),
          ['early', 'middle'],
        )
      }))

    test('a conditional close loses to activity that arrived after the view it was based on, and queues nothing', () =>
      withLifecycle(async (lifecycle) => {
        await lifecycle.touchSession('a', 's', { at: at(0) })
        const [seen] = await lifecycle.openSessions('a', { quietSince: at(10) })
        await lifecycle.touchSession('a', 's', { at: at(11) })
        const job = { kind: 'immediate-encoding', key: 'enc:s:1', payload: { session: 's' }, runAfter: at(12) }
        assert.equal(await lifecycle.closeSession('a', 's', { at: at(12), reason: 'idle', ifLastActivityAt: seen?.lastActivityAt as string, enqueue: [job] }), false)
        assert.equal((await lifecycle.session('a', 's'))?.status, 'open')
        assert.deepEqual(await lifecycle.jobs('a'), [])

        assert.equal(await lifecycle.closeSession('a', 's', { at: at(25), reason: 'idle', ifLastActivityAt: at(11), enqueue: [job] }), true)
        assert.equal(await lifecycle.closeSession('a', 's', { at: at(26), reason: 'idle', ifLastActivityAt: at(11), enqueue: [job] }), false, 'closed once')
        assert.equal(await lifecycle.closeSession('a', 's', { at: at(26), reason: 'end' }), false, 'an explicit end of a closed session does nothing')
        const jobs = await lifecycle.jobs('a')
        assert.equal(jobs.length, 1)
        assert.deepEqual(jobs[0]?.payload, { session: 's' })
        assert.equal(jobs[0]?.status, 'queued')
        // A conditional close never creates a session; an explicit end of an unknown one does.
        assert.equal(await lifecycle.closeSession('a', 'unknown', { at: at(30), reason: 'idle', ifLastActivityAt: at(0) }), false)
        assert.equal(await lifecycle.session('a', 'unknown'), null)
        assert.equal(await lifecycle.closeSession('a', 'unknown', { at: at(30), reason: 'end', enqueue: [{ ...job, key: 'enc:unknown' }] }), true)
        assert.equal((await lifecycle.session('a', 'unknown'))?.status, 'closed')
      }))

    test('a heartbeat returns the previous one; counters count per agent and user', () =>
      withLifecycle(async (lifecycle) => {
        assert.equal(await lifecycle.recordHeartbeat('a', at(0)), undefined)
        assert.equal(await lifecycle.recordHeartbeat('a', at(30)), at(0))
        assert.equal(await lifecycle.recordHeartbeat('b', at(31)), undefined, 'per agent')
        assert.equal(await lifecycle.recordHeartbeat('a', at(60)), at(30))

        assert.equal(await lifecycle.increment('a', 'ada', 'identity', at(0)), 1)
        assert.equal(await lifecycle.increment('a', 'ada', 'identity', at(1)), 2)
        assert.equal(await lifecycle.increment('a', 'bob', 'identity', at(1)), 1)
        assert.equal(await lifecycle.increment('a', undefined, 'identity', at(1)), 1)
        assert.equal(await lifecycle.increment('b', 'ada', 'identity', at(1)), 1)
        assert.equal(await lifecycle.increment('a', 'ada', 'other', at(1)), 1)
        assert.equal(await lifecycle.increment('a', 'ada', 'identity', at(2)), 3)
      }))

    test('a key queues a job once; claims take due jobs in order, one owner at a time', () =>
      withLifecycle(async (lifecycle) => {
        const first = await lifecycle.enqueue({ agent: 'a', kind: 'identity', key: 'identity:ada:5', payload: { user: 'ada', turn: 5 }, runAfter: at(0) })
        assert.equal(first.created, true)
        const again = await lifecycle.enqueue({ agent: 'a', kind: 'identity', key: 'identity:ada:5', payload: { other: true }, runAfter: at(0) })
        assert.equal(again.created, false)
        assert.equal(again.job.id, first.job.id)
        assert.deepEqual(again.job.payload, { user: 'ada', turn: 5 }, 'the first one stands')
        await lifecycle.enqueue({ agent: 'a', kind: 'later', payload: {}, runAfter: at(10) })
        await lifecycle.enqueue({ agent: 'a', kind: 'no-key', payload: {}, runAfter: at(1) })
        await lifecycle.enqueue({ agent: 'a', kind: 'no-key', payload: {}, runAfter: at(1) })
        await lifecycle.enqueue({ agent: 'b', kind: 'other-agent', payload: {}, runAfter: at(0) })

        const claimed = await lifecycle.claim('a', { owner: 'p1', now: at(2), leaseMs: 60_000 })
        assert.equal(claimed?.id, first.job.id)
        assert.equal(claimed?.status, 'running')
        assert.equal(claimed?.attempts, 1)
        assert.equal(claimed?.leaseOwner, 'p1')
        assert.equal(claimed?.leaseUntil, at(3))
        const kinds: string[] = []
        for (;;) {
          const next = await lifecycle.claim('a', { owner: 'p2', now: at(2), leaseMs: 60 * 60_000 })
          if (!next) break
          kinds.push(next.kind)
        }
        assert.deepEqual(kinds, ['no-key', 'no-key'], 'a running job and a job not yet due are not claimable')

        assert.equal(await lifecycle.settle(first.job.id, 'p2', { status: 'done', at: at(2) }), false, 'only the owner settles')
        assert.equal(await lifecycle.settle(first.job.id, 'p1', { status: 'done', at: at(2), result: { facts: 1 } }), true)
        assert.equal(await lifecycle.settle(first.job.id, 'p1', { status: 'done', at: at(2) }), false, 'settled once')
        const [done] = await lifecycle.jobs('a', { kind: 'identity' })
        assert.equal(done?.status, 'done')
        assert.deepEqual(done?.result, { facts: 1 })
        assert.equal(done?.finishedAt, at(2))
        assert.equal(done?.leaseOwner, undefined)
        assert.equal(await lifecycle.claim('a', { owner: 'p1', now: at(9), leaseMs: 60_000 }), null)
        assert.equal((await lifecycle.claim('a', { owner: 'p1', now: at(10), leaseMs: 60_000 }))?.kind, 'later')
        assert.deepEqual(
          (await lifecycle.jobs('a', { status: ['running'] })).map((job) => job.kind),
          ['no-key', 'no-key', 'later'],
          'newest first',
        )
      }))

    test('a job whose owner died is claimed again after its lease, and given up after its last attempt', () =>
      withLifecycle(async (lifecycle) => {
        const { job } = await lifecycle.enqueue({ agent: 'a', kind: 'sleep-replay', payload: {}, runAfter: at(0), maxAttempts: 2 })
        assert.equal((await lifecycle.claim('a', { owner: 'dead-1', now: at(0), leaseMs: 5 * 60_000 }))?.id, job.id)
        assert.equal(await lifecycle.claim('a', { owner: 'p2', now: at(4), leaseMs: 5 * 60_000 }), null, 'the lease still holds')
        const retaken = await lifecycle.claim('a', { owner: 'dead-2', now: at(5), leaseMs: 5 * 60_000 })
        assert.equal(retaken?.attempts, 2)
        assert.equal(await lifecycle.settle(job.id, 'dead-1', { status: 'done', at: at(6) }), false, 'the first owner lost it')
        assert.equal(await lifecycle.claim('a', { owner: 'p3', now: at(11), leaseMs: 5 * 60_000 }), null)
        const [failed] = await lifecycle.jobs('a')
        assert.equal(failed?.status, 'failed')
        assert.match(failed?.error ?? '', /lease expired 2 time/)
      }))

    test('a failed job is retried at retryAt while attempts remain, then stays failed', () =>
      withLifecycle(async (lifecycle) => {
        const { job } = await lifecycle.enqueue({ agent: 'a', kind: 'identity', payload: {}, runAfter: at(0), maxAttempts: 2 })
        await lifecycle.claim('a', { owner: 'p', now: at(0), leaseMs: 60_000 })
        assert.equal(await lifecycle.settle(job.id, 'p', { status: 'failed', at: at(0), error: '503 from the model', retryAt: at(5) }), true)
        let [row] = await lifecycle.jobs('a')
        assert.equal(row?.status, 'queued')
        assert.equal(row?.error, '503 from the model')
        assert.equal(row?.runAfter, at(5))
        assert.equal(await lifecycle.claim('a', { owner: 'p', now: at(4), leaseMs: 60_000 }), null)
        assert.equal((await lifecycle.claim('a', { owner: 'p', now: at(5), leaseMs: 60_000 }))?.attempts, 2)
        assert.equal(await lifecycle.settle(job.id, 'p', { status: 'failed', at: at(5), error: 'again', retryAt: at(10) }), true)
        ;[row] = await lifecycle.jobs('a')
        assert.equal(row?.status, 'failed', 'no attempts left')
        assert.equal(row?.finishedAt, at(5))
        assert.equal(await lifecycle.claim('a', { owner: 'p', now: at(20), leaseMs: 60_000 }), null)
      }))

    test('pruning deletes finished jobs older than an instant, never queued, running or failed ones', () =>
      withLifecycle(async (lifecycle) => {
        const settle = async (kind: string, minute: number, status: 'done' | 'skipped' | 'failed') => {
          const { job } = await lifecycle.enqueue({ agent: 'a', kind, key: kind, payload: {}, runAfter: at(0), maxAttempts: 1 })
          await lifecycle.claim('a', { owner: 'p', now: at(minute), leaseMs: 60_000, id: job.id })
          await lifecycle.settle(job.id, 'p', status === 'failed' ? { status, at: at(minute), error: 'x' } : { status, at: at(minute) })
        }
        await settle('old-done', 1, 'done')
        await settle('old-skipped', 2, 'skipped')
        await settle('old-failed', 3, 'failed')
        await settle('new-done', 20, 'done')
        await lifecycle.enqueue({ agent: 'a', kind: 'queued', payload: {}, runAfter: at(0) })
        await lifecycle.enqueue({ agent: 'b', kind: 'other-agent', payload: {}, runAfter: at(0) })
        assert.equal(await lifecycle.pruneJobs('a', at(10)), 2)
        assert.deepEqual((await lifecycle.jobs('a')).map((job) => job.kind).sort(), ['new-done', 'old-failed', 'queued'])
        assert.equal((await lifecycle.jobs('b')).length, 1)
        // A pruned key can be queued again: keys name one occasion (a period, a turn, a day).
        assert.equal((await lifecycle.enqueue({ agent: 'a', kind: 'old-done', key: 'old-done', payload: {}, runAfter: at(30) })).created, true)
      }))

    test('claiming one job by id takes only that job, when it is claimable', () =>
      withLifecycle(async (lifecycle) => {
        const a = await lifecycle.enqueue({ agent: 'a', kind: 'x', payload: {}, runAfter: at(0) })
        const b = await lifecycle.enqueue({ agent: 'a', kind: 'y', payload: {}, runAfter: at(0) })
        assert.equal((await lifecycle.claim('a', { owner: 'p', now: at(0), leaseMs: 60_000, id: b.job.id }))?.kind, 'y')
        assert.equal(await lifecycle.claim('a', { owner: 'q', now: at(0), leaseMs: 60_000, id: b.job.id }), null)
        assert.equal((await lifecycle.claim('a', { owner: 'q', now: at(0), leaseMs: 60_000 }))?.id, a.job.id)
      }))

    test('a stored turn is found by session and number and by any of its message ids', () =>
      withLifecycle(async (lifecycle) => {
        const provenance = { primed: [{ source: 'memory/lessons.md', channel: 'related' }], conversation: [], memory: [], layers: { base: 'default' } }
        await lifecycle.saveTurn({ agent: 'a', sessionId: 's', turn: 1, user: 'ada', messageId: 10, startedAt: at(0), type: 'question', provenance })
        await lifecycle.addTurnReplies('a', 's', 1, [11, 12])
        const expected = { agent: 'a', sessionId: 's', turn: 1, user: 'ada', messageId: 10, replyIds: [11, 12], startedAt: at(0), type: 'question', provenance }
        assert.deepEqual(await lifecycle.turn('a', { sessionId: 's', turn: 1 }), expected)
        assert.deepEqual(await lifecycle.turn('a', { messageId: 10 }), expected)
        assert.deepEqual(await lifecycle.turn('a', { messageId: 12 }), expected)
        assert.equal(await lifecycle.turn('a', { messageId: 13 }), null)
        assert.equal(await lifecycle.turn('a', { sessionId: 's', turn: 2 }), null)
        assert.equal(await lifecycle.turn('b', { messageId: 10 }), null, 'turns are per agent')
      }))

    test('recentTurns lists the latest turns of a user over all their sessions, newest first', () =>
      withLifecycle(async (lifecycle) => {
        const save = (sessionId: string, turn: number, user: string | undefined, minute: number) =>
          lifecycle.saveTurn({ agent: 'a', sessionId, turn, user, messageId: minute * 10, startedAt: at(minute), type: 'question', provenance: {} })
        await save('s1', 1, 'ada', 0)
        await save('s1', 2, 'ada', 1)
        await save('s2', 1, 'bob', 2)
        await save('s3', 1, 'ada', 3)
        await save('s4', 1, undefined, 4)
        assert.deepEqual(
          (await lifecycle.recentTurns('a', 'ada', 2)).map((turn) => `${turn.sessionId}#${turn.turn}`),
          ['s3#1', 's1#2'],
        )
        assert.deepEqual(
          (await lifecycle.recentTurns('a', undefined, 5)).map((turn) => turn.sessionId),
          ['s4'],
        )
        assert.deepEqual(await lifecycle.recentTurns('b', 'ada', 5), [])
      }))

    test('purgeUser erases a user\'s sessions, turns, counters and queued jobs of every agent, and nothing of anyone else', () =>
      withLifecycle(async (lifecycle) => {
        for (const agent of ['a', 'b']) {
          await lifecycle.beginTurn(agent, `${agent}-ada`, { at: at(0), user: 'ada' })
          await lifecycle.saveTurn({ agent, sessionId: `${agent}-ada`, turn: 1, user: 'ada', messageId: 1, startedAt: at(0), type: 'question', provenance: { primed: ['salary'] } })
          await lifecycle.addTurnReplies(agent, `${agent}-ada`, 1, [2])
          await lifecycle.increment(agent, 'ada', 'identity', at(0))
          await lifecycle.enqueue({ agent, kind: 'identity', key: `identity:ada:${agent}`, payload: { session: `${agent}-ada`, user: 'ada', messages: ['salary 120k'] }, runAfter: at(0) })
        }
        await lifecycle.beginTurn('a', 'a-bob', { at: at(1), user: 'bob' })
        await lifecycle.saveTurn({ agent: 'a', sessionId: 'a-bob', turn: 1, user: 'bob', messageId: 3, startedAt: at(1), type: 'question', provenance: {} })
        await lifecycle.increment('a', 'bob', 'identity', at(1))
        await lifecycle.increment('a', undefined, 'identity', at(1))
        await lifecycle.enqueue({ agent: 'a', kind: 'identity', key: 'identity:bob', payload: { session: 'a-bob', user: 'bob' }, runAfter: at(1) })
        await lifecycle.enqueue({ agent: 'a', kind: 'memory-compaction', key: 'compaction', payload: { reason: 'due' }, runAfter: at(1) })

        assert.deepEqual(await lifecycle.purgeUser('ada'), { sessions: 2, turns: 2, counters: 2, jobs: 2 })
        for (const agent of ['a', 'b']) {
          assert.equal(await lifecycle.session(agent, `${agent}-ada`), null)
          assert.equal(await lifecycle.turn(agent, { messageId: 2 }), null)
          assert.deepEqual(await lifecycle.recentTurns(agent, 'ada', 5), [])
        }
        assert.equal(await lifecycle.increment('a', 'ada', 'identity', at(2)), 1, 'the counter starts again')
        assert.equal((await lifecycle.session('a', 'a-bob'))?.user, 'bob')
        assert.equal((await lifecycle.recentTurns('a', 'bob', 5)).length, 1)
        assert.deepEqual((await lifecycle.jobs('a')).map((job) => job.key).sort(), ['compaction', 'identity:bob'])
        assert.equal(await lifecycle.increment('a', 'bob', 'identity', at(2)), 2)
        assert.deepEqual(await lifecycle.purgeUser('ada'), { sessions: 0, turns: 0, counters: 1, jobs: 0 })
      }))

    test('invalid input is refused with invalid_argument', () =>
      withLifecycle(async (lifecycle) => {
        const refused = (error: unknown): boolean => {
          assert.ok(EngramError.is(error))
          assert.equal(error.code, 'invalid_argument')
          return true
        }
        await assert.rejects(lifecycle.touchSession('a', '', { at: at(0) }), refused)
        await assert.rejects(lifecycle.beginTurn('a', 's', { at: 'yesterday' }), refused)
        await assert.rejects(lifecycle.enqueue({ agent: 'a', kind: '', payload: {}, runAfter: at(0) }), refused)
        await assert.rejects(lifecycle.enqueue({ agent: 'a', kind: 'x', payload: [] as unknown as Record<string, unknown>, runAfter: at(0) }), refused)
        await assert.rejects(lifecycle.claim('a', { owner: 'p', now: at(0), leaseMs: 0 }), refused)
        assert.deepEqual(await lifecycle.jobs('a'), [])
      }))
  })
}
