// @slow: drives PostgreSQL
/**
 * `engram status` counts every owner's memory (decision 0073): the agent's, and each user's tree,
 * summed in the totals and listed owner by owner below them, in `--json` and as text; on the
 * embedded backend and on PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ScopeCounts } from '../src/memory/status.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { runCli } from '../src/cli.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

interface OwnerCounts {
  owner: string
  global: ScopeCounts
  knowledge: number
  procedures: number
}

async function cli(argv: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  let out = ''
  const io = { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env, cwd: process.cwd(), isTTY: false }
  const code = await runCli(argv, io)
  return { code, out }
}

async function statusOfEveryOwner(env: Record<string, string>, home: string): Promise<void> {
  const remember = async (text: string, kind: string, user?: string): Promise<void> => {
    const { code, out } = await cli(['remember', text, '--kind', kind, '--home', home, ...(user ? ['--user', user] : [])], env)
    assert.equal(code, 0, out)
  }
  await remember('Use httpx instead of requests', 'always')
  await remember('The staging VPN needs the token from the vault', 'lesson', 'ada')
  await remember('Ada deploys on Tuesdays after the standup', 'lesson', 'ada')
  await remember('Bo keeps the billing runbook in the wiki', 'lesson', 'bo')
  // Knowledge through each owner's document store, the path every write of a document takes.
  const mind = await openMindInternals({ home, env, ignoreConfigFile: true })
  try {
    await mind.backend.owned('agent').documents.write('knowledge', 'tea', {}, '# Tea\nGreen tea brews at 80 degrees.\n')
    await mind.backend.owned('user:ada').documents.write('knowledge', 'vpn', {}, '# VPN\nThe staging VPN listens on port 1194.\n')
    await mind.backend.owned('user:ada').documents.write('knowledge', 'deploy', {}, '# Deploy\nDeploys go out after the standup.\n')
  } finally {
    await mind.close()
  }

  const json = await cli(['status', '--home', home, '--json'], env)
  assert.equal(json.code, 0, json.out)
  const memory = (JSON.parse(json.out) as { data: { memory: { global: ScopeCounts; knowledge: number; byOwner: OwnerCounts[] } } }).data.memory
  assert.deepEqual(memory.global.rules, { always: 1, never: 0, when: 0 })
  assert.equal(memory.global.lessons, 3, "the agent has none: the lessons are Ada's and Bo's")
  assert.equal(memory.knowledge, 3)
  const byOwner = new Map(memory.byOwner.map((counts) => [counts.owner, counts]))
  assert.deepEqual([...byOwner.keys()], ['agent', 'shared', 'user:ada', 'user:bo'])
  assert.deepEqual(
    [...byOwner.values()].map((counts) => [counts.owner, counts.global.rules.always, counts.global.lessons, counts.knowledge]),
    [
      ['agent', 1, 0, 1],
      ['shared', 0, 0, 0],
      ['user:ada', 0, 2, 2],
      ['user:bo', 0, 1, 0],
    ],
  )

  const human = await cli(['status', '--home', home, '--human'], env)
  assert.equal(human.code, 0, human.out)
  assert.match(human.out, /global lessons\s+3\n/)
  assert.match(human.out, /knowledge\s+3\n/)
  assert.match(human.out, /Memory by owner\n {2}agent\s+1 rule, 1 knowledge, 1 activity day\n {2}shared\s+nothing yet\n {2}user ada\s+2 lessons, 2 knowledge, 1 activity day\n {2}user bo\s+1 lesson, 1 activity day\n/)
}

test('engram status counts the memory of the agent and of each user, with each owner below the totals (embedded)', async (t) => {
  const temp = makeTempHome()
  t.after(temp.cleanup)
  await statusOfEveryOwner(temp.env, temp.home)
})

onPostgres('engram status counts every owner', (url) => {
  test('engram status counts the memory of the agent and of each user, with each owner below the totals (PostgreSQL)', async (t) => {
    const temp = makeTempHome()
    const schema = freshSchema()
    t.after(async () => {
      await dropSchema(url, schema)
      temp.cleanup()
    })
    await statusOfEveryOwner({ ...temp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }, temp.home)
  })
})
