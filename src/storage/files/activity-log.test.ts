import assert from 'node:assert/strict'
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { dayOf } from '../activity-records.ts'
import { createFileActivityLog } from './activity-log.ts'

function setup() {
  const temp = makeTempHome()
  const dir = join(temp.home, 'agents', 'default', 'activity')
  const errors: unknown[] = []
  const clock = new ManualClock('2026-03-04T10:00:00Z')
  const log = createFileActivityLog({ dir, clock, onError: (error) => errors.push(error) })
  return { temp, dir, errors, clock, log }
}

describe('file ActivityLog', () => {
  test('one JSON object per line, seed field names and order, one file per UTC day', async () => {
    const { temp, dir, log } = setup()
    try {
      await log.append({ ts: '2026-02-17T14:30:00', type: 'message_received', content: '...', from: 'user', channel: 'chat' })
      await log.append({ ts: '2026-02-17T15:00:00', type: 'tool_use', tool: 'web_search', summary: '検索実行' })
      // 01:00 in Tokyo is still the previous day in UTC.
      await log.append({ ts: '2026-02-18T01:00:00+09:00', type: 'human_notify', via: 'slack', content: 'done' })
      assert.equal(
        readFileSync(join(dir, '2026-02-17.jsonl'), 'utf8'),
        '{"ts":"2026-02-17T14:30:00","type":"message_received","content":"...","from":"user","channel":"chat"}\n' +
          '{"ts":"2026-02-17T15:00:00","type":"tool_use","summary":"検索実行","tool":"web_search"}\n' +
          '{"ts":"2026-02-18T01:00:00+09:00","type":"human_notify","content":"done","via":"slack"}\n',
      )
      assert.equal(dayOf('2026-02-18T01:00:00+09:00'), '2026-02-17')
      assert.equal(dayOf('2026-02-17T23:30:00'), '2026-02-17', 'times without a zone are UTC')
    } finally {
      temp.cleanup()
    }
  })

  test('an event without a usable time is logged at the clock time', async () => {
    const { temp, dir, log } = setup()
    try {
      await log.append({ ts: 'not a time', type: 'cron_executed', summary: 'daily' })
      const [record] = await log.read()
      assert.equal(record?.ts, '2026-03-04T10:00:00.000Z')
      assert.ok(readFileSync(join(dir, '2026-03-04.jsonl'), 'utf8').includes('daily'))
    } finally {
      temp.cleanup()
    }
  })

  test('a last line cut off mid-write: earlier events read, broken line reported, appends still work', async () => {
    const { temp, dir, log } = setup()
    try {
      await log.append({ ts: '2026-03-04T09:00:00Z', type: 'message_received', content: 'first' })
      await log.append({ ts: '2026-03-04T09:01:00Z', type: 'response_sent', content: 'second' })
      appendFileSync(join(dir, '2026-03-04.jsonl'), '{"ts":"2026-03-04T09:02:00Z","type":"respo')
      assert.deepEqual(
        (await log.read()).map((r) => r.content),
        ['first', 'second'],
      )
      const problems = await log.problems()
      assert.equal(problems.length, 1)
      assert.equal(problems[0]?.file, 'activity/2026-03-04.jsonl')
      assert.equal(problems[0]?.line, 3)
      assert.equal(problems[0]?.text, '{"ts":"2026-03-04T09:02:00Z","type":"respo')
      await log.append({ ts: '2026-03-04T09:03:00Z', type: 'response_sent', content: 'after the crash' })
      const records = await log.read()
      assert.deepEqual(
        records.map((r) => [r.content, r.ref]),
        [
          ['first', 'activity/2026-03-04.jsonl#L1'],
          ['second', 'activity/2026-03-04.jsonl#L2'],
          ['after the crash', 'activity/2026-03-04.jsonl#L4'],
        ],
      )
      assert.equal((await log.problems()).length, 1, 'the broken line is kept, and still reported')
      assert.ok(readFileSync(join(dir, '2026-03-04.jsonl'), 'utf8').includes('"type":"respo\n'))
    } finally {
      temp.cleanup()
    }
  })

  test('each read sees what another writer appended, a line still being written, and a rewritten file', async () => {
    const { temp, dir, log } = setup()
    const file = join(dir, '2026-03-04.jsonl')
    const line = (minute: number, content: string): string => `${JSON.stringify({ ts: `2026-03-04T09:${String(minute).padStart(2, '0')}:00Z`, type: 'message_received', content })}\n`
    const contents = async (): Promise<Array<[string | undefined, string]>> => (await log.read()).map((r) => [r.content, r.ref])
    try {
      await log.append({ ts: '2026-03-04T09:00:00Z', type: 'message_received', content: 'ours' })
      assert.deepEqual(await contents(), [['ours', 'activity/2026-03-04.jsonl#L1']])
      // Another process appends: the next read has it, numbered after what was read before.
      appendFileSync(file, line(1, 'theirs'))
      assert.deepEqual(await contents(), [
        ['ours', 'activity/2026-03-04.jsonl#L1'],
        ['theirs', 'activity/2026-03-04.jsonl#L2'],
      ])
      // Half a line: not an event yet (reported), and the whole line once it is complete.
      const half = line(2, 'in two parts')
      appendFileSync(file, half.slice(0, 20))
      assert.deepEqual((await contents()).length, 2)
      assert.deepEqual((await log.problems()).map((p) => p.line), [3])
      appendFileSync(file, half.slice(20))
      assert.deepEqual((await contents()).at(-1), ['in two parts', 'activity/2026-03-04.jsonl#L3'])
      assert.deepEqual(await log.problems(), [])
      // What a caller does with the records does not change the log's.
      const records = await log.read()
      if (records[0]) records[0].content = 'changed by a caller'
      assert.equal((await log.read())[0]?.content, 'ours')
      // Rewritten shorter (e.g. by hand): read again from the start.
      writeFileSync(file, line(5, 'rewritten'))
      assert.deepEqual(await contents(), [['rewritten', 'activity/2026-03-04.jsonl#L1']])
      // Rewritten in place at the same size: the change is still seen.
      writeFileSync(file, line(5, 'rewrittex'))
      assert.deepEqual(await contents(), [['rewrittex', 'activity/2026-03-04.jsonl#L1']])
    } finally {
      temp.cleanup()
    }
  })

  test('a day rewritten in place — same inode, equal or larger size, times set back — never returns old records', async () => {
    const { temp, dir, log } = setup()
    const file = join(dir, '2026-03-04.jsonl')
    const line = (content: string): string => `${JSON.stringify({ ts: '2026-03-04T09:00:00Z', type: 'message_received', content })}\n`
    const contents = async (): Promise<Array<string | undefined>> => (await log.read()).map((record) => record.content)
    /** Writes `text` over the file from its start without truncating or replacing it, then sets its times back (a coarse clock). */
    const overwrite = (text: string): void => {
      const before = statSync(file)
      const fd = openSync(file, 'r+')
      try {
        writeSync(fd, text, 0)
      } finally {
        closeSync(fd)
      }
      utimesSync(file, before.atimeMs / 1000, before.mtimeMs / 1000)
      assert.deepEqual([statSync(file).ino, statSync(file).mtimeMs], [before.ino, before.mtimeMs], 'the same file, its time set back')
    }
    try {
      for (const content of ['alpha', 'bravo', 'charlie']) await log.append({ ts: '2026-03-04T09:00:00Z', type: 'message_received', content })
      assert.deepEqual(await contents(), ['alpha', 'bravo', 'charlie'])
      // Larger: the first line changed and a line added — the old records must not come back.
      overwrite(`${line('ALPHA')}${line('bravo')}${line('charlie')}${line('delta')}`)
      assert.deepEqual(await contents(), ['ALPHA', 'bravo', 'charlie', 'delta'])
      // Equal size: one letter of the middle line.
      overwrite(`${line('ALPHA')}${line('brAvo')}${line('charlie')}${line('delta')}`)
      assert.deepEqual(await contents(), ['ALPHA', 'brAvo', 'charlie', 'delta'])
      // An append after all that still parses only what was appended, numbered after the rest.
      await log.append({ ts: '2026-03-04T09:00:00Z', type: 'message_received', content: 'echo' })
      assert.deepEqual((await log.read()).map((record) => [record.content, record.ref]).at(-1), ['echo', 'activity/2026-03-04.jsonl#L5'])
      // A new day file whose folder times were set back is listed all the same.
      const folder = statSync(dir)
      writeFileSync(join(dir, '2026-03-05.jsonl'), `${JSON.stringify({ ts: '2026-03-05T09:00:00Z', type: 'message_received', content: 'next day' })}\n`)
      utimesSync(dir, folder.atimeMs / 1000, folder.mtimeMs / 1000)
      assert.deepEqual(await log.days(), ['2026-03-04', '2026-03-05'])
    } finally {
      temp.cleanup()
    }
  })

  test('reading a range only opens the day files in that range', async () => {
    const { temp, dir, log } = setup()
    try {
      for (let day = 1; day <= 28; day++) {
        await log.append({ ts: `2026-02-${String(day).padStart(2, '0')}T12:00:00Z`, type: 'heartbeat_start', summary: `day ${day}` })
      }
      // A "day file" that cannot be opened as a file: only a read of its day looks at it.
      mkdirSync(join(dir, '2026-01-15.jsonl'))
      writeFileSync(join(dir, 'notes.txt'), 'ignored')
      const week = await log.read({ since: '2026-02-10T00:00:00Z', until: '2026-02-16T23:59:59Z' })
      assert.deepEqual(
        week.map((r) => r.summary),
        ['day 10', 'day 11', 'day 12', 'day 13', 'day 14', 'day 15', 'day 16'],
      )
      const latest = await log.read({ limit: 3 })
      assert.deepEqual(
        latest.map((r) => r.summary),
        ['day 28', 'day 27', 'day 26'],
      )
      // Its day is skipped and reported, never thrown (decision 0025).
      assert.deepEqual(await log.read({ until: '2026-01-31T00:00:00Z' }), [])
      assert.deepEqual(
        (await log.problems()).map((problem) => [problem.file, problem.line, problem.reason]),
        [['activity/2026-01-15.jsonl', 0, 'a folder, not a file']],
      )
    } finally {
      temp.cleanup()
    }
  })
})
