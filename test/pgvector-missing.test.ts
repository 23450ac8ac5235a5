/**
 * An acknowledged write is a findable write on a PostgreSQL database where nobody ran
 * `CREATE EXTENSION vector` (decision 0055). Two fresh databases on the test
 * server, neither with the extension, driven by `engram` in fresh processes as on two hosts:
 *
 * - the role may create it (the server's superuser): engram creates it on open, and the lesson
 *   `remember` saved is indexed with its vector and found by `engram search`;
 * - the role may not (a role of its own owning the database; pgvector is not a trusted extension):
 *   the lesson is indexed by its words and found by `engram search`; vectors being off is said once
 *   (a warning on open, `engram status`, `engram doctor`), never as one problem per memory; once a
 *   superuser creates the extension, `engram reindex --full` gives the lesson its vector.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { createPgPool, type PgPool } from '../src/storage/postgres/driver.ts'
import { onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

const LESSON = 'Rotate the staging deploy token before the quarterly audit'

/** `url` pointing at `database`, as `user` when given. */
function urlOf(url: string, database: string, user?: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  if (user !== undefined) {
    parsed.username = user
    parsed.password = ''
  }
  return parsed.toString()
}

interface Ran {
  code: number
  stdout: string
  stderr: string
}

async function engram(env: Record<string, string>, ...args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env, cwd: root, timeout: 120_000 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' }
  }
}

async function hasVectorExtension(admin: (database: string) => Promise<PgPool>, database: string): Promise<boolean> {
  const pool = await admin(database)
  try {
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'")
    return rows[0]?.n === 1
  } finally {
    await pool.end()
  }
}

