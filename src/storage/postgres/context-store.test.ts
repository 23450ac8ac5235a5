import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startChild } from '../files/test-support/run-children.ts'
import { ManualClock } from '../../core/clock.ts'
import type { ContextItem, Summary } from '../../core/message.ts'
import type { ContextStore } from '../contracts.ts'
import { createPostgresContextStore, escapeNul, unescapeNul } from './context-store.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

const APPEND_WORKER = join(import.meta.dirname, 'test-support', 'pg-append-worker.ts')
const AT = '2026-03-01T10:00:00.000Z'

interface Writer {
  ready: Promise<void>
  done: Promise<{ conversation: number; ids: number[] }>
}

/** A child process appending `count` messages to session `session` once the start file exists. */
function spawnWriter(url: string, schema: string, session: string, writer: string, count: number, startFile: string): Writer {
  const child = startChild(APPEND_WORKER, [url, schema, session, writer, String(count), startFile], `writer ${writer}`)
  return { ready: child.ready, done: child.lastLine.then((line) => JSON.parse(line || '{}') as { conversation: number; ids: number[] }) }
}

/** Four writers × 100 messages to one conversation; resolves when they started, with their results to await. */
async function startWriters(url: string, schema: string, dir: string): Promise<Array<Writer['done']>> {
  const startFile = join(dir, 'start')
  const writers = ['A', 'B', 'C', 'D'].map((writer) => spawnWriter(url, schema, 'shared-session', writer, 100, startFile))
  await Promise.all(writers.map((w) => w.ready))
  writeFileSync(startFile, 'go')
  return writers.map((w) => w.done)
}

/** Every message of the conversation, once and in seq order, from the items down through the DAG. */
async function expand(store: ContextStore, items: ContextItem[]): Promise<number[]> {
  const out: number[] = []
  const walk = async (item: { kind: 'message'; messageId: number } | { kind: 'summary'; summaryId: string }): Promise<void> => {
    if (item.kind === 'message') {
      out.push(item.messageId)
      return
    }
    const children = await store.summaryChildren(item.summaryId)
    for (const messageId of children.messageIds) out.push(messageId)
    for (const summaryId of children.summaryIds) await walk({ kind: 'summary', summaryId })
  }
  for (const item of items) await walk(item)
  return out
}

/** One round of compaction as the engine does it: leaves over runs of 5 old messages, then a condensed summary over adjacent leaves. */
async function compactOnce(store: ContextStore, conversationId: number, made: { leaves: Summary[]; condensed: Summary[] }): Promise<void> {
  const items = await store.items(conversationId)
  const older = items.slice(0, Math.max(0, items.length - 8))
  let run: Array<ContextItem & { kind: 'message' }> = []
  for (const item of older) {
    if (item.kind !== 'message') {
      run = []
      continue
    }
    run.push(item)
    if (run.length === 5) {
      const messages = await store.messagesById(run.map((i) => i.messageId))
      const leaf = await store.replaceWithSummary(
        conversationId,
        run.map((i) => i.position),
        {
          kind: 'leaf',
          depth: 0,
          content: `leaf of ${messages.map((m) => m.content).join(' ')}`,
          tokenCount: 1,
          sourceTokenCount: 5,
          earliestAt: messages[0]!.at,
          latestAt: messages[messages.length - 1]!.at,
          method: 'deterministic',
          messageIds: messages.map((m) => m.id),
        },
      )
      made.leaves.push(leaf)
      run = []
    }
  }
  const now = await store.items(conversationId)
  const leafIds = new Set(made.leaves.map((s) => s.id))
  const adjacent: Array<ContextItem & { kind: 'summary' }> = []
  for (const item of now) {
    if (item.kind === 'summary' && leafIds.has(item.summaryId)) adjacent.push(item)
    else if (adjacent.length >= 3) break
    else adjacent.length = 0
  }
  if (adjacent.length >= 3) {
    const condensed = await store.replaceWithSummary(
      conversationId,
      adjacent.map((i) => i.position),
      {
        kind: 'condensed',
        depth: 1,
        content: 'condensed',
        tokenCount: 1,
        sourceTokenCount: adjacent.length,
        earliestAt: AT,
        latestAt: AT,
        method: 'deterministic',
        parentIds: adjacent.map((i) => i.summaryId),
      },
    )
    made.condensed.push(condensed)
  }
}

