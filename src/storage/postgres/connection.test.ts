import assert from 'node:assert/strict'
import { test } from 'node:test'
import { describeError, EngramError } from '../../core/errors.ts'
import { openPostgres, redactUrl } from './connection.ts'
import { LATEST_POSTGRES_SCHEMA_VERSION } from './migrations.ts'
import { freshSchema, onPostgres, openTestHandle } from './test-support/test-database.ts'

function refusedWith(code: string, pattern: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(EngramError.is(error), `an EngramError, got ${error}`)
    assert.equal(error.code, code)
    // What a person reads: the message, then its fix (a field of its own, decision 0062).
    assert.match(describeError(error), pattern)
    return true
  }
}

test('a URL that is not postgres:// is refused, saying which setting to fix', async () => {
  await assert.rejects(openPostgres({ url: 'mysql://db/x' }), refusedWith('config_invalid', /storage\.url[\s\S]*ENGRAM_DATABASE_URL/))
  await assert.rejects(openPostgres({ url: 'postgres://u:p@127.0.0.1/x', schema: 'Robert"); DROP' }), refusedWith('invalid_argument', /schema name/))
})

test('a server that does not answer is reported with where it was looked for, without the password, and how to fix it', async () => {
  await assert.rejects(openPostgres({ url: 'postgres://engram:s3cret@127.0.0.1:1/engram' }), (error: unknown) => {
    refusedWith('storage_unavailable', /Cannot reach PostgreSQL at postgres:\/\/engram:\*\*\*@127\.0\.0\.1:1\/engram[\s\S]*ECONNREFUSED[\s\S]*ENGRAM_DATABASE_URL/)(error)
    assert.doesNotMatch(describeError(error), /s3cret/)
    return true
  })
  assert.equal(redactUrl('postgres://a:b@h/d'), 'postgres://a:***@h/d')
})

onPostgres('Connection and migrations', (url) => {
  test('opening probes the server once and migrates a fresh schema', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      assert.ok(handle.features.serverVersionNum >= 150000, handle.features.serverVersion)
      assert.notEqual(handle.features.pgvectorAvailable, false, 'the test server has pgvector')
      assert.equal(handle.schemaVersion, LATEST_POSTGRES_SCHEMA_VERSION)
      const { rows } = await handle.pool.query<{ version: number; applied_at: string }>('SELECT version, applied_at FROM schema_migrations ORDER BY version')
      assert.deepEqual(
        rows.map((row) => row.version),
        Array.from({ length: LATEST_POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1),
      )
      assert.match(rows[0]?.applied_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'instants come back as ISO strings')
      const { rows: types } = await handle.pool.query<{ big: number; ids: number[] }>(`SELECT 9007199254740991::bigint AS big, ARRAY[1, 2]::bigint[] AS ids`)
      assert.deepEqual(types[0], { big: Number.MAX_SAFE_INTEGER, ids: [1, 2] }, 'bigints come back as numbers')
    } finally {
      await cleanup()
    }
  })

  test('text PostgreSQL cannot store (a NUL) is the caller\'s invalid_argument, from a statement or a transaction, never a server failure', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      await assert.rejects(handle.pool.query('SELECT $1::text AS value', ['ses\u0000sion']), refusedWith('invalid_argument', /PostgreSQL cannot store this text[\s\S]*NUL/))
      await assert.rejects(
        handle.transaction((client) => client.query("SELECT $1::jsonb AS value", ['{"a": "\\u0000"}'])),
        refusedWith('invalid_argument', /PostgreSQL cannot store this text/),
      )
      // Other errors stay what they were: a statement's own SQLSTATE is still read by its caller.
      await assert.rejects(handle.pool.query('SELECT 1/0'), (error: unknown) => (error as { code?: string }).code === '22012')
      assert.deepEqual((await handle.pool.query<{ value: string }>('SELECT $1::text AS value', ['fine 🍵'])).rows, [{ value: 'fine 🍵' }])
    } finally {
      await cleanup()
    }
  })

  test('eight handles opening one fresh schema at once, as eight processes would, apply each migration once', async () => {
    const schema = freshSchema()
    const handles = await Promise.all(Array.from({ length: 8 }, () => openPostgres({ url, schema })))
    try {
      assert.ok(handles.every((handle) => handle.schemaVersion === LATEST_POSTGRES_SCHEMA_VERSION))
      const { rows } = await handles[0]!.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations')
      assert.equal(rows[0]?.n, LATEST_POSTGRES_SCHEMA_VERSION)
    } finally {
      await handles[0]?.pool.query(`DROP SCHEMA "${schema}" CASCADE`)
      await Promise.all(handles.map((handle) => handle.close()))
    }
  })

  test('a schema a newer engram migrated is refused, not half-understood', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    try {
      await handle.pool.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'from the future', now())`, [LATEST_POSTGRES_SCHEMA_VERSION + 1])
      await assert.rejects(
        openPostgres({ url, schema: handle.schema }),
        refusedWith('unsupported', new RegExp(`schema version ${LATEST_POSTGRES_SCHEMA_VERSION + 1}, written by a newer engram[\\s\\S]*Upgrade engram`)),
      )
    } finally {
      await cleanup()
    }
  })

  test('a database that does not exist is named, with how to create it', async () => {
    const missing = new URL(url)
    missing.pathname = '/engram_no_such_database'
    await assert.rejects(openPostgres({ url: missing.toString() }), refusedWith('storage_unavailable', /does not exist[\s\S]*CREATE DATABASE/))
  })
})
