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
    const recorder = createActivityRecorder({ log, clock, onRecorded: (event) => seen.push(event.type) })
    await recorder.heartbeatStart({ session: 'hb', summary: 'patrol' })
    await recorder.cronExecuted('backup', { exitCode: 0, summary: 'backed up 3 GB' })
    await recorder.memoryWrite('knowledge/backups.md', { summary: 'backup schedule' })
    await recorder.error(Object.assign(new Error('disk full'), { code: 'ENOSPC' }), { where: 'backup', session: 'hb' })
    clock.advance(60_000)
    await recorder.issueResolved('backup fails on full disk', { session: 'hb' })
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
})
