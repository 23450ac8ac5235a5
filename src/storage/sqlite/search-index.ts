/**
 * The search index on SQLite: one `index_units` row per retrievable unit, an FTS5 table over its
 * text (BM25), and its vector in sqlite-vec or, without the extension, in a plain table searched
 * in TypeScript. It returns raw candidates per channel; fusion happens above it.
 *
 * Vectors belong to one embedder. The embedder id is kept in `meta`; when the index is opened
 * with a different one (or the vector backend changed, e.g. the file moved to a machine without
 * sqlite-vec), every stored vector is dropped and the `hash` of each unit that had one is blanked,
 * so the next reindex sees those units as changed and embeds them again with the new model.
 * Mixing vectors of two models in one space would silently return nonsense neighbours.
 *
 * Timestamps are stored normalised (`toISOString()`), so ranges compare correctly as text.
 */
import type { SQLInputValue } from 'node:sqlite'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { visibleOwners } from '../../core/owner.ts'
import type { IndexCandidate, IndexCapabilities, IndexFilter, IndexQuery, IndexUnit, SearchIndex, StoredUnit, UnitKind } from '../contracts.ts'
import { UNIT_KINDS } from '../contracts.ts'
import { type IndexUnitRow, listPage, mergedCandidates, storedUnitOf, unitsInAskedOrder, validateIndexUnit, validateVector } from '../index-unit-records.ts'
import { createPendingAccess } from '../pending-access.ts'
import { type SqliteHandle, statementCache } from './database.ts'
import { eraseInTransaction } from './erase.ts'
import { ftsFields, keptTerms, kindToken, lexicalTerms, POSTINGS_CAP, PostingCountMemo, termRepeats } from '../lexical-plan.ts'
import { unicode61Tokens } from '../unicode61.ts'
import { holdsUnspacedLetters, resegmentAnalysed } from '../../text/analyse.ts'
import { parseJsonObject, parseJsonStrings } from './json.ts'
import { createSqliteVecStore, createTypescriptVectorStore, type UnitFilterSql, type VectorBackend, type VectorStore } from './vector-store.ts'

export interface SqliteSearchIndexOptions {
  /** The embedder whose vectors this index holds (e.g. `openai:text-embedding-3-small`). */
  embedderId?: string
  /** Expected vector size; when given, vectors of another size are refused before the first is stored. */
  dimensions?: number
  /** `auto` (default): sqlite-vec when it loaded, else TypeScript. Forcing `typescript` is for tests and odd platforms. */
  vectorBackend?: 'auto' | VectorBackend
}

const META_EMBEDDER = 'index.embedder_id'
const META_DIMS = 'index.vector_dims'
const META_BACKEND = 'index.vector_backend'

/** A unit's row as SQLite returns it: the JSON columns as text. */
interface UnitRow extends IndexUnitRow<string> {
  rowid: number
}

/** The columns an upsert writes, after `id`. */
const WRITTEN_COLUMNS = ['kind', 'text', 'source', 'provenance', 'scope', 'agent', 'user_id', 'owner', 'created_at', 'updated_at', 'hash', 'links', 'meta', 'has_vector'] as const
type WrittenColumn = (typeof WRITTEN_COLUMNS)[number]

const UNIT_COLUMNS =
  'rowid, id, kind, text, source, provenance, scope, agent, user_id, owner, created_at, updated_at, hash, links, meta, access_count, last_access_at'

/** The unit columns as the ranked full-text queries select them (`u` is index_units). */
const RANKED_UNIT_COLUMNS = UNIT_COLUMNS.split(', ')
  .map((column) => `u.${column} AS ${column}`)
  .join(', ')

