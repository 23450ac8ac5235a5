import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { systemClock } from '../../core/clock.ts'
import type { IndexQuery, IndexUnit, SearchIndex, UnitKind } from '../contracts.ts'
import { ftsFields } from '../lexical-plan.ts'
import { openSqlite } from '../sqlite/database.ts'
import { createSqliteSearchIndex } from '../sqlite/search-index.ts'
import { unicode61Tokens } from '../unicode61.ts'
import { openPostgres, type PostgresHandle } from './connection.ts'
import { postingRows } from './test-support/posting-rows.ts'
import { applyPostgresMigrations } from './migrations.ts'
import { createPostgresSearchIndex } from './search-index.ts'
import { freshSchema, onPostgres, openTestHandle } from './test-support/test-database.ts'

const INDEX_WORKER = new URL('./test-support/pg-index-worker.ts', import.meta.url).pathname

/** A deterministic pseudo-random generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
}

const WORDS = `tea coffee garden river mountain python rust deploy server database index memory lesson rule budget invoice
travel paris berlin kyoto piano violin guitar doctor appointment birthday gift recipe pasta bread sourdough running marathon
knee injury project deadline review meeting report chart weather rain snow cat dog hamster novel poem library museum train
flight hotel beach camping tent kayak bicycle helmet camera photo album wedding cousin sister brother grandmother garden
tomato basil pepper chili spice curry noodle ramen sushi dumpling festival lantern concert ticket stadium football tennis`.split(/\s+/)
const SPECIAL = ['café', 'naïve', 'Ελληνικά', 'άλφα', 'йогурт', 'Straße', 'smörgåsbord', '東京', 'crème brûlée', 'O\u2019Reilly', 'résumé']

function sentence(next: () => number, length: number): string {
  const out: string[] = []
  for (let i = 0; i < length; i++) {
    const r = next()
    // Zipf-ish: low indices much more common.
    const word = r < 0.06 ? SPECIAL[Math.floor(next() * SPECIAL.length)]! : WORDS[Math.floor(WORDS.length * next() ** 2.2)]!
    out.push(word)
    if (next() < 0.15) out.push('the', 'and')
    if (next() < 0.05) out.push(word, word)
  }
  return out.join(' ')
}

const KINDS: UnitKind[] = ['message', 'message', 'message', 'lesson', 'knowledge', 'summary', 'skill', 'episode']

function corpus(count: number, seed: number, dims: number): IndexUnit[] {
  const next = random(seed)
  const units: IndexUnit[] = []
  for (let i = 0; i < count; i++) {
    const kind = KINDS[Math.floor(next() * KINDS.length)]!
    const text = sentence(next, 3 + Math.floor(next() * 25))
    const ownerRoll = next()
    const owner = ownerRoll < 0.6 ? 'agent' : ownerRoll < 0.8 ? 'shared' : `user:${next() < 0.5 ? 'ana' : 'bo'}`
    const vector = new Float32Array(dims).map(() => next() * 2 - 1)
    const unit: IndexUnit = {
      id: `${kind}:${i}`,
      kind,
      text,
      source: kind === 'message' ? `conv:${i % 9}` : `${kind}/doc-${i % 13}.md`,
      provenance: [`msg:${i}`],
      owner: owner as IndexUnit['owner'],
      createdAt: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
      hash: `h${i}`,
      vector,
    }
    if (owner !== 'shared') unit.agent = next() < 0.8 ? 'main' : 'other'
    if (owner.startsWith('user:')) unit.user = owner.slice(5)
    if (kind === 'message') {
      unit.context = { near: sentence(next, 10), far: sentence(next, 8) }
      unit.meta = { name: next() < 0.5 ? 'Ana' : 'Bo' }
    }
    units.push(unit)
  }
  return units
}

/** Units holding `word` in most of them, to push terms over the posting cap (3,000). */
function crowd(count: number): IndexUnit[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `crowd:${i}`,
    kind: 'activity' as const,
    text: `crowded ${i % 3 === 0 ? 'throng' : 'multitude'} ${i % 2 === 0 ? 'gathering' : ''} ${WORDS[i % WORDS.length]}`,
    source: 'activity/crowd.jsonl',
    provenance: [],
    createdAt: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString(),
    hash: `c${i}`,
  }))
}

