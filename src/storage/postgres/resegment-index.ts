/**
 * Units indexed on PostgreSQL before text in unspaced scripts was cut into words (decision 0076)
 * hold a run of Chinese, Japanese, Korean or Thai text as one posting term, which no query term
 * matches any more. Migration 9 re-cuts them once, on migration 8's `index_postings`, before it
 * packs them into blocks (./index-blocks.ts), as the embedded index does on open
 * (`resegmentFullText` in ../sqlite/search-index.ts): a unit's own text and related words are
 * analysed again from its text; its neighbours' fields, whose text the index does not keep, from
 * their stored terms. The index then says so in `index_meta`.
 */
import { resegmentAnalysed, holdsUnspacedLetters } from '../../text/analyse.ts'
import { ftsFields } from '../lexical-plan.ts'
import { unicode61Tokens } from '../unicode61.ts'
import { advisoryKey } from './advisory-key.ts'
import type { PgQueryable } from './driver.ts'

/** `index_meta` key: the analysis the postings were written with. */
const META_ANALYSIS = 'analysis'
/** Postings of text in unspaced scripts are cut into words (decision 0076). */
const ANALYSIS = 'segmented-words-v1'

/** Units re-cut per statement. */
const BATCH_UNITS = 500

/** Per term, its count in own, near, far and related. */
type Counts = Map<string, [number, number, number, number]>

function addTokens(counts: Counts, tokens: readonly string[], column: number, times = 1): void {
  for (const token of tokens) {
    let each = counts.get(token)
    if (!each) {
      each = [0, 0, 0, 0]
      counts.set(token, each)
    }
    each[column]! += times
  }
}

/**
 * Re-cut the postings of units written before segmentation, in the caller's transaction (migration
 * 9's, which holds the schema's migration lock). Returns how many units were re-cut.
 */
export async function resegmentPostings(client: PgQueryable, schema: string): Promise<number> {
  // Two processes opening an old index at once: the second waits, then finds it done.
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey(schema, 'index:resegment').key])
  const { rows: stored } = await client.query<{ value: string }>('SELECT value FROM index_meta WHERE key = $1', [META_ANALYSIS])
  if (stored[0]?.value === ANALYSIS) return 0
  const { rows: vocabulary } = await client.query<{ term: string }>('SELECT term FROM index_terms')
  const oldTerms = vocabulary.map((row) => row.term).filter(holdsUnspacedLetters)
  let units = 0
  if (oldTerms.length > 0) {
    const { rows: affected } = await client.query<{ rowid: number; text: string; kind: string; token_count: number }>(
      `SELECT u.rowid, u.text, u.kind, u.token_count FROM index_units u
       WHERE u.rowid IN (SELECT p.rowid FROM index_postings p WHERE p.term = ANY($1::text[])) ORDER BY u.id FOR UPDATE`,
      [oldTerms],
    )
    const touched = new Set<string>()
    let tokenDelta = 0
    // In batches: one statement each to take the old postings, write the lengths and the new postings.
    for (let at = 0; at < affected.length; at += BATCH_UNITS) {
      const batch = affected.slice(at, at + BATCH_UNITS)
      const { rows: old } = await client.query<{ rowid: number; term: string; own: number; near: number; far: number; related: number }>(
        'DELETE FROM index_postings WHERE rowid = ANY($1::bigint[]) RETURNING rowid::integer AS rowid, term, own, near, far, related',
        [batch.map((unit) => unit.rowid)],
      )
      const oldByUnit = new Map<number, typeof old>()
      for (const row of old) {
        const list = oldByUnit.get(row.rowid) ?? []
        list.push(row)
        oldByUnit.set(row.rowid, list)
      }
      const postings = { term: [] as string[], rowid: [] as number[], own: [] as number[], near: [] as number[], far: [] as number[], related: [] as number[], tokens: [] as number[], kind: [] as string[] }
      const lengths = { rowid: [] as number[], tokens: [] as number[] }
      for (const unit of batch) {
        const counts: Counts = new Map()
        const [own, , , related] = ftsFields({ text: unit.text, kind: unit.kind })
        addTokens(counts, unicode61Tokens(own), 0)
        addTokens(counts, unicode61Tokens(related), 3)
        let oldMatched = 0
        for (const row of oldByUnit.get(Number(unit.rowid)) ?? []) {
          touched.add(row.term)
          oldMatched += row.own + row.near + row.far + row.related
          const cut = unicode61Tokens(resegmentAnalysed(row.term))
          if (row.near > 0) addTokens(counts, cut, 1, row.near)
          if (row.far > 0) addTokens(counts, cut, 2, row.far)
        }
        let newMatched = 0
        for (const each of counts.values()) newMatched += each[0] + each[1] + each[2] + each[3]
        // The unit's length over all five fields: the kind's token is unchanged.
        const tokenCount = unit.token_count - oldMatched + newMatched
        tokenDelta += tokenCount - unit.token_count
        lengths.rowid.push(unit.rowid)
        lengths.tokens.push(tokenCount)
        for (const [term, each] of counts) {
          touched.add(term)
          postings.term.push(term)
          postings.rowid.push(unit.rowid)
          postings.own.push(each[0])
          postings.near.push(each[1])
          postings.far.push(each[2])
          postings.related.push(each[3])
          postings.tokens.push(tokenCount)
          postings.kind.push(unit.kind)
        }
        units++
      }
      await client.query('UPDATE index_units u SET token_count = v.tokens FROM unnest($1::bigint[], $2::integer[]) AS v(rowid, tokens) WHERE u.rowid = v.rowid', [
        lengths.rowid,
        lengths.tokens,
      ])
      if (postings.term.length > 0) {
        await client.query(
          `INSERT INTO index_postings (term, rowid, own, near, far, related, token_count, kind)
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[], $5::integer[], $6::integer[], $7::integer[], $8::text[])`,
          [postings.term, postings.rowid, postings.own, postings.near, postings.far, postings.related, postings.tokens, postings.kind],
        )
      }
    }
    // The touched terms' unit counts, counted again from the postings; in term order, as writers lock them.
    const terms = [...touched].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    await client.query(
      `INSERT INTO index_terms (term, units_any, units_own)
       SELECT t.term, count(p.rowid)::integer, (count(p.rowid) FILTER (WHERE p.own > 0))::integer
       FROM unnest($1::text[]) AS t(term) LEFT JOIN index_postings p ON p.term = t.term
       GROUP BY t.term ORDER BY t.term COLLATE "C"
       ON CONFLICT (term) DO UPDATE SET units_any = excluded.units_any, units_own = excluded.units_own`,
      [terms],
    )
    await client.query('DELETE FROM index_terms WHERE term = ANY($1::text[]) AND units_any <= 0', [terms])
    if (tokenDelta !== 0) await client.query('UPDATE index_stats SET tokens = tokens + $1', [tokenDelta])
  }
  await client.query('INSERT INTO index_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [META_ANALYSIS, ANALYSIS])
  return units
}
