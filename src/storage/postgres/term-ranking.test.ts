// @slow: writes 4,700 units to SQLite and to the real PostgreSQL server
/**
 * A query of one common word on PostgreSQL reads its best blocks first (decision 0095), and ranks
 * exactly as the embedded index does — the same ids in the same order, the same scores — with
 * ties, tombstones left by rewrites another transaction blocked, kinds and viewer filters (a
 * selective one makes it rank four times as many, then more), other field weights, and weights the
 * bounds are not trusted with (read whole). It reads a small part of the word's blocks to do it.
 * Migration 11 gives blocks written before it the peaks a fresh write gives them.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import type { IndexQuery, IndexUnit, SearchIndex, UnitKind } from '../contracts.ts'
import { seededRandom } from '../../test-support/seeded-random.ts'
import { openSqlite } from '../sqlite/database.ts'
import { createSqliteSearchIndex } from '../sqlite/search-index.ts'
import { fillBlockPeaks } from './index-blocks.ts'
import { createPostgresSearchIndex } from './search-index.ts'
import { openTermRanking } from './term-ranking.ts'
import type { PostgresHandle } from './connection.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

const FILLER = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango'.split(' ')
const KINDS: UnitKind[] = ['message', 'message', 'message', 'lesson', 'knowledge', 'summary', 'episode']

/**
 * 4,000 units holding "plentiful" (own 1–3 times, in the neighbours too, lengths 1–60 words), 85%
 * of them "abundant" too, 5% of them Ana's; and 700 alike, to the letter ("plentiful filler"), so the best scores tie.
 */
function units(): IndexUnit[] {
  const next = seededRandom(11)
  const words = (n: number) => Array.from({ length: n }, () => FILLER[Math.floor(next() * FILLER.length)]!).join(' ')
  const out: IndexUnit[] = []
  for (let i = 0; i < 4_000; i++) {
    const kind = KINDS[Math.floor(next() * KINDS.length)]!
    const own = `${Array.from({ length: 1 + Math.floor(next() ** 3 * 3) }, () => 'plentiful').join(' ')}${next() < 0.85 ? ' abundant' : ''}`
    const ana = next() < 0.05
    out.push({
      id: `u:${i}`,
      kind,
      text: `${own} ${words(Math.floor(next() ** 2 * 60))}`,
      source: kind === 'message' ? `conv:${i % 5}` : `${kind}/doc-${i % 7}.md`,
      provenance: [],
      owner: ana ? 'user:ana' : 'agent',
      agent: 'main',
      ...(ana ? { user: 'ana' } : {}),
      createdAt: new Date(Date.UTC(2026, 0, 1) + i * 600_000).toISOString(),
      hash: `h${i}`,
      ...(kind === 'message' ? { context: { near: next() < 0.3 ? `plentiful ${words(5)}` : words(5), far: next() < 0.2 ? 'plentiful plentiful' : words(3) } } : {}),
    })
  }
  for (let i = 0; i < 700; i++) {
    out.push({ id: `tie:${i}`, kind: 'activity', text: 'plentiful filler', source: 'activity/ties.jsonl', provenance: [], createdAt: new Date(Date.UTC(2025, 5, 1) + i * 60_000).toISOString(), hash: `t${i}` })
  }
  return out
}

