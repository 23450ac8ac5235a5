/**
 * `storage.url` (ENGRAM_DATABASE_URL) selects PostgreSQL, whose backend is built seam by seam
 * (issue 16, decision 0035). Until it is whole, a mind refuses the setting instead of quietly
 * keeping the memory in a home folder the deployment does not look at.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { createMind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('a mind refuses storage.url while the PostgreSQL backend is incomplete, naming what is missing and the fix, and writes nothing', async () => {
  const temp = makeTempHome()
  try {
    for (const options of [
      { env: { ...temp.env, ENGRAM_DATABASE_URL: 'postgres://engram:s3cret@db.example:5432/engram' } },
      { env: temp.env, settings: { 'storage.url': 'postgres://db.example/engram' } },
    ]) {
      await assert.rejects(createMind({ home: temp.home, ...options }), (error: Error & { code?: string; fix?: string }) => {
        assert.equal(error.code, 'unsupported')
        assert.match(error.message, /cannot run on PostgreSQL yet[\s\S]*locks, job runs and the lifecycle state[\s\S]*context store, the search index/)
        assert.match(error.fix ?? '', /Unset storage\.url \/ ENGRAM_DATABASE_URL/)
        assert.doesNotMatch(error.message, /s3cret/)
        return true
      })
    }
    assert.equal(existsSync(temp.home), false, 'no home was created')
  } finally {
    temp.cleanup()
  }
})
