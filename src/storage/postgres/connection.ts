/**
 * One PostgreSQL handle: a pool of connections to `storage.url` (ENGRAM_DATABASE_URL), engram's
 * tables in one schema of that database, migrated on open, the server's features probed once.
 *
 * On PostgreSQL everything is rows (DESIGN §4): many engram processes on many hosts share one
 * database, so every read-modify-write is one statement or one transaction, and what decides
 * future work lives in the rows, never in a process.
 */
import { hostname } from 'node:os'
import { type Clock, systemClock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { createPgPool, type PgPool, type PgQueryable, pgErrorCode } from './driver.ts'
import { applyPostgresMigrations } from './migrations.ts'

export interface OpenPostgresOptions {
  /** `postgres://user:password@host:5432/database` (storage.url, ENGRAM_DATABASE_URL). */
  url: string
  /** The schema holding engram's tables, created when missing. Deployments sharing a database use one each. */
  schema?: string
  /** Connections for statements. */
  maxConnections?: number
  /** Connections held for session state (each advisory lock held or waited for takes one). */
  maxSessionConnections?: number
  /** Stamps `schema_migrations.applied_at`. */
  clock?: Clock
  /** Errors of connections no caller is using (the server restarted); default: one line on stderr. */
  onError?: (error: Error) => void
}

/** What the server was found to be, probed once when the handle opened. */
export interface PostgresFeatures {
  /** `15.20 (Debian 15.20-0+deb12u1)`. */
  serverVersion: string
  /** `150020`. */
  serverVersionNum: number
  /** The `vector` extension's version when it is installed in the database, else false. */
  pgvector: string | false
  /** The version the server could install (`CREATE EXTENSION vector`), else false. */
  pgvectorAvailable: string | false
  /** True when this open created the extension (the server had it, the database did not, the role may). */
  pgvectorCreated?: boolean
  /** Why the database has no pgvector (set exactly when `pgvector` is false): vectors are off, search is by words. */
  pgvectorMissing?: string
}

export interface PostgresHandle {
  /** Any connection, one statement at a time. */
  readonly pool: PgPool
  /** Connections that hold session state for a while (advisory locks), apart from `pool` so that lock holders never starve statements. */
  readonly sessions: PgPool
  readonly schema: string
  /** The URL without its password, and the schema: for messages. */
  readonly location: string
  readonly features: PostgresFeatures
  /** The schema version after migrations. */
  readonly schemaVersion: number
  /**
   * Run `fn` in one transaction (READ COMMITTED) on one connection, committed when it resolves and
   * rolled back when it throws. A deadlock or serialization failure is retried (twice), so `fn`
   * must only touch the database.
   */
  transaction<T>(fn: (client: PgQueryable) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** The oldest server engram runs on (decision 0037: PostgreSQL 15+). */
const MIN_SERVER_VERSION_NUM = 150000
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/
/** 40001 serialization_failure, 40P01 deadlock_detected: the transaction did nothing, run it again. */
const RETRYABLE = new Set(['40001', '40P01'])
const TRANSACTION_ATTEMPTS = 3

/** The URL with its password masked. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(a URL that does not parse)'
  }
}

function invalidUrl(url: string, why: string): EngramError {
  return new EngramError({
    code: ErrorCode.configInvalid,
    category: 'user',
    message: `storage.url ${JSON.stringify(redactUrl(url))} ${why}.`,
    fix: 'Set storage.url or ENGRAM_DATABASE_URL to postgres://user:password@host:5432/database.',
  })
}

/** The open failure as the reader can act on it: which server, what went wrong, what to change. */
function connectError(error: unknown, location: string): EngramError {
  const code = pgErrorCode(error)
  const reason = (error as Error)?.message ?? String(error)
  const [message, fix] =
    code === '28P01' || code === '28000'
      ? [`PostgreSQL at ${location} refused the credentials: ${reason}`, 'Put the right user and password in storage.url / ENGRAM_DATABASE_URL (postgres://user:password@host:5432/database).']
      : code === '3D000'
        ? [`The database of ${location} does not exist: ${reason}`, 'Create it (createdb, or CREATE DATABASE) or name an existing one in storage.url / ENGRAM_DATABASE_URL.']
        : [
            `Cannot reach PostgreSQL at ${location}: ${reason}${code ? ` (${code})` : ''}`,
            'Start the server, or correct the host and port in storage.url / ENGRAM_DATABASE_URL; unset it to use the embedded home.',
          ]
  return new EngramError({ code: ErrorCode.storageUnavailable, category: 'system', message, fix, cause: error, details: { location, code } })
}

async function probe(pool: PgPool, location: string): Promise<PostgresFeatures> {
  const { rows } = await pool.query<{ version: string; num: string; vector: string | null; available: string | null }>(
    `SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num,
            (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
            (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available`,
  )
  const row = rows[0]
  if (!row) throw new Error('the server answered the probe with no row')
  const features: PostgresFeatures = {
    serverVersion: row.version,
    serverVersionNum: Number(row.num),
    pgvector: row.vector ?? false,
    pgvectorAvailable: row.available ?? false,
  }
  if (features.serverVersionNum < MIN_SERVER_VERSION_NUM) {
    throw new EngramError({
      code: ErrorCode.unsupported,
      category: 'user',
      message: `PostgreSQL at ${location} is version ${features.serverVersion}; engram needs 15 or newer.`,
      fix: 'Upgrade the server to PostgreSQL 15 or newer, or point storage.url / ENGRAM_DATABASE_URL at one that is.',
      details: { location, serverVersion: features.serverVersion },
    })
  }
  return features
}

/**
 * pgvector in the database: there already, or created now when the server has it and the role may
 * create it (STYLE practice 2: tried, not assumed). A database where nobody ran CREATE EXTENSION
 * indexed every memory with a vector as "not indexed" while `remember` answered ok (decision 0055): the
 * extension is created on open where it can be, and where it cannot, `pgvectorMissing` says why,
 * vectors are off for the handle's life and memories are indexed and searched by their words.
 */
async function ensurePgvector(pool: PgPool, features: PostgresFeatures): Promise<PostgresFeatures> {
  if (features.pgvector !== false) return features
  if (features.pgvectorAvailable === false) return { ...features, pgvectorMissing: 'the server has no pgvector (the vector extension is not available to install)' }
  let refusal: string | undefined
  try {
    // In public, which every engram schema has on its search path (connection options above).
    await pool.query('CREATE EXTENSION IF NOT EXISTS vector SCHEMA public')
  } catch (error) {
    // Refused (not a superuser: pgvector is not a trusted extension), or another process created it
    // at the same moment (a unique violation): the read below tells which.
    refusal = (error as Error)?.message ?? String(error)
  }
  const { rows } = await pool.query<{ version: string }>("SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'")
  const version = rows[0]?.version
  if (version !== undefined) return { ...features, pgvector: version, ...(refusal === undefined ? { pgvectorCreated: true } : {}) }
  return { ...features, pgvectorMissing: `the server has pgvector ${features.pgvectorAvailable}, but CREATE EXTENSION vector was refused: ${refusal ?? 'no reason given'}` }
}

/**
 * Open a handle on `options.url`: checks that the server answers and is new enough, creates the
 * schema and applies the pending migrations (under an advisory lock, so processes opening at once
 * apply each one once). Throws an EngramError that says what to change when it cannot.
 */
export async function openPostgres(options: OpenPostgresOptions): Promise<PostgresHandle> {
  const { url } = options
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url)) throw invalidUrl(String(url), 'is not a postgres:// URL')
  try {
    new URL(url)
  } catch {
    throw invalidUrl(url, 'does not parse as a URL')
  }
  const schema = options.schema ?? 'engram'
  if (!SCHEMA_NAME.test(schema)) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `The schema name ${JSON.stringify(schema)} is not a plain PostgreSQL identifier.`,
      fix: 'Use lower-case letters, digits and underscores (at most 63), starting with a letter or underscore.',
    })
  }
  const location = `${redactUrl(url)} (schema ${schema})`
  const onError = options.onError ?? ((error: Error) => process.stderr.write(`engram: PostgreSQL connection at ${location} failed while idle: ${error.message}\n`))
  const common = {
    connectionString: url,
    // Unqualified names are engram's tables; `public` after them for extensions' types (vector).
    // No JIT: engram's statements are short, and compiling one (cost estimate over jit_above_cost,
    // e.g. a search over a very common word at 1M units) added ~40 ms to a query that runs in less.
    options: `-c search_path=${schema},public -c jit=off`,
    application_name: `engram ${hostname()}`.slice(0, 63),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  }
  const pool = await createPgPool({ ...common, max: options.maxConnections ?? 10 })
  // A lock's wait may last as long as its holder works: no timeout a role or database sets may cut it.
  const sessions = await createPgPool({
    ...common,
    options: `${common.options} -c lock_timeout=0 -c statement_timeout=0`,
    max: options.maxSessionConnections ?? 20,
  })
  // An idle connection that breaks (a server restart) is dropped by the pool; without a listener
  // its error would end the process.
  pool.on('error', onError)
  sessions.on('error', onError)
  const closePools = async () => {
    await Promise.allSettled([pool.end(), sessions.end()])
  }

  let features: PostgresFeatures
  let schemaVersion: number
  try {
    try {
      features = await ensurePgvector(pool, await probe(pool, location))
    } catch (error) {
      throw EngramError.is(error) ? error : connectError(error, location)
    }
    schemaVersion = await applyPostgresMigrations(pool, { schema, location, clock: options.clock ?? systemClock })
  } catch (error) {
    await closePools()
    throw error
  }

  let closed: Promise<void> | undefined
  return {
    pool,
    sessions,
    schema,
    location,
    features,
    schemaVersion,
    async transaction<T>(fn: (client: PgQueryable) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect()
        let broken: Error | undefined
        try {
          await client.query('BEGIN')
          const value = await fn(client)
          await client.query('COMMIT')
          return value
        } catch (error) {
          await client.query('ROLLBACK').catch((rollbackError: Error) => {
            broken = rollbackError
          })
          if (attempt >= TRANSACTION_ATTEMPTS || !RETRYABLE.has(pgErrorCode(error) ?? '')) throw error
        } finally {
          client.release(broken)
        }
      }
    },
    close() {
      closed ??= closePools()
      return closed
    },
  }
}

/**
 * Drop a schema with everything in it, on a connection of its own (the handles using it are
 * closed first, so that nothing they flush on close meets a missing table). For throwaway schemas:
 * `engram eval retrieval --backend postgres` makes one per conversation, the tests one per test.
 */
export async function dropPostgresSchema(url: string, schema: string): Promise<void> {
  if (!SCHEMA_NAME.test(schema)) throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `The schema name ${JSON.stringify(schema)} is not a plain PostgreSQL identifier.`, fix: 'Name a schema engram made.' })
  const pool = await createPgPool({ connectionString: url, max: 1, options: '', application_name: 'engram drop schema', idleTimeoutMillis: 1_000, connectionTimeoutMillis: 10_000 })
  try {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await pool.end()
  }
}
