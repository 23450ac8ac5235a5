/**
 * Where the search index keeps unit vectors: a sqlite-vec `vec0` table when the extension loaded,
 * else Float32 blobs in `index_vectors` searched by brute force in TypeScript. Both key vectors
 * on the unit's rowid and answer the same question — the `limit` nearest units by cosine among
 * the ones a filter allows — so the index above does not care which one it has.
 */
import type { SQLInputValue } from 'node:sqlite'
import type { SqliteHandle } from './database.ts'

export type VectorBackend = 'sqlite-vec' | 'typescript'

/** A filter as SQL over `index_units AS u`, with its parameters; empty `sql` when none. */
export interface UnitFilterSql {
  sql: string
  params: SQLInputValue[]
}

export interface NearestUnit {
  rowid: number
  /** Cosine similarity in [-1, 1]. */
  similarity: number
}

export interface VectorStore {
  readonly backend: VectorBackend
  /** Create the table for `dims` if it does not exist (called inside the upsert transaction). */
  ensure(dims: number): void
  put(rowid: number, vector: Float32Array): void
  delete(rowids: number[]): void
  /** Drop every stored vector (the embedder changed). Returns false if the table could not be dropped. */
  dropAll(): boolean
  nearest(query: Float32Array, limit: number, filter: UnitFilterSql): NearestUnit[]
}

function toBlob(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)
}

function fromBlob(blob: Uint8Array): Float32Array {
  // Float32Array needs a 4-byte aligned offset; SQLite hands blobs back at any offset.
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4)
  return new Float32Array(blob.slice().buffer)
}

function norm(vector: Float32Array): number {
  let sum = 0
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!
  return Math.sqrt(sum)
}

/** Keeps the best `limit` items seen, in descending similarity. */
class TopK {
  readonly items: NearestUnit[] = []
  readonly limit: number
  constructor(limit: number) {
    this.limit = limit
  }
  get worst(): number {
    return this.items.length < this.limit ? Number.NEGATIVE_INFINITY : this.items[this.items.length - 1]!.similarity
  }
  offer(item: NearestUnit): void {
    if (this.limit <= 0 || item.similarity <= this.worst) return
    let i = this.items.length
    while (i > 0 && this.items[i - 1]!.similarity < item.similarity) i--
    this.items.splice(i, 0, item)
    if (this.items.length > this.limit) this.items.pop()
  }
}

/** Brute-force cosine in TypeScript over `index_vectors`, filtered in SQL first. */
export function createTypescriptVectorStore(handle: SqliteHandle): VectorStore {
  const { db } = handle
  return {
    backend: 'typescript',
    ensure() {
      // index_vectors is part of the schema (migration 1); nothing to create.
    },
    put(rowid, vector) {
      db.prepare('INSERT OR REPLACE INTO index_vectors (rowid, vector, norm) VALUES (?, ?, ?)').run(rowid, toBlob(vector), norm(vector))
    },
    delete(rowids) {
      if (rowids.length === 0) return
      db.prepare('DELETE FROM index_vectors WHERE rowid IN (SELECT value FROM json_each(?))').run(JSON.stringify(rowids))
    },
    dropAll() {
      db.exec('DELETE FROM index_vectors')
      return true
    },
    nearest(query, limit, filter) {
      const queryNorm = norm(query)
      if (queryNorm === 0 || limit <= 0) return []
      const top = new TopK(limit)
      const rows = db
        .prepare(
          `SELECT v.rowid AS rowid, v.vector AS vector, v.norm AS norm FROM index_vectors v
           JOIN index_units u ON u.rowid = v.rowid ${filter.sql ? `WHERE ${filter.sql}` : ''}`,
        )
        .iterate(...filter.params) as Iterable<{ rowid: number; vector: Uint8Array; norm: number }>
      for (const row of rows) {
        const vector = fromBlob(row.vector)
        if (vector.length !== query.length || row.norm === 0) continue
        let dot = 0
        for (let i = 0; i < vector.length; i++) dot += vector[i]! * query[i]!
        top.offer({ rowid: row.rowid, similarity: dot / (row.norm * queryNorm) })
      }
      return top.items
    },
  }
}

/* sqlite-vec refuses `k` above 4096 in one KNN query. */
const VEC_MAX_K = 4096

