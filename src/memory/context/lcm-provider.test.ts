import assert from 'node:assert/strict'
import { test } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import { countTokens } from '../../core/tokens.ts'
import { homeLayout } from '../../storage/home-layout.ts'
import { openSqlite } from '../../storage/sqlite/database.ts'
import { checkContextConsistency } from './consistency.ts'
import { hasCompactor, hasExplorer, hasSearcher, providerCapabilities } from './provider.ts'
import { lockName } from './session-support.ts'
import { openHarness } from './test-support/harness.ts'

const session = { sessionId: 'chat-1', agent: 'default', user: 'ada' }

function turns(n: number, start = 0) {
  return Array.from({ length: n }, (_, i) => ({
    role: (i % 2 === 0 ? 'user' : 'assistant') as 'user' | 'assistant',
    content: `Turn ${start + i}: we discussed item ${start + i} of the Atlas rollout. The decision was to ship version ${start + i}.0 on Friday because QA signed off.`,
  }))
}

test('the LCM provider has every capability; the simple one has the core only', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm')
  const simple = h.provider('simple')
  assert.deepEqual(providerCapabilities(lcm), ['compactor', 'searcher', 'explorer'])
  assert.deepEqual(providerCapabilities(simple), [])
  assert.equal(hasCompactor(simple), false)
  assert.equal(hasSearcher(simple) || hasExplorer(simple), false)
})

test('append keeps order and seq; assemble returns the fresh tail in order and respects the budget', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { autoCompact: false })
  const stored = await lcm.append(session, turns(30))
  assert.deepEqual(
    stored.map((m) => m.seq),
    Array.from({ length: 30 }, (_, i) => i + 1),
  )
  assert.equal(stored[0]!.tokenCount, countTokens(stored[0]!.content))

  const all = await lcm.assemble(session, 100_000, 5)
  assert.equal(all.items.length, 30)
  assert.equal(all.freshTailCount, 5)
  assert.deepEqual(
    all.items.map((i) => i.seq),
    stored.map((m) => m.seq),
  )

  const tailTokens = stored.slice(-5).reduce((s, m) => s + m.tokenCount, 0)
  const tight = await lcm.assemble(session, tailTokens + stored[24]!.tokenCount, 5)
  assert.deepEqual(
    tight.items.map((i) => i.seq),
    [25, 26, 27, 28, 29, 30],
  )
  assert.ok(tight.tokens <= tight.budget)
  assert.equal(tight.omittedItems, 24)

  const over = await lcm.assemble(session, 10, 5)
  assert.equal(over.overBudget, true)
  assert.deepEqual(
    over.items.map((i) => i.seq),
    [26, 27, 28, 29, 30],
    'only the tail when the tail alone is over budget',
  )

  await assert.rejects(lcm.assemble(session, -1, 5), (e) => EngramError.is(e) && e.code === 'invalid_argument')
  await assert.rejects(lcm.append(session, [{ role: 'robot' as 'user', content: 'x' }]), (e) => EngramError.is(e) && e.code === 'invalid_argument')
  assert.equal((await lcm.stats(session)).messages, 30, 'a refused batch writes nothing')
})

test('compaction folds older runs, leaves the tail raw, keeps every message reachable, and says when it skipped', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { autoCompact: false })
  await lcm.append(session, turns(15))
  const skipped = await lcm.compact(session, { freshTail: 10 })
  assert.equal(skipped.kind, 'skipped', 'only 5 messages outside the tail: fewer than leafChunk')

  await lcm.append(session, turns(45, 15))
  const result = await lcm.compact(session, { freshTail: 10 })
  assert.equal(result.kind, 'compacted')
  if (result.kind !== 'compacted') return
  assert.equal(result.leafSummaries, 5)
  assert.equal(result.condensedSummaries, 1, 'the 5 leaves fold into one (a remainder of 1 joins the last group of 4)')
  assert.deepEqual(result.methods, { extractive: 6 })
  assert.equal(result.degraded, true)
  assert.ok(result.tokensAfter < result.tokensBefore)

  const conv = (await h.backend.context.findConversation('chat-1', 'default'))!
  const report = await checkContextConsistency(h.backend.context, conv.id)
  assert.deepEqual(report.problems, [])
  const items = await h.backend.context.items(conv.id)
  assert.deepEqual(
    items.slice(-10).map((i) => i.kind),
    Array(10).fill('message'),
  )

  const assembled = await lcm.assemble(session, 100_000, 10)
  const covered = assembled.items.flatMap((i) => i.messageIds)
  assert.equal(new Set(covered).size, 60, 'every message is stood for by exactly one item')
  const summary = assembled.items.find((i) => i.kind === 'summary')!
  assert.match(summary.content, /^\[summary sum_[0-9a-f]+, extractive — not LLM-written; depth 1; \d+ messages/)
  assert.equal(summary.degraded, true)
  assert.equal(summary.tokens, countTokens(summary.content))

  assert.equal((await lcm.compact(session, { mode: 'full', freshTail: 10 })).kind, 'skipped', 'nothing left to fold')
  await lcm.append(session, turns(100, 60))
  const full = await lcm.compact(session, { mode: 'full', freshTail: 10 })
  assert.equal(full.kind, 'compacted')
  if (full.kind === 'compacted') assert.ok(full.rounds >= 2, 'full mode repeats passes')
  const again = await lcm.compact(session, { mode: 'full', freshTail: 10 })
  assert.equal(again.kind, 'skipped', 'full compaction reached a fixed point')
  assert.deepEqual((await checkContextConsistency(h.backend.context, conv.id)).problems, [])
})

