/**
 * The search index on PostgreSQL (migrations 7–9): one `index_units` row per retrievable unit,
 * an inverted index of postings, a BM25 that ranks exactly as the embedded index's FTS5 does, and
 * vectors in pgvector. It returns raw candidates per channel; fusion happens above it.
 *
 * PostgreSQL has no BM25 (`ts_rank` is not one), and recall on PostgreSQL must match the embedded
 * backend. So the index stores what FTS5's `bm25()` reads (sqlite `fts5_aux.c`): a unit's fields
 * are the embedded index's (`ftsFields`: own text, near and far neighbours, related words, kind),
 * tokenized as FTS5's unicode61 does (`../unicode61.ts`); `index_units.token_count` is the unit's
 * length over all five; a posting per token of the four matched fields and unit holds the token's
 * count in each field, the unit's length and kind, packed into per-term blocks (`index_blocks`,
 * ./index-blocks.ts); a token's document frequency is the sum over its blocks, and `index_stats`
 * holds the row count and total length as a row per writing transaction, summed when read. A
 * query keeps the same terms as the embedded one (`../lexical-plan.ts`), reads the blocks of
 * those terms only, decodes them here and computes the score with FTS5's arithmetic, operation
 * for operation:
 *   Σ over query terms (a repeated term once per repetition) of
 *     idf · f·(k1+1) / (f + k1·(1 − b + b·D/avgdl)),  k1 = 1.2, b = 0.75,
 *   f = the field weights of the term's occurrences (own 1, near, far, related), D = token_count,
 *   idf = ln((N − n + 0.5)/(n + 0.5)), or 1e-6 when that is not positive.
 * A kinds filter applies to the postings (they hold the unit's kind: a skill lookup scores only
 * skills'); the other filters to the ranked units, best first: the rows of the best `limit` are
 * read with the filter (usually all pass), and only when some fail are the rest checked. The parity test checks
 * ids, order and scores against SQLite's (bit-identical on this machine).
 *
 * Why postings (migration 8): migration 7 kept each unit's counts of all its tokens in one jsonb
 * (with a GIN on the token list), and a query detoasted the whole 5–15 KB value of each candidate
 * to read the counts of 2–6 tokens (140–190 ms per BEAM question). Migration 8 made a row per
 * posting with a covering primary key: fast, but ~200 bytes a posting, 1,183 MB at 100k synthetic
 * units and 12 GB at 1M. Why blocks (migration 9, decision 0091): the same postings packed as
 * varints, ~8 bytes each, read as a few rows per term; and writers that insert blocks instead of
 * updating shared counter rows, so writers on several hosts do not queue on common words.
 *
 * PostgreSQL text and json cannot hold U+0000, which a message may (messages are lossless): the
 * index stores U+FFFD in its place in text, provenance, links and meta. The index is derived; the
 * message store keeps the original, and U+FFFD splits words as U+0000 does, so ranking is unchanged.
 *
 * Vectors belong to one embedder (`index_meta`); opened with another, every vector is dropped and
 * the hash of each unit that had one blanked, so the next reindex embeds it again — as on SQLite.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { visibleOwners } from '../../core/owner.ts'
import type { IndexCandidate, IndexCapabilities, IndexFilter, IndexQuery, IndexUnit, SearchIndex, StoredUnit, UnitKind } from '../contracts.ts'
import { UNIT_KINDS } from '../contracts.ts'
import { ftsFields, keptTerms, lexicalTerms, POSTINGS_CAP, PostingCountMemo, termRepeats } from '../lexical-plan.ts'
import { unicode61Tokens } from '../unicode61.ts'
import { addStats, countsBytes, forEachPosting, kindCodes, type Posting, postingOf, STATS_SUM, termsText, tombstonesByTerm, unitPostings } from './index-blocks.ts'
import { sweepTombstones, writePostings } from './index-compaction.ts'
import { boundable, openTermRanking } from './term-ranking.ts'
import { createPendingAccess } from '../pending-access.ts'
import { type IndexUnitRow, listPage, mergedCandidates, storedUnitOf, unitsInAskedOrder, validateIndexUnit, validateVector } from '../index-unit-records.ts'
import { advisoryKey } from './advisory-key.ts'
import type { PostgresHandle } from './connection.ts'
import type { PgQueryable } from './driver.ts'
import { instant, invalid } from '../input-checks.ts'
import { jsonObject } from './rows.ts'

export interface PostgresSearchIndexOptions {
  /** The embedder whose vectors this index holds (e.g. `openai:text-embedding-3-small`). */
  embedderId?: string
  /** Expected vector size; when given, vectors of another size are refused before the first is stored. */
  dimensions?: number
  /** Up to this many stored vectors, nearest neighbours are exact (a scan); above, the HNSW index answers. Default 10,000. */
  exactVectorsUpTo?: number
  /**
   * A query whose one kept word is common reads that word's best blocks first (decision 0095).
   * Default true; false reads all its postings, as before: the bench's baseline, the same ranking.
   */
  bestFirst?: boolean
}

const META_EMBEDDER = 'embedder_id'
const META_DIMS = 'vector_dims'
const HNSW_INDEX = 'index_units_embedding_hnsw'

/**
 * Below this many vectors, nearest neighbours are computed exactly (a scan of a few thousand
 * vectors takes milliseconds); above it the HNSW index answers, approximately.
 */
const EXACT_VECTORS = 10_000

/** pgvector's HNSW indexes vectors of at most this many dimensions; larger ones are searched exactly. */
const HNSW_MAX_DIMS = 2_000

/**
 * Kinds with a stamp (`index_stamps`, migration 10): all but messages, which every append writes —
 * a count row of theirs would queue every writer of the schema on it. Standing instructions (rules)
 * are what readers keep by their stamp (decision 0090).
 */
const stamped = (kind: string): boolean => kind !== 'message'

/** Units whose tombstones one statement writes when many are removed at once. */
const REMOVE_BATCH = 1_000

/** FTS5's bm25() constants (sqlite fts5_aux.c). */
const BM25_K1 = 1.2
const BM25_B = 0.75

const UNIT_COLUMNS =
  'u.rowid, u.id, u.kind, u.text, u.source, u.provenance, u.scope, u.agent, u.user_id, u.owner, u.created_at, u.updated_at, u.hash, u.links, u.meta, u.access_count, u.last_access_at'

/** A unit's row as the driver returns it: the JSON columns parsed. */
interface UnitRow extends IndexUnitRow<unknown> {
  rowid: number
}

/** Per token, its count in own, near, far and related (a Map: a word may be `constructor` or `__proto__`). */
type TermFrequencies = Map<string, [number, number, number, number]>

interface Analysed {
  tokenCount: number
  tf: TermFrequencies
}

/** What FTS5 would store for the unit: its length over all five fields and its token counts in the four matched ones. */
function analyse(unit: IndexUnit): Analysed {
  const fields = ftsFields(unit).map(unicode61Tokens)
  const tf: TermFrequencies = new Map()
  let tokenCount = 0
  for (const [column, tokens] of fields.entries()) {
    tokenCount += tokens.length
    if (column > 3) continue
    for (const token of tokens) {
      let counts = tf.get(token)
      if (!counts) {
        counts = [0, 0, 0, 0]
        tf.set(token, counts)
      }
      counts[column]!++
    }
  }
  return { tokenCount, tf }
}