const QUERIES: IndexQuery[] = [
  { text: 'plentiful', limit: 1 },
  { text: 'plentiful', limit: 10 },
  { text: 'plentiful', limit: 60 },
  { text: 'plentiful', limit: 800 },
  { text: 'plentiful plentiful', limit: 10 },
  { terms: ['plenti', 'plenti', 'plenti'], limit: 25 },
  // Every word common: the first is kept alone, as FTS5's plan keeps it.
  { text: 'plentiful abundant', limit: 10 },
  { text: 'abundant plentiful', limit: 10 },
  // A rarer word beside it: that one is kept, and read whole.
  { text: 'plentiful filler', limit: 10 },
  { text: 'plentiful', kinds: ['lesson'], limit: 10 },
  { text: 'plentiful', kinds: ['activity'], limit: 10 },
  { text: 'plentiful', viewer: { agent: 'main', user: 'ana' }, limit: 10 },
  // Ana's own units only: 5% of the word's, so the ranking grows until ten pass.
  { text: 'plentiful', agent: 'main', user: 'ana', limit: 10 },
  { text: 'plentiful', since: '2026-01-20T00:00:00.000Z', until: '2026-01-22T00:00:00.000Z', limit: 10 },
  { text: 'plentiful', sources: ['conv:3'], kinds: ['message'], limit: 15 },
  { text: 'plentiful', fieldWeights: { near: 0, far: 0, related: 0 }, limit: 20 },
  { text: 'plentiful', fieldWeights: { near: 2, far: 1, related: 1 }, limit: 20 },
  { text: 'plentiful', fieldWeights: { near: 0.9, far: 0.05, related: 0.4 }, limit: 20 },
  // A weight the bounds are not trusted with: the whole list is read, as before.
  { text: 'plentiful', fieldWeights: { near: 1e-9, far: 0.2, related: 0.3 }, limit: 20 },
]

/** BM25's share of one term (the index's default field weights, an average length of 20): grows with each count, falls with the length. */
function bm25Like(own: number, near: number, far: number, related: number, tokens: number): number {
  const f = own + near * 0.5 + far * 0.2 + related * 0.3
  return (f * 2.2) / (f + 1.2 * (0.25 + (0.75 * tokens) / 20))
}

/** Counts the statements that read blocks' peaks, on the handle's pooled connections. */
function watchPeakReads(handle: PostgresHandle): { n: number } {
  const seen = { n: 0 }
  const watched = new WeakSet<object>()
  const connect = handle.pool.connect.bind(handle.pool)
  handle.pool.connect = async () => {
    const client = await connect()
    if (!watched.has(client)) {
      watched.add(client)
      const query = client.query.bind(client)
      client.query = ((text: string, values?: readonly unknown[]) => {
        if (/SELECT first, last, peaks FROM index_blocks/.test(text)) seen.n++
        return query(text, values)
      }) as typeof client.query
    }
    return client
  }
  return seen
}

async function same(pg: SearchIndex, embedded: SearchIndex, when: string): Promise<number> {
  let compared = 0
  for (const query of QUERIES) {
    const want = await embedded.search(query)
    const got = await pg.search(query)
    const show = (hits: Array<{ id: string; lexical?: number }>) => hits.map((hit) => `${hit.id}=${hit.lexical}`).join(' ')
    assert.deepEqual(
      got.map((hit) => hit.id),
      want.map((hit) => hit.id),
      `${when}: ${JSON.stringify(query)}\n pg ${show(got).slice(0, 600)}\n sq ${show(want).slice(0, 600)}`,
    )
    for (const [i, hit] of want.entries()) {
      assert.ok(Math.abs(got[i]!.lexical! - hit.lexical!) <= 1e-9 * Math.abs(hit.lexical!), `${when}: score of ${hit.id} for ${JSON.stringify(query)}: ${got[i]!.lexical} vs ${hit.lexical}`)
      compared++
    }
  }
  return compared
}

