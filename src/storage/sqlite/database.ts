/**
 * One SQLite handle (`node:sqlite`, built into Node) with the settings engram relies on, the
 * features it was found to have, and a transaction helper.
 *
 * Features are probed once per handle by trying them (lossless-claw's rule): a throwaway FTS5
 * table, loading the sqlite-vec extension. The answers are cached and never flip while the handle
 * is open, so every caller sees the same capabilities.
 */
import { existsSync } from 'node:fs'
import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { getLoadablePath } from 'sqlite-vec'
import { type Clock, systemClock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { nodeSqlite } from '../node-sqlite.ts'
import { applyMigrations, readSchemaVersion } from './migrations.ts'

export interface SqliteFeatures {
  /** The FTS5 module works (a temp virtual table could be created). */
  fts5: boolean
  /** The sqlite-vec version (`v0.1.9`) when the extension loaded, else false. */
  sqliteVec: string | false
  sqliteVersion: string
}

export interface SqliteHandle {
  readonly db: DatabaseSync
  readonly path: string
  readonly readOnly: boolean
  readonly features: SqliteFeatures
  /** The schema version the file is at (after migrations, for a writable handle). */
  readonly schemaVersion: number
  /** Why sqlite-vec could not be loaded, for `engram doctor`; undefined when it loaded. */
  readonly sqliteVecError: string | undefined
  /**
   * Run `fn` in a write transaction: `BEGIN IMMEDIATE` … `COMMIT`, rolled back when it throws.
   * IMMEDIATE takes the write lock up front, so two processes never deadlock upgrading a read
   * lock. A nested call runs inside a savepoint of the outer transaction: its failure undoes only
   * its own writes (and the outer call decides what to do). `fn` must be synchronous.
   */
  transaction<T>(fn: () => T): T
  close(): void
}

export interface OpenSqliteOptions {
  /** Open without writing: no PRAGMA that changes the file, no migrations. */
  readOnly?: boolean
  /** How long a writer waits for another process's lock before failing, in ms. */
  busyTimeoutMs?: number
  /** Use this sqlite-vec loadable instead of the one the npm package ships (tests, odd platforms). */
  sqliteVecPath?: string | false
  /** Stamps `schema_migrations.applied_at`. */
  clock?: Clock
}

/*
 * Several processes (the CLI, an MCP server, a hook) share one home. A writer that finds the
 * database locked must wait for the other one's short transaction rather than fail; 10 s is far
 * above any transaction engram runs (LLM calls never happen inside one).
 */
/**
 * Page cache per connection, in KiB. 16 MiB: priming at 100k and 1M units measured the same with
 * 64 MiB, which only added its 48 MiB to the resident memory of a process over a large home
 * (scripts/bench/recall.ts, decision 0042); the OS keeps the file's pages anyway.
 */
const PAGE_CACHE_KIB = 16_384
const DEFAULT_BUSY_TIMEOUT_MS = 10_000

/** SQLite primary result codes we react to (https://sqlite.org/rescode.html). */
const SQLITE_BUSY = 5
const SQLITE_CORRUPT = 11
const SQLITE_CANTOPEN = 14
const SQLITE_NOTADB = 26

function sqliteErrcode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { errcode?: unknown }).errcode
  // Extended codes carry the primary code in their low byte.
  return typeof code === 'number' ? code & 0xff : undefined
}

function openError(path: string, error: unknown): EngramError {
  if (EngramError.is(error)) return error
  const code = sqliteErrcode(error)
  if (code === SQLITE_NOTADB || code === SQLITE_CORRUPT) {
    return new EngramError({
      code: ErrorCode.storageCorrupt,
      category: 'system',
      message: `${path} is not a readable SQLite database (${error instanceof Error ? error.message : String(error)}).`,
      fix: `Move the file aside (engram rebuilds the index from your markdown files and starts a new context store), or restore it from a backup; to use another location set the home with --home or ENGRAM_HOME.`,
      details: { path, errcode: code },
      cause: error,
    })
  }
  return new EngramError({
    code: ErrorCode.storageUnavailable,
    category: 'system',
    message: `Could not open the SQLite database ${path}: ${error instanceof Error ? error.message : String(error)}`,
    fix:
      code === SQLITE_CANTOPEN
        ? 'Check that the folder exists and is writable, or choose another home with --home or ENGRAM_HOME.'
        : 'Check the file permissions and free disk space, or choose another home with --home or ENGRAM_HOME.',
    details: { path, errcode: code },
    cause: error,
  })
}

/** SQLITE_BUSY after the busy timeout: another process held the write lock too long. */
export function busyError(error: unknown): EngramError | undefined {
  if (sqliteErrcode(error) !== SQLITE_BUSY) return undefined
  return new EngramError({
    code: ErrorCode.lockBusy,
    category: 'system',
    message: 'The SQLite database stayed locked by another process longer than the busy timeout.',
    fix: 'Retry; if it persists, look for a stuck engram process holding engram.db (engram doctor lists them).',
    cause: error,
  })
}

function probeFts5(db: DatabaseSync): boolean {
  try {
    // A temp table lives in the connection's temp database, so this works on read-only files too.
    db.exec('CREATE VIRTUAL TABLE temp.engram_probe_fts USING fts5(x); DROP TABLE temp.engram_probe_fts;')
    return true
  } catch {
    return false
  }
}

function probeSqliteVec(db: DatabaseSync, explicitPath: string | false | undefined): { version: string | false; error?: string } {
  if (explicitPath === false) return { version: false, error: 'disabled by option' }
  try {
    db.loadExtension(explicitPath ?? getLoadablePath())
    const row = db.prepare('SELECT vec_version() AS version').get() as { version: string } | undefined
    return { version: row?.version ?? 'unknown' }
  } catch (error) {
    return { version: false, error: error instanceof Error ? error.message : String(error) }
  }
}