onPostgres('a lesson remembered where pgvector was not created', (url) => {
  describe('a lesson remembered where pgvector was not created is found by search', { timeout: 300_000 }, () => {
    const suffix = randomBytes(5).toString('hex')
    const creatable = `engram_vec_${suffix}`
    const refused = `engram_novec_${suffix}`
    const role = `engram_novec_${suffix}`
    let temp: TempHome
    let server: PgPool
    const admin = (database: string) =>
      createPgPool({ connectionString: urlOf(url, database), max: 1, options: '', application_name: 'engram pgvector test', idleTimeoutMillis: 1_000, connectionTimeoutMillis: 10_000 })

    before(async () => {
      temp = makeTempHome('engram-pgvector-missing-')
      server = await admin(new URL(url).pathname.slice(1))
      // Fresh databases: CREATE DATABASE copies template1, which has no vector extension.
      await server.query(`CREATE DATABASE "${creatable}"`)
      await server.query(`CREATE ROLE "${role}" LOGIN`)
      await server.query(`CREATE DATABASE "${refused}" OWNER "${role}"`)
      assert.equal(await hasVectorExtension(admin, creatable), false)
      assert.equal(await hasVectorExtension(admin, refused), false)
    })
    after(async () => {
      if (server) {
        await server.query(`DROP DATABASE IF EXISTS "${creatable}" WITH (FORCE)`)
        await server.query(`DROP DATABASE IF EXISTS "${refused}" WITH (FORCE)`)
        await server.query(`DROP ROLE IF EXISTS "${role}"`)
        await server.end()
      }
      temp?.cleanup()
    })

    /** A host: a home of its own on `databaseUrl`. */
    const host = (name: string, databaseUrl: string): Record<string, string> => ({ ...temp.env, ENGRAM_HOME: join(temp.home, name), ENGRAM_DATABASE_URL: databaseUrl })

    test('the role may create the extension: engram creates it on open, the lesson is indexed with its vector and found', async () => {
      const databaseUrl = urlOf(url, creatable)
      const remembered = await engram(host('a', databaseUrl), 'remember', LESSON, '--kind', 'lesson', '--json')
      assert.equal(remembered.code, 0, remembered.stderr)
      assert.equal(JSON.parse(remembered.stdout).ok, true)
      assert.equal(await hasVectorExtension(admin, creatable), true, 'engram created the vector extension on open')
      assert.doesNotMatch(remembered.stderr, /vector search is off/)

      const found = await engram(host('b', databaseUrl), 'search', 'staging deploy token', '--json')
      assert.equal(found.code, 0, found.stderr)
      const hits = JSON.parse(found.stdout).data.hits as Array<{ text: string }>
      assert.ok(hits.some((hit) => hit.text.includes(LESSON)), found.stdout)

      const status = JSON.parse((await engram(host('b', databaseUrl), 'status', '--json')).stdout).data
      assert.equal(status.capabilities.vectors, 'pgvector')
      assert.equal(status.capabilities.vectorsOff, undefined)
      assert.deepEqual(status.problems, [])
      assert.equal(status.index.units > 0, true)
    })

    test('the role may not: the lesson is indexed by its words and found; vectors off is said once in a warning, status and doctor', async () => {
      const databaseUrl = urlOf(url, refused, role)
      const remembered = await engram(host('c', databaseUrl), 'remember', LESSON, '--kind', 'lesson', '--json')
      assert.equal(remembered.code, 0, remembered.stderr)
      assert.equal(JSON.parse(remembered.stdout).ok, true)
      assert.equal(await hasVectorExtension(admin, refused), false, 'the role could not create it')
      // One warning for the open, not one per memory.
      const warnings = remembered.stderr.split('\n').filter((line) => line.includes('vector search is off'))
      assert.equal(warnings.length, 1, remembered.stderr)
      assert.match(warnings[0] ?? '', /CREATE EXTENSION vector was refused/)
      assert.doesNotMatch(remembered.stderr, /not indexed/)

      // Another host finds it by its words.
      const found = await engram(host('d', databaseUrl), 'search', 'staging deploy token', '--json')
      assert.equal(found.code, 0, found.stderr)
      const hits = JSON.parse(found.stdout).data.hits as Array<{ text: string }>
      assert.ok(hits.some((hit) => hit.text.includes(LESSON)), found.stdout)

      const status = JSON.parse((await engram(host('d', databaseUrl), 'status', '--json')).stdout).data
      assert.equal(status.capabilities.vectors, false)
      assert.match(status.capabilities.vectorsOff, /pgvector is not installed .*CREATE EXTENSION vector was refused/)
      assert.deepEqual(
        status.problems.filter((problem: { reason: string }) => /vector|not indexed/.test(problem.reason)),
        [],
        'vectors off is said once, not as a problem per memory',
      )

      const doctor = JSON.parse((await engram(host('d', databaseUrl), 'doctor', '--json')).stdout).data
      const pgvector = doctor.checks.find((check: { name: string }) => check.name === 'pgvector')
      assert.equal(pgvector?.status, 'warn', JSON.stringify(doctor.checks))
      assert.match(pgvector.detail, /CREATE EXTENSION vector was refused.*by their words/)
      assert.match(pgvector.fix, /superuser/)
      const vectorSearch = doctor.checks.find((check: { name: string }) => check.name === 'vector search')
      assert.equal(vectorSearch?.status, 'warn')
      assert.match(vectorSearch.detail, /^off: pgvector is not installed/)

      // A superuser creates the extension as doctor says; reindex --full embeds what was indexed by words.
      const pool = await admin(refused)
      try {
        await pool.query('CREATE EXTENSION vector SCHEMA public')
        const reindexed = await engram(host('d', databaseUrl), 'reindex', '--full', '--json')
        assert.equal(reindexed.code, 0, reindexed.stderr)
        assert.doesNotMatch(reindexed.stderr, /vector search is off/)
        const { rows } = await pool.query<{ vectors: number }>('SELECT sum(vectors)::int AS vectors FROM engram.index_stats')
        assert.ok((rows[0]?.vectors ?? 0) > 0, 'the lesson has its vector now')
      } finally {
        await pool.end()
      }
      const reopened = JSON.parse((await engram(host('d', databaseUrl), 'status', '--json')).stdout).data
      assert.equal(reopened.capabilities.vectors, 'pgvector')
      assert.equal(reopened.capabilities.vectorsOff, undefined)
    })
  })
})
