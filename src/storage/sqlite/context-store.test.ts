import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { createSqliteContextStore } from './context-store.ts'
import { openSqlite } from './database.ts'
import { createSqliteSearchIndex } from './search-index.ts'

const APPEND_WORKER = join(import.meta.dirname, 'test-support', 'append-worker.ts')

function openTemp() {
  const temp = makeTempHome('engram-sqlite-ctx-')
  mkdirSync(temp.home, { recursive: true })
  const path = join(temp.home, 'engram.db')
  const handle = openSqlite(path)
  return {
    path,
    handle,
    cleanup: () => {
      handle.close()
      temp.cleanup()
    },
  }
}

test('appendMessagesIndexed writes nothing and answers undefined for an index of another database', async () => {
  const mine = openTemp()
  const other = openTemp()
  try {
    const store = createSqliteContextStore(mine.handle, { clock: new ManualClock() })
    const conv = await store.conversation('s', { agent: 'a' })
    let asked = 0
    const units = () => {
      asked++
      return []
    }
    const row = { role: 'user' as const, content: 'hi', at: '2026-01-01T00:00:00.000Z', tokenCount: 1 }
    assert.equal(await store.appendMessagesIndexed!(conv.id, [row], { index: createSqliteSearchIndex(other.handle), before: 2, units }), undefined)
    assert.equal(asked, 0)
    assert.equal(await store.messageCount(conv.id), 0)
    assert.equal((await store.appendMessagesIndexed!(conv.id, [row], { index: createSqliteSearchIndex(mine.handle), before: 2, units }))?.length, 1)
    assert.equal(asked, 1)
  } finally {
    mine.cleanup()
    other.cleanup()
  }
})

test('timestamps written by the store come from the injected clock', async () => {
  const { handle, cleanup } = openTemp()
  try {
    const clock = new ManualClock('2030-05-05T05:05:05.000Z')
    const store = createSqliteContextStore(handle, { clock })
    const conv = await store.conversation('s', { agent: 'a' })
    assert.equal(conv.createdAt, '2030-05-05T05:05:05.000Z')
    clock.advanceDays(1)
    const [message] = await store.appendMessages(conv.id, [{ role: 'user', content: 'hi', at: clock.now().toISOString(), tokenCount: 1 }])
    assert.equal(message?.at, '2030-05-06T05:05:05.000Z')
  } finally {
    cleanup()
  }
})

test('a failure inside replaceWithSummary leaves items and the DAG unchanged', async () => {
  const { handle, cleanup } = openTemp()
  try {
    const store = createSqliteContextStore(handle, { clock: new ManualClock() })
    const conv = await store.conversation('s', { agent: 'a' })
    const stored = await store.appendMessages(
      conv.id,
      Array.from({ length: 5 }, (_, i) => ({ role: 'user' as const, content: `m${i}`, at: '2026-01-01T00:00:00.000Z', tokenCount: 1 })),
    )
    const items = await store.items(conv.id)
    // Fail the very last step (inserting the summary's item), after the summary, its edges and
    // the deletion of the folded items have all been written inside the transaction.
    handle.db.exec(`CREATE TRIGGER fail_summary_item BEFORE INSERT ON ctx_items WHEN NEW.summary_id IS NOT NULL
                    BEGIN SELECT RAISE(ABORT, 'injected failure'); END`)
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
          earliestAt: '2026-01-01T00:00:00.000Z',
          latestAt: '2026-01-01T00:00:00.000Z',
          method: 'deterministic',
          messageIds: stored.slice(0, 3).map((m) => m.id),
        },
      ),
      /injected failure/,
    )
    assert.deepEqual(await store.items(conv.id), items)
    assert.deepEqual(await store.summaryParents({ messageId: stored[0]!.id }), [])
    const counts = handle.db
      .prepare('SELECT (SELECT count(*) FROM ctx_summaries) AS summaries, (SELECT count(*) FROM ctx_summary_messages) AS edges')
      .get() as { summaries: number; edges: number }
    assert.deepEqual({ ...counts }, { summaries: 0, edges: 0 })
    assert.equal(handle.db.isTransaction, false, 'no transaction left open')
  } finally {
    cleanup()
  }
})

test('two processes appending 300 messages each to one conversation lose nothing and keep each order', async () => {
  const { path, handle, cleanup } = openTemp()
  try {
    const startFile = `${path}.start`
    const spawnWriter = (writer: string) => {
      const child = spawn(process.execPath, [APPEND_WORKER, path, 'shared-session', writer, '300', startFile], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) resolve()
        })
        child.on('exit', (code) => reject(new Error(`writer ${writer} exited before ready (${code}): ${stderr}`)))
      })
      const exited = new Promise<void>((resolve, reject) => {
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${writer} exited with ${code}: ${stderr}`))))
      })
      return { ready, exited }
    }
    const writers = [spawnWriter('A'), spawnWriter('B')]
    await Promise.all(writers.map((w) => w.ready))
    writeFileSync(startFile, 'go')
    await Promise.all(writers.map((w) => w.exited))

    const store = createSqliteContextStore(handle, { clock: new ManualClock() })
    const conversations = await store.listConversations('agent')
    assert.equal(conversations.length, 1, 'both writers found the same conversation')
    const all = await store.messages(conversations[0]!.id)
    assert.equal(all.length, 600)
    assert.deepEqual(
      all.map((m) => m.seq),
      Array.from({ length: 600 }, (_, i) => i + 1),
    )
    for (const writer of ['A', 'B']) {
      const mine = all.filter((m) => m.content.startsWith(`${writer}:`)).map((m) => Number(m.content.slice(2)))
      assert.deepEqual(
        mine,
        Array.from({ length: 300 }, (_, i) => i),
        `writer ${writer}'s messages are all there, in order`,
      )
    }
    const interleaved = all.some((m, i) => i > 0 && m.content[0] !== all[i - 1]!.content[0])
    assert.ok(interleaved, 'the writers really ran concurrently')
    const items = await store.items(conversations[0]!.id)
    assert.deepEqual(
      items.map((i) => (i.kind === 'message' ? i.messageId : -1)),
      all.map((m) => m.id),
    )
  } finally {
    cleanup()
  }
})
