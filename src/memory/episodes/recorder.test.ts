import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { ACTIVITY_LABELS } from '../../core/activity.ts'
import { ManualClock } from '../../core/clock.ts'
import { createFileActivityLog } from '../../storage/files/activity-log.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import { createActivityRecorder } from './recorder.ts'

describe('activity recorder', () => {
  let temp: TempHome
  beforeEach(() => {
    temp = makeTempHome()
  })
  afterEach(() => temp.cleanup())

  it('writes each helper as the seed event type, in the day file of the injected clock', async () => {
    const clock = new ManualClock('2026-05-05T23:59:30Z')
    const log = createFileActivityLog({ dir: join(temp.home, 'activity'), clock })
    const seen: string[] = []
    const recorder = createActivityRecorder({ log, clock, onRecorded: (event) => {
      seen.push(event.type)
    } })
    await recorder.heartbeatStart({ session: 'hb', summary: 'patrol' })
    await recorder.record({ type: 'cron_executed', summary: 'backed up 3 GB', meta: { task_name: 'backup', exit_code: 0 } })
    await recorder.record({ type: 'memory_write', content: 'knowledge/backups.md', summary: 'backup schedule' })
    await recorder.error(Object.assign(new Error('disk full'), { code: 'ENOSPC' }), { where: 'backup', session: 'hb' })
    clock.advance(60_000)
    await recorder.record({ type: 'issue_resolved', content: 'backup fails on full disk', session: 'hb' })
    await recorder.heartbeatEnd('patrol done', { session: 'hb' })
    await recorder.record({ type: 'dm_sent', to: 'bob', content: 'backups are fine' })
    assert.deepEqual(seen, ['heartbeat_start', 'cron_executed', 'memory_write', 'error', 'issue_resolved', 'heartbeat_end', 'dm_sent'])
    assert.deepEqual(await log.days(), ['2026-05-05', '2026-05-06'])
    const records = await log.read()
    assert.deepEqual(records.map((record) => ACTIVITY_LABELS[record.type]), ['HB', 'CRON', 'MEM', 'ERR', 'RSLV', 'HB', 'DM>'])
    assert.deepEqual(records[1]?.meta, { task_name: 'backup', exit_code: 0 })
    assert.equal(records[3]?.content, 'disk full')
    assert.deepEqual(records[3]?.meta, { name: 'Error', code: 'ENOSPC', where: 'backup' })
  })

  it('never throws when the log cannot be written; the failure is reported', async () => {
    const clock = new ManualClock()
    mkdirSync(temp.home, { recursive: true })
    const blocked = join(temp.home, 'activity')
    writeFileSync(blocked, 'a file where the folder should be')
    const reported: unknown[] = []
    const log = createFileActivityLog({ dir: blocked, clock, onError: (error) => reported.push(error) })
    const recorder = createActivityRecorder({ log, clock, onError: (error) => reported.push(error) })
    await recorder.messageReceived('hello', { session: 's' })
    const circular: Record<string, unknown> = {}
    circular.self = circular
    await recorder.toolUse('t', { input: circular, result: 10n })
    assert.equal(reported.length, 2)
  })

  it('marks killed and warning tool calls, so sleep replay can tell them from clean ones', async () => {
    const clock = new ManualClock()
    const log = createFileActivityLog({ dir: join(temp.home, 'activity'), clock })
    const recorder = createActivityRecorder({ log, clock })
    await recorder.toolUse('shell', { input: 'sleep 999', result: 'timed out', ok: false, killed: true }, { session: 's' })
    await recorder.toolUse('shell', { input: 'ls', result: 'a b', ok: true, warning: 'stderr: deprecated flag' }, { session: 's' })
    const [killed, warned] = await log.read()
    assert.deepEqual(killed?.meta, { input: 'sleep 999', result: 'timed out', ok: false, killed: true })
    assert.deepEqual(warned?.meta, { input: 'ls', result: 'a b', ok: true, warning: 'stderr: deprecated flag' })
  })

  it('waits for an asynchronous listener, and a failing one is reported, not thrown', async () => {
    const clock = new ManualClock()
    const log = createFileActivityLog({ dir: join(temp.home, 'activity'), clock })
    const reported: unknown[] = []
    const seen: string[] = []
    const recorder = createActivityRecorder({
      log,
      clock,
      onError: (error) => reported.push(error),
      onRecorded: async (event) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        if (event.type === 'error') throw new Error('listener failed')
        seen.push(event.type)
      },
    })
    await recorder.messageReceived('hi', { session: 's' })
    assert.deepEqual(seen, ['message_received'], 'the listener ran before the helper resolved')
    await recorder.error(new Error('x'))
    assert.equal(reported.length, 1)
  })
})
