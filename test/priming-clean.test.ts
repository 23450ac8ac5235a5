/**
 * Decision 0075, "a primed context with no boilerplate", on a real home through the real primer and
 * a session: memories are primed as what they say — no activity-log markers, no escaped or dangling
 * markup, no tool results, no line said twice, and an episode cut to the sentences that match.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

let temp: TempHome
let mind: MindInternals
let clock: ManualClock

/** One turn of a session: the message, a tool call when given, the reply. */
async function turn(sessionId: string, message: string, reply: string, tool?: { name: string; input: unknown }): Promise<void> {
  const session = mind.session(sessionId, { user: 'ada' })
  const begun = await session.begin(message)
  if (tool) await session.execute(tool.name, tool.input)
  await session.end(begun, reply)
  await mind.idle()
}

/** The related-memories section of a primed block. */
function related(text: string): string {
  return text.slice(text.indexOf('### Related memories'))
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1
}

before(async () => {
  temp = makeTempHome()
  clock = new ManualClock('2026-03-02T09:00:00Z')
  mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
  // A session that becomes an extractive episode (no LLM) at its boundary.
  await turn('mon', 'Hi! I am Ada. The invoice export to accounting failed again last night.', 'Looking into it.')
  clock.advance(120_000)
  await turn('mon', 'It returned HTTP 429 after about 50 requests.', 'The billing API rate-limits at ~50 requests/minute; I will batch the calls.', { name: 'search_memory', input: { query: 'billing api' } })
  clock.advance(120_000)
  await turn('mon', 'Great, batching fixed it.\nresolved: invoice export failing', 'Glad it works now.')
  clock.advance(15 * 60_000)
  await mind.maintain()

  // An episode written by a model: prose, one sentence of it about the question.
  await mind.backend.documents.write(
    'episode',
    '2026-03-01',
    {},
    '# 2026-03-01\n\n## 14:00 — Quarterly planning\n\nWe planned the offsite in Lisbon. The budget stays at 40k. Bob will book the hotel. The printer on floor 2 was fixed.\n',
  )
  // A knowledge file in markdown: a heading, emphasis.
  await mind.backend.documents.write('knowledge', 'billing-api', { created_at: '2026-03-02T10:00:00Z' }, '# Billing API quota\n\nThe billing API allows **50 requests** per minute per account.\n')
  // A tool's result and an assistant's markdown answer in a conversation the host keeps.
  await mind.context.append({ sessionId: 'tue', agent: mind.agent }, [
    { role: 'user', content: 'How do I export invoices in batches from the billing API?' },
    { role: 'tool', content: 'zq9 raw tool result: invoice batches 1204 rows, billing API status 200' },
    {
      role: 'assistant',
      content: 'Here is how.\n\n## Batched invoice export\n\nUse **batches of 50** invoices per billing API call.\n\n```python\ndef export(**kwargs):\n    return 2**3  # **not emphasis**\n```',
    },
  ])
  // The same heartbeat line three times, between other events.
  const log = mind.backend.activity
  for (const [hh, task] of [['10', 'sync-ledger'], ['11', 'rotate-logs'], ['12', 'sync-ledger']] as const) {
    await log.append({ ts: `2026-03-02T${hh}:00:00.000Z`, type: 'heartbeat_start' })
    await log.append({ ts: `2026-03-02T${hh}:01:00.000Z`, type: 'heartbeat_end', summary: 'nothing to do' })
    await log.append({ ts: `2026-03-02T${hh}:30:00.000Z`, type: 'cron_executed', meta: { task_name: task, exit_code: 0 } })
  }
  await mind.reindex()
  await mind.indexed()
  clock.set('2026-03-02T13:00:00Z')
})
after(async () => {
  await mind.close()
  temp.cleanup()
})

describe('a primed context with no boilerplate', () => {
  test('an extractive episode says only what nothing above says, without the log’s markers, tools or notes; no line is said twice', async () => {
    const primed = (await mind.session('wed', { user: 'ada' }).begin('Why did the invoice export fail, and what was the billing API limit?')).systemParts.primed
    const memories = related(primed)
    assert.match(memories, /- \[episode 2026-03-02\] 09:00: assistant: The billing API rate-limits at ~50 requests\/minute; I will batch the calls\. Resolved: invoice export failing\. \(-> /, primed)
    for (const marker of ['MSG<', 'MSG>', 'tools used', 'compressed:', '_Extractive', '<!--']) assert.ok(!memories.includes(marker), `${marker} in\n${primed}`)
    assert.doesNotMatch(memories, /\[\d\d:\d\d\] /, 'no per-event times of the log in a memory')
    // Each thing said in the session is in the block once: in recent activity, an excerpt or the episode.
    for (const said of ['Hi! I am Ada.', 'Looking into it.', 'It returned HTTP 429 after about 50 requests.', 'rate-limits at ~50 requests/minute', 'Great, batching fixed it.', 'Glad it works now.']) {
      assert.equal(occurrences(primed, said), 1, `"${said}" said ${occurrences(primed, said)} times:\n${primed}`)
    }
  })

  test('an episode is cut to the sentences that match the message, under its time and title', async () => {
    const result = await mind.primer.prime({ message: 'Who books the hotel for the offsite?', budget: 1500, type: 'question' })
    const line = result.text.split('\n').find((l) => l.startsWith('- [episode 2026-03-01]'))
    assert.ok(line, result.text)
    assert.match(line, /^- \[episode 2026-03-01\] 14:00 — Quarterly planning\.? We planned the offsite in Lisbon\. Bob will book the hotel\. \(-> /)
    assert.ok(!line.includes('printer') && !line.includes('40k'), line)
  })

  test('markdown is said as its words — no escaped heading, no emphasis marks — and code keeps its own', async () => {
    const result = await mind.primer.prime({ message: 'How many requests does the billing API allow, and how big are the invoice batches?', budget: 1500, type: 'question' })
    assert.match(result.text, /- \[knowledge 2026-03-02\] Billing API quota: The billing API allows 50 requests per minute per account\. \(-> /, result.text)
    assert.ok(!result.text.includes('\\#'), result.text)
    assert.ok(result.text.includes('assistant: Here is how. Batched invoice export Use batches of 50 invoices per billing API call. ```python def export(**kwargs): return 2**3 # **not emphasis** ```'), result.text)
  })

  test('a tool’s result is not primed as a memory', async () => {
    const result = await mind.primer.prime({ message: 'What was the raw tool result of the invoice batches from the billing API?', budget: 1500, type: 'question' })
    assert.ok(result.text.includes('How do I export invoices in batches'), result.text)
    assert.ok(!result.text.includes('zq9'), result.text)
  })

  test('the same activity line at several times is said once, with how often and since when', async () => {
    const result = await mind.primer.prime({ message: 'hi', budget: 1500, type: 'greeting' })
    assert.equal(occurrences(result.text, 'HB: nothing to do'), 1, result.text)
    assert.match(result.text, /\[12:00-12:01\] HB: nothing to do \(x3 since 10:00\)/)
    const heartbeat = result.injected.find((memory) => memory.channel === 'activity' && memory.why.group === 'heartbeat')
    assert.equal(heartbeat?.provenance.length, 6, 'the one line stands for all six log lines')
  })
})
