import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ActivityRecord } from '../../storage/contracts.ts'
import { decideOutcome, negativeReply, type ObservedTurn, periodLog } from './outcome-tracking.ts'

const ok = (tool = 'deploy') => ({ tool, ok: true, killed: false, warning: false })
const failed = (tool = 'deploy') => ({ tool, ok: false, killed: false, warning: false })
const turnOf = (number: number, message: string, calls: ObservedTurn['calls'] = []): ObservedTurn => ({ number, message, calls })
const MEMORY_TOOLS = new Set(['search_memory', 'recall_skill', 'report_procedure_outcome'])

test('negative replies: the documented phrases, not their negations or ordinary words', () => {
  for (const [message, label] of [
    ["That didn't work.", "didn't work"],
    ['It doesn\u2019t work at all', "didn't work"],
    ['this did not fix it', "didn't work"],
    ["Hm, it's not working", 'not working'],
    ["That's wrong, the port is 8443", "that's wrong"],
    ['still failing with the same message', 'still failing'],
    ['It failed again', 'it failed'],
    ['I got an error when I opened the page', 'error'],
    ['Error: ECONNREFUSED 127.0.0.1:5432', 'error'],
  ] as const) {
    assert.equal(negativeReply(message), label, message)
  }
  for (const message of [
    'Thanks, that worked!',
    "I didn't get an error this time",
    'No errors, looks good',
    'Error handling is the next task',
    'What is wrong with the invoice export?',
    'Great, thank you',
    '',
  ]) {
    assert.equal(negativeReply(message), undefined, message)
  }
  assert.equal(negativeReply(`${'All fine here. '.repeat(60)}It failed`), undefined, 'only the beginning of a long message is read')
})

test('decideOutcome: failure, success and unknown from the turn it was shown in and the next', () => {
  // A failed call in the turn, or in the next one.
  assert.deepEqual(decideOutcome([1], [turnOf(1, 'deploy it', [failed()])]), { outcome: 'failure', reason: 'deploy failed in the turn it was shown in or the next' })
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [ok()]), turnOf(2, 'and now?', [failed()])]).outcome, 'failure')
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [{ ...ok(), killed: true }])]).reason, 'deploy was stopped in the turn it was shown in or the next')
  // Two turns later is another task.
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [ok()]), turnOf(2, 'thanks'), turnOf(3, 'next thing', [failed()])]).outcome, 'success')
  // The user's next message; their own message of the turn is the request, not a verdict.
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [ok()]), turnOf(2, 'still failing')]).outcome, 'failure')
  assert.equal(decideOutcome([2], [turnOf(1, 'x'), turnOf(2, "the deploy didn't work, how do I fix it?", [ok()])]).outcome, 'success')
  // Success needs calls that all ended cleanly.
  assert.deepEqual(decideOutcome([1], [turnOf(1, 'deploy it', [ok(), ok('check')]), turnOf(2, 'thanks')]), {
    outcome: 'success',
    reason: '2 tool calls succeeded in the turn it was shown in and the next, and the user did not say it failed',
  })
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it')]).outcome, 'unknown')
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [{ ...ok(), warning: true }])]).reason, 'deploy ended with a warning')
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [{ ...ok(), ok: undefined }])]).reason, 'deploy has no recorded outcome')
  // Memory tools are no evidence.
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [failed('recall_skill'), ok('search_memory')])], MEMORY_TOOLS).outcome, 'unknown')
  assert.equal(decideOutcome([1], [turnOf(1, 'deploy it', [failed('recall_skill'), ok()])], MEMORY_TOOLS).outcome, 'success')
  // A turn not in the log.
  assert.equal(decideOutcome([4], [turnOf(1, 'x', [ok()])]).outcome, 'unknown')
})

test('periodLog: turns by their logged number, the calls after each, and the procedures the agent reported', () => {
  let line = 0
  const record = (event: Omit<ActivityRecord, 'ts' | 'ref'>): ActivityRecord => ({ ts: '2026-03-02T09:00:00.000Z', ref: `activity/2026-03-02.jsonl#L${++line}`, ...event })
  const records = [
    record({ type: 'tool_use', tool: 'deploy', session: 's', meta: { ok: false } }),
    record({ type: 'message_received', content: 'deploy billing', session: 's', meta: { turn: 3 } }),
    record({ type: 'tool_use', tool: 'deploy', session: 's', meta: { ok: true } }),
    record({ type: 'tool_use', tool: 'deploy', session: 'other', meta: { ok: false } }),
    record({ type: 'tool_use', tool: 'report_procedure_outcome', session: 's', meta: { ok: true, input: '{"success":true,"procedure":"deploy-billing "}' } }),
    record({ type: 'tool_use', tool: 'report_procedure_outcome', session: 's', meta: { ok: false, input: '{"procedure":"deploy-bliling","success":true}' } }),
    record({ type: 'message_received', content: 'imported, without a number', session: 's' }),
    record({ type: 'tool_use', tool: 'deploy', session: 's', meta: { ok: false } }),
    record({ type: 'message_received', content: 'thanks', session: 's', meta: { turn: 4 } }),
  ]
  const log = periodLog(records, 's')
  assert.deepEqual(
    log.turns.map((turn) => [turn.number, turn.message, turn.calls.map((call) => `${call.tool}:${call.ok}`)]),
    [
      [3, 'deploy billing', ['deploy:true', 'report_procedure_outcome:true', 'report_procedure_outcome:false']],
      [4, 'thanks', []],
    ],
  )
  assert.deepEqual([...log.reported], ['deploy-billing'], 'successful reports only, by the name they gave')
  assert.equal(log.reportedUnreadable, false)
  // A report whose input was cut before the name: every procedure counts as reported.
  const cut = periodLog([record({ type: 'tool_use', tool: 'report_procedure_outcome', session: 's', meta: { ok: true, input: `{"note":"${'x'.repeat(480)}` } })], 's')
  assert.equal(cut.reportedUnreadable, true)
})
