import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { EngramError } from '../../core/errors.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { openSqlite, sqliteFacts } from './database.ts'
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations.ts'

function tempFolder() {
  const temp = makeTempHome('engram-sqlite-db-')
  mkdirSync(temp.home, { recursive: true })
  return { dir: temp.home, cleanup: temp.cleanup }
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    assert.ok(EngramError.is(error), `expected an EngramError, got ${String(error)}`)
    assert.ok(error.fix, 'the error says how to fix it')
    return error.code
  }
  assert.fail('expected a throw')
}

test('opening sets WAL, foreign keys, busy timeout and NORMAL sync, and probes features', () => {
  const { dir, cleanup } = tempFolder()
  const handle = openSqlite(join(dir, 'engram.db'))
  try {
    const pragma = (name: string) => Object.values(handle.db.prepare(`PRAGMA ${name}`).get() as object)[0]
    assert.equal(pragma('journal_mode'), 'wal')
    assert.equal(pragma('foreign_keys'), 1)
    assert.ok(Number(pragma('busy_timeout')) >= 1000)
    assert.equal(pragma('synchronous'), 1, 'NORMAL')
    assert.equal(handle.features.fts5, true, "Node's SQLite ships FTS5")
    assert.match(handle.features.sqliteVersion, /^3\.\d+\.\d+$/)
    assert.ok(handle.features.sqliteVec === false || /^v\d/.test(handle.features.sqliteVec))
    assert.ok(Object.isFrozen(handle.features), 'probed once, never flips')
    const facts = sqliteFacts(handle)
    assert.equal(facts['SQLite version'], handle.features.sqliteVersion)
    assert.equal(facts.FTS5, 'yes')
    assert.ok(facts['sqlite-vec'])
  } finally {
    handle.close()
    cleanup()
  }
})

test('without sqlite-vec the facts say vectors are searched in TypeScript', () => {
  const handle = openSqlite(':memory:', { sqliteVecPath: '/nonexistent/vec0.so' })
  try {
    assert.equal(handle.features.sqliteVec, false)
    assert.match(sqliteFacts(handle)['sqlite-vec']!, /^not available — vectors searched in TypeScript/)
  } finally {
    handle.close()
  }
})

test('migrations are applied once, in order, and recorded', () => {
  const { dir, cleanup } = tempFolder()
  const path = join(dir, 'engram.db')
  try {
    const clock = new ManualClock('2026-07-01T00:00:00.000Z')
    const first = openSqlite(path, { clock })
    assert.equal(first.schemaVersion, LATEST_SCHEMA_VERSION)
    first.close()
    clock.advanceDays(3)
    const second = openSqlite(path, { clock })
    const rows = second.db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all()
    assert.deepEqual(
      rows.map((row) => ({ ...row })),
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: '2026-07-01T00:00:00.000Z' })),
    )
    const tables = (second.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name)
    for (const table of [
      'meta',
      'ctx_conversations',
      'ctx_messages',
      'ctx_summaries',
      'ctx_items',
      'ctx_summary_messages',
      'ctx_summary_parents',
      'ctx_agent_memory',
      'ctx_session_info',
      'ctx_review_marks',
      'index_units',
      'index_vectors',
      'jobs_runs',
      'home_migrations',
    ]) {
      assert.ok(tables.includes(table), `table ${table} exists`)
    }
    second.close()
  } finally {
    cleanup()
  }
})

test('a database from a newer engram is refused, read-only too', () => {
  const { dir, cleanup } = tempFolder()
  const path = join(dir, 'engram.db')
  try {
    const handle = openSqlite(path)
    handle.db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(LATEST_SCHEMA_VERSION + 1, 'future', 'x')
    handle.close()
    assert.equal(
      errorCode(() => openSqlite(path)),
      'unsupported',
    )
    assert.equal(
      errorCode(() => openSqlite(path, { readOnly: true })),
      'unsupported',
    )
  } finally {
    cleanup()
  }
})

