// @slow: waits for file stamps to settle (3 s, twice), runs the CLI in child processes, drives PostgreSQL
/**
 * A turn reads the skill library again only when it changed (decision 0086): the summaries are
 * kept behind the stamps of the folders and files they were read from. What another process
 * writes — a new skill, a skill's meta.json rewritten in place — is in the next turn's prompt,
 * also once the stamps are settled and the library is no longer read at every turn.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createMind } from '../src/mind.ts'
import { SETTLE_MS } from '../src/storage/files/file-stamp.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 200))

/** `engram skills save --from <file>` in a process of its own. */
async function saveSkillElsewhere(tmp: TempHome, storage: Record<string, string>, file: string, text: string): Promise<void> {
  writeFileSync(join(tmp.project, file), text)
  await run(process.execPath, [bin, 'skills', 'save', '--from', file, '--json'], { env: { ...tmp.env, ...storage, ENGRAM_HOME: tmp.home }, cwd: tmp.project })
}

async function seenNextTurn(t: { after(fn: () => unknown): void }, storage: Record<string, string> = {}): Promise<void> {
  const tmp = makeTempHome()
  mkdirSync(tmp.project, { recursive: true })
  await saveSkillElsewhere(tmp, storage, 'csv.md', '# CSV Summary\n\nWhen to use: User asks to summarize a CSV file.\n\n1. Load it.\n2. describe().\n')
  const mind = await createMind({ home: tmp.home, env: { ...tmp.env, ...storage }, ignoreConfigFile: true })
  t.after(async () => {
    await mind.close()
    if (storage.ENGRAM_DATABASE_URL && storage.ENGRAM_DATABASE_SCHEMA) await dropSchema(storage.ENGRAM_DATABASE_URL, storage.ENGRAM_DATABASE_SCHEMA)
    tmp.cleanup()
  })
  const skillsOfTurn = async (user: string, message: string): Promise<string> => {
    const session = mind.session(`chat-${user}`, { user })
    const turn = await session.begin(message)
    await session.end(turn, 'ok')
    return turn.systemParts.skills
  }

  assert.match(await skillsOfTurn('ada', 'hello'), /csv_summary — User asks to summarize a CSV file\./)
  await settle()
  // Read with settled stamps: from now on the library is only stat'ed while nothing changes.
  assert.match(await skillsOfTurn('bob', 'hello again'), /csv_summary/)
  assert.match(await skillsOfTurn('ada', 'and again'), /csv_summary/)

  await saveSkillElsewhere(tmp, storage, 'deploy.md', '# Deploy Staging\n\nWhen to use: User asks to deploy to staging.\n\n1. Build.\n2. Ship.\n')
  const withBoth = await skillsOfTurn('bob', 'one more')
  assert.match(withBoth, /csv_summary/)
  assert.match(withBoth, /deploy_staging — User asks to deploy to staging\./)

  await settle()
  assert.match(await skillsOfTurn('ada', 'settled'), /deploy_staging/)
  // Rewritten in place (an editor, another process): the folder's listing does not change, the file's stamp does.
  const meta = join(tmp.home, 'agents', 'default', 'skills', 'csv_summary', 'meta.json')
  const record = JSON.parse(readFileSync(meta, 'utf8')) as Record<string, unknown>
  writeFileSync(meta, JSON.stringify({ ...record, when_to_use: 'User asks to chart a CSV file.' }, null, 2))
  const edited = await skillsOfTurn('ada', 'after the edit')
  assert.match(edited, /csv_summary — User asks to chart a CSV file\./)
  assert.doesNotMatch(edited, /summarize a CSV/)
}

test('a skill another process saves or edits is in the next turn, before and after the stamps settle', (t) => seenNextTurn(t))
onPostgres('a skill another process saves or edits is in the next turn', (url) => {
  test('a skill another process saves or edits is in the next turn on PostgreSQL', (t) => seenNextTurn(t, { ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: freshSchema() }))
})
