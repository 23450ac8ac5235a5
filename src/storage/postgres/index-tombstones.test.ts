// @slow: writes and rewrites units from several connections on the real PostgreSQL server
/**
 * Rewrites and removals as tombstones (decision 0094): writers on several connections rewrite the
 * same units at once, and the index holds what one write of the final units gives — the same live
 * postings, document frequencies, vocabulary and rankings (scores to the bit) — and the sweep folds
 * every tombstone away once no writer holds the blocks; migration 10 gives an existing index the
 * counts a fresh write stores; the stamp of a kind moves when a unit of it changes, and only then.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { systemClock } from '../../core/clock.ts'
import type { IndexUnit, SearchIndex, UnitKind } from '../contracts.ts'
import { openPostgres, type PostgresHandle } from './connection.ts'
import { applyPostgresMigrations } from './migrations.ts'
import { createPostgresSearchIndex } from './search-index.ts'
import { postingRows } from './test-support/posting-rows.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

const WORDS = 'the and tea coffee garden river deploy server database memory budget travel paris piano doctor recipe bread knee project report rain cat'.split(' ')

function unit(i: number, round: number): IndexUnit {
  const words = Array.from({ length: 4 + ((i * 7 + round * 3) % 9) }, (_, k) => WORDS[(i * 13 + k * (round + 5) + k * k) % WORDS.length]!)
  return {
    id: `m:${i}`,
    kind: 'message',
    text: `${words.join(' ')} w${i}`,
    source: `conv:${i % 3}`,
    provenance: [],
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    hash: `h${i}:${round}`,
    context: { near: round > 0 ? WORDS[(i + round) % WORDS.length]! : '', far: '' },
  }
}

/** Every word alone (all its units), and a few together. */
const QUERIES = [...WORDS.map((word) => [word]), ['tea', 'garden'], ['deploy', 'server', 'the'], ['w7', 'knee'], ['rain', 'cat', 'and']]

/** The postings as (unit id, term, counts) — rowids differ between schemas. */
async function postingsById(index: { pool: import('./driver.ts').PgPool }): Promise<string[]> {
  const { rows } = await index.pool.query<{ rowid: number; id: string }>('SELECT rowid, id FROM index_units')
  const ids = new Map(rows.map((row) => [Number(row.rowid), row.id]))
  return (await postingRows(index.pool)).map((p) => `${ids.get(p.rowid)} ${p.term} ${p.own} ${p.near} ${p.far} ${p.related} ${p.token_count} ${p.kind}`).sort()
}

async function rankings(index: SearchIndex): Promise<string[]> {
  const out: string[] = []
  for (const terms of QUERIES) for (const hit of await index.search({ terms, limit: 50 })) out.push(`${terms.join(' ')}: ${hit.id} ${hit.lexical}`)
  return out
}

/** Asserts that `index` (on `handle`) holds what one write of `units` into a fresh schema gives. */
async function sameAsWrittenOnce(url: string, handle: PostgresHandle, index: SearchIndex, units: IndexUnit[], when: string): Promise<void> {
  const { handle: fresh, cleanup } = await openTestHandle(url)
  try {
    const once = await createPostgresSearchIndex(fresh)
    await once.upsert(units)
    assert.deepEqual(await postingsById(handle), await postingsById(fresh), `${when}: live postings`)
    assert.deepEqual(await rankings(index), await rankings(once), `${when}: rankings and scores`)
    assert.deepEqual(await index.documentFrequencies?.(WORDS), await once.documentFrequencies?.(WORDS), when)
    assert.deepEqual([...((await index.vocabulary?.()) ?? [])].sort(), [...((await once.vocabulary?.()) ?? [])].sort(), when)
  } finally {
    await cleanup()
  }
}

