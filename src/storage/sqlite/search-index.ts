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
import {
  type IndexCandidate,
  type IndexCapabilities,
  type IndexFilter,
  type IndexUnit,
  type SearchIndex,
  type StoredUnit,
  UNIT_KINDS,
  type UnitKind,
} from '../contracts.ts'
import type { SqliteHandle } from './database.ts'
import { toFtsQuery } from './fts-query.ts'
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

interface UnitRow {
  rowid: number
  id: string
  kind: string
  text: string
  source: string
  provenance: string
  scope: string | null
  agent: string | null
  user_id: string | null
  created_at: string
  updated_at: string | null
  hash: string
  links: string | null
  meta: string | null
  access_count: number
  last_access_at: string | null
}

const UNIT_COLUMNS =
  'rowid, id, kind, text, source, provenance, scope, agent, user_id, created_at, updated_at, hash, links, meta, access_count, last_access_at'

function invalid(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

function normaliseInstant(value: unknown, what: string): string {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw invalid(`${what} must be an ISO-8601 instant, got ${JSON.stringify(value)}.`, `Pass ${what} as new Date(...).toISOString().`)
  return new Date(ms).toISOString()
}

function toStoredUnit(row: UnitRow): StoredUnit {
  const unit: StoredUnit = {
    id: row.id,
    kind: row.kind as UnitKind,
    text: row.text,
    source: row.source,
    provenance: parseJsonStrings(row.provenance),
    createdAt: row.created_at,
    hash: row.hash,
    accessCount: row.access_count,
    lastAccessAt: row.last_access_at ?? undefined,
  }
  if (row.scope !== null) unit.scope = row.scope as StoredUnit['scope']
  if (row.agent !== null) unit.agent = row.agent
  if (row.user_id !== null) unit.user = row.user_id
  if (row.updated_at !== null) unit.updatedAt = row.updated_at
  if (row.links !== null) unit.links = parseJsonStrings(row.links)
  if (row.meta !== null) unit.meta = parseJsonObject(row.meta)
  return unit
}

function validateVector(vector: unknown, what: string): Float32Array {
  if (!(vector instanceof Float32Array) || vector.length === 0) {
    throw invalid(`${what} must be a non-empty Float32Array.`, 'Pass the embedder output as a Float32Array.')
  }
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw invalid(`${what} has a non-finite value at ${i}.`, 'Check the embedder output.')
  }
  return vector
}

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
  if (filter.since !== undefined) {
    clauses.push('u.created_at >= ?')
    params.push(normaliseInstant(filter.since, 'since'))
  }
  if (filter.until !== undefined) {
    clauses.push('u.created_at <= ?')
    params.push(normaliseInstant(filter.until, 'until'))
  }
  return { sql: clauses.join(' AND '), params }
}

/**
 * Create the FTS5 table and the triggers that keep it in step with `index_units`. External
 * content: the text is stored once, in index_units, and FTS5 keeps only its inverted index. When
 * the table is new but units exist (a file written where FTS5 was missing), it is rebuilt.
 */
