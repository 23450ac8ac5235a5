import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { ManualClock, systemClock } from '../src/core/clock.ts'
import { EngramError } from '../src/core/errors.ts'
import { recallCommand } from '../src/interfaces/cli/commands/recall/index.ts'
import { createNoneLlm } from '../src/llm/none-llm.ts'
import { createImmediateEncoder } from '../src/memory/episodes/immediate-encoding.ts'
import { createEpisodicRecall, type Recall } from '../src/memory/episodes/recall.ts'
import { createActivityRecorder } from '../src/memory/episodes/recorder.ts'
import type { Backend } from '../src/storage/contracts.ts'
import { openEmbeddedBackend } from '../src/storage/embedded.ts'
import { homeLayout } from '../src/storage/home-layout.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { buildRecallTool } from '../src/tools/recall-tool.ts'

const run = promisify(execFile)
const APPEND_CHILD = fileURLToPath(new URL('../src/memory/episodes/test-support/append-child.ts', import.meta.url))

/** Ten days of an agent's life: a session per day, encoded at its end. */
async function liveTenDays(backend: Backend, clock: ManualClock, home: string): Promise<void> {
  const recorder = createActivityRecorder({ log: backend.activity, clock })
  const encoder = createImmediateEncoder({
    agent: 'default',
    activity: backend.activity,
    documents: backend.documents,
    jobs: backend.jobs,
    locks: backend.locks,
    llm: createNoneLlm(),
    clock,
    resolutionsFile: homeLayout(home, 'default').resolutionsFile,
  })
  const days: Array<[string, string]> = [
    ['Set up the Postgres backup cron job', 'The nightly backup now runs at 02:00.'],
    ['The invoice PDF renders blank pages', 'Fixed the font embedding; invoices render again.'],
    ['Plan the team offsite in Lisbon', 'Drafted an agenda for the offsite.'],
    ['Why is the Postgres replica lagging?', 'The replica lag came from a long vacuum; tuned autovacuum.'],
    ['Translate the onboarding guide to German', 'Translated the onboarding guide.'],
    ['Review the pull request for the billing service', 'Left three comments on the billing PR.'],
    ['The staging deploy fails with an expired token', 'Renewed the deploy token.'],
    ['Summarise the customer interviews', 'Summarised eight interviews; pricing came up often.'],
    ['Check the Postgres backup from last night', 'The Postgres backup restored cleanly in a test.'],
    ['Write release notes for version 2.4', 'Release notes for 2.4 are drafted.'],
  ]
  for (const [index, [ask, answer]] of days.entries()) {
    const session = `day-${index + 1}`
    await recorder.messageReceived(ask, { session, from: 'ada' })
    clock.advance(60_000)
    if (ask.includes('Postgres')) await recorder.toolUse('psql', { input: 'select now()', result: 'ok', ok: true }, { session })
    await recorder.responseSent(answer, { session, to: 'ada' })
    clock.advance(60_000)
    await encoder.finalizeSession(session)
    clock.advanceDays(1)
  }
}