function parityQueries(): IndexQuery[] {
  const base: IndexQuery[] = [
    { text: 'tea', limit: 10 },
    { text: 'coffee garden', limit: 10 },
    { text: 'sourdough bread recipe', limit: 20 },
    { text: 'cafe', limit: 10 },
    { text: 'café naïve', limit: 10 },
    { text: 'Ελληνικά', limit: 10 },
    { text: 'άλφα', limit: 10 },
    { text: 'йогурт', limit: 10 },
    { text: 'strasse straße', limit: 10 },
    { text: '東京', limit: 10 },
    { text: 'creme brulee', limit: 10 },
    { text: "o'reilly", limit: 10 },
    { text: 'resume résumé', limit: 10 },
    { text: 'the and', limit: 15 },
    { text: 'tea tea tea tea coffee', limit: 10 },
    { terms: ['tea', 'tea', 'garden'], limit: 10 },
    { text: 'python rust deploy server database', limit: 25 },
    { text: 'knee injury marathon running', limit: 25 },
    { text: 'festival lantern concert ticket stadium football', limit: 30 },
    { text: 'hamster', limit: 50 },
    { text: 'nothingmatchesthis', limit: 10 },
    { text: 'crowded', limit: 10 },
    { text: 'crowded multitude', limit: 10 },
    { text: 'crowded throng gathering', limit: 10 },
    { text: 'crowded tea', limit: 10 },
    { text: 'multitude garden river', limit: 20 },
    { text: 'gathering tea coffee', limit: 20 },
    { text: 'tea', limit: 500 },
    { text: 'garden', limit: 1 },
  ]
  const filtered: IndexQuery[] = [
    { text: 'tea coffee', kinds: ['message'], limit: 10 },
    { text: 'tea coffee', kinds: ['skill', 'lesson'], limit: 10 },
    { text: 'garden river', kinds: ['activity', 'message'], limit: 10 },
    { text: 'garden', viewer: { agent: 'main' }, limit: 10 },
    { text: 'garden river', viewer: { agent: 'main', user: 'ana' }, limit: 10 },
    { text: 'paris travel', viewer: { agent: 'other', user: 'bo' }, limit: 10 },
    { text: 'piano violin', since: '2026-01-05T00:00:00.000Z', limit: 10 },
    { text: 'piano violin', until: '2026-01-05T00:00:00.000Z', limit: 10 },
    { text: 'doctor appointment', since: '2026-01-03T00:00:00.000Z', until: '2026-01-10T00:00:00.000Z', limit: 10 },
    { text: 'tea', sources: ['conv:1', 'conv:2'], limit: 10 },
    { text: 'tea', agent: 'main', user: 'ana', limit: 10 },
    { text: 'crowded gathering', kinds: ['activity'], limit: 10 },
    { text: 'tea garden', fieldWeights: { near: 0, far: 0, related: 0 }, limit: 20 },
    { text: 'tea garden', fieldWeights: { near: 1, far: 1, related: 1 }, limit: 20 },
    { text: 'river mountain', fieldWeights: { near: 0.7, far: 0.1, related: 0.9 }, limit: 20 },
    { text: 'cat dog', fieldWeights: { near: 0.5, far: 0, related: 0.3 }, kinds: ['message'], limit: 20 },
    { terms: ['cafe', 'Café', 'tea'], limit: 10 },
    { terms: ['multitud', 'throng'], limit: 10 },
    { text: 'spice curry noodle ramen sushi dumpling', viewer: { agent: 'main' }, kinds: ['message', 'summary'], limit: 10 },
    { text: 'wedding cousin sister brother grandmother', limit: 40 },
  ]
  return [...base, ...filtered]
}

function ids(hits: Array<{ id: string }>): string[] {
  return hits.map((hit) => hit.id)
}

