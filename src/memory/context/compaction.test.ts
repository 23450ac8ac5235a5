import assert from 'node:assert/strict'
import { test } from 'node:test'
import { countTokens } from '../../core/tokens.ts'
import { createNoneLlm } from '../../llm/none-llm.ts'
import { chunkRun, compactConversation, type CompactionRun } from './compaction.ts'
import { checkContextConsistency } from './consistency.ts'
import { createSummarizer } from './summarizer.ts'
import { openHarness, prng, randomMessage } from './test-support/harness.ts'

const settings = { freshTail: 20, leafChunk: 10, condenseChunk: 4, maxRounds: 10 }

async function filled(h: ReturnType<typeof openHarness>, count: number, sessionId = 's'): Promise<number> {
  const conversation = await h.backend.context.conversation(sessionId, { agent: 'default' })
  const random = prng(3)
  for (let i = 0; i < count; i += 500) {
    const at = h.clock.now().toISOString()
    const rows = Array.from({ length: Math.min(500, count - i) }, (_, j) => {
      const message = randomMessage(random, i + j, 5 + Math.floor(random() * 30))
      return { ...message, at, tokenCount: countTokens(message.content) }
    })
    await h.backend.context.appendMessages(conversation.id, rows)
    h.clock.advance(60_000)
  }
  return conversation.id
}

function run(h: ReturnType<typeof openHarness>, conversationId: number, extra: Partial<CompactionRun> = {}): CompactionRun {
  return {
    store: h.backend.context,
    conversationId,
    mode: 'incremental',
    settings,
    summarizer: createSummarizer({ llm: createNoneLlm(), maxSummaryTokens: 1200 }),
    ...extra,
  }
}

test('a backlog longer than a page is folded in the groups a whole-run reading makes, every message covered once', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  // 2,537 messages: runs cross the 1,000-item pages; outside the fresh tail of 20 the run is 2,517
  // long, cut as chunkRun cuts it: 250 groups of 10 and a last one of 17.
  const conversationId = await filled(h, 2_537)
  const result = await compactConversation(run(h, conversationId))
  assert.equal(result.kind, 'compacted')
  if (result.kind !== 'compacted') return
  assert.equal(result.complete, true)
  const expected = chunkRun(2_517, 10, 10)
  assert.equal(result.leafSummaries, expected.length)
  const leaves = (await h.backend.context.summariesById(result.created)).filter((summary) => summary.kind === 'leaf')
  const sizes = await Promise.all(leaves.map(async (leaf) => (await h.backend.context.summaryChildren(leaf.id)).messageIds.length))
  assert.deepEqual(
    sizes,
    expected.map(([from, to]) => to - from),
  )
  // The condensed pass folds the leaves 4 at a time (a run of 251: 61 of 4 and a last of 7).
  assert.equal(result.condensedSummaries, chunkRun(expected.length, 4, 2).length)
  const report = await checkContextConsistency(h.backend.context, conversationId)
  assert.deepEqual(report.problems, [])
  assert.equal(result.tokensBefore, result.tokensAfter + (await foldedMinusWritten(h, result.created)))
})

/** What the summaries created folded (their sources) minus what they weigh, over the top-level ones. */
async function foldedMinusWritten(h: ReturnType<typeof openHarness>, created: string[]): Promise<number> {
  const summaries = await h.backend.context.summariesById(created)
  return summaries.reduce((sum, summary) => sum + summary.sourceTokenCount - summary.tokenCount, 0)
}

test('with maxMs a run stops after a slice with complete: false; later runs finish the work, losslessly', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const conversationId = await filled(h, 1_200)
  const first = await compactConversation(run(h, conversationId, { maxMs: 0 }))
  assert.equal(first.kind, 'compacted')
  if (first.kind !== 'compacted') return
  assert.equal(first.complete, false, 'stopped after its first summary')
  assert.equal(first.leafSummaries, 1)
  assert.deepEqual((await checkContextConsistency(h.backend.context, conversationId)).problems, [])
  let runs = 1
  for (;;) {
    const next = await compactConversation(run(h, conversationId, { maxMs: 5 }))
    if (next.kind === 'skipped' || next.complete) break
    runs++
    assert.ok(runs < 2_000, 'slices make progress')
  }
  assert.deepEqual((await checkContextConsistency(h.backend.context, conversationId)).problems, [])
  // Nothing is left for a full run's leaf pass: every message outside the fresh tail is folded.
  const items = await h.backend.context.items(conversationId)
  const outside = items.slice(0, items.length - settings.freshTail)
  assert.ok(outside.every((item) => item.kind === 'summary'))
})

test('appends that land while a compaction runs are kept and stay outside what it folds', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const conversationId = await filled(h, 600)
  let appended = 0
  const result = await compactConversation(
    run(h, conversationId, {
      sliceMs: 0,
      // Between two index batches (the event loop would run a turn here): a turn appends.
      onSummaries: async () => {
        const at = h.clock.now().toISOString()
        await h.backend.context.appendMessages(conversationId, [
          { role: 'user', content: `late question ${appended}`, at, tokenCount: 3 },
          { role: 'assistant', content: `late answer ${appended}`, at, tokenCount: 3 },
        ])
        appended++
      },
    }),
  )
  assert.equal(result.kind, 'compacted')
  assert.ok(appended > 0)
  const report = await checkContextConsistency(h.backend.context, conversationId)
  assert.deepEqual(report.problems, [])
  assert.equal(report.messages, 600 + 2 * appended)
  const tail = await h.backend.context.items(conversationId, { newest: true, limit: 2 * appended })
  assert.ok(
    tail.every((item) => item.kind === 'message'),
    'the late messages are raw items at the end of the window',
  )
})

test('a run asks between slices whether to stand back (a turn is being served) and waits as told, then goes on', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const conversationId = await filled(h, 300)
  let asked = 0
  const result = await compactConversation(
    run(h, conversationId, {
      sliceMs: 0,
      standBack: () => {
        asked++
        return asked <= 3 ? 2 : 0
      },
    }),
  )
  assert.equal(result.kind, 'compacted')
  assert.ok(asked > 3, `asked ${asked} times`)
  assert.deepEqual((await checkContextConsistency(h.backend.context, conversationId)).problems, [])
})