test('a file that is not SQLite gives storage_corrupt and is left as it was', () => {
  const { dir, cleanup } = tempFolder()
  const path = join(dir, 'engram.db')
  try {
    const garbage = 'this is a text file, not a database\n'.repeat(200)
    writeFileSync(path, garbage)
    assert.equal(
      errorCode(() => openSqlite(path)),
      'storage_corrupt',
    )
    assert.equal(
      errorCode(() => openSqlite(path, { readOnly: true })),
      'storage_corrupt',
    )
    assert.equal(readFileSync(path, 'utf8'), garbage)
  } finally {
    cleanup()
  }
})

test('a missing folder or a missing read-only file gives storage_unavailable', () => {
  const { dir, cleanup } = tempFolder()
  try {
    assert.equal(
      errorCode(() => openSqlite(join(dir, 'no', 'such', 'dir', 'engram.db'))),
      'storage_unavailable',
    )
    assert.equal(
      errorCode(() => openSqlite(join(dir, 'absent.db'), { readOnly: true })),
      'storage_unavailable',
    )
  } finally {
    cleanup()
  }
})

test('transactions commit, roll back on throw, and nest with savepoints', () => {
  const handle = openSqlite(':memory:')
  try {
    const { db } = handle
    const put = (key: string) => db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(key, 'v')
    const keys = () => (db.prepare('SELECT key FROM meta ORDER BY key').all() as Array<{ key: string }>).map((r) => r.key)

    assert.equal(
      handle.transaction(() => {
        put('a')
        return 'result'
      }),
      'result',
    )
    assert.throws(() =>
      handle.transaction(() => {
        put('b')
        throw new Error('boom')
      }),
    )
    assert.deepEqual(keys(), ['a'])

    handle.transaction(() => {
      put('c')
      assert.throws(() =>
        handle.transaction(() => {
          put('d')
          throw new Error('inner')
        }),
      )
      handle.transaction(() => put('e'))
    })
    assert.deepEqual(keys(), ['a', 'c', 'e'], 'a failed inner call undoes only its own writes')

    assert.throws(() =>
      handle.transaction(() => {
        handle.transaction(() => put('f'))
        throw new Error('outer')
      }),
    )
    assert.deepEqual(keys(), ['a', 'c', 'e'], 'a failed outer call undoes the inner one too')
    assert.equal(db.isTransaction, false)

    assert.throws(
      () => handle.transaction(() => Promise.resolve(put('g'))),
      (error: unknown) => EngramError.is(error) && /synchronous/.test(error.message),
    )
    assert.deepEqual(keys(), ['a', 'c', 'e'])
  } finally {
    handle.close()
  }
})

test('a writer waits for another process\'s lock, and gets lock_busy past the busy timeout', async () => {
  const { dir, cleanup } = tempFolder()
  const path = join(dir, 'engram.db')
  openSqlite(path).close()
  // Another process takes the write lock and keeps it for 300 ms.
  const holder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { DatabaseSync } from 'node:sqlite'
       const db = new DatabaseSync(${JSON.stringify(path)})
       db.exec('BEGIN IMMEDIATE')
       process.stdout.write('locked\\n')
       setTimeout(() => { db.exec('COMMIT'); db.close() }, 300)`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = new Promise((resolve) => holder.on('exit', resolve))
  const impatient = openSqlite(path, { busyTimeoutMs: 0 })
  const patient = openSqlite(path, { busyTimeoutMs: 5000 })
  try {
    await new Promise<void>((resolve) => holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve()))
    assert.equal(
      errorCode(() => impatient.transaction(() => undefined)),
      'lock_busy',
    )
    const started = performance.now()
    assert.equal(
      patient.transaction(() => 'got it'),
      'got it',
    )
    assert.ok(performance.now() - started >= 150, 'it waited for the holder to commit')
  } finally {
    await exited
    impatient.close()
    patient.close()
    cleanup()
  }
})