onPostgres('one common word ranked best block first', (url) => {
  describe('one common word ranked best block first (PostgreSQL)', () => {
    test('ranks as the embedded index with ties, tombstones, filters and weights, reading a small part of the blocks', async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'engram-pg-term-ranking-'))
      const sqlite = openSqlite(join(dir, 'engram.db'))
      const { handle, cleanup } = await openTestHandle(url)
      let holder: Awaited<ReturnType<typeof handle.pool.connect>> | undefined
      try {
        const embedded = createSqliteSearchIndex(sqlite, { vectorBackend: 'typescript' })
        const pg = await createPostgresSearchIndex(handle)
        const peakReads = watchPeakReads(handle)
        const all = units()
        for (let i = 0; i < all.length; i += 1_000) {
          await embedded.upsert(all.slice(i, i + 1_000))
          await pg.upsert(all.slice(i, i + 1_000))
        }
        let compared = await same(pg, embedded, 'written in batches')
        // Every query but the one with a weight of 1e-9 and the one with a rarer word read the
        // peaks (the driver's statements, watched).
        assert.equal(peakReads.n, QUERIES.length - 2)

        // Read directly: the word's blocks, and how many the ten best took.
        const { rows: stats } = await handle.pool.query<{ blocks: number }>("SELECT count(*)::integer AS blocks FROM index_blocks WHERE term = 'plenti' AND units > 0")
        const ranking = await openTermRanking(handle.pool, 'plenti', { score: bm25Like })
        await ranking.rankAtLeast(10)
        assert.ok(ranking.ranked().length >= 10, JSON.stringify({ reads: ranking.reads, ranked: ranking.ranked().length, complete: ranking.complete }))
        const blocks = stats[0]!.blocks
        assert.ok(blocks >= 30, `${blocks} blocks`)
        assert.ok(ranking.reads.blocksRead * 4 <= blocks, `read ${ranking.reads.blocksRead} of ${blocks} blocks for the ten best`)
        t.diagnostic(`the ten best read ${ranking.reads.blocksRead} of ${blocks} blocks (${ranking.reads.postingsRead} postings) in ${ranking.reads.statements} statements`)

        // Rewrites and removals while another transaction holds every block: tombstones stay.
        holder = await handle.pool.connect()
        await holder.query('BEGIN')
        await holder.query('SELECT 1 FROM index_blocks FOR UPDATE')
        const rewritten = all.slice(0, 300).map((unit, i) => ({ ...unit, text: i % 2 === 0 ? 'plentiful' : `${unit.text} more words here`, hash: `r${i}` }))
        const removed = all.slice(300, 400).map((unit) => unit.id)
        for (const db of [embedded, pg]) {
          for (let i = 0; i < rewritten.length; i += 50) await db.upsert(rewritten.slice(i, i + 50))
          await db.remove(removed)
        }
        const { rows: tombs } = await handle.pool.query<{ n: number }>("SELECT count(*)::integer AS n FROM index_blocks WHERE term = 'plenti' AND units < 0")
        assert.ok(tombs[0]!.n > 0, 'tombstones of the word are left')
        compared += await same(pg, embedded, 'with tombstones left')
        await holder.query('ROLLBACK')
        holder.release()
        holder = undefined
        t.diagnostic(`${compared} hits compared over ${QUERIES.length * 2} queries`)
      } finally {
        if (holder) {
          await holder.query('ROLLBACK').catch(() => {})
          holder.release()
        }
        sqlite.close()
        rmSync(dir, { recursive: true, force: true })
        await cleanup()
      }
    })

    test('migration 11 gives the blocks written before it the peaks a fresh write gives them', async () => {
      const { handle, cleanup } = await openTestHandle(url)
      try {
        const pg = await createPostgresSearchIndex(handle)
        await pg.upsert(units().slice(0, 1_500))
        await pg.upsert(units().slice(0, 40).map((unit) => ({ ...unit, text: `${unit.text} again`, hash: `again:${unit.id}` })))
        const peaks = async () =>
          (await handle.pool.query<{ key: string }>("SELECT term || ' ' || first || ' ' || last || ' ' || units || ' ' || coalesce(encode(peaks, 'hex'), '-') AS key FROM index_blocks")).rows
            .map((row) => row.key)
            .sort()
        const written = await peaks()
        assert.ok(written.every((key) => key.split(' ')[3]!.startsWith('-') === key.endsWith(' -')), 'a tombstone has no peaks, every other block has')
        await handle.pool.query('UPDATE index_blocks SET peaks = NULL')
        await handle.transaction((client) => fillBlockPeaks(client))
        assert.deepEqual(await peaks(), written)
      } finally {
        await cleanup()
      }
    })
  })
})