/**
 * A statement prepared once per distinct SQL on `db` (a turn's or a search's statements run again
 * and again; preparing one costs 7–18 µs). Past `limit` distinct texts the cache starts over.
 */
export function statementCache(db: DatabaseSync, limit = 200): (sql: string) => StatementSync {
  const statements = new Map<string, StatementSync>()
  return (sql) => {
    let statement = statements.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      if (statements.size >= limit) statements.clear()
      statements.set(sql, statement)
    }
    return statement
  }
}

/**
 * Open (creating when missing, unless read-only) the SQLite file at `path`, set its PRAGMAs,
 * probe its features and apply pending migrations.
 *
 * Throws EngramError `storage_corrupt` when the file is not a SQLite database, `unsupported` when
 * it was written by a newer engram or this Node is older than engram supports,
 * `storage_unavailable` when it cannot be opened at all.
 */
export function openSqlite(path: string, options: OpenSqliteOptions = {}): SqliteHandle {
  const readOnly = options.readOnly ?? false
  const { DatabaseSync } = nodeSqlite()
  if (readOnly && path !== ':memory:' && !existsSync(path)) {
    throw new EngramError({
      code: ErrorCode.storageUnavailable,
      category: 'user',
      message: `There is no SQLite database at ${path} to open read-only.`,
      fix: 'Run engram once without --read-only to create it, or point --home / ENGRAM_HOME at the right home.',
      details: { path },
    })
  }
  let db: DatabaseSync
  try {
    db = new DatabaseSync(path, { readOnly, allowExtension: true })
  } catch (error) {
    throw openError(path, error)
  }
  try {
    // Set first: every statement below, even the journal-mode switch, may have to wait for a lock.
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))}`)
    // Off by default in SQLite; the ctx_* edges and items rely on them to refuse dangling ids.
    db.exec('PRAGMA foreign_keys = ON')
    // SQLite's default page cache is 2 MiB; a search at 100k units touches more (full-text postings,
    // the units it joins), and re-reading pages from the OS cost ~15% of a priming call (measured
    // with scripts/bench/recall.ts). PAGE_CACHE_KIB is an upper bound, filled only as pages are read.
    db.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`)
    if (!readOnly) {
      // WAL: readers never block the writer and vice versa, which is what several processes
      // sharing one home need. It is persistent, so read-only handles inherit it.
      db.exec('PRAGMA journal_mode = WAL')
      // In WAL mode NORMAL is still crash-safe for the database (a power loss can only drop the
      // last commits, never corrupt), and avoids an fsync per transaction.
      db.exec('PRAGMA synchronous = NORMAL')
    } else {
      // Touch the file so that a non-database fails here, inside our error mapping.
      db.prepare('SELECT count(*) FROM sqlite_schema').get()
    }
  } catch (error) {
    db.close()
    throw openError(path, error)
  }

  const versionRow = db.prepare('SELECT sqlite_version() AS version').get() as { version: string }
  const vec = probeSqliteVec(db, options.sqliteVecPath)
  const features: SqliteFeatures = Object.freeze({
    fts5: probeFts5(db),
    sqliteVec: vec.version,
    sqliteVersion: versionRow.version,
  })

  let depth = 0
  let open = true
  let schemaVersion = 0
  const handle: SqliteHandle = {
    db,
    path,
    readOnly,
    features,
    get schemaVersion() {
      return schemaVersion
    },
    sqliteVecError: vec.error,
    transaction<T>(fn: () => T): T {
      const savepoint = `engram_sp_${depth}`
      if (depth === 0) {
        try {
          db.exec('BEGIN IMMEDIATE')
        } catch (error) {
          throw busyError(error) ?? error
        }
      } else {
        db.exec(`SAVEPOINT ${savepoint}`)
      }
      depth++
      let result: T
      try {
        result = fn()
        if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
          throw new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'system',
            message: 'A SQLite transaction callback returned a promise; it must be synchronous.',
            fix: 'Do the asynchronous work before or after the transaction, not inside it.',
          })
        }
      } catch (error) {
        depth--
        if (depth === 0) {
          if (db.isTransaction) db.exec('ROLLBACK')
        } else {
          db.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`)
        }
        throw error
      }
      depth--
      if (depth === 0) {
        try {
          db.exec('COMMIT')
        } catch (error) {
          if (db.isTransaction) db.exec('ROLLBACK')
          throw busyError(error) ?? error
        }
      } else {
        db.exec(`RELEASE ${savepoint}`)
      }
      return result
    },
    close(): void {
      if (!open) return
      open = false
      db.close()
    },
  }

  try {
    schemaVersion = readOnly ? readSchemaVersion(handle) : applyMigrations(handle, options.clock ?? systemClock)
  } catch (error) {
    handle.close()
    throw openError(path, error)
  }
  return handle
}

/** Human-readable facts about a handle, for `engram doctor`. */
export function sqliteFacts(handle: SqliteHandle): Record<string, string> {
  return {
    'SQLite version': handle.features.sqliteVersion,
    'SQLite file': handle.path,
    'schema version': String(handle.schemaVersion),
    FTS5: handle.features.fts5 ? 'yes' : 'no — lexical search unavailable',
    'sqlite-vec': handle.features.sqliteVec
      ? handle.features.sqliteVec
      : `not available — vectors searched in TypeScript${handle.sqliteVecError ? ` (${handle.sqliteVecError})` : ''}`,
  }
}