test('assemble compacts first when the window passes threshold × budget', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { freshTail: 6 })
  const stored = await lcm.append(session, turns(40))
  const total = stored.reduce((s, m) => s + m.tokenCount, 0)
  assert.equal(await lcm.needsCompaction(session, total * 2), false)
  assert.equal(await lcm.needsCompaction(session, total), true)
  const quiet = await lcm.assemble(session, total * 2)
  assert.equal(quiet.compaction, undefined)
  const assembled = await lcm.assemble(session, total)
  assert.equal(assembled.compaction?.kind, 'compacted')
  assert.ok(assembled.items.some((i) => i.kind === 'summary'))
  assert.ok(assembled.tokens <= total)
})

test('search, describe and expand walk the DAG back to raw messages', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { autoCompact: false, freshTail: 4 })
  await lcm.append(session, turns(20))
  await lcm.append(session, [{ role: 'user', name: 'ada', content: 'The staging database lives on host zephyr-7, remember that.' }])
  await lcm.append(session, turns(30, 20))
  await lcm.append({ sessionId: 'other', agent: 'someone-else' }, [{ role: 'user', content: 'zephyr-7 belongs to another agent' }])
  const result = await lcm.compact(session, { mode: 'full', freshTail: 4 })
  assert.equal(result.kind, 'compacted')

  const found = await lcm.search('default', 'zephyr')
  assert.equal(found.via, 'index')
  const messageHit = found.hits.find((hit) => hit.kind === 'message')
  assert.ok(messageHit, 'the raw message is found')
  assert.equal(messageHit.sessionId, 'chat-1')
  assert.ok(found.hits.every((hit) => hit.sessionId === 'chat-1'), "another agent's conversation is not searched")

  const top = (await lcm.assemble(session, 100_000, 4)).items.find((i) => i.kind === 'summary')!
  const description = await lcm.describe('default', top.summaryId!)
  assert.equal(description.kind, 'summary')
  if (description.kind !== 'summary') return
  assert.equal(description.inContext, true)
  assert.deepEqual(description.foldedBy, [])
  assert.equal(description.messageCount, top.messageIds.length)
  assert.equal(description.seqRange?.from, 1)
  assert.equal(description.method, 'extractive')

  const children = await lcm.expand('default', top.summaryId!)
  assert.ok(children.nodes.length >= 2)
  const raw = await lcm.expand('default', top.summaryId!, { toMessages: true })
  assert.equal(raw.nodes.length, top.messageIds.length)
  assert.ok(raw.nodes.some((n) => n.kind === 'message' && n.content.includes('zephyr-7')))

  const msg = await lcm.describe('default', messageHit.id)
  assert.equal(msg.kind, 'message')
  if (msg.kind === 'message') assert.equal(msg.foldedBy.length, 1)
  await assert.rejects(lcm.describe('someone-else', top.summaryId!), (e) => EngramError.is(e) && e.code === 'not_found')
  await assert.rejects(lcm.expand('default', 'sum_ffff'), (e) => EngramError.is(e) && e.code === 'not_found')
})

test('search catches up messages a crashed process stored but never indexed', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const conv = await h.backend.context.conversation('chat-1', { agent: 'default' })
  // Written straight to the store: as if the process died before indexing.
  await h.backend.context.appendMessages(conv.id, [{ role: 'user', content: 'the kraken password rotates monthly', at: h.clock.now().toISOString(), tokenCount: 7 }])
  const lcm = h.provider('lcm')
  const found = await lcm.search('default', 'kraken')
  assert.equal(found.hits.length, 1)
  assert.equal(found.hits[0]!.messageIds.length, 1)
})

