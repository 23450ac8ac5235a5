/**
 * Contract suite for ContextStore: the SQLite and PostgreSQL stores must both pass it. It uses
 * the interface only, so it says what every backend promises: messages are never lost or
 * reordered, and the context window and the summary DAG change together or not at all.
 */
import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import type { MessageInput } from '../../core/message.ts'
import type { ContextStore, IndexUnit, NewSummary, SearchIndex } from '../contracts.ts'

export interface ContextStoreFixture {
  store: ContextStore
  /** The backend's search index on the same database, when its store writes both in one transaction. */
  index?: () => SearchIndex
  cleanup(): Promise<void>
}

const T0 = Date.parse('2026-03-01T10:00:00.000Z')

function at(minute: number): string {
  return new Date(T0 + minute * 60_000).toISOString()
}

function messages(count: number, from = 0, role: MessageInput['role'] = 'user'): Array<MessageInput & { at: string; tokenCount: number }> {
  return Array.from({ length: count }, (_, i) => ({ role, content: `message ${from + i}`, at: at(from + i), tokenCount: 10 + i }))
}

function leaf(messageIds: number[], content = 'a leaf summary'): NewSummary {
  return {
    kind: 'leaf',
    depth: 0,
    content,
    tokenCount: 5,
    sourceTokenCount: 50,
    earliestAt: at(0),
    latestAt: at(9),
    method: 'llm-normal',
    messageIds,
  }
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(EngramError.is(error), `expected an EngramError, got ${String(error)}`)
    assert.equal(error.code, code)
    return true
  })
}

