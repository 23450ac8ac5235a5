/**
 * The part of the `pg` driver engram calls, written structurally (Kysely's rule: no driver type
 * leaks past this folder), and the one place that loads it. `pg` is an optional peer dependency:
 * only a deployment on PostgreSQL installs it, so it is imported when a PostgreSQL handle is
 * opened, never by the package's root entry.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'

export interface PgQueryResult<Row> {
  rows: Row[]
  rowCount: number | null
}

/** Something that runs one statement: a pool (any connection) or a client (this connection). */
export interface PgQueryable {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<PgQueryResult<Row>>
}

/** One connection taken from a pool; `release(error)` closes it instead of returning it. */
export interface PgClient extends PgQueryable {
  release(destroy?: boolean | Error): void
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'error', listener: (error: Error) => void): unknown
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgClient>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}

export interface PgPoolConfig {
  connectionString: string
  max: number
  /** Startup options, e.g. `-c search_path=…`. */
  options: string
  application_name: string
  idleTimeoutMillis: number
  connectionTimeoutMillis: number
}

/** A PostgreSQL error's SQLSTATE (`55P03`), or the socket error's code (`ECONNREFUSED`). */
export function pgErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** OIDs of the types whose JavaScript form engram chooses itself. */
const INT8 = 20
const INT8_ARRAY = 1016
const TIMESTAMPTZ = 1184

type TypeParser = (text: string) => unknown
interface PgModule {
  Pool: new (config: PgPoolConfig & { types: { getTypeParser(oid: number, format?: string): TypeParser } }) => PgPool
  types: { getTypeParser(oid: number, format?: string): TypeParser }
}

let loaded: Promise<PgModule> | undefined

async function loadPg(): Promise<PgModule> {
  loaded ??= import('pg').then(
    (module) => ((module as { default?: unknown }).default ?? module) as unknown as PgModule,
    (error: unknown) => {
      loaded = undefined
      throw new EngramError({
        code: ErrorCode.storageUnavailable,
        category: 'user',
        message: `The PostgreSQL driver (the npm package "pg") could not be loaded: ${(error as Error).message}`,
        fix: 'Install it next to engram (npm install pg; it is an optional peer dependency), or unset storage.url / ENGRAM_DATABASE_URL to use the embedded home.',
        cause: error,
      })
    },
  )
  return loaded
}

/**
 * A pool whose rows come back in engram's types: bigint as a number (ids and counters stay far
 * below 2^53), timestamptz as an ISO-8601 string (`toISOString()`, as the contracts store
 * instants). The parsers are the pool's own, so other users of `pg` in the process are untouched.
 */
export async function createPgPool(config: PgPoolConfig): Promise<PgPool> {
  const pg = await loadPg()
  const parseDate = pg.types.getTypeParser(TIMESTAMPTZ)
  const getTypeParser = (oid: number, format?: string): TypeParser => {
    if (format === 'binary') return pg.types.getTypeParser(oid, format)
    if (oid === INT8) return Number
    if (oid === INT8_ARRAY) {
      const parseArray = pg.types.getTypeParser(oid)
      return (text) => (parseArray(text) as Array<string | null>).map((value) => (value === null ? null : Number(value)))
    }
    if (oid === TIMESTAMPTZ) return (text) => (parseDate(text) as Date).toISOString()
    return pg.types.getTypeParser(oid)
  }
  const pool = new pg.Pool({ ...config, types: { getTypeParser } })
  // A connection that breaks while a caller holds it (a server restart mid-query) emits 'error'
  // besides failing the query; pg-pool listens only while it is idle, and an unheard 'error' would
  // end the process. The failed query already tells the caller.
  const connections = pool as unknown as { on(event: 'connect', listener: (client: PgClient) => void): unknown }
  connections.on('connect', (client) => {
    client.on('error', () => {})
  })
  return refusingTextAsInput(pool)
}

/** 22021: a NUL in text ("invalid byte sequence for encoding UTF8: 0x00"); 22P05: `\u0000` in jsonb. */
const TEXT_POSTGRES_CANNOT_STORE = new Set(['22021', '22P05'])

/**
 * The statement's error, or — when PostgreSQL refused text it cannot store — the caller's
 * `invalid_argument` saying so. The stores check what they are given; this is the net under them:
 * a NUL that reaches a statement through a path no check covers is the caller's input, not a
 * server failure (decision 0055: it was answered as a 500 where SQLite stored it).
 */
function asInputError(error: unknown): unknown {
  const code = pgErrorCode(error)
  if (code === undefined || !TEXT_POSTGRES_CANNOT_STORE.has(code)) return error
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `PostgreSQL cannot store this text: ${(error as Error).message} (a NUL character, U+0000, in a field that must be plain text).`,
    fix: 'send the value without NUL characters (ids, names and paths never hold one)',
    cause: error,
    details: { sqlstate: code },
  })
}

/** `pool`, with every statement's (and every taken connection's) refusal of unstorable text turned into `invalid_argument`. */
function refusingTextAsInput(pool: PgPool): PgPool {
  const rethrow = (error: unknown): never => {
    throw asInputError(error)
  }
  return {
    query: <Row>(text: string, values?: readonly unknown[]) => pool.query<Row>(text, values).catch(rethrow),
    async connect() {
      const client = await pool.connect()
      return {
        query: <Row>(text: string, values?: readonly unknown[]) => client.query<Row>(text, values).catch(rethrow),
        release: (destroy) => client.release(destroy),
        on: (event, listener) => client.on(event, listener),
        off: (event, listener) => client.off(event, listener),
      }
    },
    end: () => pool.end(),
    on: (event, listener) => pool.on(event, listener),
  }
}