onPostgres('SearchIndex', (url) => {
  describe('ranking parity with the embedded index', () => {
    test('the same units and queries give the same ids in the same order, scores within 1e-6, and the same nearest vectors', async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'engram-pg-parity-'))
      const sqlite = openSqlite(join(dir, 'engram.db'))
      const { handle, cleanup } = await openTestHandle(url)
      try {
        const embedded = createSqliteSearchIndex(sqlite, { vectorBackend: 'typescript' })
        const pg = await createPostgresSearchIndex(handle)
        const units = [...corpus(400, 7, 8), ...crowd(3_200)]
        for (let i = 0; i < units.length; i += 500) {
          await embedded.upsert(units.slice(i, i + 500))
          await pg.upsert(units.slice(i, i + 500))
        }
        // Some units rewritten and removed, so statistics go through updates and deletes too.
        const rewritten = units.slice(0, 40).map((unit, i) => ({ ...unit, text: `${unit.text} rewritten tea ${i}`, hash: `r${i}` }))
        await embedded.upsert(rewritten)
        await pg.upsert(rewritten)
        await embedded.remove(units.slice(40, 50).map((unit) => unit.id))
        await pg.remove(units.slice(40, 50).map((unit) => unit.id))
        let compared = 0
        let identical = 0
        for (const query of parityQueries()) {
          const want = await embedded.search(query)
          const got = await pg.search(query)
          const show = (hits: Array<{ id: string; lexical?: number }>) => hits.map((hit) => `${hit.id}=${hit.lexical}`).join(' ')
          assert.deepEqual(ids(got), ids(want), `ids of ${JSON.stringify(query)}\n pg ${show(got)}\n sq ${show(want)}`)
          for (const [i, hit] of want.entries()) {
            const ours = got[i]!.lexical!
            assert.ok(Math.abs(ours - hit.lexical!) <= 1e-6 * Math.abs(hit.lexical!), `score of ${hit.id} for ${JSON.stringify(query)}: ${ours} vs ${hit.lexical}`)
            compared++
            if (ours === hit.lexical) identical++
          }
        }
        assert.ok(compared > 300, `compared ${compared} hits`)
        t.diagnostic(`${compared} lexical hits compared over ${parityQueries().length} queries, ${identical} with bit-identical scores`)
        const next = random(99)
        for (let q = 0; q < 10; q++) {
          const vector = new Float32Array(8).map(() => next() * 2 - 1)
          for (const filter of [{}, { kinds: ['message'] as UnitKind[] }, { viewer: { agent: 'main', user: 'ana' } }]) {
            const want = await embedded.search({ vector, limit: 15, ...filter })
            const got = await pg.search({ vector, limit: 15, ...filter })
            assert.deepEqual(ids(got), ids(want))
            for (const [i, hit] of want.entries()) assert.ok(Math.abs(got[i]!.dense! - hit.dense!) < 1e-6)
          }
        }
        assert.deepEqual([...((await pg.vocabulary?.()) ?? [])].sort(), [...((await embedded.vocabulary?.()) ?? [])].sort())
        const words = ['tea', 'cafe', 'crowd', 'the', 'άλφα', 'nothing']
        assert.deepEqual(await pg.documentFrequencies?.(words), await embedded.documentFrequencies?.(words))
        assert.deepEqual(await pg.participants?.('main'), await embedded.participants?.('main'))
        assert.deepEqual(await pg.count(), await embedded.count())
      } finally {
        sqlite.close()
        rmSync(dir, { recursive: true, force: true })
        await cleanup()
      }
    })

    test('units written one at a time: small blocks are merged, and rewrites and removals after the merge rank as the embedded index', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'engram-pg-merge-'))
      const sqlite = openSqlite(join(dir, 'engram.db'))
      const { handle, cleanup } = await openTestHandle(url)
      try {
        const embedded = createSqliteSearchIndex(sqlite, { vectorBackend: 'typescript' })
        const pg = await createPostgresSearchIndex(handle)
        const units = [...corpus(120, 21, 4), ...crowd(60)].map(({ vector: _, ...unit }) => unit)
        for (const unit of units) {
          await embedded.upsert([unit])
          await pg.upsert([unit])
        }
        // 180 single writes of 'crowd…' and common words: without merging, a block per posting.
        const { rows } = await handle.pool.query<{ blocks: number; postings: number }>(
          "SELECT count(*)::integer AS blocks, sum(units)::integer AS postings FROM index_blocks WHERE term = 'crowd'",
        )
        assert.equal(rows[0]?.postings, 60)
        assert.ok((rows[0]?.blocks ?? 99) < 20, `${rows[0]?.blocks} blocks of 'crowd'`)
        const same = async (when: string) => {
          // Ids and order exactly; scores to the last bits or so: written one at a time, FTS5's
          // scores differ from the same formula's in the last bit now and then (so did migration 8's).
          for (const query of parityQueries()) {
            const want = await embedded.search(query)
            const got = await pg.search(query)
            assert.deepEqual(ids(got), ids(want), `${when}: ${JSON.stringify(query)}`)
            for (const [i, hit] of want.entries()) assert.ok(Math.abs(got[i]!.lexical! - hit.lexical!) <= 1e-12 * Math.abs(hit.lexical!), `${when}: ${hit.id}`)
          }
          const words = ['tea', 'crowd', 'the', 'garden']
          assert.deepEqual(await pg.documentFrequencies?.(words), await embedded.documentFrequencies?.(words))
        }
        await same('written one at a time')
        for (const db of [embedded, pg]) {
          for (const [i, unit] of units.slice(100, 130).entries()) await db.upsert([{ ...unit, text: `${unit.text} rewritten tea ${i}`, hash: `r${i}` }])
          await db.remove(units.slice(130, 150).map((unit) => unit.id))
          await db.purgeUser('ana')
        }
        await same('after rewrites and removals')
        const left = new Set((await postingRows(handle.pool)).map((p) => p.rowid))
        const { rows: live } = await handle.pool.query<{ rowid: number }>('SELECT rowid FROM index_units')
        assert.deepEqual([...left].sort((a, b) => a - b), live.map((row) => row.rowid).sort((a, b) => a - b), 'no posting of a removed unit is left')
      } finally {
        sqlite.close()
        rmSync(dir, { recursive: true, force: true })
        await cleanup()
      }
    })
  })

  describe('a database written before the postings (migration 7)', () => {
    test('migration 8 builds the postings from tf: the same postings as a fresh write, the same ranking, and writes go on', async () => {
      const { handle: fresh, cleanup } = await openTestHandle(url)
      const old = freshSchema()
      let migrated: PostgresHandle | undefined
      try {
        const units = [...corpus(300, 13, 4), ...crowd(200)].map(({ vector: _, ...unit }) => unit)
        const reference = await createPostgresSearchIndex(fresh)
        await reference.upsert(units)
        // The rows as migration 7's search-index.ts wrote them: per unit its length and, per
        // token of own, near, far and related, its counts there (tf), with a GIN on the tokens.
        await applyPostgresMigrations(fresh.pool, { schema: old, location: 'test', clock: systemClock, upTo: 7 })
        const rows = units.map((unit) => {
          const fields = ftsFields(unit).map(unicode61Tokens)
          const tf = new Map<string, number[]>()
          for (const [column, tokens] of fields.slice(0, 4).entries()) {
            for (const token of tokens) {
              const counts = tf.get(token) ?? [0, 0, 0, 0]
              counts[column]!++
              tf.set(token, counts)
            }
          }
          return { unit, tokenCount: fields.reduce((sum, tokens) => sum + tokens.length, 0), tf: JSON.stringify(Object.fromEntries(tf)) }
        })
        await fresh.pool.query(
          `INSERT INTO "${old}".index_units (id, kind, text, source, provenance, scope, agent, user_id, owner, created_at, hash, meta, token_count, terms, tf)
           SELECT v.id, v.kind, v.text, v.source, '[]', NULL, v.agent, v.user_id, v.owner, v.created_at, v.hash, v.meta::json, v.token_count,
             ARRAY(SELECT jsonb_object_keys(v.tf::jsonb)), v.tf::jsonb
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::text[], $10::text[], $11::integer[], $12::text[])
             WITH ORDINALITY AS v(id, kind, text, source, agent, user_id, owner, created_at, hash, meta, token_count, tf, ord)
           ORDER BY v.ord`,
          [
            units.map((u) => u.id),
            units.map((u) => u.kind),
            units.map((u) => u.text),
            units.map((u) => u.source),
            units.map((u) => u.agent ?? null),
            units.map((u) => u.user ?? null),
            units.map((u) => u.owner ?? 'agent'),
            units.map((u) => u.createdAt),
            units.map((u) => u.hash),
            units.map((u) => (u.meta === undefined ? null : JSON.stringify(u.meta))),
            rows.map((r) => r.tokenCount),
            rows.map((r) => r.tf),
          ],
        )
        await fresh.pool.query(
          `INSERT INTO "${old}".index_terms (term, units_any, units_own)
           SELECT t.key, count(*), count(*) FILTER (WHERE (t.value ->> 0)::integer > 0) FROM "${old}".index_units u, jsonb_each(u.tf) AS t GROUP BY t.key`,
        )
        await fresh.pool.query(`UPDATE "${old}".index_stats SET units = (SELECT count(*) FROM "${old}".index_units), tokens = (SELECT sum(token_count) FROM "${old}".index_units)`)
        await fresh.pool.query(
          `INSERT INTO "${old}".index_names (agent, name) SELECT DISTINCT coalesce(agent, ''), meta ->> 'name' FROM "${old}".index_units WHERE meta ->> 'name' IS NOT NULL`,
        )
        migrated = await openPostgres({ url, schema: old })
        const index = await createPostgresSearchIndex(migrated)
        const postings = (db: PostgresHandle) => postingRows(db.pool)
        const fromTf = await postings(migrated)
        assert.ok(fromTf.length > 5_000, `${fromTf.length} postings`)
        assert.deepEqual(fromTf, await postings(fresh))
        const same = async () => {
          for (const query of parityQueries()) {
            const want = (await reference.search(query)).map((hit) => [hit.id, hit.lexical])
            assert.deepEqual((await index.search(query)).map((hit) => [hit.id, hit.lexical]), want, JSON.stringify(query))
          }
          assert.deepEqual(await index.documentFrequencies?.(['tea', 'crowd', 'the']), await reference.documentFrequencies?.(['tea', 'crowd', 'the']))
        }
        await same()
        const rewritten = units.slice(0, 30).map((unit, i) => ({ ...unit, text: `${unit.text} rewritten tea ${i}`, hash: `r${i}` }))
        for (const db of [reference, index]) {
          await db.upsert(rewritten)
          await db.remove(units.slice(30, 40).map((unit) => unit.id))
          await db.purgeUser('ana')
        }
        await same()
      } finally {
        await migrated?.close()
        await fresh.pool.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`)
        await cleanup()
      }
    })
  })

  describe('nearest vectors through the HNSW index', () => {
    test('approximate search finds nearly all the exact nearest, and a selective filter still fills the page', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'engram-pg-hnsw-'))
      const sqlite = openSqlite(join(dir, 'engram.db'))
      const { handle, cleanup } = await openTestHandle(url)
      try {
        const exact = createSqliteSearchIndex(sqlite, { vectorBackend: 'typescript' })
        const pg = await createPostgresSearchIndex(handle, { exactVectorsUpTo: 0 })
        const units = corpus(800, 11, 16)
        await exact.upsert(units)
        await pg.upsert(units)
        const plan = await handle.pool.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM index_units u WHERE u.has_vector AND vector_dims(u.embedding) = 16 ORDER BY u.embedding::vector(16) <=> $1::vector(16) LIMIT 10`,
          [`[${new Array(16).fill(0.1).join(',')}]`],
        )
        assert.match(plan.rows.map((row) => row['QUERY PLAN']).join('\n'), /index_units_embedding_hnsw/)
        const next = random(5)
        let found = 0
        let wanted = 0
        for (let q = 0; q < 20; q++) {
          const vector = new Float32Array(16).map(() => next() * 2 - 1)
          for (const filter of [{}, { kinds: ['skill'] as UnitKind[] }]) {
            const want = ids(await exact.search({ vector, limit: 10, ...filter }))
            const got = await pg.search({ vector, limit: 10, ...filter })
            assert.equal(got.length, want.length, 'a filtered page is filled as far as the filter allows')
            const gotIds = new Set(ids(got))
            found += want.filter((id) => gotIds.has(id)).length
            wanted += want.length
          }
        }
        assert.ok(found / wanted >= 0.95, `recall@10 ${found}/${wanted}`)
      } finally {
        sqlite.close()
        rmSync(dir, { recursive: true, force: true })
        await cleanup()
      }
    })
  })

  describe('PostgreSQL search index', () => {
    async function withIndex(
      fn: (index: SearchIndex, reopen: (options?: { embedderId?: string }) => Promise<SearchIndex>, handle: PostgresHandle) => Promise<void>,
      options = {},
    ) {
      const { handle, cleanup } = await openTestHandle(url)
      try {
        await fn(await createPostgresSearchIndex(handle, options), (again = {}) => createPostgresSearchIndex(handle, again), handle)
      } finally {
        await cleanup()
      }
    }
    const unit = (id: string, text: string, extra: Partial<IndexUnit> = {}): IndexUnit => ({
      id,
      kind: 'message',
      text,
      source: 'conv:1',
      provenance: [],
      createdAt: '2026-01-01T00:00:00.000Z',
      hash: `h:${text}`,
      ...extra,
    })

    test('opening with another embedder drops vectors and blanks the hashes of the units that had one', () =>
      withIndex(
        async (index, reopen, handle) => {
          await index.upsert([unit('a', 'alpha', { vector: new Float32Array([1, 0, 0]) }), unit('b', 'beta')])
          // A reader's snapshot keeps the old 3-dimensional row versions alive while the 4-dimensional index is built.
          const reader = await handle.pool.connect()
          try {
            await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
            await reader.query('SELECT pg_current_snapshot()')
            const other = await reopen({ embedderId: 'e2' })
            assert.deepEqual(await other.hashes('conv:1'), new Map([['a', ''], ['b', 'h:beta']]))
            assert.deepEqual(await other.search({ vector: new Float32Array([1, 0, 0, 0]), limit: 5 }), [], 'no vectors, and no size fixed')
            await other.upsert([unit('a', 'alpha', { vector: new Float32Array([0, 1, 0, 0]) })])
            assert.equal((await other.search({ vector: new Float32Array([0, 1, 0, 0]), limit: 5 }))[0]?.id, 'a')
          } finally {
            await reader.query('COMMIT')
            reader.release()
          }
        },
        { embedderId: 'e1' },
      ))

    test('vectors too large for pgvector’s HNSW (over 2,000 dimensions) are stored and searched exactly', async () => {
      const { handle, cleanup } = await openTestHandle(url)
      try {
        const index = await createPostgresSearchIndex(handle, { exactVectorsUpTo: 0 })
        const big = (hot: number) => new Float32Array(3_072).map((_, i) => (i === hot ? 1 : 0.001))
        await index.upsert([unit('a', 'alpha', { vector: big(5) }), unit('b', 'beta', { vector: big(9) })])
        assert.deepEqual(ids(await index.search({ vector: big(9), limit: 1 })), ['b'])
      } finally {
        await cleanup()
      }
    })

    test('dimensions given up front refuse other sizes with the SQLite message', () =>
      withIndex(
        async (index) => {
          await assert.rejects(index.upsert([unit('a', 'alpha', { vector: new Float32Array([1, 0]) })]), /units\[0\]\.vector has 2 dimensions; this index holds 3-dimensional vectors/)
        },
        { dimensions: 3 },
      ))

    test('access counts are batched, read back at once, and written on flush without moving last access backwards', () =>
      withIndex(async (index, reopen) => {
        await index.upsert([unit('a', 'alpha'), unit('b', 'beta')])
        await index.recordAccess(['a', 'a', 'b'], '2026-02-02T00:00:00.000Z')
        await index.recordAccess(['a'], '2026-02-01T00:00:00.000Z')
        const [a] = await index.get(['a'])
        assert.equal(a?.accessCount, 2)
        const other = await reopen()
        assert.equal((await other.get(['a']))[0]?.accessCount, 0, 'not written yet')
        await index.flush?.()
        const [written] = await other.get(['a'])
        assert.equal(written?.accessCount, 2)
        assert.equal(written?.lastAccessAt, '2026-02-02T00:00:00.000Z')
        await other.recordAccess(['a'], '2026-01-01T00:00:00.000Z')
        await other.flush?.()
        assert.equal((await index.get(['a']))[0]?.lastAccessAt, '2026-02-02T00:00:00.000Z')
      }))

    test('purgeUser takes the user’s words out of the vocabulary and the names no message carries', () =>
      withIndex(async (index) => {
        await index.upsert([
          unit('a', 'zanzibar secret', { owner: 'user:ana', user: 'ana', agent: 'main', meta: { name: 'Ana' } }),
          unit('b', 'common words', { agent: 'main', meta: { name: 'Bo' } }),
        ])
        assert.ok((await index.vocabulary?.())?.has('zanzibar'))
        assert.deepEqual(await index.participants?.('main'), ['Ana', 'Bo'])
        assert.equal(await index.purgeUser('ana'), 1)
        assert.equal((await index.vocabulary?.())?.has('zanzibar'), false)
        assert.deepEqual(await index.documentFrequencies?.(['zanzibar', 'common']), new Map([['zanzibar', 0], ['common', 1]]))
        assert.deepEqual(await index.participants?.('main'), ['Bo'])
        assert.deepEqual(await index.search({ text: 'zanzibar', limit: 5 }), [])
      }))

    test('U+0000 in a unit is stored as U+FFFD in the index, and the unit is still found', () =>
      withIndex(async (index) => {
        await index.upsert([unit('a', 'before\u0000after', { hash: 'h', meta: { note: 'x\u0000y', 'k\u0000': 1 }, provenance: ['p\u0000'] })])
        const [stored] = await index.get(['a'])
        assert.equal(stored?.text, 'before\ufffdafter')
        assert.deepEqual(stored?.meta, { note: 'x\ufffdy', 'k\ufffd': 1 })
        assert.deepEqual(stored?.provenance, ['p\ufffd'])
        assert.deepEqual(ids(await index.search({ text: 'after', limit: 5 })), ['a'])
      }))

    test('four processes upserting overlapping units at once store each exactly once, statistics exact', async () => {
      const { handle, cleanup } = await openTestHandle(url)
      const dir = mkdtempSync(join(tmpdir(), 'engram-pg-index-race-'))
      try {
        const index = await createPostgresSearchIndex(handle)
        const startFile = join(dir, 'start')
        const ranges = [
          [0, 300],
          [100, 400],
          [200, 500],
          [0, 500],
        ]
        const children = ranges.map(([from, to]) => {
          const child = spawn(process.execPath, [INDEX_WORKER, url, handle.schema, String(from), String(to), startFile], { stdio: ['ignore', 'pipe', 'pipe'] })
          let out = ''
          let err = ''
          child.stdout.on('data', (chunk) => {
            out += chunk
          })
          child.stderr.on('data', (chunk) => {
            err += chunk
          })
          const ready = new Promise<void>((resolve) => {
            const check = () => (out.includes('ready') ? resolve() : setTimeout(check, 10))
            check()
          })
          const done = new Promise<void>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited ${code}: ${err}`)))))
          return { ready, done }
        })
        await Promise.all(children.map((c) => c.ready))
        writeFileSync(startFile, '')
        await Promise.all(children.map((c) => c.done))
        assert.equal((await index.count()).message, 500)
        const { rows } = await handle.pool.query<{ units: number; tokens: number; real_tokens: number; real_units: number }>(
          'SELECT sum(s.units)::bigint AS units, sum(s.tokens)::bigint AS tokens, (SELECT sum(token_count) FROM index_units)::bigint AS real_tokens, (SELECT count(*) FROM index_units) AS real_units FROM index_stats s',
        )
        assert.equal(rows[0]?.units, 500)
        assert.equal(rows[0]?.real_units, 500)
        assert.equal(rows[0]?.tokens, rows[0]?.real_tokens)
        const df = await index.documentFrequencies?.(['unit', 'appl', 'tiger'])
        const real = (await postingRows(handle.pool)).filter((p) => p.term === 'tiger' && p.own > 0).length
        assert.equal(df?.get('unit'), 500)
        assert.equal(df?.get('tiger'), real)
        assert.deepEqual(await index.participants?.(), ['Speaker0', 'Speaker1', 'Speaker2', 'Speaker3', 'Speaker4'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
        await cleanup()
      }
    })
  })
})