onPostgres('ContextStore rows', (url) => {
  test('four processes appending 100 messages each to one conversation store each once, seqs 1..400, positions in seq order', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    const dir = mkdtempSync(join(tmpdir(), 'engram-pg-ctx-'))
    try {
      const results = await Promise.all(await startWriters(url, handle.schema, dir))
      const store = createPostgresContextStore(handle, { clock: new ManualClock() })
      const conversations = await store.listConversations('agent')
      assert.equal(conversations.length, 1, 'the writers found or created one conversation')
      assert.ok(results.every((r) => r.conversation === conversations[0]!.id))
      const all = await store.messages(conversations[0]!.id)
      assert.equal(all.length, 400)
      assert.deepEqual(
        all.map((m) => m.seq),
        Array.from({ length: 400 }, (_, i) => i + 1),
      )
      assert.equal(new Set(all.map((m) => m.content)).size, 400, 'each message stored once')
      for (const [i, writer] of ['A', 'B', 'C', 'D'].entries()) {
        const mine = all.filter((m) => m.content.startsWith(`${writer}:`))
        assert.deepEqual(
          mine.map((m) => Number(m.content.slice(2))),
          Array.from({ length: 100 }, (_, k) => k),
          `writer ${writer}'s messages are all there, in its order`,
        )
        assert.deepEqual(
          mine.map((m) => m.id),
          results[i]!.ids,
          `writer ${writer} got back the ids stored`,
        )
      }
      assert.ok(
        all.some((m, i) => i > 0 && m.content[0] !== all[i - 1]!.content[0]),
        'the writers really interleaved',
      )
      const items = await store.items(conversations[0]!.id)
      assert.equal(new Set(items.map((i) => i.position)).size, 400, 'item positions are unique')
      assert.ok(
        items.every((item, i) => i === 0 || item.position > items[i - 1]!.position),
        'positions increase',
      )
      assert.deepEqual(
        items.map((i) => (i.kind === 'message' ? i.messageId : -1)),
        all.map((m) => m.id),
        'items follow seq order',
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await cleanup()
    }
  })

  test('compaction while four processes append keeps the DAG consistent and every message covered once', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    const dir = mkdtempSync(join(tmpdir(), 'engram-pg-ctx-'))
    try {
      const store = createPostgresContextStore(handle, { clock: new ManualClock() })
      const conversation = await store.conversation('shared-session', { agent: 'agent' })
      const writers = await startWriters(url, handle.schema, dir)
      let finished = false
      const settled = Promise.all(writers).finally(() => {
        finished = true
      })
      const made = { leaves: [] as Summary[], condensed: [] as Summary[] }
      let roundsDuringAppends = 0
      while (!finished) {
        await compactOnce(store, conversation.id, made)
        if (!finished) roundsDuringAppends++
      }
      await settled
      await compactOnce(store, conversation.id, made)
      assert.ok(roundsDuringAppends > 0 && made.leaves.length > 0, `compaction ran during the appends (${roundsDuringAppends} rounds, ${made.leaves.length} leaves)`)
      assert.ok(made.condensed.length > 0, 'a condensed summary was made')

      const all = await store.messages(conversation.id)
      assert.deepEqual(
        all.map((m) => m.seq),
        Array.from({ length: 400 }, (_, i) => i + 1),
      )
      const items = await store.items(conversation.id)
      assert.ok(
        items.every((item, i) => i === 0 || item.position > items[i - 1]!.position),
        'positions unique and in order',
      )
      assert.deepEqual(await expand(store, items), all.map((m) => m.id), 'expanding the window gives every message once, in seq order')

      for (const leaf of made.leaves) {
        const children = await store.summaryChildren(leaf.id)
        assert.equal(children.messageIds.length, 5)
        assert.deepEqual(children.summaryIds, [])
        for (const messageId of children.messageIds) assert.deepEqual(await store.summaryParents({ messageId }), [leaf.id], 'a message is folded by one leaf')
      }
      for (const condensed of made.condensed) {
        const children = await store.summaryChildren(condensed.id)
        assert.deepEqual(children.messageIds, [])
        for (const summaryId of children.summaryIds) assert.deepEqual(await store.summaryParents({ summaryId }), [condensed.id])
        assert.deepEqual(await store.summaryParents({ summaryId: condensed.id }), [])
      }
      const folded = (await Promise.all(made.leaves.map((leaf) => store.summaryChildren(leaf.id)))).flatMap((c) => c.messageIds)
      assert.equal(new Set(folded).size, folded.length, 'no message is in two leaves')
      const reachable = new Set(items.flatMap((i) => (i.kind === 'summary' ? [i.summaryId] : [])))
      for (const condensed of made.condensed) for (const id of (await store.summaryChildren(condensed.id)).summaryIds) reachable.add(id)
      for (const leaf of made.leaves) assert.ok(reachable.has(leaf.id), `leaf ${leaf.id} still reaches the items`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await cleanup()
    }
  })

  test('NUL and 1 MB content round-trip unchanged; text without NUL is stored as it is', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const store = createPostgresContextStore(handle, { clock: new ManualClock() })
      const conv = await store.conversation('s', { agent: 'a', user: 'ann' })
      const tricky = 'a\u0000b \\0 c \\\\0 \\ \u0000\u0000 end\\'
      const huge = 'x'.repeat(1024 * 1024)
      const inputs = [
        { role: 'user' as const, content: tricky, name: 'n\u0000ame', at: `${AT}\u0000`, tokenCount: 3, meta: { raw: 'm\u0000eta', 'k\u0000': 1 } },
        { role: 'assistant' as const, content: 'plain \\0 text, no NUL', at: '2026-03-01T10:00:00Z', tokenCount: 1 },
        { role: 'tool' as const, content: huge, at: AT, tokenCount: 262_144 },
        { role: 'user' as const, content: `${huge}\u0000${huge}`, at: AT, tokenCount: 524_288 },
      ]
      const stored = await store.appendMessages(conv.id, inputs)
      const read = await store.messages(conv.id)
      assert.deepEqual(read, stored)
      assert.deepEqual(await store.messagesById(stored.map((m) => m.id)), stored)
      for (const [i, input] of inputs.entries()) {
        assert.equal(read[i]!.content, input.content, `message ${i} content`)
        assert.equal(read[i]!.at, input.at, `message ${i} at, as given`)
        assert.equal(read[i]!.name, input.name)
      }
      assert.deepEqual(read[0]!.meta, { raw: 'm\u0000eta', 'k\u0000': 1 })
      const raw = await handle.pool.query<{ seq: number; escaped: boolean; content: string }>('SELECT seq, escaped, content FROM ctx_messages ORDER BY seq')
      assert.deepEqual(
        raw.rows.map((row) => row.escaped),
        [true, false, false, true],
      )
      assert.equal(raw.rows[1]!.content, 'plain \\0 text, no NUL', 'a row without NUL is the text itself')

      const positions = (await store.items(conv.id)).map((i) => i.position)
      const summary = await store.replaceWithSummary(conv.id, positions.slice(0, 2), {
        kind: 'leaf',
        depth: 0,
        content: `summary of ${tricky}`,
        tokenCount: 1,
        sourceTokenCount: 4,
        earliestAt: `${AT}\u0000`,
        latestAt: AT,
        method: 'extractive',
        messageIds: stored.slice(0, 2).map((m) => m.id),
      })
      assert.equal(summary.content, `summary of ${tricky}`)
      assert.equal(summary.earliestAt, `${AT}\u0000`)
      assert.deepEqual(await store.summary(summary.id), summary)

      await assert.rejects(store.conversation('s\u0000', { agent: 'a' }), { code: 'invalid_argument' })
      assert.equal(await store.findConversation('s\u0000', 'a'), null)
      assert.deepEqual(await store.purgeUser('a\u0000n'), { conversations: 0, messages: 0, summaries: 0 })
    } finally {
      await cleanup()
    }
  })

  test('the NUL escape is reversible for any text', () => {
    for (const text of ['', '\\', '\\0', '\u0000', '\\\u0000', '\u0000\\0', 'a\\\\0b\u00000\\']) {
      assert.equal(unescapeNul(escapeNul(text)), text)
      assert.ok(!escapeNul(text).includes('\u0000'))
    }
  })

  test('concurrent first calls for one session create one conversation, and a user is learned only before the first message', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const clock = new ManualClock('2030-05-05T05:05:05.000Z')
      const stores = Array.from({ length: 3 }, () => createPostgresContextStore(handle, { clock }))
      const found = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 3]!.conversation('s', { agent: 'a' })))
      assert.equal(new Set(found.map((c) => c.id)).size, 1)
      assert.equal(found[0]!.createdAt, '2030-05-05T05:05:05.000Z', 'stamped by the injected clock')
      const learned = await Promise.all(Array.from({ length: 6 }, () => stores[0]!.conversation('s', { agent: 'a', user: 'ann' })))
      assert.ok(learned.every((c) => c.id === found[0]!.id && c.user === 'ann'))

      const later = await stores[0]!.conversation('t', { agent: 'a' })
      await stores[0]!.appendMessages(later.id, [{ role: 'user', content: 'hi', at: AT, tokenCount: 1 }])
      assert.equal((await stores[1]!.conversation('t', { agent: 'a', user: 'bob' })).user, undefined, 'messages already stored stay the agent’s')
    } finally {
      await cleanup()
    }
  })

  test('a failure inside replaceWithSummary leaves items and the DAG unchanged', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      const store = createPostgresContextStore(handle, { clock: new ManualClock() })
      const conv = await store.conversation('s', { agent: 'a' })
      const stored = await store.appendMessages(
        conv.id,
        Array.from({ length: 5 }, (_, i) => ({ role: 'user' as const, content: `m${i}`, at: AT, tokenCount: 1 })),
      )
      const items = await store.items(conv.id)
      // Fail the very last step (the summary's item), after the summary, its edges and the
      // deletion of the folded items were written inside the transaction.
      await handle.pool.query(`CREATE FUNCTION fail_summary_item() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure'; END $$`)
      await handle.pool.query(`CREATE TRIGGER fail_summary_item BEFORE INSERT ON ctx_items FOR EACH ROW
        WHEN (NEW.summary_id IS NOT NULL) EXECUTE FUNCTION fail_summary_item()`)
      await assert.rejects(
        store.replaceWithSummary(
          conv.id,
          items.slice(0, 3).map((i) => i.position),
          {
            kind: 'leaf',
            depth: 0,
            content: 'never stored',
            tokenCount: 1,
            sourceTokenCount: 3,
            earliestAt: AT,
            latestAt: AT,
            method: 'deterministic',
            messageIds: stored.slice(0, 3).map((m) => m.id),
          },
        ),
        /injected failure/,
      )
      assert.deepEqual(await store.items(conv.id), items)
      assert.deepEqual(await store.summaryParents({ messageId: stored[0]!.id }), [])
      const counts = await handle.pool.query<{ summaries: number; edges: number }>(
        'SELECT (SELECT count(*) FROM ctx_summaries) AS summaries, (SELECT count(*) FROM ctx_summary_messages) AS edges',
      )
      assert.deepEqual({ ...counts.rows[0] }, { summaries: 0, edges: 0 })
    } finally {
      await cleanup()
    }
  })
})