test('an append is stored and indexed together: when its index write fails, nothing of it is stored', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm')
  await lcm.append(session, turns(2))
  // A real refusal by the database, from another connection to the same file: no unit row holding "poison" may be written.
  const other = openSqlite(homeLayout(h.tmp.home, 'default').database)
  other.db.exec("CREATE TRIGGER refuse_poison BEFORE INSERT ON index_units WHEN NEW.text LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'refused'); END")
  other.close()
  await assert.rejects(lcm.append(session, [{ role: 'user', content: 'a poison message' }]))
  const conv = (await h.backend.context.findConversation(session.sessionId, session.agent))!
  assert.deepEqual(
    (await h.backend.context.messages(conv.id)).map((m) => m.seq),
    [1, 2],
    'the refused append left no message behind',
  )
  // The next append goes on from there, stored and findable at once.
  const [next] = await lcm.append(session, [{ role: 'user', content: 'the zeppelin hangar opens at nine' }])
  assert.equal(next?.seq, 3)
  assert.deepEqual(
    (await h.backend.index!.get([`msg:${next!.id}`])).map((unit) => unit.text),
    ['the zeppelin hangar opens at nine'],
  )
})

test('switching providers keeps every message: simple reads raw messages, LCM sees what simple appended', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { autoCompact: false })
  await lcm.append(session, turns(40))
  await lcm.compact(session, { mode: 'full', freshTail: 5 })
  const simple = h.provider('simple')
  await simple.append(session, turns(3, 40))
  const window = await simple.assemble(session, 1_000_000, 5)
  assert.equal(window.items.length, 43, 'the sliding window reads raw messages even where LCM summarized')
  assert.ok(window.items.every((i) => i.kind === 'message'))
  const tight = await simple.assemble(session, 200, 5)
  assert.ok(tight.tokens <= 200 || tight.overBudget)
  assert.deepEqual(
    tight.items.slice(-5).map((i) => i.seq),
    [39, 40, 41, 42, 43],
  )

  const back = await lcm.assemble(session, 1_000_000, 5)
  assert.equal(new Set(back.items.flatMap((i) => i.messageIds)).size, 43)
  const conv = (await h.backend.context.findConversation('chat-1', 'default'))!
  assert.deepEqual((await checkContextConsistency(h.backend.context, conv.id)).problems, [])
})

test('an assemble past the threshold compacts one bounded slice, not the backlog; the window is valid meanwhile', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { freshTail: 10, assembleCompactMs: 0 })
  for (let i = 0; i < 10; i++) await lcm.append(session, turns(100, i * 100))
  const budget = 2_000
  const assembled = await lcm.assemble(session, budget)
  assert.equal(assembled.compaction?.kind, 'compacted')
  if (assembled.compaction?.kind !== 'compacted') return
  assert.equal(assembled.compaction.complete, false, 'the rest is left for later')
  assert.equal(assembled.compaction.leafSummaries, 1)
  assert.ok(assembled.tokens <= budget)
  // What does not fit is cut from the oldest items, and counted.
  const items = await h.backend.context.items((await h.backend.context.findConversation(session.sessionId, session.agent))!.id)
  assert.equal(assembled.omittedItems, items.length - assembled.items.length)
  assert.deepEqual(
    assembled.items.map((item) => item.position),
    items.slice(-assembled.items.length).map((item) => item.position),
  )
  // Another compaction holds the session: an assemble does not wait for it, it assembles.
  let release!: () => void
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  const holder = h.backend.locks.withLock(lockName(session), () => held)
  const during = await lcm.assemble(session, budget)
  assert.equal(during.compaction, undefined)
  assert.ok(during.tokens <= budget)
  release()
  await holder
  const conversation = (await h.backend.context.findConversation(session.sessionId, session.agent))!
  assert.deepEqual((await checkContextConsistency(h.backend.context, conversation.id)).problems, [])
})

test('appends take no lock: they go on while a compaction holds the session', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { lockTimeoutMs: 0 })
  await lcm.append(session, turns(4))
  let release!: () => void
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  const holder = h.backend.locks.withLock(lockName(session), () => held)
  const stored = await lcm.append(session, turns(2, 4))
  assert.deepEqual(
    stored.map((m) => m.seq),
    [5, 6],
  )
  release()
  await holder
})
