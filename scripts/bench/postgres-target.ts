/**
 * The PostgreSQL a bench measures (decision 0037): ENGRAM_DATABASE_URL when set, else the test server
 * that `npm run bench -- NAME --backend postgres` starts (scripts/run.sh, scripts/test-postgres.sh,
 * which export ENGRAM_TEST_DATABASE_URL). Each run works in a schema of its own and drops it.
 */
import pg from 'pg'
import { redactUrl } from '../../src/storage/postgres/connection.ts'

export type BenchBackend = 'embedded' | 'postgres'

/**
 * The backends `--backend` asks for: `embedded` alone, or PostgreSQL with the embedded backend
 * measured beside it in the same run (`postgres` and `both` alike).
 */
export function benchBackends(option: string): BenchBackend[] {
  if (option === 'embedded') return ['embedded']
  if (option === 'postgres' || option === 'both') return ['embedded', 'postgres']
  // PostgreSQL without the embedded runs beside it (alternating builds against each other).
  if (option === 'postgres-only') return ['postgres']
  throw new Error(`--backend must be embedded, postgres, both or postgres-only, got ${JSON.stringify(option)}`)
}

/** One backend by name (the child processes of a bench are given one). */
export function benchBackend(name: string): BenchBackend {
  if (name === 'embedded' || name === 'postgres') return name
  throw new Error(`unknown backend ${JSON.stringify(name)}`)
}

/** The URL of the server to measure, or an error saying how to get one. */
export function benchDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const url = env.ENGRAM_DATABASE_URL || env.ENGRAM_TEST_DATABASE_URL
  if (url) return url
  const why = env.ENGRAM_TEST_POSTGRES_ERROR ? ` (${env.ENGRAM_TEST_POSTGRES_ERROR})` : ''
  throw new Error(
    `No PostgreSQL to measure${why}: run the bench through \`npm run bench -- NAME --backend postgres\`, which starts the test server, or set ENGRAM_DATABASE_URL.`,
  )
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Which server a run used: its URL (no password), version, pgvector and the settings that move the figures. */
export async function describeServer(url: string): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<Record<string, string | null>>(
      `SELECT current_setting('server_version') AS version,
         (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS pgvector,
         current_setting('shared_buffers') AS shared_buffers, current_setting('work_mem') AS work_mem,
         current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit`,
    )
    const s = rows[0] ?? {}
    const source = process.env.ENGRAM_DATABASE_URL ? 'ENGRAM_DATABASE_URL' : 'the test server of scripts/test-postgres.sh'
    return `${redactUrl(url)} (${source}), PostgreSQL ${s.version}, pgvector ${s.pgvector ?? 'not installed'}, shared_buffers ${s.shared_buffers}, work_mem ${s.work_mem}, fsync ${s.fsync}, synchronous_commit ${s.synchronous_commit}`
  })
}

/** Drops a bench's schema with everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  if (!/^bench_[a-z0-9_]+$/.test(schema)) throw new Error(`not a bench schema: ${schema}`)
  await withClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
}
