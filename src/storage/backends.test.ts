import assert from 'node:assert/strict'
import { test } from 'node:test'
import { systemClock } from '../core/clock.ts'
import { EngramError } from '../core/errors.ts'
import { makeTempHome } from '../testing/temp-home.ts'
import { BACKENDS, backendEntryFor, backendEntryNamed, openBackend, schemeOf } from './backends.ts'

test('the table picks the backend by the scheme of the URL: none is the home, postgres:// and postgresql:// PostgreSQL', () => {
  assert.equal(backendEntryFor(undefined).name, 'embedded')
  assert.equal(backendEntryFor('postgres://engram@db.internal:5432/engram').name, 'postgres')
  assert.equal(backendEntryFor('PostgreSQL://engram@db.internal/engram').name, 'postgres', 'schemes are case-insensitive')
  assert.equal(schemeOf('./other-home'), undefined, 'a folder has no scheme')
  assert.equal(schemeOf('postgresql://x/y'), 'postgresql')
  assert.equal(backendEntryNamed('postgres'), BACKENDS[1])
  assert.equal(backendEntryNamed('mysql'), undefined)
  const schemes = BACKENDS.flatMap((entry) => entry.schemes)
  assert.equal(new Set(schemes).size, schemes.length, 'no scheme is served twice')
  assert.equal(BACKENDS.filter((entry) => entry.schemes.length === 0).length, 1, 'one backend is chosen when there is no URL')
})

test('an unknown scheme, or a URL without one, is refused with what is known and the fix, and the URL (a secret) is not repeated', () => {
  const refused = (url: string): EngramError => {
    try {
      backendEntryFor(url)
    } catch (error) {
      assert.ok(EngramError.is(error))
      return error
    }
    assert.fail(`${url} was accepted`)
  }
  const mysql = refused('mysql://root:hunter2@db/engram')
  assert.equal(mysql.code, 'invalid_argument')
  assert.match(mysql.message, /No storage backend serves mysql:\/\/ URLs \(known: postgres:\/\/, postgresql:\/\/\)/)
  assert.match(mysql.fix ?? '', /ENGRAM_DATABASE_URL.*postgres:\/\/user:password@host:5432\/database/)
  assert.doesNotMatch(`${mysql.message} ${mysql.fix}`, /hunter2/)
  assert.match(refused('localhost:5432/engram').message, /has no scheme/)
})

test('the entry without a URL opens the embedded home, whose memory is files', async () => {
  const temp = makeTempHome()
  const backend = await openBackend({ home: temp.home, agent: 'default', clock: systemClock })
  try {
    assert.equal(backend.name, 'embedded')
    assert.equal(backend.capabilities.memory, 'files')
    assert.equal(typeof backend.owners, 'function', 'the embedded home reports its owners')
  } finally {
    await backend.close()
    temp.cleanup()
  }
})