function invalid(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

/** An access count to raise to: a whole number ≥ 0. */
function accessCountOf(value: unknown, i: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw invalid(`units[${i}].count must be a whole number ≥ 0, got ${JSON.stringify(value)}.`, 'Pass the access count another index reported.')
  return value
}

/** Instants normalised lately: an append writes its message's and rewrites the two before it, each with the instant it had. */
const INSTANT_MEMO_LIMIT = 256
const instantMemo = new Map<string, string>()

function normaliseInstant(value: unknown, what: () => string): string {
  if (typeof value === 'string') {
    const known = instantMemo.get(value)
    if (known !== undefined) return known
  }
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw invalid(`${what()} must be an ISO-8601 instant, got ${JSON.stringify(value)}.`, `Pass ${what()} as new Date(...).toISOString().`)
  const normal = new Date(ms).toISOString()
  if (instantMemo.size >= INSTANT_MEMO_LIMIT) instantMemo.clear()
  instantMemo.set(value as string, normal)
  return normal
}

const JSON_TEXT = { strings: parseJsonStrings, object: parseJsonObject }
const toStoredUnit = (row: UnitRow): StoredUnit => storedUnitOf(row, JSON_TEXT)

/** The filter as SQL over `index_units AS u`. Every column used here has an index or is cheap after one. */
export function filterToSql(filter: IndexFilter): UnitFilterSql {
  const clauses: string[] = []
  const params: SQLInputValue[] = []
  if (filter.kinds !== undefined) {
    clauses.push('u.kind IN (SELECT value FROM json_each(?))')
    params.push(JSON.stringify(filter.kinds))
  }
  if (filter.sources !== undefined) {
    clauses.push('u.source IN (SELECT value FROM json_each(?))')
    params.push(JSON.stringify(filter.sources))
  }
  if (filter.scope !== undefined) {
    clauses.push('u.scope = ?')
    params.push(filter.scope)
  }
  if (filter.agent !== undefined) {
    clauses.push('u.agent = ?')
    params.push(filter.agent)
  }
  if (filter.user !== undefined) {
    clauses.push('u.user_id = ?')
    params.push(filter.user)
  }
  if (filter.viewer !== undefined) {
    // Decision 0017: the viewer's owners, written by its agent or by none (shared, profiles).
    // Agent-owned rows always name their agent, so `agent IS NULL` admits only shared memory and profiles.
    const owners = visibleOwners(filter.viewer)
    clauses.push(`u.owner IN (${owners.map(() => '?').join(', ')}) AND (u.agent = ? OR (u.agent IS NULL AND u.owner <> 'agent'))`)
    params.push(...owners, filter.viewer.agent)
  }
  if (filter.since !== undefined) {
    clauses.push('u.created_at >= ?')
    params.push(normaliseInstant(filter.since, () => 'since'))
  }
  if (filter.until !== undefined) {
    clauses.push('u.created_at <= ?')
    params.push(normaliseInstant(filter.until, () => 'until'))
  }
  return { sql: clauses.join(' AND '), params }
}

/** Version of what the full-text table holds; a different stored value means rebuild it. */
const FTS_LAYOUT = 'analysed-fields-v3'
/** The layout before text in unspaced scripts was cut into words (decision 0076); migrated in place. */
const FTS_LAYOUT_V2 = 'analysed-fields-v2'
/** The layout before units' kinds were indexed too; migrated by copying its rows. */
const FTS_LAYOUT_V1 = 'analysed-fields-v1'
const META_FTS = 'index.fts_layout'

/**
 * Create the FTS5 table. It holds ANALYSED text (stop words dropped, Porter stems; the analysis
 * of src/text/analyse.ts, which queries use too) in four fields: the unit's own
 * text, its near and far neighbours, and related words (WordNet hypernyms) — so BM25 can weigh
 * each at query time. Analysis happens in TypeScript, so rows are written by upsert, not by
 * triggers. A file with the older one-field porter table (or none) is rebuilt from index_units
 * once; neighbour text is then missing until the conversation is indexed again.
 */
function ensureFullText(handle: SqliteHandle): boolean {
  const { db } = handle
  if (!handle.features.fts5) return false
  const exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'index_fts'").get() !== undefined
  const layout = (db.prepare('SELECT value FROM meta WHERE key = ?').get(META_FTS) as { value: string } | undefined)?.value
  if (exists && layout === FTS_LAYOUT) return true
  if (handle.readOnly) return false
  if (exists && layout === FTS_LAYOUT_V1) {
    // Same analysed fields plus the kind: copy the rows (neighbour text included) rather than
    // re-analysing units, which would lose the neighbours until conversations are indexed again.
    handle.transaction(() => {
      db.exec(`
        CREATE VIRTUAL TABLE index_fts_v2 USING fts5(own, near, far, related, kind, tokenize = 'unicode61 remove_diacritics 2');
        INSERT INTO index_fts_v2 (rowid, own, near, far, related, kind)
          SELECT f.rowid, f.own, f.near, f.far, f.related, 'k' || u.kind FROM index_fts f JOIN index_units u ON u.rowid = f.rowid;
        DROP TABLE index_fts;
        ALTER TABLE index_fts_v2 RENAME TO index_fts;
      `)
      resegmentFullText(handle)
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(META_FTS, FTS_LAYOUT)
    })
    return true
  }
  if (exists && layout === FTS_LAYOUT_V2) {
    handle.transaction(() => {
      resegmentFullText(handle)
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(META_FTS, FTS_LAYOUT)
    })
    return true
  }
  handle.transaction(() => {
    db.exec(`
      DROP TRIGGER IF EXISTS index_units_fts_insert;
      DROP TRIGGER IF EXISTS index_units_fts_delete;
      DROP TRIGGER IF EXISTS index_units_fts_update;
      DROP TABLE IF EXISTS index_fts;
      CREATE VIRTUAL TABLE index_fts USING fts5(own, near, far, related, kind, tokenize = 'unicode61 remove_diacritics 2');
      CREATE TABLE IF NOT EXISTS index_names (agent TEXT NOT NULL DEFAULT '', name TEXT NOT NULL, PRIMARY KEY (agent, name)) WITHOUT ROWID;
    `)
    const insert = db.prepare('INSERT INTO index_fts (rowid, own, near, far, related, kind) VALUES (?, ?, ?, ?, ?, ?)')
    const name = db.prepare('INSERT OR IGNORE INTO index_names (agent, name) VALUES (?, ?)')
    for (const row of db.prepare('SELECT rowid, text, kind, agent, meta FROM index_units').iterate() as Iterable<{ rowid: number; text: string; kind: string; agent: string | null; meta: string | null }>) {
      insert.run(row.rowid, ...ftsFields({ text: row.text, kind: row.kind }))
      if (row.kind === 'message' && row.meta !== null) {
        const speaker = parseJsonObject(row.meta).name
        if (typeof speaker === 'string' && speaker.trim() !== '') name.run(row.agent ?? '', speaker.trim())
      }
    }
    db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(META_FTS, FTS_LAYOUT)
  })
  return true
}

/**
 * Rows written before text in unspaced scripts was cut into words (decision 0076) held a run of
 * such text as one term: those rows get their own text and related words analysed again, and the
 * neighbours' fields (whose text the index does not keep) their stored terms cut as words cuts
 * them now. Rows of other text are left alone: their analysis has not changed.
 */
function resegmentFullText(handle: SqliteHandle): void {
  const { db } = handle
  // Found first, rewritten after: the rows are streamed (a large index does not fit in memory at once).
  const affected: number[] = []
  for (const row of db.prepare('SELECT rowid, own, near, far FROM index_fts').iterate() as Iterable<{ rowid: number; own: string; near: string; far: string }>) {
    if (holdsUnspacedLetters(row.own) || holdsUnspacedLetters(row.near) || holdsUnspacedLetters(row.far)) affected.push(row.rowid)
  }
  const read = db.prepare('SELECT f.near, f.far, u.text, u.kind FROM index_fts f JOIN index_units u ON u.rowid = f.rowid WHERE f.rowid = ?')
  const update = db.prepare('UPDATE index_fts SET own = ?, near = ?, far = ?, related = ? WHERE rowid = ?')
  for (const rowid of affected) {
    const row = read.get(rowid) as { near: string; far: string; text: string; kind: string } | undefined
    if (row === undefined) continue
    const [own, , , related] = ftsFields({ text: row.text, kind: row.kind })
    update.run(own, resegmentAnalysed(row.near), resegmentAnalysed(row.far), related, rowid)
  }
}

/**
 * A SearchIndex over `handle`. Throws `unsupported` when `vectorBackend: 'sqlite-vec'` is asked
 * for and the extension did not load.
 */
export function createSqliteSearchIndex(handle: SqliteHandle, options: SqliteSearchIndexOptions = {}): SearchIndex {
  const { db } = handle
  const wanted = options.vectorBackend ?? 'auto'
  if (wanted === 'sqlite-vec' && !handle.features.sqliteVec) {
    throw new EngramError({
      code: ErrorCode.unsupported,
      category: 'system',
      message: `sqlite-vec could not be loaded (${handle.sqliteVecError ?? 'unknown reason'}).`,
      fix: "Use vectorBackend 'auto' to fall back to TypeScript vector search, or reinstall engram so its sqlite-vec package matches this platform.",
    })
  }
  const backend: VectorBackend = wanted === 'typescript' || !handle.features.sqliteVec ? 'typescript' : 'sqlite-vec'
  const vectors: VectorStore = backend === 'sqlite-vec' ? createSqliteVecStore(handle) : createTypescriptVectorStore(handle)
  const fullText = ensureFullText(handle)

  // Access counts wait in memory and are written in batches (pending-access.ts says why).
  const writeAccess = db.prepare(
    // last_access_at never moves backwards: a late, older access must not make a memory look staler.
    `UPDATE index_units SET access_count = access_count + ?1,
       last_access_at = CASE WHEN last_access_at IS NULL OR last_access_at < ?2 THEN ?2 ELSE last_access_at END
     WHERE id = ?3`,
  )
  const pendingAccess = createPendingAccess((batch) => {
    handle.transaction(() => {
      for (const [id, access] of batch) writeAccess.run(access.count, access.last, id)
    })
  })
  const withPendingAccess = (unit: StoredUnit): StoredUnit => pendingAccess.apply(unit)

  const getMeta = db.prepare('SELECT value FROM meta WHERE key = ?')
  const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
  const deleteMeta = db.prepare('DELETE FROM meta WHERE key = ?')
  const readMeta = (key: string): string | undefined => (getMeta.get(key) as { value: string } | undefined)?.value

  function storedDims(): number | undefined {
    const value = readMeta(META_DIMS)
    return value === undefined ? undefined : Number(value)
  }

  // Vectors of another embedder, or in a table of another backend, cannot be searched together
  // with ours. A writable handle drops them (see the file comment); a read-only one just ignores them.
  let vectorsUsable = true
  const storedEmbedder = readMeta(META_EMBEDDER)
  const storedBackend = readMeta(META_BACKEND)
  const embedderChanged = options.embedderId !== undefined && storedEmbedder !== undefined && storedEmbedder !== options.embedderId
  const backendChanged = storedBackend !== undefined && storedBackend !== backend
  if (handle.readOnly) {
    vectorsUsable = !embedderChanged && !backendChanged
  } else {
    handle.transaction(() => {
      if (embedderChanged || backendChanged) {
        db.exec("UPDATE index_units SET hash = '', has_vector = 0 WHERE has_vector = 1")
        db.exec('DELETE FROM index_vectors')
        // Without the extension a vec0 table cannot even be dropped; it is dropped the next time
        // sqlite-vec is present (the backend will have changed again), and is never read meanwhile.
        createSqliteVecStore(handle).dropAll()
        deleteMeta.run(META_DIMS)
      }
      if (options.embedderId !== undefined) setMeta.run(META_EMBEDDER, options.embedderId)
      if (storedBackend !== backend) setMeta.run(META_BACKEND, backend)
    })
  }

  function checkDims(vector: Float32Array, what: string): void {
    const expected = storedDims() ?? options.dimensions
    if (expected !== undefined && vector.length !== expected) {
      throw invalid(
        `${what} has ${vector.length} dimensions; this index holds ${expected}-dimensional vectors.`,
        'Use the same embedder for every vector, or change the embedder (ENGRAM_EMBEDDER) and run engram reindex, which re-embeds everything.',
        { got: vector.length, expected },
      )
    }
  }

  function validateUnit(unit: IndexUnit, i: number): void {
    validateIndexUnit(unit, i)
    if (unit.vector !== undefined) validateVector(unit.vector, `units[${i}].vector`)
  }

  function rowidsWhere(sql: string, ...params: SQLInputValue[]): number[] {
    return (db.prepare(`SELECT rowid FROM index_units WHERE ${sql}`).all(...params) as Array<{ rowid: number }>).map((row) => row.rowid)
  }

  function deleteRowids(rowids: number[]): void {
    if (rowids.length === 0) return
    vectors.delete(rowids)
    if (fullText) db.prepare('DELETE FROM index_fts WHERE rowid IN (SELECT value FROM json_each(?))').run(JSON.stringify(rowids))
    db.prepare('DELETE FROM index_units WHERE rowid IN (SELECT value FROM json_each(?))').run(JSON.stringify(rowids))
  }

  const countPostings = db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM index_fts WHERE index_fts MATCH ? LIMIT ?)')
  const postingCounts = new PostingCountMemo()
  /** Rows matching an FTS5 expression, counted up to POSTINGS_CAP + 1 (see ../lexical-plan.ts). */
  const postingCount = (expression: string): number => {
    let n = postingCounts.get(expression)
    if (n === undefined) {
      n = (countPostings.get(expression, POSTINGS_CAP + 1) as { n: number }).n
      postingCounts.set(expression, n)
    }
    return n
  }
  const FTS_PAGE_COUNT = 'SELECT count(*) AS n FROM (SELECT 1 FROM index_fts WHERE index_fts MATCH ? LIMIT ?)'
  /**
   * Ranked rows fetched per wanted hit when a filter may drop some. Selective kind filters are
   * applied inside FTS5, so what remains (agent, broad kinds, time) drops few rows.
   */
  const LEXICAL_OVERFETCH = 1.2
  const LEXICAL_MIN_FETCH = 200
  // Statements are prepared once per distinct SQL (the filter changes the text, not often).
  const cachedStatement = statementCache(db)

  function lexical(query: IndexQuery, limit: number, fullFilter: UnitFilterSql): IndexCandidate[] {
    if (!fullText) return []
    const { all, distinct } = lexicalTerms(query)
    if (distinct.length === 0) return []
    const phrase = (term: string): string => `"${term.replaceAll('"', '""')}"`
    const kept = distinct.length > 1 ? keptTerms(distinct, distinct.map((term) => postingCount(`{own near far related}: ${phrase(term)}`))) : distinct
    if (kept.length === 0) return []
    const terms = kept.flatMap((term) => Array.from({ length: termRepeats(all, term) }, () => phrase(term))).join(' OR ')
    // A selective kind filter (skills among messages) narrows the match inside FTS5; a broad one
    // (most kinds) would make FTS5 intersect huge posting lists, so the SQL filter does it instead.
    let kinds = ''
    if (query.kinds && query.kinds.length > 0) {
      const clause = `kind: (${query.kinds.map(kindToken).join(' OR ')})`
      if (unitsOfKinds(query.kinds) <= POSTINGS_CAP) kinds = ` AND ${clause}`
    }
    // Kinds matched inside FTS5 need no second check in SQL (nor the over-fetch that check needs).
    const filter = kinds !== '' ? filterToSql({ ...query, kinds: undefined }) : fullFilter
    const match = `{own near far related}: (${terms})${kinds}`
    const w = query.fieldWeights ?? { near: 0.5, far: 0.2, related: 0.3 }
    const weights = [w.near, w.far, w.related]
    type Row = UnitRow & { score: number }
    // Rank inside FTS5 first and join the few best rows to their units, rather than joining every
    // match before sorting (a common term can match tens of thousands of rows). CROSS JOIN keeps
    // that order: given a kind filter, the planner would otherwise scan every unit of those kinds
    // and probe the matches (measured 2x slower at 100k units). With a filter, the ranking
    // over-fetches; when the filter leaves too few of a full page, the exact query runs. BM25 is
    // ordered by its alias so that it is computed once per matching row, not twice (−3% per search).
    const ranked = (fetch: number): Row[] =>
      cachedStatement(
        `SELECT ${RANKED_UNIT_COLUMNS}, -f.bm25_score AS score
         FROM (SELECT rowid, bm25(index_fts, 1, ?, ?, ?, 0) AS bm25_score FROM index_fts WHERE index_fts MATCH ?
               ORDER BY bm25_score LIMIT ?) f
         CROSS JOIN index_units u ON u.rowid = f.rowid
         ${filter.sql ? `WHERE ${filter.sql}` : ''}
         ORDER BY score DESC`,
      ).all(...weights, match, fetch, ...filter.params) as unknown as Row[]
    const fetch = filter.sql ? Math.max(Math.ceil(limit * LEXICAL_OVERFETCH), LEXICAL_MIN_FETCH) : limit
    let rows = ranked(fetch)
    if (filter.sql && rows.length < limit && (cachedStatement(FTS_PAGE_COUNT).get(match, fetch + 1) as { n: number }).n > fetch) {
      rows = cachedStatement(
        `SELECT ${RANKED_UNIT_COLUMNS}, -bm25(index_fts, 1, ?, ?, ?, 0) AS score
         FROM index_fts CROSS JOIN index_units u ON u.rowid = index_fts.rowid
         WHERE index_fts MATCH ? AND ${filter.sql}
         ORDER BY bm25(index_fts, 1, ?, ?, ?, 0) LIMIT ?`,
      ).all(...weights, match, ...filter.params, ...weights, limit) as unknown as Row[]
    }
    rows = rows.slice(0, limit)
    // The join read each unit's row already: hand the units up rather than have the caller read them again.
    return rows.map((row) => ({ id: row.id, kind: row.kind as UnitKind, lexical: row.score, unit: withPendingAccess(toStoredUnit(row)) }))
  }

  function dense(query: Float32Array, limit: number, filter: UnitFilterSql): IndexCandidate[] {
    if (!vectorsUsable) return []
    const dims = storedDims()
    if (dims === undefined) return []
    checkDims(query, 'The query vector')
    const nearest = vectors.nearest(query, limit, filter)
    if (nearest.length === 0) return []
    const rows = db
      .prepare('SELECT rowid, id, kind FROM index_units WHERE rowid IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify(nearest.map((item) => item.rowid))) as Array<{ rowid: number; id: string; kind: string }>
    const byRowid = new Map(rows.map((row) => [row.rowid, row]))
    const out: IndexCandidate[] = []
    for (const item of nearest) {
      const row = byRowid.get(item.rowid)
      if (row) out.push({ id: row.id, kind: row.kind as UnitKind, dense: Math.max(-1, Math.min(1, item.similarity)) })
    }
    return out
  }

  const capabilities: IndexCapabilities = Object.freeze({ fullText, vectors: backend })

  const ensureVocabulary = (): void => db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.index_vocab USING fts5vocab(main, 'index_fts', 'col')")

  /*
   * The vocabulary of the units' own words, as last read, and what this connection has added since.
   * Reading it walks every posting list of the full-text index (1.8 s at 1M units), and the
   * retriever asks once a minute: a process answering turns paid that on one turn a minute. It is
   * read again only when it may have lost a term or gained one this process did not write: a unit
   * replaced or removed here, or a commit by another connection (`PRAGMA data_version` changes);
   * units added here add their terms as FTS5 tokenises them (unicode61.ts). forgetVocabulary()
   * forgets the unit counts too (kept the same way, below).
   */
  let vocabularyRead: { terms: Set<string>; dataVersion: number } | undefined
  /** Words added since the read are kept up to this many (a bulk load reads it again instead). */
  const VOCABULARY_ADDED_LIMIT = 200_000
  let vocabularyAdded: string[] = []
  const dataVersion = (): number => (cachedStatement('PRAGMA data_version').get() as { data_version: number }).data_version
  /**
   * Units of each kind this connection added or changed (a changed kind counts for both), and
   * removals of any kind: with `data_version` (another connection's commits) the stamp of a kind
   * (`stamp`), so that what a reader listed of a kind is kept until one of them changed.
   */
  const kindWrites = new Map<string, number>()
  let removals = 0
  const wroteKind = (kind: string): void => {
    kindWrites.set(kind, (kindWrites.get(kind) ?? 0) + 1)
  }
  const forgetVocabulary = (): void => {
    vocabularyRead = undefined
    vocabularyAdded = []
    countsRead = undefined
  }
  /** Units per kind, kept the same way (counting them read an index of every unit: 150 ms at 1M). */
  let countsRead: { counts: Record<UnitKind, number>; dataVersion: number } | undefined
  const unitCounts = (): Record<UnitKind, number> => {
    const version = dataVersion()
    if (countsRead === undefined || countsRead.dataVersion !== version) {
      const counts = Object.fromEntries(UNIT_KINDS.map((kind) => [kind, 0])) as Record<UnitKind, number>
      const rows = db.prepare('SELECT kind, count(*) AS n FROM index_units GROUP BY kind').all() as Array<{ kind: string; n: number }>
      for (const row of rows) if (row.kind in counts) counts[row.kind as UnitKind] = row.n
      countsRead = { counts, dataVersion: version }
    }
    return countsRead.counts
  }
  /**
   * Rows a kind clause of the full-text index matches: every unit's row holds its one kind token
   * (lexical-plan.ts `kindToken`), so they are the units of the kinds with those tokens, counted
   * already — counting the clause's postings again after each turn's write cost ~0.7 ms at 100k.
   */
  const unitsOfKinds = (kinds: readonly string[]): number => {
    const tokens = new Set(kinds.map(kindToken))
    const counts = unitCounts()
    return UNIT_KINDS.reduce((sum, kind) => sum + (tokens.has(kindToken(kind)) ? counts[kind] : 0), 0)
  }
  /**
   * A write of `units`, analysed now (`upsert` prepares before it takes the write lock, so its
   * transaction only writes; an append prepares inside its own): `rows()` writes them inside the
   * caller's transaction, `committed()` updates what this connection remembers (counts,
   * vocabulary) once that transaction has committed. Undefined when there is nothing to write.
   */
  function prepareWrite(units: IndexUnit[]): PreparedIndexWrite | undefined {
    postingCounts.clear()
    units.forEach(validateUnit)
    if (units.length === 0) return undefined
    const fields = fullText ? units.map((unit) => ftsFields(unit)) : []
    /** A unit that existed changed its kind or text: the counts and vocabulary are read again. */
    let replaced = false
    /** Indexes in `units` of the units new to the index. */
    let added: number[] = units.map((_, i) => i)
    /** What was written, with the kind a replaced unit had (the counts move it to its new kind). */
    const written: Array<{ rowid: number; existed: boolean; changed: boolean; kindBefore?: string }> = []
    // Prepared once (preparing these five cost more than running them for a turn's few units).
    const rows = (): void => {
      const selectExisting = cachedStatement(`SELECT rowid, ${WRITTEN_COLUMNS.join(', ')} FROM index_units WHERE id = ?`)
      const deleteFts = cachedStatement('DELETE FROM index_fts WHERE rowid = ?')
      const insertFts = cachedStatement('INSERT INTO index_fts (rowid, own, near, far, related, kind) VALUES (?, ?, ?, ?, ?, ?)')
      const insertName = cachedStatement('INSERT OR IGNORE INTO index_names (agent, name) VALUES (?, ?)')
      const write = cachedStatement(
        `INSERT INTO index_units (id, ${WRITTEN_COLUMNS.join(', ')})
         VALUES (?, ${WRITTEN_COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (id) DO UPDATE SET ${WRITTEN_COLUMNS.map((column) => `${column} = excluded.${column}`).join(', ')}
         RETURNING rowid`,
      )
      // Rows first, then their full-text rows: written interleaved, unit by unit, the same batch
      // took twice the CPU (FTS5's pending terms and the tables' B-trees evicting each other from
      // the CPU caches; measured at 200k units, decision 0042).
      written.length = 0
      for (const [i, unit] of units.entries()) {
        const existing = selectExisting.get(unit.id) as (Record<WrittenColumn, SQLInputValue> & { rowid: number }) | undefined
        if (unit.vector !== undefined) {
          checkDims(unit.vector, `units[${i}].vector`)
          if (storedDims() === undefined) {
            vectors.ensure(unit.vector.length)
            setMeta.run(META_DIMS, String(unit.vector.length))
          }
        }
        // Re-upserting the same content without a vector keeps the vector it has; new content
        // without one drops the old vector, which described text that is gone.
        const keepsVector = unit.vector === undefined && existing !== undefined && existing.has_vector === 1 && existing.hash === unit.hash
        const hasVector = unit.vector !== undefined || keepsVector
        const values: SQLInputValue[] = [
          unit.kind,
          unit.text,
          unit.source,
          JSON.stringify(unit.provenance),
          unit.scope ?? null,
          unit.agent ?? null,
          unit.user ?? null,
          unit.owner ?? 'agent',
          normaliseInstant(unit.createdAt, () => `units[${i}].createdAt`),
          unit.updatedAt === undefined ? null : normaliseInstant(unit.updatedAt, () => `units[${i}].updatedAt`),
          unit.hash,
          unit.links === undefined ? null : JSON.stringify(unit.links),
          unit.meta === undefined ? null : JSON.stringify(unit.meta),
          hasVector ? 1 : 0,
        ]
        // A unit written again as it is (a message whose neighbours changed: only its full-text row
        // differs) keeps its row: rewriting it rewrote every index of the table.
        const unchanged = existing !== undefined && WRITTEN_COLUMNS.every((column, c) => existing[column] === values[c])
        const rowid = unchanged ? existing.rowid : (write.get(unit.id, ...values) as { rowid: number }).rowid
        if (unit.vector !== undefined) vectors.put(rowid, unit.vector)
        else if (!hasVector && existing?.has_vector === 1) vectors.delete([rowid])
        written.push({ rowid, existed: existing !== undefined, changed: !unchanged, ...(existing !== undefined ? { kindBefore: String(existing.kind) } : {}) })
        // The vocabulary and the counts lose or gain nothing when a unit keeps its kind and text.
        if (existing !== undefined && (existing.kind !== unit.kind || existing.text !== unit.text)) replaced = true
        const speaker = unit.kind === 'message' ? unit.meta?.name : undefined
        if (fullText && typeof speaker === 'string' && speaker.trim() !== '') insertName.run(unit.agent ?? '', speaker.trim())
      }
      added = written.flatMap((row, i) => (row.existed ? [] : [i]))
      if (!fullText) return
      for (const [i, { rowid, existed }] of written.entries()) {
        if (existed) deleteFts.run(rowid)
        insertFts.run(rowid, ...(fields[i] as ReturnType<typeof ftsFields>))
      }
    }
    const committed = (): void => {
      written.forEach(({ changed, kindBefore }, i) => {
        if (!changed) return
        if (kindBefore !== undefined) wroteKind(kindBefore)
        wroteKind((units[i] as IndexUnit).kind)
      })
      // The counts read (when there are) gain the new units and move the replaced ones to their
      // kind — every turn replaces its previous message's unit (its neighbours changed), and
      // counting 100k rows again cost ~2 ms of that turn's priming.
      if (countsRead !== undefined) {
        const counts = countsRead.counts
        written.forEach(({ kindBefore }, i) => {
          if (kindBefore !== undefined && kindBefore in counts) counts[kindBefore as UnitKind]--
          counts[(units[i] as IndexUnit).kind]++
        })
      }
      // A replaced unit may have lost words: the vocabulary is read again (the counts stay).
      if (replaced) {
        vocabularyRead = undefined
        vocabularyAdded = []
        return
      }
      if (vocabularyRead === undefined || !fullText) return
      for (const i of added) vocabularyAdded.push(...unicode61Tokens((fields[i] as ReturnType<typeof ftsFields>)[0]))
      if (vocabularyAdded.length > VOCABULARY_ADDED_LIMIT) forgetVocabulary()
    }
    return { rows, committed }
  }

  const index: SearchIndex & { vocabulary(): Promise<Set<string>> } = {
    capabilities,

    async upsert(units) {
      const write = prepareWrite(units)
      if (write === undefined) return
      handle.transaction(write.rows)
      write.committed()
    },

    async remove(ids) {
      postingCounts.clear()
      forgetVocabulary()
      removals++
      if (ids.length === 0) return
      handle.transaction(() => deleteRowids(rowidsWhere('id IN (SELECT value FROM json_each(?))', JSON.stringify(ids))))
    },

    async removeSource(source) {
      postingCounts.clear()
      forgetVocabulary()
      removals++
      return handle.transaction(() => {
        const rowids = rowidsWhere('source = ?', source)
        deleteRowids(rowids)
        return rowids.length
      })
    },

    async purgeUser(user) {
      postingCounts.clear()
      forgetVocabulary()
      removals++
      return eraseInTransaction(handle, () => {
        const rowids = rowidsWhere('owner = ? OR user_id = ?', `user:${user}`, user)
        deleteRowids(rowids)
        // Deleted rows stay in older FTS5 segments until they are merged: merge them now, so the
        // user's words leave the full-text index's pages as well as its answers.
        if (fullText && rowids.length > 0) db.exec("INSERT INTO index_fts (index_fts) VALUES ('optimize')")
        // Speaker names are kept per agent for query analysis; a name no remaining message carries goes.
        if (fullText) {
          db.exec(
            `DELETE FROM index_names WHERE NOT EXISTS (SELECT 1 FROM index_units u WHERE u.kind = 'message' AND coalesce(u.agent, '') = index_names.agent
               AND json_valid(u.meta) AND trim(json_extract(u.meta, '$.name')) = index_names.name)`,
          )
        }
        return rowids.length
      })
    },

    async hashes(source) {
      const rows = db.prepare('SELECT id, hash FROM index_units WHERE source = ?').all(source) as Array<{ id: string; hash: string }>
      return new Map(rows.map((row) => [row.id, row.hash]))
    },

    async sources() {
      const rows = db.prepare('SELECT DISTINCT source FROM index_units ORDER BY source').all() as Array<{ source: string }>
      return rows.map((row) => row.source)
    },

    async search(query) {
      if (!Number.isInteger(query.limit) || query.limit < 0) {
        throw invalid(`limit must be a non-negative integer, got ${JSON.stringify(query.limit)}.`, 'Pass how many candidates each channel returns.')
      }
      if (query.vector !== undefined) validateVector(query.vector, 'The query vector')
      if (query.limit === 0) return []
      const filter = filterToSql(query)
      const lexicalHits = query.text !== undefined || query.terms !== undefined ? lexical(query, query.limit, filter) : []
      return mergedCandidates(lexicalHits, query.vector !== undefined ? dense(query.vector, query.limit, filter) : [])
    },

    async list(filter, page) {
      const { limit, offset } = listPage(page)
      if (limit === 0) return []
      const where = filterToSql(filter)
      const rows = cachedStatement(`SELECT ${UNIT_COLUMNS} FROM index_units u ${where.sql ? `WHERE ${where.sql}` : ''} ORDER BY u.source, u.rowid LIMIT ? OFFSET ?`).all(
        ...where.params,
        limit,
        offset,
      ) as unknown as UnitRow[]
      return rows.map((row) => withPendingAccess(toStoredUnit(row)))
    },

    async get(ids) {
      if (ids.length === 0) return []
      const rows = cachedStatement(`SELECT ${UNIT_COLUMNS} FROM index_units WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as unknown as UnitRow[]
      return unitsInAskedOrder(ids, rows, (row) => withPendingAccess(toStoredUnit(row)))
    },

    async recordAccess(ids, at) {
      if (ids.length === 0) return
      const instant = normaliseInstant(at, () => 'at')
      if (handle.readOnly) throw invalid('This index was opened read-only; access cannot be recorded.', 'Open the database writable to record access.')
      await pendingAccess.record(ids, instant)
    },

    async flush() {
      await pendingAccess.flush()
    },

    async raiseAccess(units) {
      if (units.length === 0) return 0
      if (handle.readOnly) throw invalid('This index was opened read-only; access cannot be recorded.', 'Open the database writable to record access.')
      const rows = units.map((u, i) => ({ id: u.id, count: accessCountOf(u.count, i), last: u.lastAccessAt === undefined ? null : normaliseInstant(u.lastAccessAt, () => `units[${i}].lastAccessAt`) }))
      // What this process counted is written first, so the counts raised are the ones readers see.
      await pendingAccess.flush()
      const raise = cachedStatement(
        `UPDATE index_units SET access_count = max(access_count, ?1),
           last_access_at = CASE WHEN ?2 IS NOT NULL AND (last_access_at IS NULL OR last_access_at < ?2) THEN ?2 ELSE last_access_at END
         WHERE id = ?3 AND (access_count < ?1 OR (?2 IS NOT NULL AND (last_access_at IS NULL OR last_access_at < ?2)))`,
      )
      let changed = 0
      handle.transaction(() => {
        for (const row of rows) changed += Number(raise.run(row.count, row.last, row.id).changes)
      })
      return changed
    },

    async participants(agent) {
      if (!fullText) return []
      // Asked before every search: prepared once (preparing cost more than running it).
      const rows = (agent === undefined
        ? cachedStatement('SELECT DISTINCT name FROM index_names ORDER BY name').all()
        : cachedStatement("SELECT name FROM index_names WHERE agent IN (?, '') ORDER BY name").all(agent)) as Array<{ name: string }>
      return [...new Set(rows.map((row) => row.name))]
    },

    /*
     * Distinct terms of the units' own words (fts5vocab over the FTS index, created on first use;
     * it is a view, it stores nothing). Query expansion looks for neighbours of a query word only
     * among words the memory actually holds. Not part of the SearchIndex contract yet: optional.
     */
    async vocabulary() {
      if (!fullText) return new Set<string>()
      const version = dataVersion()
      if (vocabularyRead === undefined || vocabularyRead.dataVersion !== version) {
        ensureVocabulary()
        const rows = db.prepare("SELECT term FROM temp.index_vocab WHERE col = 'own'").all() as Array<{ term: string }>
        vocabularyRead = { terms: new Set(rows.map((row) => row.term)), dataVersion: version }
        vocabularyAdded = []
      } else if (vocabularyAdded.length > 0) {
        vocabularyRead = { terms: new Set([...vocabularyRead.terms, ...vocabularyAdded]), dataVersion: version }
        vocabularyAdded = []
      }
      // A copy: the caller's set never changes under it, and ours stays as read.
      return new Set(vocabularyRead.terms)
    },

    /** Units holding each term in their own words (one indexed look-up per term in the fts5vocab view). */
    async documentFrequencies(terms) {
      const out = new Map<string, number>()
      if (!fullText || terms.length === 0) return out
      ensureVocabulary()
      const statement = cachedStatement("SELECT doc FROM temp.index_vocab WHERE term = ? AND col = 'own'")
      for (const term of new Set(terms)) out.set(term, ((statement.get(term) as { doc: number } | undefined)?.doc) ?? 0)
      return out
    },

    async count() {
      return { ...unitCounts() }
    },

    async stamp(kinds) {
      return `${dataVersion()}:${removals}:${kinds.map((kind) => kindWrites.get(kind) ?? 0).join(',')}`
    },
  }
  writers.set(index, { handle, prepareWrite })
  return index
}

/** A write of units prepared by an index of this module (see `prepareWrite` inside createSqliteSearchIndex). */
export interface PreparedIndexWrite {
  /** Writes the rows; inside the caller's transaction on the index's handle. */
  rows(): void
  /** After that transaction committed: what the index remembers gains the units. */
  committed(): void
}

const writers = new WeakMap<SearchIndex, { handle: SqliteHandle; prepareWrite: (units: IndexUnit[]) => PreparedIndexWrite | undefined }>()

/**
 * How to write units to `index` inside a transaction of `handle` — when `index` is this module's
 * index on that very handle (the context store then writes a message and its index rows in one
 * transaction); undefined for any other index. A prepared write of no units is undefined.
 */
export function indexWriterOn(handle: SqliteHandle, index: SearchIndex): ((units: IndexUnit[]) => PreparedIndexWrite | undefined) | undefined {
  const writer = writers.get(index)
  return writer?.handle === handle ? writer.prepareWrite : undefined
}

/** Re-exported for callers that wire the index and report its facts together. */
export { sqliteFacts } from './database.ts'
