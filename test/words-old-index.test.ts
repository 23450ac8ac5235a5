// @slow: opens homes three times on both backends, PostgreSQL included
/**
 * A home indexed before text in unspaced scripts was cut into words (decision 0076) keeps working:
 * its index held a run of Japanese or Chinese as one term. Opening it re-cuts those rows once,
 * in place, on both backends, to exactly what a fresh index holds; English rows are untouched.
 * The old index is made from a fresh one by writing the old analysis back into it (a run of
 * letters between separators is one term), which is what an index of the build before holds.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { createMind, type CreateMindOptions } from '../src/index.ts'
import { openPostgres } from '../src/storage/postgres/connection.ts'
import { postingRows } from '../src/storage/postgres/test-support/posting-rows.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { MAX_WORD_CHARS, stem } from '../src/text/analyse.ts'

const NOTES = [
  'デプロイトークンは九十日ごとにローテーションします',
  '部署令牌每九十天轮换一次',
  'The deploy tokens are rotated every ninety days',
]
const QUERIES: Array<[query: string, note: string]> = [
  ['トークンのローテーション', NOTES[0] as string],
  ['令牌轮换', NOTES[1] as string],
  ['rotating deploy tokens', NOTES[2] as string],
]

/** The analysis of the build before: every run of letters and digits one term (stemmed when ASCII). */
function oldAnalysis(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}']+/u)
    .filter((part) => part !== '')
    .map((part) => stem(part.slice(0, MAX_WORD_CHARS)))
    .join(' ')
}

async function indexedHome(options: CreateMindOptions): Promise<void> {
  const mind = await createMind(options)
  for (const text of NOTES) await mind.memories.add({ user: 'ada', text, kind: 'lesson' })
  await mind.close()
}

async function searchesFind(options: CreateMindOptions): Promise<void> {
  const mind = await createMind(options)
  try {
    for (const [query, note] of QUERIES) {
      const hits = await mind.memories.search(query, { user: 'ada', limit: 3 })
      assert.equal(hits[0]?.text, note, `${query}: ${JSON.stringify(hits.map((hit) => hit.text))}`)
    }
  } finally {
    await mind.close()
  }
}

test('an embedded index written before segmentation is re-cut on open, to what a fresh index holds', async (t) => {
  const tmp = makeTempHome('engram-words-old-')
  t.after(tmp.cleanup)
  const options: CreateMindOptions = { home: tmp.home, env: { ...tmp.env, ENGRAM_EMBED_PROVIDER: 'none' }, ignoreConfigFile: true }
  await indexedHome(options)
  const file = join(tmp.home, 'engram.db')
  const fresh = (db: DatabaseSync) => db.prepare('SELECT f.rowid, f.own, f.near, f.far, f.related, f.kind, u.text FROM index_fts f JOIN index_units u ON u.rowid = f.rowid ORDER BY f.rowid').all()
  let db = new DatabaseSync(file)
  const expected = fresh(db)
  assert.ok(expected.length >= NOTES.length)
  // The build before: each row's own text analysed the old way, and the layout it wrote.
  for (const row of expected as Array<{ rowid: number; text: string }>) db.prepare('UPDATE index_fts SET own = ? WHERE rowid = ?').run(oldAnalysis(row.text), row.rowid)
  db.prepare("UPDATE meta SET value = 'analysed-fields-v2' WHERE key = 'index.fts_layout'").run()
  assert.notDeepEqual(fresh(db), expected)
  const english = expected.find((row) => row.text === NOTES[2])
  assert.equal(db.prepare('SELECT own FROM index_fts WHERE rowid = ?').get(english?.rowid as number)?.own, english?.own, 'English is analysed as it was')
  db.close()

  await searchesFind(options)
  db = new DatabaseSync(file)
  assert.deepEqual(fresh(db), expected)
  assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'index.fts_layout'").get()?.value, 'analysed-fields-v3')
  db.close()
})