onPostgres('tombstones of rewritten and removed units', (url) => {
  describe('tombstones of rewritten and removed units (PostgreSQL)', () => {
    test('writers rewriting the same units at once leave what one write of the final units gives; the sweep folds every tombstone', async () => {
      const { handle, cleanup } = await openTestHandle(url)
      const others = await Promise.all([1, 2, 3].map(() => openPostgres({ url, schema: handle.schema })))
      let holder: Awaited<ReturnType<typeof handle.pool.connect>> | undefined
      try {
        const writers = [await createPostgresSearchIndex(handle), ...(await Promise.all(others.map((other) => createPostgresSearchIndex(other))))]
        await writers[0]!.upsert(Array.from({ length: 40 }, (_, i) => unit(i, 0)))
        // Four connections rewrite overlapping units, one or two at a time (as appends re-index the
        // messages before them); the last round of each unit is written last by every writer.
        await Promise.all(
          writers.map(async (writer, w) => {
            for (let round = 1; round <= 6; round++) {
              for (let i = w; i < 40; i += 3) await writer.upsert(round % 2 === 0 ? [unit(i, round)] : [unit(i, round), unit((i + 1) % 40, round)])
            }
          }),
        )
        // The last round while another transaction holds every block (as a writer compacting
        // would): the writes neither wait for it nor lose anything — what they cannot fold is
        // left as tombstones, which reads subtract.
        holder = await handle.pool.connect()
        await holder.query('BEGIN')
        await holder.query('SELECT count(*) FROM (SELECT 1 FROM index_blocks FOR UPDATE) AS held')
        const last = Promise.all(
          writers.map(async (writer, w) => {
            for (let i = w; i < 40; i += 4) await writer.upsert([unit(i, 7)])
          }),
        ).then(() => Promise.all([writers[1]!.remove(['m:3']), writers[2]!.remove(['m:4'])]))
        const waited = await Promise.race([last.then(() => false), new Promise<boolean>((done) => setTimeout(() => done(true), 20_000).unref())])
        assert.equal(waited, false, 'a write waited for blocks another transaction held')
        const final = Array.from({ length: 40 }, (_, i) => unit(i, 7)).filter((u) => u.id !== 'm:3' && u.id !== 'm:4')

        const tombstones = async () => (await handle.pool.query<{ n: number }>('SELECT count(*)::integer AS n FROM index_blocks WHERE units < 0')).rows[0]!.n
        const index = writers[0]!
        const same = (when: string) => sameAsWrittenOnce(url, handle, index, final, when)
        const left = await tombstones()
        assert.ok(left > 0, 'tombstones were left where the blocks were held')
        await same(`after rewrites beside held blocks (${left} tombstone blocks)`)
        await holder.query('ROLLBACK')
        holder.release()
        holder = undefined
        // Writes of a rule, changing nothing else, until the sweeps (every 8 writes of the process) fold the rest.
        for (let n = 0; n < 64 && (await tombstones()) > 0; n++) {
          await index.upsert([{ id: 'r:1', kind: 'rule', text: `rule ${n}`, source: 'rules', provenance: [], createdAt: '2026-01-02T00:00:00Z', hash: `r${n}` }])
        }
        assert.equal(await tombstones(), 0, `the sweep folds every tombstone (${left} after the writers)`)
        await index.remove(['r:1'])
        await same('after the sweep')
      } finally {
        await holder?.query('ROLLBACK')
        holder?.release()
        await Promise.all(others.map((other) => other.close()))
        await cleanup()
      }
    })

    test('a source of more units than one statement takes is removed in slices: no posting of it is left, frequencies exact', async () => {
      const { handle, cleanup } = await openTestHandle(url)
      try {
        const index = await createPostgresSearchIndex(handle)
        const kept = Array.from({ length: 20 }, (_, i) => unit(i, 1))
        const bulk = Array.from({ length: 2_100 }, (_, i) => ({ ...unit(100 + i, 2), source: 'bulk' }))
        await index.upsert([...kept, ...bulk])
        assert.equal(await index.removeSource('bulk'), 2_100)
        await sameAsWrittenOnce(url, handle, index, kept, 'after the removal')
      } finally {
        await cleanup()
      }
    })

    test('migration 10 gives each unit the counts a fresh write stores, and a rewrite after it cancels the old postings', async () => {
      const { handle, cleanup } = await openTestHandle(url)
      try {
        const index = await createPostgresSearchIndex(handle)
        await index.upsert(Array.from({ length: 30 }, (_, i) => unit(i, 1)))
        const counts = async () => (await handle.pool.query<{ id: string; terms: string; counts: Buffer }>('SELECT id, terms, counts FROM index_units ORDER BY id')).rows
        const written = await counts()
        // The schema as migration 9 left it (migration 11's peaks undone too).
        await handle.pool.query(`DROP INDEX index_blocks_term; ALTER TABLE index_blocks DROP COLUMN peaks;
          CREATE INDEX index_blocks_term ON index_blocks (term, last) INCLUDE (first, units, own);
          ALTER TABLE index_units DROP COLUMN counts; DROP TABLE index_stamps; DROP INDEX index_blocks_tombstones;
          DELETE FROM schema_migrations WHERE version IN (10, 11)`)
        await applyPostgresMigrations(handle.pool, { schema: handle.schema, location: handle.location, clock: systemClock })
        assert.deepEqual(await counts(), written)
        const rewritten = Array.from({ length: 30 }, (_, i) => unit(i, 2))
        await index.upsert(rewritten)
        await sameAsWrittenOnce(url, handle, index, rewritten, 'rewritten after migration 10')
      } finally {
        await cleanup()
      }
    })

    test('the stamp of a kind changes when a unit of that kind is added, changed or removed, by this index or another, and only then', async () => {
      const { handle, cleanup } = await openTestHandle(url)
      const other = await openPostgres({ url, schema: handle.schema })
      try {
        const index = await createPostgresSearchIndex(handle)
        const elsewhere = await createPostgresSearchIndex(other)
        const of = (id: string, kind: UnitKind, text: string): IndexUnit => ({ id, kind, text, source: 's', provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: `${id}:${text}` })
        const stamp = () => (index.stamp as NonNullable<typeof index.stamp>)(['rule'])
        const first = await stamp()
        await index.upsert([of('r1', 'rule', 'Always answer in French.')])
        const afterRule = await stamp()
        assert.notEqual(afterRule, first, 'a rule added here')
        // What a turn writes besides rules: a message, and its previous message written again.
        await index.upsert([of('m1', 'message', 'hello there')])
        await index.upsert([of('m1', 'message', 'hello there'), of('r1', 'rule', 'Always answer in French.')])
        await index.recordAccess(['r1'], '2026-01-02T00:00:00Z')
        await index.flush?.()
        assert.equal(await stamp(), afterRule, 'no rule changed: a reader keeps what it listed')
        const changes: Array<[string, () => Promise<unknown>]> = [
          ['a rule changed here', () => index.upsert([of('r1', 'rule', 'Always answer in German.')])],
          ['a message that became a rule', () => index.upsert([of('m1', 'rule', 'hello there')])],
          ['a rule that became a message', () => index.upsert([of('m1', 'message', 'hello there')])],
          ['a rule added by another connection', () => elsewhere.upsert([of('r2', 'rule', 'Never use emoji.')])],
          ['a rule removed here', () => index.remove(['r2'])],
          ['a source removed by another connection', () => elsewhere.removeSource('s')],
        ]
        for (const [what, change] of changes) {
          const before = await stamp()
          await change()
          assert.notEqual(await stamp(), before, what)
        }
        assert.notEqual(await index.stamp?.(['message']), await index.stamp?.(['message']), 'messages have no stamp: never equal twice')
      } finally {
        await other.close()
        await cleanup()
      }
    })
  })
})