/** Registers the ContextStore contract tests under `describe(name)`. */
export function runContextStoreContract(name: string, make: () => Promise<ContextStoreFixture>): void {
  async function withStore(fn: (store: ContextStore) => Promise<void>): Promise<void> {
    const fixture = await make()
    try {
      await fn(fixture.store)
    } finally {
      await fixture.cleanup()
    }
  }

  describe(`ContextStore contract: ${name}`, () => {
    test('a session has one conversation per agent, found again by session id', () =>
      withStore(async (store) => {
        const first = await store.conversation('s1', { agent: 'alpha', user: 'ann' })
        assert.equal(first.sessionId, 's1')
        assert.equal(first.agent, 'alpha')
        assert.equal(first.user, 'ann')
        assert.ok(!Number.isNaN(Date.parse(first.createdAt)))
        const again = await store.conversation('s1', { agent: 'alpha' })
        assert.equal(again.id, first.id)
        assert.equal(again.user, 'ann', 'an existing user is kept')
        const otherAgent = await store.conversation('s1', { agent: 'beta' })
        assert.notEqual(otherAgent.id, first.id)
        assert.equal(otherAgent.user, undefined)
        assert.deepEqual(await store.findConversation('s1', 'alpha'), first)
        assert.equal(await store.findConversation('nope', 'alpha'), null)
        assert.deepEqual(
          (await store.listConversations('alpha')).map((c) => c.id),
          [first.id],
        )
        assert.equal((await store.listConversations()).length, 2)
      }))

    test('appended messages get 1-based seqs that continue across calls, and one item each', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const first = await store.appendMessages(conv.id, [
          { role: 'user', content: 'hello', at: at(0), tokenCount: 1, name: 'ann', meta: { channel: 'dm', n: 1 } },
          { role: 'assistant', content: 'hi there', at: at(1), tokenCount: 2 },
        ])
        const second = await store.appendMessages(conv.id, messages(3, 2, 'tool'))
        assert.deepEqual(
          [...first, ...second].map((m) => m.seq),
          [1, 2, 3, 4, 5],
        )
        assert.equal(first[0]!.name, 'ann')
        assert.deepEqual(first[0]!.meta, { channel: 'dm', n: 1 })
        assert.equal(first[1]!.name, undefined)
        assert.equal(first[1]!.meta, undefined)
        assert.equal(first[0]!.at, at(0))
        assert.equal(first[0]!.conversationId, conv.id)
        assert.equal(await store.messageCount(conv.id), 5)
        const stored = await store.messages(conv.id)
        assert.deepEqual(stored, [...first, ...second])
        const items = await store.items(conv.id)
        assert.deepEqual(
          items.map((item) => (item.kind === 'message' ? item.messageId : null)),
          stored.map((m) => m.id),
        )
        assert.ok(items.every((item, i) => i === 0 || item.position > items[i - 1]!.position), 'positions increase')
        assert.deepEqual(await store.appendMessages(conv.id, []), [])
      }))

    test('the window is read in pages: after and before a position, the oldest or the newest few, always in order', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const stored = await store.appendMessages(conv.id, messages(10))
        const all = await store.items(conv.id)
        const positions = all.map((item) => item.position)
        const page = async (range: Parameters<ContextStore['items']>[1]): Promise<number[]> => (await store.items(conv.id, range)).map((item) => item.position)
        assert.deepEqual(await page({}), positions)
        assert.deepEqual(await page({ limit: 3 }), positions.slice(0, 3))
        assert.deepEqual(await page({ limit: 3, newest: true }), positions.slice(-3))
        assert.deepEqual(await page({ after: positions[2]!, limit: 2 }), positions.slice(3, 5))
        assert.deepEqual(await page({ before: positions[5]!, limit: 2, newest: true }), positions.slice(3, 5))
        assert.deepEqual(await page({ after: positions[1]!, before: positions[4]! }), positions.slice(2, 4))
        assert.deepEqual(await page({ after: positions[9]! }), [])
        assert.deepEqual(await page({ limit: 0 }), [])
        // Folding items leaves a gap in the positions; pages skip it.
        const folded = await store.replaceWithSummary(conv.id, positions.slice(0, 4), leaf(stored.slice(0, 4).map((m) => m.id)))
        const after = await store.items(conv.id, { limit: 2 })
        assert.deepEqual(after, [{ position: positions[0]!, kind: 'summary', summaryId: folded.id }, all[4]])
        await rejectsWithCode(store.items(conv.id, { limit: -1 }), 'invalid_argument')
        await rejectsWithCode(store.items(conv.id, { after: 1.5 }), 'invalid_argument')
      }))

    test('replaceWithSummaries writes several summaries in one transaction: all of them, or none when one is refused', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const stored = await store.appendMessages(conv.id, messages(9))
        const items = await store.items(conv.id)
        const at = (from: number, to: number): number[] => items.slice(from, to).map((item) => item.position)
        const ids = (from: number, to: number): number[] => stored.slice(from, to).map((m) => m.id)
        // The second overlaps the first: nothing is written.
        await rejectsWithCode(
          store.replaceWithSummaries(conv.id, [
            { positions: at(0, 3), summary: leaf(ids(0, 3)) },
            { positions: at(2, 5), summary: leaf(ids(2, 5)) },
          ]),
          'invalid_argument',
        )
        assert.deepEqual(await store.items(conv.id), items)
        const written = await store.replaceWithSummaries(conv.id, [
          { positions: at(0, 3), summary: leaf(ids(0, 3), 'first') },
          { positions: at(3, 6), summary: leaf(ids(3, 6), 'second') },
        ])
        assert.deepEqual(
          written.map((summary) => summary.content),
          ['first', 'second'],
        )
        const after = await store.items(conv.id)
        assert.deepEqual(
          after.map((item) => (item.kind === 'summary' ? item.summaryId : item.messageId)),
          [written[0]!.id, written[1]!.id, ...ids(6, 9)],
        )
        assert.deepEqual((await store.summaryChildren(written[1]!.id)).messageIds, ids(3, 6))
        assert.deepEqual(await store.replaceWithSummaries(conv.id, []), [])
      }))

    test('windowStats counts the items, their stored tokens and the last position in one read; countItems counts items before a position', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        assert.deepEqual(await store.windowStats(conv.id), { items: 0, tokens: 0, lastPosition: 0 })
        const stored = await store.appendMessages(conv.id, messages(6))
        const tokens = stored.reduce((sum, m) => sum + m.tokenCount, 0)
        const items = await store.items(conv.id)
        assert.deepEqual(await store.windowStats(conv.id), { items: 6, tokens, lastPosition: items.at(-1)!.position })
        await store.replaceWithSummary(conv.id, items.slice(0, 3).map((item) => item.position), leaf(stored.slice(0, 3).map((m) => m.id)))
        const folded = stored.slice(0, 3).reduce((sum, m) => sum + m.tokenCount, 0)
        assert.deepEqual(await store.windowStats(conv.id), { items: 4, tokens: tokens - folded + 5, lastPosition: items.at(-1)!.position })
        assert.equal(await store.countItems(conv.id), 4)
        assert.equal(await store.countItems(conv.id, items[4]!.position), 2, 'the summary and one message before it')
        assert.equal(await store.countItems(conv.id, items[0]!.position), 0)
      }))

    test('messages can be read by seq range, with a limit, and by id in the order asked', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const stored = await store.appendMessages(conv.id, messages(10))
        assert.deepEqual(
          (await store.messages(conv.id, { fromSeq: 3, toSeq: 6 })).map((m) => m.seq),
          [3, 4, 5, 6],
        )
        assert.deepEqual(
          (await store.messages(conv.id, { fromSeq: 8 })).map((m) => m.seq),
          [8, 9, 10],
        )
        assert.deepEqual(
          (await store.messages(conv.id, { limit: 2 })).map((m) => m.seq),
          [1, 2],
        )
        const ids = [stored[7]!.id, stored[2]!.id, 999_999]
        assert.deepEqual(
          (await store.messagesById(ids)).map((m) => m.seq),
          [8, 3],
        )
        assert.deepEqual(await store.messagesById([]), [])
      }))

    test('appending to an unknown conversation or with a bad role fails and stores nothing', () =>
      withStore(async (store) => {
        await rejectsWithCode(store.appendMessages(424242, messages(1)), 'not_found')
        const conv = await store.conversation('s', { agent: 'a' })
        const bad = [...messages(2), { role: 'robot' as MessageInput['role'], content: 'x', at: at(5), tokenCount: 1 }]
        await rejectsWithCode(store.appendMessages(conv.id, bad), 'invalid_argument')
        assert.equal(await store.messageCount(conv.id), 0)
        assert.deepEqual(await store.items(conv.id), [])
      }))

    test('a leaf summary replaces a contiguous run of items and records its edges', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const stored = await store.appendMessages(conv.id, messages(12))
        const before = await store.items(conv.id)
        const run = before.slice(2, 7)
        const foldedIds = stored.slice(2, 7).map((m) => m.id)
        const summary = await store.replaceWithSummary(
          conv.id,
          run.map((item) => item.position),
          leaf(foldedIds),
        )
        assert.match(summary.id, /^sum_[0-9a-f]+$/)
        assert.equal(summary.kind, 'leaf')
        assert.equal(summary.conversationId, conv.id)
        assert.equal(summary.content, 'a leaf summary')
        assert.equal(summary.sourceTokenCount, 50)
        assert.equal(summary.method, 'llm-normal')
        assert.deepEqual(await store.summary(summary.id), summary)

        const after = await store.items(conv.id)
        assert.equal(after.length, 12 - 5 + 1)
        assert.deepEqual(after[2], { position: run[0]!.position, kind: 'summary', summaryId: summary.id })
        assert.deepEqual(after.slice(0, 2), before.slice(0, 2))
        assert.deepEqual(after.slice(3), before.slice(7))

        assert.deepEqual(await store.summaryChildren(summary.id), { messageIds: foldedIds, summaryIds: [] })
        assert.deepEqual(await store.summaryParents({ messageId: foldedIds[0]! }), [summary.id])
        assert.deepEqual(await store.summaryParents({ messageId: stored[0]!.id }), [])
        assert.equal(await store.messageCount(conv.id), 12, 'lossless: every message is still stored')
      }))

    test('a condensed summary folds summaries; the DAG can be walked both ways', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const stored = await store.appendMessages(conv.id, messages(8))
        let items = await store.items(conv.id)
        const first = await store.replaceWithSummary(
          conv.id,
          items.slice(0, 4).map((i) => i.position),
          leaf(stored.slice(0, 4).map((m) => m.id), 'first'),
        )
        items = await store.items(conv.id)
        const second = await store.replaceWithSummary(
          conv.id,
          items.slice(1, 5).map((i) => i.position),
          leaf(stored.slice(4, 8).map((m) => m.id), 'second'),
        )
        items = await store.items(conv.id)
        assert.deepEqual(
          items.map((i) => i.kind),
          ['summary', 'summary'],
        )
        const condensed = await store.replaceWithSummary(
          conv.id,
          items.map((i) => i.position),
          {
            kind: 'condensed',
            depth: 1,
            content: 'both',
            tokenCount: 3,
            sourceTokenCount: 10,
            earliestAt: at(0),
            latestAt: at(7),
            method: 'extractive',
            parentIds: [first.id, second.id],
          },
        )
        items = await store.items(conv.id)
        assert.deepEqual(items, [{ position: items[0]!.position, kind: 'summary', summaryId: condensed.id }])
        assert.deepEqual(await store.summaryChildren(condensed.id), { messageIds: [], summaryIds: [first.id, second.id] })
        assert.deepEqual(await store.summaryParents({ summaryId: first.id }), [condensed.id])
        assert.deepEqual(await store.summaryParents({ summaryId: condensed.id }), [])
        assert.deepEqual(
          (await store.summariesById([second.id, 'sum_missing', first.id])).map((s) => s.content),
          ['second', 'first'],
        )
        assert.equal(await store.summary('sum_missing'), null)

        // New messages land after the summary.
        const later = await store.appendMessages(conv.id, messages(1, 8))
        items = await store.items(conv.id)
        assert.deepEqual(items[1], { position: items[1]!.position, kind: 'message', messageId: later[0]!.id })
        assert.ok(items[1]!.position > items[0]!.position)
      }))

    test('positions that are not a contiguous run of current items change nothing', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const stored = await store.appendMessages(conv.id, messages(6))
        const items = await store.items(conv.id)
        const ids = stored.map((m) => m.id)
        await rejectsWithCode(store.replaceWithSummary(conv.id, [items[0]!.position, items[2]!.position], leaf(ids.slice(0, 2))), 'invalid_argument')
        await rejectsWithCode(store.replaceWithSummary(conv.id, [items[5]!.position + 100], leaf(ids.slice(0, 1))), 'invalid_argument')
        await rejectsWithCode(store.replaceWithSummary(conv.id, [], leaf(ids.slice(0, 1))), 'invalid_argument')
        assert.deepEqual(await store.items(conv.id), items)
        assert.deepEqual(await store.summaryParents({ messageId: ids[0]! }), [])
      }))

    test('a summary whose edges are invalid leaves items and DAG unchanged', () =>
      withStore(async (store) => {
        const conv = await store.conversation('s', { agent: 'a' })
        const other = await store.conversation('other', { agent: 'a' })
        const stored = await store.appendMessages(conv.id, messages(4))
        const foreign = await store.appendMessages(other.id, messages(1))
        const items = await store.items(conv.id)
        const positions = items.slice(0, 2).map((i) => i.position)
        await assert.rejects(
          store.replaceWithSummary(conv.id, positions, {
            ...leaf([stored[0]!.id]),
            kind: 'condensed',
            depth: 1,
            messageIds: undefined,
            parentIds: ['sum_does_not_exist'],
          }),
        )
        await assert.rejects(store.replaceWithSummary(conv.id, positions, leaf([stored[0]!.id, foreign[0]!.id])))
        await assert.rejects(store.replaceWithSummary(conv.id, positions, leaf([])))
        assert.deepEqual(await store.items(conv.id), items)
        assert.deepEqual(await store.summaryParents({ messageId: stored[0]!.id }), [])
        assert.deepEqual(await store.summaryParents({ messageId: foreign[0]!.id }), [])
      }))

    test('purgeUser erases every conversation of a user, of every agent, and nothing of anyone else', () =>
      withStore(async (store) => {
        const mine = await store.conversation('s-ann', { agent: 'a', user: 'ann' })
        const other = await store.conversation('s-ann-b', { agent: 'b', user: 'ann' })
        const bobs = await store.conversation('s-bob', { agent: 'a', user: 'bob' })
        const agents = await store.conversation('s-none', { agent: 'a' })
        for (const conv of [mine, other, bobs, agents]) await store.appendMessages(conv.id, messages(4))
        const ids = (await store.messages(mine.id)).map((m) => m.id)
        const positions = (await store.items(mine.id)).map((item) => item.position)
        const summary = await store.replaceWithSummary(mine.id, positions.slice(0, 2), leaf(ids.slice(0, 2)))
        const second = await store.replaceWithSummary(mine.id, positions.slice(2, 4), leaf(ids.slice(2, 4)))
        const folded = (await store.items(mine.id)).map((item) => item.position)
        await store.replaceWithSummary(mine.id, folded, { ...leaf([]), kind: 'condensed', depth: 1, messageIds: undefined, parentIds: [summary.id, second.id] })

        const report = await store.purgeUser('ann')
        assert.equal(report.conversations, 2)
        assert.equal(report.messages, 8)
        assert.equal(report.summaries, 3)
        assert.equal(await store.findConversation('s-ann', 'a'), null)
        assert.equal(await store.findConversation('s-ann-b', 'b'), null)
        assert.equal(await store.summary(summary.id), null)
        assert.deepEqual(await store.items(mine.id), [])
        assert.equal(await store.messageCount(mine.id), 0)
        assert.deepEqual((await store.listConversations()).map((conv) => conv.sessionId).sort(), ['s-bob', 's-none'])
        assert.equal(await store.messageCount(bobs.id), 4)
        assert.equal(await store.messageCount(agents.id), 4)
        assert.deepEqual(await store.purgeUser('ann'), { conversations: 0, messages: 0, summaries: 0 })
      }))

    // The optional capability: a backend that has it offers its index with the fixture.
    type IndexingStore = ContextStore & Required<Pick<ContextStore, 'appendMessagesIndexed'>>
    const indexed = async (t: TestContext, fn: (store: IndexingStore, index: SearchIndex) => Promise<void>): Promise<void> => {
      const fixture = await make()
      try {
        const { store } = fixture
        if (store.appendMessagesIndexed === undefined || fixture.index === undefined) {
          t.skip(`${name} indexes after the store's commit (no appendMessagesIndexed)`)
          return
        }
        await fn(store as IndexingStore, fixture.index())
      } finally {
        await fixture.cleanup()
      }
    }
    const unitOf = (message: { id: number; content: string; at: string }, near = ''): IndexUnit => ({
      id: `msg:${message.id}`,
      kind: 'message',
      text: message.content,
      source: 'conv:test',
      provenance: [String(message.id)],
      createdAt: message.at,
      hash: `h${message.id}`,
      context: { near, far: '' },
    })

    test('appendMessagesIndexed: the messages and their units in one write, the messages before them given', (t) =>
      indexed(t, async (store, index) => {
        const conv = await store.conversation('s', { agent: 'a' })
        await store.appendMessages(conv.id, messages(3))
        const seen: Array<{ seqs: number[]; appended: number }> = []
        const stored = await store.appendMessagesIndexed(conv.id, messages(2, 3), {
          index,
          before: 2,
          units: (window, appended) => {
            seen.push({ seqs: window.map((m) => m.seq), appended })
            return window.map((m, i) => unitOf(m, window[i + 1]?.content ?? ''))
          },
        })
        assert.deepEqual(
          stored?.map((m) => m.seq),
          [4, 5],
        )
        assert.deepEqual(seen, [{ seqs: [2, 3, 4, 5], appended: 2 }])
        assert.deepEqual((await store.messages(conv.id)).map((m) => m.content), ['message 0', 'message 1', 'message 2', 'message 3', 'message 4'])
        const all = await store.messages(conv.id)
        assert.deepEqual(
          (await index.get(all.slice(1).map((m) => `msg:${m.id}`))).map((unit) => unit.text),
          ['message 1', 'message 2', 'message 3', 'message 4'],
        )
        const found = await index.search({ text: 'message', limit: 10 })
        assert.equal(found.length, 4, 'the units are searchable as soon as the append returns')
      }))

    test('appendMessagesIndexed: a unit that cannot be written leaves no message stored', (t) =>
      indexed(t, async (store, index) => {
        const conv = await store.conversation('s', { agent: 'a' })
        await store.appendMessages(conv.id, messages(1))
        await assert.rejects(
          store.appendMessagesIndexed(conv.id, messages(2, 1), { index, before: 2, units: (window) => window.map((m) => ({ ...unitOf(m), createdAt: 'not a time' })) }),
        )
        assert.deepEqual((await store.messages(conv.id)).map((m) => m.content), ['message 0'])
        assert.equal((await store.items(conv.id)).length, 1)
        assert.deepEqual(await index.search({ text: 'message', limit: 10 }), [])
        // The next append takes the next seq, as if the failed one never happened.
        const [next] = await store.appendMessages(conv.id, messages(1, 5))
        assert.equal(next?.seq, 2)
      }))
  })
}
