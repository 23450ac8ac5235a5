/**
 * The PostgreSQL the tests run against. `npm test` (scripts/run.sh, scripts/test-postgres.sh)
 * installs and starts a real server with pgvector and exports ENGRAM_TEST_DATABASE_URL; each test
 * opens its handle in a schema of its own, so tests (and test files) run in parallel without
 * seeing each other's rows or locks.
 *
 * Nothing is skipped silently: without a server, every PostgreSQL test file fails with the reason,
 * unless ENGRAM_SKIP_POSTGRES=1 says to skip them, and then each says it was skipped.
 */
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { type OpenPostgresOptions, openPostgres, type PostgresHandle } from '../connection.ts'

type PostgresTarget = { kind: 'ready'; url: string } | { kind: 'skipped'; reason: string } | { kind: 'missing'; reason: string }

function postgresTarget(env: NodeJS.ProcessEnv = process.env): PostgresTarget {
  if (env.ENGRAM_SKIP_POSTGRES === '1') return { kind: 'skipped', reason: 'ENGRAM_SKIP_POSTGRES=1: the PostgreSQL tests were skipped on purpose' }
  if (env.ENGRAM_TEST_DATABASE_URL) return { kind: 'ready', url: env.ENGRAM_TEST_DATABASE_URL }
  const why = env.ENGRAM_TEST_POSTGRES_ERROR ?? 'ENGRAM_TEST_DATABASE_URL is not set'
  return {
    kind: 'missing',
    reason:
      `No PostgreSQL for the tests: ${why}.\n` +
      'Run the tests through `npm test` (it installs and starts PostgreSQL + pgvector), or one file with ' +
      '`bash scripts/run.sh with-postgres node --test FILE`; set ENGRAM_TEST_DATABASE_URL to use a server of your own, ' +
      'or ENGRAM_SKIP_POSTGRES=1 to skip the PostgreSQL tests on purpose.',
  }
}

/**
 * Registers `register(url)`'s tests when a server is given. Otherwise registers one test named for
 * `what` that is reported skipped (ENGRAM_SKIP_POSTGRES=1) or fails with why there is no server.
 */
export function onPostgres(what: string, register: (url: string) => void): void {
  const target = postgresTarget()
  if (target.kind === 'ready') {
    register(target.url)
    return
  }
  if (target.kind === 'skipped') {
    test(`${what} on PostgreSQL`, { skip: target.reason }, () => {})
    return
  }
  test(`${what} on PostgreSQL`, () => {
    throw new Error(target.reason)
  })
}

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `test_${randomBytes(6).toString('hex')}`
}

/** Drops `schema` with everything in it: the cleanup of a test whose mind opened the schema itself. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const handle = await openPostgres({ url, schema })
  try {
    await handle.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await handle.close()
  }
}

/** A handle in a fresh schema; `cleanup` drops the schema with everything in it and closes the handle. */
export async function openTestHandle(url: string, options: Omit<OpenPostgresOptions, 'url'> = {}): Promise<{ handle: PostgresHandle; cleanup(): Promise<void> }> {
  const handle = await openPostgres({ url, schema: freshSchema(), ...options })
  return {
    handle,
    cleanup: async () => {
      try {
        await handle.pool.query(`DROP SCHEMA IF EXISTS "${handle.schema}" CASCADE`)
      } finally {
        await handle.close()
      }
    },
  }
}
