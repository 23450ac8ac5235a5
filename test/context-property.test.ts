// @slow: property runs over random conversations of up to 5,000 messages
/**
 * Property tests of lossless context over random conversations (1 to 5,000 messages of random
 * sizes, seeded) and random budgets: the assembled context never exceeds the budget unless the
 * fresh tail alone does (then it is exactly the tail); the tail is present and in order; every
 * message is reachable from the current items through `expand`; full compaction terminates.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StoredMessage } from '../src/core/message.ts'
import { checkContextConsistency } from '../src/memory/context/consistency.ts'
import type { LcmContextProvider } from '../src/memory/context/lcm-provider.ts'
import { openHarness, prng, randomMessage } from '../src/memory/context/test-support/harness.ts'

const SEED = Number(process.env.ENGRAM_PROPERTY_SEED ?? 20260301)

function randomSize(random: () => number): number {
  const r = random()
  if (r < 0.7) return 1 + Math.floor(random() * 30)
  if (r < 0.95) return 30 + Math.floor(random() * 170)
  return 200 + Math.floor(random() * 1300)
}

async function checkAssembly(lcm: LcmContextProvider, sessionId: string, stored: StoredMessage[], budget: number, freshTail: number, autoCompact: boolean): Promise<void> {
  const session = { sessionId, agent: 'default' }
  const context = await lcm.assemble(session, budget, freshTail, { autoCompact })
  const label = `n=${stored.length} budget=${budget} freshTail=${freshTail} auto=${autoCompact}`
  const tailSize = Math.min(freshTail, stored.length)
  const expectedTail = stored.slice(stored.length - tailSize)
  const tailItems = context.items.slice(context.items.length - tailSize)
  // The tail: the newest messages, raw, in order (compaction never touches it).
  assert.deepEqual(
    tailItems.map((item) => item.messageId),
    expectedTail.map((message) => message.id),
    `tail present and in order (${label})`,
  )
  assert.ok(tailItems.every((item) => item.kind === 'message'), label)
  const tailTokens = expectedTail.reduce((sum, message) => sum + message.tokenCount, 0)
  const sum = context.items.reduce((total, item) => total + item.tokens, 0)
  assert.equal(sum, context.tokens, label)
  if (tailTokens > budget) {
    assert.equal(context.overBudget, true, label)
    assert.equal(context.items.length, tailSize, `exactly the tail when it alone is over budget (${label})`)
  } else {
    assert.equal(context.overBudget, false, label)
    assert.ok(context.tokens <= budget, `${context.tokens} ≤ ${budget} (${label})`)
  }
  // Chronological: the messages the items stand for only move forward.
  const covered = context.items.flatMap((item) => item.messageIds)
  for (let i = 1; i < covered.length; i++) assert.ok(covered[i]! > covered[i - 1]!, `chronological (${label})`)
}

async function checkLossless(h: ReturnType<typeof openHarness>, lcm: LcmContextProvider, sessionId: string, stored: StoredMessage[]): Promise<void> {
  const conv = (await h.backend.context.findConversation(sessionId, 'default'))!
  const report = await checkContextConsistency(h.backend.context, conv.id)
  assert.deepEqual(report.problems, [], `consistent (n=${stored.length})`)
  const reached: number[] = []
  for (const item of await h.backend.context.items(conv.id)) {
    if (item.kind === 'message') reached.push(item.messageId)
    else {
      const expansion = await lcm.expand('default', item.summaryId, { toMessages: true })
      for (const node of expansion.nodes) if (node.kind === 'message') reached.push(node.id)
    }
  }
  assert.deepEqual(
    reached,
    stored.map((message) => message.id),
    `every message reachable through expand, once, in order (n=${stored.length})`,
  )
}

test('random conversations and budgets: within budget, tail intact, nothing lost, full compaction terminates', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const random = prng(SEED)
  const sizes = [1, 2, 19, 20, 21, 64, 137, 480, 1200, 5000]
  for (let extra = 0; extra < 6; extra++) sizes.push(1 + Math.floor(random() * 900))
  for (const [caseIndex, n] of sizes.entries()) {
    const sessionId = `prop-${caseIndex}`
    const freshTail = Math.floor(random() * 41)
    const leafChunk = 2 + Math.floor(random() * 14)
    const lcm = h.provider('lcm', { freshTail, leafChunk, condenseChunk: 2 + Math.floor(random() * 6), maxSummaryTokens: 64 + Math.floor(random() * 600) })
    const stored: StoredMessage[] = []
    let checks = 0
    while (stored.length < n) {
      const batch = Array.from({ length: Math.min(n - stored.length, 1 + Math.floor(random() * 40)) }, (_, i) => randomMessage(random, stored.length + i, randomSize(random)))
      h.clock.advance(30_000)
      stored.push(...(await lcm.append({ sessionId, agent: 'default' }, batch)))
      // Assemble at a few points along the way, some with automatic compaction.
      if (random() < Math.min(1, 6 / Math.max(1, n / 40)) && checks < 8) {
        checks++
        const total = stored.reduce((sum, message) => sum + message.tokenCount, 0)
        const budget = [0, 50, 500, 2_000, 16_000, Math.floor(random() * total * 1.2)][Math.floor(random() * 6)]!
        await checkAssembly(lcm, sessionId, stored, budget, freshTail, random() < 0.7)
      }
    }
    await checkAssembly(lcm, sessionId, stored, Math.floor(random() * 20_000), freshTail, true)
    const full = await lcm.compact({ sessionId, agent: 'default' }, { mode: 'full', freshTail })
    if (full.kind === 'compacted') {
      assert.ok(full.rounds <= 10)
      // A full run stops early only at a fixed point; after 10 busy rounds another run continues.
      let again = await lcm.compact({ sessionId, agent: 'default' }, { mode: 'full', freshTail })
      if (full.rounds < 10) assert.equal(again.kind, 'skipped', `full compaction reached a fixed point (n=${n})`)
      for (let runs = 0; again.kind === 'compacted' && runs < 5; runs++) again = await lcm.compact({ sessionId, agent: 'default' }, { mode: 'full', freshTail })
      assert.equal(again.kind, 'skipped', `repeated full compaction terminates (n=${n})`)
    }
    for (const budget of [0, 300, 4_000, 16_000]) await checkAssembly(lcm, sessionId, stored, budget, freshTail, false)
    await checkLossless(h, lcm, sessionId, stored)
  }
})