onPostgres('an old index on PostgreSQL', (url) => {
  test('a PostgreSQL index written before segmentation is re-cut on open: postings, term counts and lengths as a fresh index has them', async (t) => {
    const tmp = makeTempHome('engram-words-old-pg-')
    const schema = freshSchema()
    t.after(async () => {
      await dropSchema(url, schema)
      tmp.cleanup()
    })
    const options: CreateMindOptions = { home: tmp.home, env: { ...tmp.env, ENGRAM_EMBED_PROVIDER: 'none', ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }, ignoreConfigFile: true }
    await indexedHome(options)
    const handle = await openPostgres({ url, schema })
    const state = async () => ({
      postings: await postingRows(handle.pool),
      terms: (await handle.pool.query('SELECT term, sum(units)::integer AS units_any, sum(own)::integer AS units_own FROM index_blocks GROUP BY term ORDER BY term COLLATE "C"')).rows,
      stats: (await handle.pool.query('SELECT sum(units)::integer AS units, sum(tokens)::integer AS tokens FROM index_stats')).rows,
      lengths: (await handle.pool.query('SELECT rowid::integer, token_count FROM index_units ORDER BY rowid')).rows,
    })
    try {
      const expected = await state()
      // The layout of the build before (migration 8): a row per posting, a row per term, one stats
      // row; migrations 9 to 11 are applied again on the next open.
      const postings = await postingRows(handle.pool)
      await handle.pool.query(`CREATE TABLE index_postings (rowid bigint NOT NULL, own integer NOT NULL, near integer NOT NULL, far integer NOT NULL,
          related integer NOT NULL, token_count integer NOT NULL, kind text NOT NULL, term text NOT NULL);
        ALTER TABLE index_postings ADD PRIMARY KEY (term, rowid) INCLUDE (own, near, far, related, token_count, kind);
        CREATE INDEX index_postings_rowid ON index_postings (rowid);
        CREATE TABLE index_terms (term text PRIMARY KEY, units_any integer NOT NULL, units_own integer NOT NULL);
        CREATE TABLE index_stats_old AS SELECT sum(units)::bigint AS units, sum(tokens)::bigint AS tokens, sum(vectors)::bigint AS vectors FROM index_stats;
        DELETE FROM index_stats; ALTER TABLE index_stats ADD COLUMN only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row);
        INSERT INTO index_stats (units, tokens, vectors) SELECT * FROM index_stats_old; DROP TABLE index_stats_old;
        DROP TABLE index_stamps; ALTER TABLE index_units DROP COLUMN counts;
        DROP TABLE index_blocks; ALTER TABLE index_units DROP COLUMN terms; DELETE FROM schema_migrations WHERE version IN (9, 10, 11);`)
      await handle.pool.query(
        `INSERT INTO index_postings (term, rowid, own, near, far, related, token_count, kind)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[], $5::integer[], $6::integer[], $7::integer[], $8::text[])`,
        [
          postings.map((p) => p.term),
          postings.map((p) => p.rowid),
          postings.map((p) => p.own),
          postings.map((p) => p.near),
          postings.map((p) => p.far),
          postings.map((p) => p.related),
          postings.map((p) => p.token_count),
          postings.map((p) => p.kind),
        ],
      )
      // The build before: each unit's own terms the old way (one per run of letters), its counts
      // and lengths to match, and no note that the postings were re-cut.
      const units = (await handle.pool.query<{ rowid: number; text: string; kind: string; token_count: number }>('SELECT rowid::integer, text, kind, token_count FROM index_units')).rows
      for (const unit of units) {
        const { rows: gone } = await handle.pool.query<{ own: number }>('DELETE FROM index_postings WHERE rowid = $1 AND own > 0 RETURNING own', [unit.rowid])
        const old = new Map<string, number>()
        for (const term of oldAnalysis(unit.text).split(' ')) old.set(term, (old.get(term) ?? 0) + 1)
        const length = unit.token_count - gone.reduce((sum, row) => sum + row.own, 0) + [...old.values()].reduce((sum, n) => sum + n, 0)
        await handle.pool.query('UPDATE index_units SET token_count = $1 WHERE rowid = $2', [length, unit.rowid])
        await handle.pool.query('UPDATE index_postings SET token_count = $1 WHERE rowid = $2', [length, unit.rowid])
        for (const [term, n] of old) {
          await handle.pool.query(
            `INSERT INTO index_postings (term, rowid, own, near, far, related, token_count, kind) VALUES ($1, $2, $3, 0, 0, 0, $4, $5)
             ON CONFLICT (term, rowid) DO UPDATE SET own = excluded.own`,
            [term, unit.rowid, n, length, unit.kind],
          )
        }
      }
      await handle.pool.query(
        'INSERT INTO index_terms (term, units_any, units_own) SELECT term, count(*), count(*) FILTER (WHERE own > 0) FROM index_postings GROUP BY term',
      )
      await handle.pool.query('UPDATE index_stats SET tokens = (SELECT sum(token_count) FROM index_units)')
      await handle.pool.query("DELETE FROM index_meta WHERE key = 'analysis'")
      const old = (await handle.pool.query('SELECT term, rowid::integer, own, near, far, related, token_count, kind FROM index_postings ORDER BY term COLLATE "C", rowid')).rows
      assert.notDeepEqual(old, expected.postings)

      await searchesFind(options)
      assert.deepEqual(await state(), expected)
    } finally {
      await handle.close()
    }
  })
})