function ensureFullText(handle: SqliteHandle): boolean {
  const { db } = handle
  const exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'index_fts'").get() !== undefined
  if (!handle.features.fts5) return false
  if (exists) return true
  if (handle.readOnly) return false
  handle.transaction(() => {
    db.exec(`
      -- porter: "running" finds "run"; remove_diacritics 2: "café" finds "cafe", in every script.
      CREATE VIRTUAL TABLE IF NOT EXISTS index_fts USING fts5(
        text, content = 'index_units', content_rowid = 'rowid', tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER IF NOT EXISTS index_units_fts_insert AFTER INSERT ON index_units BEGIN
        INSERT INTO index_fts (rowid, text) VALUES (new.rowid, new.text);
      END;
      CREATE TRIGGER IF NOT EXISTS index_units_fts_delete AFTER DELETE ON index_units BEGIN
        INSERT INTO index_fts (index_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
      END;
      CREATE TRIGGER IF NOT EXISTS index_units_fts_update AFTER UPDATE OF text ON index_units BEGIN
        INSERT INTO index_fts (index_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        INSERT INTO index_fts (rowid, text) VALUES (new.rowid, new.text);
      END;
      INSERT INTO index_fts (index_fts) VALUES ('rebuild');
    `)
  })
  return true
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
    const what = `units[${i}]`
    if (typeof unit.id !== 'string' || unit.id === '') throw invalid(`${what}.id must be a non-empty string.`, 'Give every unit a stable id.')
    if (!(UNIT_KINDS as readonly string[]).includes(unit.kind)) {
      throw invalid(`${what}.kind ${JSON.stringify(unit.kind)} is not a unit kind.`, `Use one of ${UNIT_KINDS.join(', ')}.`)
    }
    if (typeof unit.text !== 'string') throw invalid(`${what}.text must be a string.`, 'Pass the text to index.')
    if (typeof unit.source !== 'string' || unit.source === '') throw invalid(`${what}.source must be a non-empty string.`, 'Pass where the unit comes from.')
    if (typeof unit.hash !== 'string') throw invalid(`${what}.hash must be a string.`, 'Pass contentHash(text).')
    if (!Array.isArray(unit.provenance)) throw invalid(`${what}.provenance must be an array of ids.`, 'Pass [] when there is none.')
    if (unit.vector !== undefined) validateVector(unit.vector, `${what}.vector`)
  }

  function rowidsWhere(sql: string, ...params: SQLInputValue[]): number[] {
    return (db.prepare(`SELECT rowid FROM index_units WHERE ${sql}`).all(...params) as Array<{ rowid: number }>).map((row) => row.rowid)
  }

  function deleteRowids(rowids: number[]): void {
    if (rowids.length === 0) return
    vectors.delete(rowids)
    // Triggers remove the FTS rows; index_vectors rows cascade too, but were deleted above anyway.
    db.prepare('DELETE FROM index_units WHERE rowid IN (SELECT value FROM json_each(?))').run(JSON.stringify(rowids))
  }

  function lexical(text: string, limit: number, filter: UnitFilterSql): IndexCandidate[] {
    const match = toFtsQuery(text)
    if (match === null || !fullText) return []
    const rows = db
      .prepare(
        `SELECT u.id AS id, u.kind AS kind, -bm25(index_fts) AS score
         FROM index_fts JOIN index_units u ON u.rowid = index_fts.rowid
         WHERE index_fts MATCH ? ${filter.sql ? `AND ${filter.sql}` : ''}
         ORDER BY bm25(index_fts) LIMIT ?`,
      )
      .all(match, ...filter.params, limit) as Array<{ id: string; kind: string; score: number }>
    return rows.map((row) => ({ id: row.id, kind: row.kind as UnitKind, lexical: row.score }))
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

  const index: SearchIndex = {
    capabilities,

    async upsert(units) {
      units.forEach(validateUnit)
      if (units.length === 0) return
      handle.transaction(() => {
        const selectExisting = db.prepare('SELECT rowid, hash, has_vector FROM index_units WHERE id = ?')
        const write = db.prepare(
          `INSERT INTO index_units (id, kind, text, source, provenance, scope, agent, user_id, created_at, updated_at, hash, links, meta, has_vector)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET
             kind = excluded.kind, text = excluded.text, source = excluded.source, provenance = excluded.provenance,
             scope = excluded.scope, agent = excluded.agent, user_id = excluded.user_id, created_at = excluded.created_at,
             updated_at = excluded.updated_at, hash = excluded.hash, links = excluded.links, meta = excluded.meta,
             has_vector = excluded.has_vector
           RETURNING rowid`,
        )
        for (const [i, unit] of units.entries()) {
          const existing = selectExisting.get(unit.id) as { rowid: number; hash: string; has_vector: number } | undefined
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
          const { rowid } = write.get(
            unit.id,
            unit.kind,
            unit.text,
            unit.source,
            JSON.stringify(unit.provenance),
            unit.scope ?? null,
            unit.agent ?? null,
            unit.user ?? null,
            normaliseInstant(unit.createdAt, `units[${i}].createdAt`),
            unit.updatedAt === undefined ? null : normaliseInstant(unit.updatedAt, `units[${i}].updatedAt`),
            unit.hash,
            unit.links === undefined ? null : JSON.stringify(unit.links),
            unit.meta === undefined ? null : JSON.stringify(unit.meta),
            hasVector ? 1 : 0,
          ) as { rowid: number }
          if (unit.vector !== undefined) vectors.put(rowid, unit.vector)
          else if (!hasVector && existing?.has_vector === 1) vectors.delete([rowid])
        }
      })
    },

    async remove(ids) {
      if (ids.length === 0) return
      handle.transaction(() => deleteRowids(rowidsWhere('id IN (SELECT value FROM json_each(?))', JSON.stringify(ids))))
    },

    async removeSource(source) {
      return handle.transaction(() => {
        const rowids = rowidsWhere('source = ?', source)
        deleteRowids(rowids)
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
      const merged = new Map<string, IndexCandidate>()
      // Lexical hits first, in BM25 order, then vector-only hits in similarity order. The order is
      // a convenience, not a ranking: fusion above decides.
      if (query.text !== undefined) for (const hit of lexical(query.text, query.limit, filter)) merged.set(hit.id, hit)
      if (query.vector !== undefined) {
        for (const hit of dense(query.vector, query.limit, filter)) {
          const seen = merged.get(hit.id)
          if (seen) seen.dense = hit.dense
          else merged.set(hit.id, hit)
        }
      }
      return [...merged.values()]
    },

    async get(ids) {
      if (ids.length === 0) return []
      const rows = db
        .prepare(`SELECT ${UNIT_COLUMNS} FROM index_units WHERE id IN (SELECT value FROM json_each(?))`)
        .all(JSON.stringify(ids)) as unknown as UnitRow[]
      const byId = new Map(rows.map((row) => [row.id, row]))
      const out: StoredUnit[] = []
      for (const id of new Set(ids)) {
        const row = byId.get(id)
        if (row) out.push(toStoredUnit(row))
      }
      return out
    },

    async recordAccess(ids, at) {
      if (ids.length === 0) return
      const instant = normaliseInstant(at, 'at')
      handle.transaction(() => {
        // last_access_at never moves backwards: a late, older access must not make a memory look staler.
        db.prepare(
          `UPDATE index_units SET access_count = access_count + 1,
             last_access_at = CASE WHEN last_access_at IS NULL OR last_access_at < ?1 THEN ?1 ELSE last_access_at END
           WHERE id IN (SELECT value FROM json_each(?2))`,
        ).run(instant, JSON.stringify(ids))
      })
    },

    async count() {
      const counts = Object.fromEntries(UNIT_KINDS.map((kind) => [kind, 0])) as Record<UnitKind, number>
      const rows = db.prepare('SELECT kind, count(*) AS n FROM index_units GROUP BY kind').all() as Array<{ kind: string; n: number }>
      for (const row of rows) if (row.kind in counts) counts[row.kind as UnitKind] = row.n
      return counts
    },
  }
  return index
}

/** Re-exported for callers that wire the index and report its facts together. */
export { sqliteFacts } from './database.ts'