describe('episodic recall', () => {
  let temp: TempHome
  let clock: ManualClock
  let backend: Backend
  let recall: Recall
  beforeEach(async () => {
    temp = makeTempHome()
    clock = new ManualClock('2026-04-01T10:00:00Z')
    backend = openEmbeddedBackend({ home: temp.home, agent: 'default', clock })
    recall = createEpisodicRecall({ activity: backend.activity, documents: backend.documents, clock })
    await liveTenDays(backend, clock, temp.home)
  })
  afterEach(async () => {
    await backend.close()
    temp.cleanup()
  })

  it('ranks by term relevance across episodes and the activity log, with sources', async () => {
    const results = await recall('postgres replica lag')
    assert.ok(results.length > 0)
    const top = results[0]
    assert.match(top?.text ?? '', /replica/i, 'the record about the replica outranks the other Postgres records')
    for (const result of results) {
      assert.match(result.ref, /^(episodes\/\d{4}-\d{2}-\d{2}\.md#\d{2}:\d{2} — .+|activity\/\d{4}-\d{2}-\d{2}\.jsonl#L\d+)$/)
    }
    assert.ok(results.some((result) => result.source === 'episode'))
    assert.ok(results.some((result) => result.source === 'activity'))
    const scores = results.map((result) => result.score)
    assert.deepEqual(scores, [...scores].sort((a, b) => b - a))
  })

  it('prefers the newer of two equally matching memories, filters by daysBack and honours the limit', async () => {
    const backups = await recall('backup', { limit: 50 })
    const messages = backups.filter((result) => result.type === 'message_received')
    assert.equal(messages.length, 2)
    assert.match(messages[0]?.text ?? '', /last night/, 'day 9 ranks before day 1')

    // Today is 2026-04-11; the last three days hold days 8-10.
    const recent = await recall('postgres', { daysBack: 3, limit: 50 })
    assert.ok(recent.length > 0)
    assert.ok(recent.every((result) => result.ts >= '2026-04-08'), JSON.stringify(recent.map((result) => result.ts)))
    assert.equal((await recall('postgres', { limit: 2 })).length, 2)
    assert.deepEqual(await recall('kubernetes'), [])
  })

  it('finds plural and singular forms, and a stopword-only query still works', async () => {
    assert.ok((await recall('invoices')).some((result) => /invoice/i.test(result.text)))
    const stopwordsOnly = await recall('why is')
    assert.match(stopwordsOnly[0]?.text ?? '', /Why is the Postgres replica lagging/)
  })

  it('rejects bad arguments with the fix', async () => {
    for (const [query, options] of [
      ['', {}],
      ['x', { daysBack: 0 }],
      ['x', { limit: 0 }],
      ['x', { limit: 2.5 }],
    ] as const) {
      await assert.rejects(recall(query, options), (error: unknown) => EngramError.is(error) && error.code === 'invalid_argument' && Boolean(error.fix))
    }
  })

  it('the recall tool returns ranked text with sources, and bad arguments as an isError result', async () => {
    const tool = buildRecallTool(recall)
    assert.equal(tool.name, 'recall')
    assert.deepEqual(Object.keys((tool.jsonSchema as { properties: object }).properties).sort(), ['days_back', 'max_results', 'query'])
    const good = await tool.execute({ query: 'deploy token', max_results: 3, days_back: 30 })
    assert.equal(good.isError, undefined)
    assert.match(good.text, /memories for "deploy token"/)
    assert.match(good.text, /source: (episodes|activity)\//)
    const bad = await tool.execute({ query: '', max_results: 0 })
    assert.equal(bad.isError, true)
    assert.match(bad.text, /Fix: pass \{"query"/)
    const none = await tool.execute({ query: 'kubernetes' })
    assert.match(none.text, /No memories match/)
  })
})

describe('activity log from several processes', () => {
  it('keeps every event of 4 concurrent writers, each line whole', async () => {
    const temp = makeTempHome()
    try {
      const dir = join(temp.home, 'agents', 'default', 'activity')
      const outputs = await Promise.all(['a', 'b', 'c', 'd'].map((writer) => run(process.execPath, [APPEND_CHILD, dir, writer, '150'])))
      for (const output of outputs) assert.equal((JSON.parse(output.stdout) as { failures: number }).failures, 0)
      const backend = openEmbeddedBackend({ home: temp.home, agent: 'default', clock: systemClock })
      try {
        const records = await backend.activity.read()
        assert.deepEqual(await backend.activity.problems(), [])
        assert.equal(records.length, 600)
        const seen = new Set(records.map((record) => `${record.meta?.writer}:${record.meta?.i}`))
        assert.equal(seen.size, 600)
        for (const record of records) {
          assert.equal(String(record.meta?.input).length, 500)
          assert.equal(String(record.meta?.result).length, 2000)
        }
      } finally {
        await backend.close()
      }
    } finally {
      temp.cleanup()
    }
  })
})

describe('engram recall (CLI command)', () => {
  it('prints ranked results as JSON and rejects a bad --days', async () => {
    const temp = makeTempHome()
    try {
      const backend = openEmbeddedBackend({ home: temp.home, agent: 'default', clock: systemClock })
      const recorder = createActivityRecorder({ log: backend.activity, clock: systemClock })
      await recorder.messageReceived('Please rotate the deploy token', { session: 's1', from: 'ada' })
      await recorder.responseSent('Rotated the deploy token.', { session: 's1' })
      await backend.close()
      let stdout = ''
      const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true }, env: temp.env, cwd: temp.home, isTTY: false }
      const context = { io, args: ['deploy', 'token'], options: { days: '7', limit: '5' }, json: true, settings: { home: temp.home } }
      const result = await recallCommand.run(context)
      const data = result.data as { query: string; results: Array<{ ref: string; source: string }> }
      assert.equal(data.query, 'deploy token')
      assert.equal(data.results.length, 2)
      assert.ok(data.results.every((item) => item.ref.startsWith('activity/')))
      assert.match(result.human, /source: activity\//)
      await assert.rejects(recallCommand.run({ ...context, options: { days: 'soon' } }), (error: unknown) => EngramError.is(error) && /--days 7/.test(error.fix ?? ''))
      await assert.rejects(recallCommand.run({ ...context, args: [] }), (error: unknown) => EngramError.is(error) && error.code === 'invalid_argument')
      assert.equal(stdout, '')
    } finally {
      temp.cleanup()
    }
  })
})