/** KNN in a sqlite-vec `vec0` table named `index_vec`, cosine distance. */
export function createSqliteVecStore(handle: SqliteHandle): VectorStore {
  const { db } = handle

  function knn(query: Float32Array, k: number, rowids?: number[]): NearestUnit[] {
    const rows = (
      rowids === undefined
        ? db.prepare('SELECT rowid, distance FROM index_vec WHERE embedding MATCH ? AND k = ?').all(toBlob(query), k)
        : db
            .prepare('SELECT rowid, distance FROM index_vec WHERE embedding MATCH ? AND k = ? AND rowid IN (SELECT value FROM json_each(?))')
            .all(toBlob(query), k, JSON.stringify(rowids))
    ) as Array<{ rowid: number; distance: number }>
    // vec0's cosine distance is 1 - cosine similarity; a zero vector gives NaN, which ranks nowhere.
    return rows.filter((row) => Number.isFinite(row.distance)).map((row) => ({ rowid: row.rowid, similarity: 1 - row.distance }))
  }

  function allowedRowids(filter: UnitFilterSql, max: number, afterRowid: number): number[] {
    const rows = db
      .prepare(
        `SELECT u.rowid AS rowid FROM index_units u WHERE u.has_vector = 1 AND u.rowid > ?
         ${filter.sql ? `AND ${filter.sql}` : ''} ORDER BY u.rowid LIMIT ?`,
      )
      .all(afterRowid, ...filter.params, max) as Array<{ rowid: number }>
    return rows.map((row) => row.rowid)
  }

  function tableExists(): boolean {
    return db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'index_vec'").get() !== undefined
  }

  return {
    backend: 'sqlite-vec',
    ensure(dims) {
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS index_vec USING vec0(embedding float[${dims}] distance_metric=cosine)`)
    },
    put(rowid, vector) {
      // vec0 has no upsert; rowids must be BigInt or sqlite-vec rejects them as floats.
      db.prepare('DELETE FROM index_vec WHERE rowid = ?').run(BigInt(rowid))
      db.prepare('INSERT INTO index_vec (rowid, embedding) VALUES (?, ?)').run(BigInt(rowid), toBlob(vector))
    },
    delete(rowids) {
      if (rowids.length === 0 || !tableExists()) return
      const remove = db.prepare('DELETE FROM index_vec WHERE rowid = ?')
      for (const rowid of rowids) remove.run(BigInt(rowid))
    },
    dropAll() {
      try {
        db.exec('DROP TABLE IF EXISTS index_vec')
        return true
      } catch {
        return false
      }
    },
    nearest(query, limit, filter) {
      if (limit <= 0 || !tableExists()) return []
      const k = Math.min(limit, VEC_MAX_K)
      if (!filter.sql) return knn(query, k)

      // A selective filter: hand vec0 the allowed rowids, exact and cheap.
      const small = allowedRowids(filter, VEC_MAX_K + 1, 0)
      if (small.length <= VEC_MAX_K) return small.length === 0 ? [] : knn(query, Math.min(k, small.length), small)

      // A broad filter: over-fetch the global nearest and keep the allowed ones. Correct as soon
      // as `k` of them are found (any closer allowed unit would have been fetched too).
      const allowed = db.prepare(`SELECT 1 FROM index_units u WHERE u.rowid = ? AND ${filter.sql}`)
      for (let fetch = Math.min(k * 4, VEC_MAX_K); ; fetch = Math.min(fetch * 4, VEC_MAX_K)) {
        const found = knn(query, fetch)
        const kept = found.filter((item) => allowed.get(item.rowid, ...filter.params) !== undefined)
        if (kept.length >= k || found.length < fetch) return kept.slice(0, k)
        if (fetch === VEC_MAX_K) break
      }

      // Still short (the allowed units are far from the query): search them chunk by chunk.
      const top = new TopK(k)
      for (let after = 0; ; ) {
        const chunk = allowedRowids(filter, VEC_MAX_K, after)
        if (chunk.length === 0) break
        for (const item of knn(query, Math.min(k, chunk.length), chunk)) top.offer(item)
        after = chunk[chunk.length - 1]!
      }
      return top.items
    },
  }
}