function strings(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)))
  return value === null || value === undefined ? [] : [typeof value === 'string' ? value : JSON.stringify(value)]
}

const JSON_VALUES = { strings, object: jsonObject }
const toStoredUnit = (row: UnitRow): StoredUnit => storedUnitOf(row, JSON_VALUES)

const NUL = /\u0000/g

/** `value` with every U+0000 in its strings (keys included) replaced by U+FFFD (see the file comment). */
function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return value.replace(NUL, '\ufffd') as T
  if (Array.isArray(value)) return value.map(withoutNul) as T
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [withoutNul(key), withoutNul(item)])) as T
  }
  return value
}

/** pgvector's text form; a Float32 printed in full round-trips exactly. */
function vectorText(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`
}

/** A filter as SQL over `index_units AS u`, its parameters numbered from `first`. */
interface FilterSql {
  sql: string
  params: unknown[]
}

/** The filter as SQL over `index_units AS u`: the SQLite backend's `filterToSql`, clause for clause. */
function filterToSql(filter: IndexFilter, first: number): FilterSql {
  const clauses: string[] = []
  const params: unknown[] = []
  const param = (value: unknown, type: string): string => {
    params.push(value)
    return `$${first + params.length - 1}::${type}`
  }
  if (filter.kinds !== undefined) clauses.push(`u.kind = ANY(${param(filter.kinds, 'text[]')})`)
  if (filter.sources !== undefined) clauses.push(`u.source = ANY(${param(filter.sources, 'text[]')})`)
  if (filter.scope !== undefined) clauses.push(`u.scope = ${param(filter.scope, 'text')}`)
  if (filter.agent !== undefined) clauses.push(`u.agent = ${param(filter.agent, 'text')}`)
  if (filter.user !== undefined) clauses.push(`u.user_id = ${param(filter.user, 'text')}`)
  if (filter.viewer !== undefined) {
    // Decision 0017: the viewer's owners, written by its agent or by none (shared, profiles).
    clauses.push(
      `u.owner = ANY(${param(visibleOwners(filter.viewer), 'text[]')}) AND (u.agent = ${param(filter.viewer.agent, 'text')} OR (u.agent IS NULL AND u.owner <> 'agent'))`,
    )
  }
  if (filter.since !== undefined) clauses.push(`u.created_at >= ${param(instant(filter.since, 'since'), 'timestamptz')}`)
  if (filter.until !== undefined) clauses.push(`u.created_at <= ${param(instant(filter.until, 'until'), 'timestamptz')}`)
  return { sql: clauses.join(' AND '), params }
}

/** The columns a unit row is written with, as parallel arrays for `unnest` (one statement per batch). */
interface RowArrays {
  id: string[]
  kind: string[]
  text: string[]
  source: string[]
  provenance: string[]
  scope: Array<string | null>
  agent: Array<string | null>
  user: Array<string | null>
  owner: string[]
  createdAt: string[]
  updatedAt: Array<string | null>
  hash: string[]
  links: Array<string | null>
  meta: Array<string | null>
  hasVector: boolean[]
  tokenCount: number[]
  embedding: Array<string | null>
  keep: boolean[]
  rowid: Array<number | null>
  terms: string[]
  counts: Buffer[]
}

const ROW_SOURCE = `unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
  $10::timestamptz[], $11::timestamptz[], $12::text[], $13::text[], $14::text[], $15::boolean[], $16::integer[], $17::text[], $18::boolean[], $19::bigint[], $20::text[], $21::bytea[])
  AS v(id, kind, text, source, provenance, scope, agent, user_id, owner, created_at, updated_at, hash, links, meta, has_vector, token_count, embedding, keep, rowid, terms, counts)`

function rowParams(rows: RowArrays): unknown[] {
  return [
    rows.id,
    rows.kind,
    rows.text,
    rows.source,
    rows.provenance,
    rows.scope,
    rows.agent,
    rows.user,
    rows.owner,
    rows.createdAt,
    rows.updatedAt,
    rows.hash,
    rows.links,
    rows.meta,
    rows.hasVector,
    rows.tokenCount,
    rows.embedding,
    rows.keep,
    rows.rowid,
    rows.terms,
    rows.counts,
  ]
}

/** A unit as one write will store it. */
interface Pending {
  unit: IndexUnit
  analysed: Analysed
  /** The vector to store: the unit's, or one an earlier unit of the same batch gave the same content. */
  vector: Float32Array | undefined
  /** Where the id first appears in the batch: new units take rowids in that order, as on SQLite (ties rank by rowid). */
  order: number
}

/** What a unit row held before a write: enough to undo its share of the statistics and cancel its postings. */
interface Previous {
  rowid: number
  kind: string
  hash: string
  has_vector: boolean
  token_count: number
  terms: string
  counts: Buffer
}

/** Changes to the corpus statistics (`index_stats`), summed over a write. */
class StatsDelta {
  units = 0
  tokens = 0
  vectors = 0

  /** A unit's share: its length and vector. */
  add(tokens: number, hasVector: boolean, sign: 1 | -1): void {
    this.units += sign
    this.tokens += sign * tokens
    if (hasVector) this.vectors += sign
  }

  /** A row of its own, written last in the transaction (index-blocks.ts: no writer waits on another's). */
  async write(client: PgQueryable, foldKey: bigint | string): Promise<void> {
    await addStats(client, this.units, this.tokens, this.vectors, foldKey)
  }
}

type Ranked = Array<{ rowid: number; score: number }>
/** BM25's N and total length, and each token's document frequency (the sums of its blocks' postings, from the covering index), in the order of $1. */
const STATS_WITH_FREQUENCIES = `SELECT s.units, s.tokens, ARRAY(SELECT coalesce((SELECT sum(b.units) FROM index_blocks b WHERE b.term = p.token), 0)::bigint
    FROM unnest($1::text[]) WITH ORDINALITY AS p(token, ord) ORDER BY p.ord) AS n
  FROM (${STATS_SUM}) s`
interface StatsRow {
  units: number
  tokens: number
  n: number[]
}

/** fts5_aux.c's IDF of a phrase held by `n` of `units` rows: floored at 1e-6. */
function idfOf(units: number, n: number): number {
  const value = Math.log((units - n + 0.5) / (n + 0.5))
  return value <= 0 ? 1e-6 : value
}

/** A term's frequency in a unit: its field weights added one occurrence at a time, in field order, as FTS5 adds them. */
function weightedFrequency(own: number, near: number, far: number, related: number, weights: readonly [number, number, number, number]): number {
  let frequency = 0
  for (let k = 0; k < own; k++) frequency += weights[0]
  for (let k = 0; k < near; k++) frequency += weights[1]
  for (let k = 0; k < far; k++) frequency += weights[2]
  for (let k = 0; k < related; k++) frequency += weights[3]
  return frequency
}

/** One phrase's share of a unit's BM25, as fts5_aux.c computes it. */
const bm25Part = (idf: number, frequency: number, length: number, avgdl: number): number =>
  idf * ((frequency * (BM25_K1 + 1.0)) / (frequency + BM25_K1 * (1 - BM25_B + (BM25_B * length) / avgdl)))

const byScoreThenRowid = (a: { rowid: number; score: number }, b: { rowid: number; score: number }): number => b.score - a.score || a.rowid - b.rowid

/**
 * The best `limit` of the scored units, best first (equal scores by rowid), and the rest in the
 * same order when asked for (a filter turned some of the best away): sorting every unit of a
 * common word to keep ten cost more than scoring them.
 */
function bestFirst(scores: Float64Array, rowids: number[], limit: number): { best: Ranked; rest: () => Ranked } {
  const all = (): Ranked => Array.from(scores, (score, unit) => ({ rowid: rowids[unit]!, score })).sort(byScoreThenRowid)
  if (scores.length <= limit * 4) {
    const sorted = all()
    return { best: sorted.slice(0, limit), rest: () => sorted.slice(limit) }
  }
  // The limit-th best score; every unit scoring at least that is a candidate (ties included).
  const threshold = Float64Array.from(scores).sort()[scores.length - limit]!
  const candidates: Ranked = []
  for (let unit = 0; unit < scores.length; unit++) if (scores[unit]! >= threshold) candidates.push({ rowid: rowids[unit]!, score: scores[unit]! })
  const best = candidates.sort(byScoreThenRowid).slice(0, limit)
  return { best, rest: () => all().slice(limit) }
}

/**
 * A SearchIndex over `handle`'s schema. Vectors are searched with pgvector when the extension is
 * installed in the database; without it `capabilities.vectors` is false and vectors are refused.
 */
const writers = new WeakMap<SearchIndex, { handle: PostgresHandle; write: (client: PgQueryable, units: IndexUnit[]) => Promise<void> }>()

/**
 * How to write units to `index` inside a transaction of `handle` — when `index` is this module's
 * index on that very handle (the context store then writes a message and its index rows in one
 * transaction); undefined for any other index.
 */
export function postgresIndexWriterOn(handle: PostgresHandle, index: SearchIndex): ((client: PgQueryable, units: IndexUnit[]) => Promise<void>) | undefined {
  const writer = writers.get(index)
  return writer?.handle === handle ? writer.write : undefined
}

export async function createPostgresSearchIndex(handle: PostgresHandle, options: PostgresSearchIndexOptions = {}): Promise<SearchIndex> {
  const { pool } = handle
  const statsFoldKey = advisoryKey(handle.schema, 'engram:index-stats-fold').key
  const sweepKey = advisoryKey(handle.schema, 'engram:index-sweep').key
  const vectorsOn = handle.features.pgvector !== false && (await ensureEmbeddingColumn(handle))
  // pgvector 0.8 scans the HNSW graph further when a filter drops candidates (hnsw.iterative_scan).
  const iterativeScan = vectorsOn && versionAtLeast(String(handle.features.pgvector), [0, 8, 0])

  async function readMeta(db: PgQueryable, key: string): Promise<string | undefined> {
    const { rows } = await db.query<{ value: string }>('SELECT value FROM index_meta WHERE key = $1', [key])
    return rows[0]?.value
  }

  // Vectors of another embedder cannot be searched together with ours (see the file comment).
  await handle.transaction(async (client) => {
    // The meta rows first: every writer that touches both locks them before unit rows.
    const { rows } = await client.query<{ key: string; value: string }>('SELECT key, value FROM index_meta ORDER BY key FOR UPDATE')
    const stored = rows.find((row) => row.key === META_EMBEDDER)?.value
    if (options.embedderId !== undefined && stored !== undefined && stored !== options.embedderId && vectorsOn) {
      const { rows: dropped } = await client.query<{ id: string }>('SELECT id FROM index_units WHERE has_vector ORDER BY id FOR UPDATE')
      if (dropped.length > 0) {
        await client.query("UPDATE index_units SET hash = '', has_vector = false, embedding = NULL WHERE has_vector")
        await addStats(client, 0, 0, -dropped.length, statsFoldKey)
      }
      await client.query(`DROP INDEX IF EXISTS ${HNSW_INDEX}`)
      await client.query('DELETE FROM index_meta WHERE key = $1', [META_DIMS])
    }
    if (options.embedderId !== undefined && stored !== options.embedderId) {
      await client.query('INSERT INTO index_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [
        META_EMBEDDER,
        options.embedderId,
      ])
    }
  })

  /** The stored vector size, remembered once known (it changes only when the embedder does, which reopens the index). */
  let knownDims: number | undefined
  async function storedDims(db: PgQueryable = pool): Promise<number | undefined> {
    if (knownDims !== undefined) return knownDims
    const value = await readMeta(db, META_DIMS)
    if (value !== undefined) knownDims = Number(value)
    return knownDims
  }

  function checkDims(vector: Float32Array, what: string, expected: number | undefined): void {
    if (expected !== undefined && vector.length !== expected) {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: `${what} has ${vector.length} dimensions; this index holds ${expected}-dimensional vectors.`,
        fix: 'Use the same embedder for every vector, or change the embedder (ENGRAM_EMBEDDER) and run engram reindex, which re-embeds everything.',
        details: { got: vector.length, expected },
      })
    }
  }

  function validateUnit(unit: IndexUnit, i: number): void {
    const what = `units[${i}]`
    validateIndexUnit(unit, i)
    for (const [name, value] of [
      ['id', unit.id],
      ['source', unit.source],
      ['hash', unit.hash],
      ['agent', unit.agent],
      ['user', unit.user],
      ['scope', unit.scope],
    ] as const) {
      if (typeof value === 'string' && value.includes('\u0000')) throw invalid(`${what}.${name} contains U+0000, which PostgreSQL text cannot hold.`, `Pass a ${name} without NUL characters.`)
    }
    if (unit.vector !== undefined) {
      if (!vectorsOn) {
        throw new EngramError({
          code: ErrorCode.unsupported,
          category: 'system',
          message: `${what} has a vector, but the pgvector extension is not installed in ${handle.location}.`,
          fix: 'Install pgvector on the server and run CREATE EXTENSION vector in the database (then reopen), or index without vectors.',
        })
      }
      validateVector(unit.vector, `${what}.vector`)
    }
    instant(unit.createdAt, `${what}.createdAt`)
    if (unit.updatedAt !== undefined) instant(unit.updatedAt, `${what}.updatedAt`)
  }

  // Access counts wait in memory and are written in batches (pending-access.ts says why).
  const pendingAccess = createPendingAccess(async (batch) => {
    await handle.transaction(async (client) => {
      const ids = batch.map(([id]) => id)
      // Rows locked in id order, as every writer of this table locks them.
      await client.query('SELECT 1 FROM index_units WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [ids])
      // last_access_at never moves backwards: a late, older access must not make a memory look staler.
      await client.query(
        `UPDATE index_units u SET access_count = u.access_count + v.n, last_access_at = greatest(u.last_access_at, v.at)
         FROM unnest($1::text[], $2::integer[], $3::timestamptz[]) AS v(id, n, at) WHERE u.id = v.id`,
        [ids, batch.map(([, access]) => access.count), batch.map(([, access]) => access.last)],
      )
    })
  })
  const withPendingAccess = (unit: StoredUnit): StoredUnit => pendingAccess.apply(unit)
  /** A ranked unit row as a lexical candidate: the unit is read already, so it is handed up rather than read again. */
  const lexicalCandidate = ({ row, score }: { row: UnitRow; score: number }): IndexCandidate => ({
    id: row.id,
    kind: row.kind as UnitKind,
    lexical: score,
    unit: withPendingAccess(toStoredUnit(row)),
  })

  const postingCounts = new PostingCountMemo()

  /** Units holding each token in a matched field, capped at POSTINGS_CAP + 1 as FTS5's capped count is. */
  async function postingCountsOf(tokens: string[]): Promise<number[]> {
    const missing = [...new Set(tokens.filter((token) => postingCounts.get(token) === undefined))]
    if (missing.length > 0) {
      const { rows } = await pool.query<{ term: string; n: number }>('SELECT term, sum(units)::integer AS n FROM index_blocks WHERE term = ANY($1::text[]) GROUP BY term', [missing])
      const found = new Map(rows.map((row) => [row.term, row.n]))
      for (const token of missing) postingCounts.set(token, Math.min(found.get(token) ?? 0, POSTINGS_CAP + 1))
    }
    return tokens.map((token) => postingCounts.get(token) ?? 0)
  }

  /**
   * The single FTS5 token of a query term (FTS5 quotes each term as a phrase and tokenizes it).
   * The analysis never makes a term of several tokens; such a term (a caller's own) would be a
   * phrase to FTS5, which this index cannot match without positions: it is left out.
   */
  function tokenOf(term: string): string | undefined {
    const tokens = unicode61Tokens(term)
    return tokens.length === 1 ? tokens[0] : undefined
  }

  async function lexical(query: IndexQuery, limit: number): Promise<IndexCandidate[]> {
    const { all, distinct } = lexicalTerms(query)
    const phrases = distinct.flatMap((term) => {
      const token = tokenOf(term)
      return token === undefined ? [] : [{ term, token }]
    })
    if (phrases.length === 0) return []
    const counts = await postingCountsOf(phrases.map((p) => p.token))
    const keptNames = phrases.length > 1 ? keptTerms(phrases.map((p) => p.term), counts) : phrases.map((p) => p.term)
    if (keptNames.length === 0) return []
    const tokenByTerm = new Map(phrases.map((p) => [p.term, p.token]))
    // Each kept term once per repetition, in the order FTS5 sums them.
    const tokens = keptNames.flatMap((term) => Array.from({ length: termRepeats(all, term) }, () => tokenByTerm.get(term)!))
    const w = query.fieldWeights ?? { near: 0.5, far: 0.2, related: 0.3 }
    const weights = [1, w.near, w.far, w.related] as const
    const distinctTokens = [...new Set(tokens)]
    // A word held by more units than any other kept term may be (every word of the query is
    // common): its best postings only, read best block first (term-ranking.ts, decision 0095).
    const common = distinctTokens.length === 1 && (counts[phrases.findIndex((p) => p.token === distinctTokens[0])] ?? 0) > POSTINGS_CAP
    if (common && options.bestFirst !== false && boundable(weights)) return commonWord(distinctTokens[0]!, tokens.length, weights, query, limit)
    // Two reads at once: the corpus statistics with each term's document frequency (the sums of
    // its blocks' postings, from the covering index), and the blocks of the query's tokens
    // (index-blocks.ts: per unit its counts of that token, its length and kind, packed). Scoring
    // in SQL cost ~5 µs per unit in expression evaluation; here it follows fts5_aux.c exactly.
    const [statsResult, blocks] = await Promise.all([
      pool.query<StatsRow>(STATS_WITH_FREQUENCIES, [distinctTokens]),
      pool.query<{ term: string; first: number; last: number; units: number; data: Buffer }>('SELECT term, first, last, units, data FROM index_blocks WHERE term = ANY($1::text[])', [
        distinctTokens,
      ]),
    ])
    const stats = statsResult.rows[0]
    if (!stats || blocks.rows.length === 0) return []
    // fts5_aux.c's bm25(): avgdl over every row, IDF per phrase (a repeated term is a phrase per
    // repetition) floored at 1e-6, the frequency of a phrase in a row the sum of its instances'
    // column weights added one by one in position order (own, near, far, related), and the
    // phrases' scores summed in query order. Same operations in the same order: the same doubles.
    const avgdl = stats.tokens / stats.units
    const slot = new Map(distinctTokens.map((token, i) => [token, i]))
    const phraseSlots = tokens.map((token) => slot.get(token)!)
    const idf = phraseSlots.map((i) => idfOf(stats.units, stats.n[i] ?? 0))
    // Per unit (a slot, in the order first seen), its length and the weighted frequency of each
    // distinct token it holds, in flat arrays: a common word brings hundreds of thousands.
    const width = distinctTokens.length
    const slotOf = new Map<number, number>()
    const rowids: number[] = []
    const lengths: number[] = []
    const frequencies: number[] = []
    const kinds = query.kinds === undefined ? undefined : kindCodes(query.kinds)
    // A term's tombstones (index-blocks.ts) cancel its postings of units rewritten or removed.
    const tombstones = tombstonesByTerm(blocks.rows)
    for (const block of blocks.rows) {
      if (block.units < 0) continue
      const i = slot.get(block.term)!
      const first = Number(block.first)
      const of = tombstones.get(block.term)
      const cancels = of !== undefined && !of.misses(first, Number(block.last))
      forEachPosting(first, block.data, (rowid, own, near, far, related, d, kind) => {
        if (cancels && of.holds(rowid) && of.takes({ rowid, own, near, far, related, tokens: d, kind })) return
        if (kinds !== undefined && !kinds.has(kind)) return
        let unit = slotOf.get(rowid)
        if (unit === undefined) {
          unit = rowids.length
          slotOf.set(rowid, unit)
          rowids.push(rowid)
          lengths.push(d)
          for (let t = 0; t < width; t++) frequencies.push(0)
        }
        frequencies[unit * width + i] = weightedFrequency(own, near, far, related, weights)
      })
    }
    if (rowids.length === 0) return []
    const scores = new Float64Array(rowids.length)
    for (let unit = 0; unit < rowids.length; unit++) {
      let score = 0
      for (const [p, i] of phraseSlots.entries()) score += bm25Part(idf[p]!, frequencies[unit * width + i]!, lengths[unit]!, avgdl)
      scores[unit] = score
    }
    // Best first; equal scores by rowid, as FTS5 returns them.
    const scored = bestFirst(scores, rowids, limit)
    return (await passing(scored.best, scored.rest, limit, query)).map(lexicalCandidate)
  }

  /**
   * A query whose one kept word is common, repeated `repeats` times: its best postings read best
   * block first, in one REPEATABLE READ transaction (every statement sees the blocks as the
   * first did); the filter's rows read there too. When fewer than `limit` of the postings ranked
   * pass the filter, four times as many are ranked, until enough pass or none is left.
   */
  async function commonWord(token: string, repeats: number, weights: readonly [number, number, number, number], query: IndexQuery, limit: number): Promise<IndexCandidate[]> {
    const rows = await handle.transaction(async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY')
      const stats = (await client.query<StatsRow>(STATS_WITH_FREQUENCIES, [[token]])).rows[0]
      const units = Number(stats?.units ?? 0)
      if (units === 0) return []
      const avgdl = Number(stats!.tokens) / units
      const idf = idfOf(units, Number(stats!.n[0] ?? 0))
      const score = (own: number, near: number, far: number, related: number, length: number): number => {
        const frequency = weightedFrequency(own, near, far, related, weights)
        let sum = 0
        for (let p = 0; p < repeats; p++) sum += bm25Part(idf, frequency, length, avgdl)
        return sum
      }
      const ranking = await openTermRanking(client, token, { score, kinds: query.kinds === undefined ? undefined : kindCodes(query.kinds) })
      for (let want = limit; ; want *= 4) {
        await ranking.rankAtLeast(want)
        const ranked = ranking.ranked()
        const found = await passing(ranked.slice(0, limit), () => ranked.slice(limit), limit, query, client)
        if (found.length >= limit || ranking.complete) return found
      }
    })
    return rows.map(lexicalCandidate)
  }

  /**
   * The first `limit` of `ranked` that pass the filter, with their rows. The postings know no
   * filter: the best `limit` are read with it applied (usually all pass: done in one statement);
   * when some fail, the rest are checked without reading their rows, and the next best read.
   */
  async function passing(
    best: Array<{ rowid: number; score: number }>,
    after: () => Array<{ rowid: number; score: number }>,
    limit: number,
    filter: IndexFilter,
    db: PgQueryable = pool,
  ): Promise<Array<{ row: UnitRow; score: number }>> {
    const where = filterToSql(filter, 2)
    const and = where.sql ? `AND ${where.sql}` : ''
    const read = async (rowids: number[]): Promise<Map<number, UnitRow>> => {
      if (rowids.length === 0) return new Map()
      const { rows } = await db.query<UnitRow>(`SELECT ${UNIT_COLUMNS} FROM index_units u WHERE u.rowid = ANY($1::bigint[]) ${and}`, [rowids, ...where.params])
      return new Map(rows.map((row) => [row.rowid, row]))
    }
    const found = await read(best.map((hit) => hit.rowid))
    const out = best.flatMap((hit) => {
      const row = found.get(hit.rowid)
      return row ? [{ row, score: hit.score }] : []
    })
    if (out.length === limit) return out
    const rest = after()
    if (rest.length === 0) return out
    const { rows: pass } = await db.query<{ rowid: number }>(`SELECT u.rowid FROM index_units u WHERE u.rowid = ANY($1::bigint[]) ${and}`, [
      rest.map((hit) => hit.rowid),
      ...where.params,
    ])
    const ok = new Set(pass.map((row) => row.rowid))
    const next = rest.filter((hit) => ok.has(hit.rowid)).slice(0, limit - out.length)
    const more = await read(next.map((hit) => hit.rowid))
    for (const hit of next) {
      const row = more.get(hit.rowid)
      if (row) out.push({ row, score: hit.score })
    }
    return out
  }

  async function dense(query: Float32Array, limit: number, filter: IndexFilter): Promise<IndexCandidate[]> {
    if (!vectorsOn) return []
    const dims = await storedDims()
    if (dims === undefined) return []
    checkDims(query, 'The query vector', dims)
    const where = filterToSql(filter, 3)
    const { rows: stats } = await pool.query<{ vectors: number }>(STATS_SUM)
    const params = [vectorText(query), limit, ...where.params]
    const filterSql = where.sql ? `AND ${where.sql}` : ''
    let rows: Array<{ id: string; kind: string; distance: number }>
    if ((stats[0]?.vectors ?? 0) <= (options.exactVectorsUpTo ?? EXACT_VECTORS) || dims > HNSW_MAX_DIMS) {
      // Few vectors: every one compared (the bare column, which the HNSW index does not cover).
      const result = await pool.query<{ id: string; kind: string; distance: number }>(
        `SELECT u.id, u.kind, u.embedding <=> $1::vector AS distance FROM index_units u
         WHERE u.has_vector ${filterSql} ORDER BY distance, u.rowid LIMIT $2`,
        params,
      )
      rows = result.rows
    } else {
      // The HNSW index is on `embedding::vector(dims)`: the query orders by that same expression
      // (and nothing else) to use it. With a filter, pgvector 0.8 keeps walking the graph until
      // `limit` rows pass it (iterative scan) instead of returning the few of ef_search that do.
      rows = await handle.transaction(async (client) => {
        await client.query(`SET LOCAL hnsw.ef_search = ${Math.min(1_000, Math.max(40, limit))}`)
        if (iterativeScan) await client.query('SET LOCAL hnsw.iterative_scan = relaxed_order')
        const result = await client.query<{ id: string; kind: string; distance: number }>(
          `SELECT u.id, u.kind, u.embedding::vector(${dims}) <=> $1::vector(${dims}) AS distance FROM index_units u
           WHERE u.has_vector AND vector_dims(u.embedding) = ${dims} ${filterSql} ORDER BY u.embedding::vector(${dims}) <=> $1::vector(${dims}) LIMIT $2`,
          params,
        )
        return result.rows
      })
    }
    // relaxed_order may hand rows slightly out of order; a zero vector gives NaN, which ranks nowhere.
    return rows
      .filter((row) => Number.isFinite(row.distance))
      .sort((a, b) => a.distance - b.distance)
      .map((row) => ({ id: row.id, kind: row.kind as UnitKind, dense: Math.max(-1, Math.min(1, 1 - row.distance)) }))
  }

  let unstampedCalls = 0

  /** Raises the stamp of each stamped kind among `kinds` (written or removed units' kinds, before and after), in the writer's transaction. */
  async function bumpStamps(client: PgQueryable, kinds: string[]): Promise<void> {
    const raised = [...new Set(kinds.filter(stamped))].sort()
    if (raised.length === 0) return
    // In kind order, after the unit rows (every writer locks them first): bumps cannot deadlock.
    await client.query(
      `INSERT INTO index_stamps (kind, n) SELECT kind, 1 FROM unnest($1::text[]) AS k(kind) ORDER BY kind
       ON CONFLICT (kind) DO UPDATE SET n = index_stamps.n + 1`,
      [raised],
    )
  }

  /** Lock the unit rows `where` selects (in id order, as every writer does), delete them and undo their statistics. */
  async function deleteUnits(client: PgQueryable, where: string, params: unknown[]): Promise<number> {
    const { rows: locked } = await client.query<{ rowid: number }>(`SELECT rowid FROM index_units WHERE ${where} ORDER BY id FOR UPDATE`, params)
    if (locked.length === 0) return 0
    const rowids = locked.map((row) => row.rowid)
    const { rows } = await client.query<Omit<Previous, 'hash'>>('DELETE FROM index_units WHERE rowid = ANY($1::bigint[]) RETURNING rowid, kind, has_vector, token_count, terms, counts', [
      rowids,
    ])
    const delta = new StatsDelta()
    for (const row of rows) delta.add(row.token_count, row.has_vector, -1)
    // Their postings as tombstones, a slice of units at a time: a purge of many units would
    // otherwise look for the blocks of every (term, unit) in one statement.
    for (let at = 0; at < rows.length; at += REMOVE_BATCH) {
      const removed = new Map<string, Posting[]>()
      for (const row of rows.slice(at, at + REMOVE_BATCH)) unitPostings(row, removed)
      await writePostings(client, new Map(), removed)
    }
    await delta.write(client, statsFoldKey)
    await bumpStamps(client, rows.map((row) => row.kind))
    await sweepTombstones(client, sweepKey)
    return rows.length
  }

  /** The units of `pending` written in the caller's transaction on `client`. */
  async function writeBatch(client: PgQueryable, pending: Pending[]): Promise<void> {
    const ids = pending.map((p) => p.unit.id)
    const firstVector = pending.find((p) => p.vector !== undefined)?.vector
    if (firstVector !== undefined) {
      let dims = await readMeta(client, META_DIMS).then((value) => (value === undefined ? undefined : Number(value)))
      for (const [i, p] of pending.entries()) if (p.vector) checkDims(p.vector, `units[${i}].vector`, dims ?? options.dimensions ?? firstVector.length)
      if (dims === undefined) {
        // The first vector fixes the size, and the HNSW index is built for it (pgvector indexes
        // only fixed-size vectors). Whoever stores the size first builds the index, once.
        const { rows } = await client.query('INSERT INTO index_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING key', [
          META_DIMS,
          String(firstVector.length),
        ])
        if (rows.length > 0 && firstVector.length <= HNSW_MAX_DIMS) {
          // The predicate names the size too: building the index also reads row versions other
          // transactions may still see, such as vectors of the embedder just replaced (another
          // size), and the cast would fail on them (seen in the test of an embedder change).
          await client.query(
            `CREATE INDEX IF NOT EXISTS ${HNSW_INDEX} ON index_units USING hnsw ((embedding::vector(${firstVector.length})) vector_cosine_ops)
             WHERE has_vector AND vector_dims(embedding) = ${firstVector.length}`,
          )
        }
        if (rows.length > 0) {
          dims = firstVector.length
        } else {
          dims = Number(await readMeta(client, META_DIMS))
          for (const [i, p] of pending.entries()) if (p.vector) checkDims(p.vector, `units[${i}].vector`, dims)
        }
      }
    }
    const previous = new Map<string, Previous>()
    const rowids = new Map<number, number>()
    const lockExisting = async (list: string[]): Promise<void> => {
      const { rows } = await client.query<Previous & { id: string }>(
        'SELECT id, rowid, kind, hash, has_vector, token_count, terms, counts FROM index_units WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
        [list],
      )
      for (const row of rows) previous.set(row.id, row)
    }
    await lockExisting(ids)
    const delta = new StatsDelta()
    const rowsOf = (list: Pending[]): RowArrays => {
      const rows: RowArrays = {
        id: [],
        kind: [],
        text: [],
        source: [],
        provenance: [],
        scope: [],
        agent: [],
        user: [],
        owner: [],
        createdAt: [],
        updatedAt: [],
        hash: [],
        links: [],
        meta: [],
        hasVector: [],
        tokenCount: [],
        embedding: [],
        keep: [],
        rowid: [],
        terms: [],
        counts: [],
      }
      for (const { unit, analysed, vector, order } of list) {
        const before = previous.get(unit.id)
        // Re-upserting the same content without a vector keeps the vector it has; new content
        // without one drops the old vector, which described text that is gone.
        const keep = vector === undefined && before !== undefined && before.has_vector && before.hash === unit.hash
        const hasVector = vector !== undefined || keep
        if (before) delta.add(before.token_count, before.has_vector, -1)
        delta.add(analysed.tokenCount, hasVector, 1)
        rows.id.push(unit.id)
        rows.kind.push(unit.kind)
        rows.text.push(withoutNul(unit.text))
        rows.source.push(unit.source)
        rows.provenance.push(JSON.stringify(withoutNul(unit.provenance)))
        rows.scope.push(unit.scope ?? null)
        rows.agent.push(unit.agent ?? null)
        rows.user.push(unit.user ?? null)
        rows.owner.push(unit.owner ?? 'agent')
        rows.createdAt.push(instant(unit.createdAt, 'createdAt'))
        rows.updatedAt.push(unit.updatedAt === undefined ? null : instant(unit.updatedAt, 'updatedAt'))
        rows.hash.push(unit.hash)
        rows.links.push(unit.links === undefined ? null : JSON.stringify(withoutNul(unit.links)))
        rows.meta.push(unit.meta === undefined ? null : JSON.stringify(withoutNul(unit.meta)))
        rows.hasVector.push(hasVector)
        rows.tokenCount.push(analysed.tokenCount)
        rows.embedding.push(vector === undefined ? null : vectorText(vector))
        rows.keep.push(keep)
        rows.rowid.push(rowids.get(order) ?? null)
        rows.terms.push(termsText(analysed.tf.keys()))
        rows.counts.push(countsBytes(analysed.tf.values()))
      }
      return rows
    }
    const embeddingColumn = vectorsOn ? ', embedding' : ''
    /** Kinds of units added, changed or removed, before and after: their stamps are raised. */
    const changedKinds: string[] = []
    const fresh = pending.filter((p) => !previous.has(p.unit.id))
    if (fresh.length > 0) {
      // Rows are inserted in id order (the lock order), but numbered in the caller's order, as
      // SQLite numbers them: BM25 ties are ordered by rowid on both backends.
      const { rows: numbers } = await client.query<{ n: number }>(
        "SELECT nextval(pg_get_serial_sequence('index_units', 'rowid')) AS n FROM generate_series(1, $1::integer)",
        [fresh.length],
      )
      const orders = fresh.map((p) => p.order).sort((a, b) => a - b)
      for (const [i, order] of orders.entries()) rowids.set(order, numbers[i]!.n)
      const { rows: inserted } = await client.query<{ id: string }>(
        `INSERT INTO index_units (rowid, id, kind, text, source, provenance, scope, agent, user_id, owner, created_at, updated_at, hash, links, meta,
           has_vector, token_count, terms, counts${embeddingColumn}) OVERRIDING SYSTEM VALUE
         SELECT v.rowid, v.id, v.kind, v.text, v.source, v.provenance::json, v.scope, v.agent, v.user_id, v.owner, v.created_at, v.updated_at, v.hash,
           v.links::json, v.meta::json, v.has_vector, v.token_count, v.terms, v.counts
           ${vectorsOn ? ', v.embedding::vector' : ''}
         FROM ${ROW_SOURCE} ORDER BY v.id
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        rowParams(rowsOf(fresh)),
      )
      // Units another process inserted meanwhile are updated like those that were there.
      const done = new Set(inserted.map((row) => row.id))
      for (const p of fresh) if (done.has(p.unit.id)) changedKinds.push(p.unit.kind)
      const late = fresh.filter((p) => !done.has(p.unit.id))
      if (late.length > 0) {
        // Their share was counted as new: take it back, then count them as replacements.
        for (const p of late) delta.add(p.analysed.tokenCount, p.vector !== undefined, -1)
        await lockExisting(late.map((p) => p.unit.id))
      }
      fresh.splice(0, fresh.length, ...late)
    }
    const replaced = [...pending.filter((p) => previous.has(p.unit.id) && !fresh.includes(p)), ...fresh]
    if (replaced.length > 0) {
      // `o` is the row as it was (the statement's snapshot; the row is locked): a unit written again
      // exactly as it was (a message whose neighbours changed) changes no kind's stamp.
      const { rows: updated } = await client.query<{ kind: string; kind_before: string; changed: boolean }>(
        `UPDATE index_units u SET kind = v.kind, text = v.text, source = v.source, provenance = v.provenance::json, scope = v.scope, agent = v.agent,
           user_id = v.user_id, owner = v.owner, created_at = v.created_at, updated_at = v.updated_at, hash = v.hash, links = v.links::json,
           meta = v.meta::json, has_vector = v.has_vector, token_count = v.token_count, terms = v.terms, counts = v.counts${vectorsOn ? ', embedding = CASE WHEN v.keep THEN u.embedding ELSE v.embedding::vector END' : ''}
         FROM ${ROW_SOURCE} JOIN index_units o ON o.id = v.id WHERE u.id = v.id
         RETURNING u.kind, o.kind AS kind_before,
           (o.kind, o.text, o.source, o.provenance::text, o.scope, o.agent, o.user_id, o.owner, o.created_at, o.updated_at, o.hash, o.links::text, o.meta::text, o.has_vector)
           IS DISTINCT FROM (u.kind, u.text, u.source, u.provenance::text, u.scope, u.agent, u.user_id, u.owner, u.created_at, u.updated_at, u.hash, u.links::text, u.meta::text, u.has_vector) AS changed`,
        rowParams(rowsOf(replaced)),
      )
      for (const row of updated) if (row.changed) changedKinds.push(row.kind, row.kind_before)
    }
    // Every unit's postings as new blocks per term, and a replaced unit's old ones as tombstones.
    const removed = new Map<string, Posting[]>()
    for (const p of replaced) unitPostings(previous.get(p.unit.id)!, removed)
    const postings = new Map<string, Posting[]>()
    for (const p of pending) {
      const rowid = previous.get(p.unit.id)?.rowid ?? rowids.get(p.order)!
      for (const [term, counts] of p.analysed.tf) {
        const list = postings.get(term)
        const posting = postingOf(rowid, counts, p.analysed.tokenCount, p.unit.kind)
        if (list) list.push(posting)
        else postings.set(term, [posting])
      }
    }
    await writePostings(client, postings, removed)
    const names = new Map<string, [string, string]>()
    for (const { unit } of pending) {
      const speaker = unit.kind === 'message' ? unit.meta?.name : undefined
      if (typeof speaker === 'string' && speaker.trim() !== '') {
        const name = withoutNul(speaker.trim())
        names.set(JSON.stringify([unit.agent ?? '', name]), [unit.agent ?? '', name])
      }
    }
    if (names.size > 0) {
      const list = [...names.values()]
      await client.query(
        `INSERT INTO index_names (agent, name) SELECT agent, name FROM unnest($1::text[], $2::text[]) AS n(agent, name)
         ORDER BY agent COLLATE "C", name COLLATE "C" ON CONFLICT DO NOTHING`,
        [list.map(([agent]) => agent), list.map(([, name]) => name)],
      )
    }
    await delta.write(client, statsFoldKey)
    await bumpStamps(client, changedKinds)
    await sweepTombstones(client, sweepKey)
  }

  /**
   * `units` as writes in id order, one per id (the last one given, as successive upserts would
   * leave it): every writer locks unit rows in that order, so concurrent batches never deadlock.
   */
  function pendingOf(units: IndexUnit[]): Pending[] {
    const byId = new Map<string, Pending>()
    for (const [i, unit] of units.entries()) {
      const earlier = byId.get(unit.id)
      const order = earlier?.order ?? i
      // The same content given again without a vector keeps the vector given earlier in the batch.
      const vector = unit.vector ?? (earlier?.vector !== undefined && earlier.unit.hash === unit.hash ? earlier.vector : undefined)
      byId.delete(unit.id)
      byId.set(unit.id, { unit, analysed: analyse(unit), vector, order })
    }
    return [...byId.values()].sort((a, b) => (a.unit.id < b.unit.id ? -1 : a.unit.id > b.unit.id ? 1 : 0))
  }

  const capabilities: IndexCapabilities = Object.freeze({ fullText: true, vectors: vectorsOn ? 'pgvector' : false })

  const index: SearchIndex = {
    capabilities,

    async upsert(units) {
      postingCounts.clear()
      units.forEach(validateUnit)
      if (units.length === 0) return
      const first = units.find((unit) => unit.vector !== undefined)?.vector
      if (first !== undefined) {
        const expected = (await storedDims()) ?? options.dimensions ?? first.length
        for (const [i, unit] of units.entries()) if (unit.vector) checkDims(unit.vector, `units[${i}].vector`, expected)
      }
      const pending = pendingOf(units)
      await handle.transaction((client) => writeBatch(client, pending))
    },

    async remove(ids) {
      postingCounts.clear()
      if (ids.length === 0) return
      await handle.transaction((client) => deleteUnits(client, 'id = ANY($1::text[])', [ids]))
    },

    async removeSource(source) {
      postingCounts.clear()
      return handle.transaction((client) => deleteUnits(client, 'source = $1', [source]))
    },

    async purgeUser(user) {
      postingCounts.clear()
      return handle.transaction(async (client) => {
        const n = await deleteUnits(client, 'owner = $1 OR user_id = $2', [`user:${user}`, user])
        // Speaker names are kept per agent for query analysis; a name no remaining message carries goes.
        await client.query(
          `DELETE FROM index_names n WHERE NOT EXISTS (SELECT 1 FROM index_units u WHERE u.kind = 'message' AND coalesce(u.agent, '') = n.agent
             AND json_typeof(u.meta) = 'object' AND trim(u.meta ->> 'name') = n.name)`,
        )
        return n
      })
    },

    async hashes(source) {
      const { rows } = await pool.query<{ id: string; hash: string }>('SELECT id, hash FROM index_units WHERE source = $1', [source])
      return new Map(rows.map((row) => [row.id, row.hash]))
    },

    async sources() {
      const { rows } = await pool.query<{ source: string }>('SELECT source FROM index_units GROUP BY source ORDER BY source COLLATE "C"')
      return rows.map((row) => row.source)
    },

    async search(query) {
      if (!Number.isInteger(query.limit) || query.limit < 0) {
        throw invalid(`limit must be a non-negative integer, got ${JSON.stringify(query.limit)}.`, 'Pass how many candidates each channel returns.')
      }
      if (query.vector !== undefined) validateVector(query.vector, 'The query vector')
      if (query.since !== undefined) instant(query.since, 'since')
      if (query.until !== undefined) instant(query.until, 'until')
      if (query.limit === 0) return []
      const lexicalHits = query.text !== undefined || query.terms !== undefined ? await lexical(query, query.limit) : []
      return mergedCandidates(lexicalHits, query.vector !== undefined ? await dense(query.vector, query.limit, query) : [])
    },

    async list(filter, page) {
      const { limit, offset } = listPage(page)
      if (limit === 0) return []
      if (filter.since !== undefined) instant(filter.since, 'since')
      if (filter.until !== undefined) instant(filter.until, 'until')
      const where = filterToSql(filter, 3)
      const { rows } = await pool.query<UnitRow>(
        `SELECT ${UNIT_COLUMNS} FROM index_units u ${where.sql ? `WHERE ${where.sql}` : ''} ORDER BY u.source COLLATE "C", u.rowid LIMIT $1 OFFSET $2`,
        [limit, offset, ...where.params],
      )
      return rows.map((row) => withPendingAccess(toStoredUnit(row)))
    },

    async get(ids) {
      if (ids.length === 0) return []
      const { rows } = await pool.query<UnitRow>(`SELECT ${UNIT_COLUMNS} FROM index_units u WHERE u.id = ANY($1::text[])`, [ids])
      return unitsInAskedOrder(ids, rows, (row) => withPendingAccess(toStoredUnit(row)))
    },

    async recordAccess(ids, at) {
      if (ids.length === 0) return
      const when = instant(at, 'at')
      await pendingAccess.record(ids, when)
    },

    async flush() {
      await pendingAccess.flush()
    },

    async raiseAccess(units) {
      if (units.length === 0) return 0
      const rows = units.map((u, i) => {
        if (typeof u.count !== 'number' || !Number.isInteger(u.count) || u.count < 0) throw invalid(`units[${i}].count must be a whole number ≥ 0, got ${JSON.stringify(u.count)}.`, 'Pass the access count another index reported.')
        return { id: u.id, count: u.count, last: u.lastAccessAt === undefined ? null : instant(u.lastAccessAt, `units[${i}].lastAccessAt`) }
      })
      // What this process counted is written first, so the counts raised are the ones readers see.
      await pendingAccess.flush()
      rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      return handle.transaction(async (client) => {
        const ids = rows.map((row) => row.id)
        // Rows locked in id order, as every writer of this table locks them.
        await client.query('SELECT 1 FROM index_units WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [ids])
        const result = await client.query(
          `UPDATE index_units u SET access_count = greatest(u.access_count, v.n), last_access_at = greatest(u.last_access_at, v.at)
           FROM unnest($1::text[], $2::integer[], $3::timestamptz[]) AS v(id, n, at)
           WHERE u.id = v.id AND (u.access_count < v.n OR (v.at IS NOT NULL AND (u.last_access_at IS NULL OR u.last_access_at < v.at)))`,
          [ids, rows.map((row) => row.count), rows.map((row) => row.last)],
        )
        return result.rowCount ?? 0
      })
    },

    async participants(agent) {
      const { rows } =
        agent === undefined
          ? await pool.query<{ name: string }>('SELECT name FROM index_names GROUP BY name ORDER BY name COLLATE "C"')
          : await pool.query<{ name: string }>(`SELECT name FROM index_names WHERE agent IN ($1, '') ORDER BY name COLLATE "C"`, [agent])
      return [...new Set(rows.map((row) => row.name))]
    },

    /** Distinct tokens of the units' own words (query expansion looks for neighbours of a query word among them). */
    async vocabulary() {
      // A term whose own postings tombstones all cancel has a sum of 0.
      const { rows } = await pool.query<{ term: string }>('SELECT term FROM index_blocks GROUP BY term HAVING sum(own) > 0')
      return new Set(rows.map((row) => row.term))
    },

    /** Units holding each term in their own words. */
    async documentFrequencies(terms) {
      const out = new Map<string, number>()
      if (terms.length === 0) return out
      const distinct = [...new Set(terms)]
      const { rows } = await pool.query<{ term: string; n: number }>('SELECT term, sum(own)::integer AS n FROM index_blocks WHERE term = ANY($1::text[]) GROUP BY term', [distinct])
      const found = new Map(rows.map((row) => [row.term, row.n]))
      for (const term of distinct) out.set(term, Math.max(0, found.get(term) ?? 0))
      return out
    },

    async stamp(kinds) {
      if (kinds.some((kind) => !stamped(kind))) return `unstamped:${++unstampedCalls}`
      const { rows } = await pool.query<{ kind: string; n: string }>('SELECT kind, n::text AS n FROM index_stamps WHERE kind = ANY($1::text[])', [kinds])
      const n = new Map(rows.map((row) => [row.kind, row.n]))
      return kinds.map((kind) => n.get(kind) ?? '0').join(',')
    },

    async count() {
      const counts = Object.fromEntries(UNIT_KINDS.map((kind) => [kind, 0])) as Record<UnitKind, number>
      const { rows } = await pool.query<{ kind: string; n: number }>('SELECT kind, count(*) AS n FROM index_units GROUP BY kind')
      for (const row of rows) if (row.kind in counts) counts[row.kind as UnitKind] = row.n
      return counts
    },
  }
  writers.set(index, {
    handle,
    write: async (client, units) => {
      postingCounts.clear()
      units.forEach(validateUnit)
      // Vectors' size is checked inside writeBatch, on this transaction's connection.
      if (units.length > 0) await writeBatch(client, pendingOf(units))
    },
  })
  return index
}

/** Adds the `embedding` column when pgvector was installed after migration 7 ran (under a lock, once). */
async function ensureEmbeddingColumn(handle: PostgresHandle): Promise<boolean> {
  const present = async (db: PgQueryable): Promise<boolean> => {
    const { rows } = await db.query<{ present: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'index_units' AND column_name = 'embedding') AS present`,
      [handle.schema],
    )
    return rows[0]?.present === true
  }
  if (await present(handle.pool)) return true
  return handle.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey(handle.schema, 'engram:index-embedding').key])
    if (!(await present(client))) await client.query('ALTER TABLE index_units ADD COLUMN embedding vector')
    return true
  })
}

function versionAtLeast(version: string, wanted: [number, number, number]): boolean {
  const parts = version.split('.').map((part) => Number.parseInt(part, 10) || 0)
  for (let i = 0; i < 3; i++) {
    const have = parts[i] ?? 0
    if (have !== wanted[i]) return have > wanted[i]!
  }
  return true
}
