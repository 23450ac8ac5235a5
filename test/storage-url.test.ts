/**
 * `storage.url` (ENGRAM_DATABASE_URL) selects PostgreSQL (decision 0037). A database
 * that cannot be reached, or a URL that is not one, stops the mind from opening with what to
 * change — it never quietly keeps the memory in a home folder the deployment does not look at —
 * and the password never appears in the message.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createMind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('a database that does not answer stops the mind from opening, naming the server (without its password) and the fix', async () => {
  const temp = makeTempHome()
  try {
    for (const options of [
      { env: { ...temp.env, ENGRAM_DATABASE_URL: 'postgres://engram:s3cret@127.0.0.1:1/engram' } },
      { env: temp.env, settings: { 'storage.url': 'postgres://engram:s3cret@127.0.0.1:1/engram' } },
    ]) {
      await assert.rejects(createMind({ home: temp.home, ignoreConfigFile: true, ...options }), (error: Error & { code?: string; fix?: string }) => {
        assert.equal(error.code, 'storage_unavailable')
        assert.match(error.message, /Cannot reach PostgreSQL at postgres:\/\/engram:\*\*\*@127\.0\.0\.1:1\/engram/)
        assert.match(error.fix ?? '', /storage\.url \/ ENGRAM_DATABASE_URL/)
        assert.doesNotMatch(`${error.message} ${error.fix}`, /s3cret/)
        return true
      })
    }
    // A scheme no backend serves is named with the ones that are (the table of decision 0059).
    await assert.rejects(createMind({ home: temp.home, ignoreConfigFile: true, env: { ...temp.env, ENGRAM_DATABASE_URL: 'mysql://db/engram' } }), (error: Error & { code?: string; fix?: string }) => {
      assert.equal(error.code, 'invalid_argument')
      assert.match(error.message, /No storage backend serves mysql:\/\/ URLs \(known: postgres:\/\/, postgresql:\/\/\)/)
      assert.match(error.fix ?? '', /ENGRAM_DATABASE_URL/)
      return true
    })
  } finally {
    temp.cleanup()
  }
})
