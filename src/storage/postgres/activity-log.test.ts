import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { createPostgresActivityLog } from './activity-log.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

onPostgres('ActivityLog rows', (url) => {
  test('refs number the events of each day from 1, in arrival order, unique under concurrent appends', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const log = createPostgresActivityLog(handle, { agent: 'a', clock })
      await log.append({ ts: '2026-02-17T12:00:00Z', type: 'heartbeat_start' })
      await log.append({ ts: '2026-02-17T08:00:00Z', type: 'heartbeat_end' })
      await log.append({ ts: '2026-02-18T08:00:00Z', type: 'heartbeat_start' })
      assert.deepEqual(
        (await log.read()).map((r) => `${r.type} ${r.ref}`),
        ['heartbeat_end activity/2026-02-17.jsonl#L2', 'heartbeat_start activity/2026-02-17.jsonl#L1', 'heartbeat_start activity/2026-02-18.jsonl#L1'],
      )
      // Two handles stand for two processes.
      const other = createPostgresActivityLog(handle, { agent: 'a', clock })
      await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? log : other).append({ ts: '2026-02-19T10:00:00Z', type: 'channel_read', content: `${i}` })))
      const lines = (await log.read({ since: '2026-02-19T00:00:00Z' })).map((r) => Number(r.ref.split('#L')[1])).sort((x, y) => x - y)
      assert.deepEqual(lines, Array.from({ length: 60 }, (_, i) => i + 1))
    } finally {
      await cleanup()
    }
  })

  test('each owner reads only its own log; shared is the same for every agent', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2026-03-04T10:00:00Z')
      const of = (agent: string, owner: 'agent' | 'shared' | `user:${string}`) => createPostgresActivityLog(handle, { agent, owner, clock })
      await of('a', 'agent').append({ ts: '2026-02-17T10:00:00Z', type: 'memory_write', content: 'agent a' })
      await of('b', 'agent').append({ ts: '2026-02-17T10:00:00Z', type: 'memory_write', content: 'agent b' })
      await of('a', 'user:ada').append({ ts: '2026-02-17T10:00:00Z', type: 'memory_write', content: 'ada with a' })
      await of('a', 'shared').append({ ts: '2026-02-17T10:00:00Z', type: 'memory_write', content: 'shared' })
      const contents = async (agent: string, owner: 'agent' | 'shared' | `user:${string}`) => (await of(agent, owner).read()).map((r) => r.content)
      assert.deepEqual(await contents('a', 'agent'), ['agent a'])
      assert.deepEqual(await contents('b', 'agent'), ['agent b'])
      assert.deepEqual(await contents('a', 'user:ada'), ['ada with a'])
      assert.deepEqual(await contents('b', 'user:ada'), [])
      assert.deepEqual(await contents('b', 'shared'), ['shared'])
      assert.throws(() => of('', 'agent'), { code: 'invalid_argument' })
      assert.throws(() => of('a', 'user:' as `user:${string}`), { code: 'invalid_argument' })
    } finally {
      await cleanup()
    }
  })

  test('a row edited into something that is not an event is skipped by reads and reported', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const log = createPostgresActivityLog(handle, { agent: 'a', clock: new ManualClock('2026-03-04T10:00:00Z') })
      await log.append({ ts: '2026-02-17T10:00:00Z', type: 'memory_write', content: 'kept' })
      await log.append({ ts: '2026-02-17T11:00:00Z', type: 'memory_write', content: 'edited' })
      await handle.pool.query(`UPDATE activity_events SET record = '{"ts":"2026-02-17T11:00:00Z","type":"bogus"}' WHERE line = 2`)
      assert.deepEqual((await log.read()).map((r) => r.content), ['kept'])
      assert.deepEqual(await log.problems(), [
        { file: 'activity/2026-02-17.jsonl', line: 2, text: '{"ts":"2026-02-17T11:00:00Z","type":"bogus"}', reason: 'unknown event type "bogus"' },
      ])
    } finally {
      await cleanup()
    }
  })
})
