/** `storage.url` picks the backend by its scheme (storage/backends.ts): an unknown one stops the open with the fix, and the home is left alone. */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { EngramError } from '../src/core/errors.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { createMind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('a mind whose ENGRAM_DATABASE_URL has a scheme no backend serves is not opened, and says which schemes are known', async () => {
  const temp = makeTempHome()
  try {
    await assert.rejects(
      createMind({ home: temp.home, env: { ...temp.env, ENGRAM_DATABASE_URL: 'mysql://engram:secret@db/engram' } }),
      (error: unknown) => {
        assert.ok(EngramError.is(error))
        assert.equal(error.code, 'invalid_argument')
        assert.match(error.message, /No storage backend serves mysql:\/\/ URLs \(known: postgres:\/\/, postgresql:\/\/\)/)
        assert.match(error.fix ?? '', /ENGRAM_DATABASE_URL/)
        assert.doesNotMatch(`${error.message} ${error.fix}`, /secret/)
        return true
      },
    )
    assert.equal(existsSync(join(temp.home, 'engram.db')), false, 'nothing was opened in the home instead')
  } finally {
    temp.cleanup()
  }
})

test('engram migrate --to a URL whose scheme no backend serves refuses it with the fix, instead of taking it for a folder', async () => {
  const temp = makeTempHome()
  try {
    mkdirSync(temp.home, { recursive: true })
    let stdout = ''
    const code = await runCli(['migrate', '--to', 'mysql://engram@db/engram', '--home', temp.home, '--json'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      env: temp.env,
      cwd: temp.home,
      isTTY: false,
    })
    assert.notEqual(code, 0)
    const answer = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { ok: boolean; error?: { code: string; message: string; fix?: string } }
    assert.equal(answer.ok, false)
    assert.equal(answer.error?.code, 'invalid_argument')
    assert.match(answer.error?.message ?? '', /No storage backend serves mysql:\/\/ URLs/)
    assert.equal(existsSync(join(temp.home, 'mysql:')), false, 'no folder was made of the URL')
  } finally {
    temp.cleanup()
  }
})
