/**
 * Contract suite for ActivityLog: the JSONL files and any database table must pass it.
 * The factory returns a fresh, empty log plus the errors its `onError` received.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type ActivityEvent, TOOL_INPUT_LIMIT, TOOL_RESULT_LIMIT } from '../../core/activity.ts'
import type { ActivityLog } from '../contracts.ts'

export interface ActivityLogFixture {
  log: ActivityLog
  /** Everything the log passed to its `onError`, in order. */
  errors: unknown[]
  cleanup(): Promise<void>
}

const EVENTS: ActivityEvent[] = [
  { ts: '2026-02-17T14:30:00Z', type: 'message_received', content: 'hello', from: 'user', channel: 'chat' },
  { ts: '2026-02-17T14:30:05Z', type: 'response_sent', content: 'hi!', to: 'user', channel: 'chat' },
  { ts: '2026-02-17T15:00:00Z', type: 'tool_use', tool: 'web_search', summary: 'searched' },
  { ts: '2026-02-18T09:00:00Z', type: 'heartbeat_start' },
  { ts: '2026-02-18T09:00:30Z', type: 'heartbeat_end', summary: 'nothing to do' },
  { ts: '2026-02-20T08:00:00Z', type: 'error', content: 'disk full', session: 's1', meta: { code: 'ENOSPC' } },
]

/** Registers the ActivityLog contract tests under `describe(name)`. */
export function runActivityLogContract(name: string, make: () => Promise<ActivityLogFixture>): void {
  async function withLog(fn: (fixture: ActivityLogFixture) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture)
    } finally {
      await fixture.cleanup()
    }
  }

  async function appendAll(log: ActivityLog, events: ActivityEvent[]): Promise<void> {
    for (const event of events) await log.append(event)
  }

  const strip = ({ ref: _ref, ...event }: ActivityEvent & { ref: string }): ActivityEvent => event

  describe(`ActivityLog contract: ${name}`, () => {
    test('an empty log reads nothing', () =>
      withLog(async ({ log }) => {
        assert.deepEqual(await log.read(), [])
        assert.deepEqual(await log.days(), [])
        assert.deepEqual(await log.problems(), [])
      }))

    test('events come back in order with a ref, fields as written', () =>
      withLog(async ({ log, errors }) => {
        await appendAll(log, [...EVENTS].reverse())
        const records = await log.read()
        assert.deepEqual(records.map(strip), EVENTS)
        for (const record of records) assert.match(record.ref, /^activity\/\d{4}-\d{2}-\d{2}\.jsonl#L\d+$/)
        assert.ok(records[0]?.ref.startsWith('activity/2026-02-17.jsonl#L'))
        assert.deepEqual(await log.days(), ['2026-02-17', '2026-02-18', '2026-02-20'])
        assert.deepEqual(errors, [])
      }))

    test('empty fields are omitted', () =>
      withLog(async ({ log }) => {
        await log.append({ ts: '2026-02-17T10:00:00Z', type: 'channel_post', content: '', channel: 'general', from: undefined, meta: {} })
        const [record] = await log.read()
        assert.ok(record)
        assert.deepEqual(Object.keys(strip(record)).sort(), ['channel', 'ts', 'type'])
      }))

    test('filters by time range and type; limit gives the newest first', () =>
      withLog(async ({ log }) => {
        await appendAll(log, EVENTS)
        const day = await log.read({ since: '2026-02-18T00:00:00Z', until: '2026-02-18T23:59:59Z' })
        assert.deepEqual(
          day.map((r) => r.type),
          ['heartbeat_start', 'heartbeat_end'],
        )
        const inclusive = await log.read({ since: '2026-02-17T14:30:05Z', until: '2026-02-17T15:00:00Z' })
        assert.deepEqual(
          inclusive.map((r) => r.type),
          ['response_sent', 'tool_use'],
        )
        const chat = await log.read({ types: ['message_received', 'response_sent'] })
        assert.deepEqual(
          chat.map((r) => r.content),
          ['hello', 'hi!'],
        )
        const newest = await log.read({ limit: 2 })
        assert.deepEqual(
          newest.map((r) => r.type),
          ['error', 'heartbeat_end'],
        )
        const newestTools = await log.read({ limit: 5, types: ['tool_use'] })
        assert.deepEqual(
          newestTools.map((r) => r.tool),
          ['web_search'],
        )
        assert.deepEqual(await log.read({ limit: 0 }), [])
        await assert.rejects(log.read({ since: 'yesterday' }), { code: 'invalid_argument' })
      }))

    test('tool inputs and results are cut to their limits, and marked', () =>
      withLog(async ({ log }) => {
        await log.append({
          ts: '2026-02-17T10:00:00Z',
          type: 'tool_use',
          tool: 'scratchpad',
          content: 'r'.repeat(TOOL_RESULT_LIMIT + 10),
          meta: { input: 'i'.repeat(TOOL_INPUT_LIMIT + 100), result: 'o'.repeat(TOOL_RESULT_LIMIT + 1) },
        })
        await log.append({ ts: '2026-02-17T10:00:01Z', type: 'tool_use', tool: 'calc', meta: { input: { expression: '1+1' }, result: '2' } })
        const [big, small] = await log.read()
        assert.equal(String(big?.meta?.input).length, TOOL_INPUT_LIMIT)
        assert.equal(String(big?.meta?.result).length, TOOL_RESULT_LIMIT)
        assert.equal(big?.content?.length, TOOL_RESULT_LIMIT)
        assert.deepEqual(big?.meta?.truncated, { input: TOOL_INPUT_LIMIT + 100, result: TOOL_RESULT_LIMIT + 1, content: TOOL_RESULT_LIMIT + 10 })
        assert.deepEqual(small?.meta, { input: '{"expression":"1+1"}', result: '2' })
      }))

    test('append never throws; failures go to onError', () =>
      withLog(async ({ log, errors }) => {
        const circular: Record<string, unknown> = {}
        circular.self = circular
        await log.append({ ts: '2026-02-17T10:00:00Z', type: 'memory_write', meta: circular })
        await log.append({ ts: '2026-02-17T10:00:00Z', type: 'not_a_type' as ActivityEvent['type'] })
        assert.equal(errors.length, 2)
        assert.deepEqual(await log.read(), [])
        await log.append({ ts: '2026-02-17T10:00:01Z', type: 'memory_write', content: 'still works' })
        assert.equal((await log.read())[0]?.content, 'still works')
      }))

    test('concurrent appends in one process all land', () =>
      withLog(async ({ log }) => {
        await Promise.all(Array.from({ length: 100 }, (_, i) => log.append({ ts: `2026-02-17T10:00:${String(i % 60).padStart(2, '0')}Z`, type: 'channel_read', content: `event ${i}` })))
        const records = await log.read()
        assert.equal(records.length, 100)
        assert.equal(new Set(records.map((r) => r.content)).size, 100)
      }))
  })
}
