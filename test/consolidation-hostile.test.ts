/**
 * Consolidation over what people and other tools leave in a memory folder (decision 0031, "bad input
 * loses nothing"): frontmatter fields of the wrong type (a number where a slug belongs, a string
 * where a list does, a map as a date), a frontmatter that does not parse, a huge file, strange
 * text — the daily, weekly and monthly runs (with a model, then dry and offline) finish, leave the
 * unreadable file byte for byte, and lose no memory: each is live or archived, never gone.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind } from '../src/mind.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const schemaName = (request: FakeChatRequest): string =>
  (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'

function model(request: FakeChatRequest): FakeChatStep {
  switch (schemaName(request)) {
    case 'merge':
      return { json: { content: 'The tea shop opens at 9.' } }
    case 'contradiction':
      return { json: { relation: 'contradiction', strategy: 'coexist', reason: 'both hold', condition: 'weekdays and weekends differ' } }
    case 'procedures':
      return { json: { procedures: [] } }
    case 'knowledge':
      return { json: { items: [] } }
    case 'reconsolidation':
      return { json: { update: false, reason: 'still true' } }
    default:
      return { json: { facts: [], rules: [], lessons: [], summary: 'A summary.' } }
  }
}

const FILES: Record<string, string> = {
  'wrong-types.md': '---\nsuperseded_by: 123\ncoexists_with: "not a list"\nmerged_from: 7\nversion: three\nvalid_from:\n  a: 1\nprotected: "yes"\n---\n# Tea shop\n\nThe tea shop opens at 9 on weekdays.\n',
  'tea-shop-hours.md': '---\nvalid_until: []\nupdated_at: 12\n---\n# Tea shop hours\n\nThe tea shop opens at 9 on weekdays.\n',
  'unreadable.md': '---\nthis: is: not: yaml: [\n---\n# Broken\n\nThe tea shop sells oolong.\n',
  'strange.md': `# Strange\n\n${'\u202e\u0000 \ud83e\udec0 ```\n~~~ '.repeat(200)}\n`,
  'huge.md': `# Huge\n\n${'The tea shop has a long menu. '.repeat(40_000)}\n`,
}

test('daily, weekly and monthly runs over hostile knowledge files finish and lose nothing', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: model })
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'jobs.eager': false }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())
  // A session makes ada a user of this agent; then her folder gets the files as a hand would leave them.
  const s = mind.session('ada-1', { user: 'ada' })
  await s.end(await s.begin('Hello.'), 'Hi.')
  const dir = join(tmp.home, 'agents', 'default', 'users', 'ada', 'knowledge')
  mkdirSync(dir, { recursive: true })
  for (const [name, content] of Object.entries(FILES)) writeFileSync(join(dir, name), content)
  await mind.reindex()

  for (const dryRun of [true, false]) {
    for (const period of ['daily', 'weekly', 'monthly'] as const) await mind.consolidate(period, { dryRun })
  }
  clock.advanceDays(400)
  await mind.maintain()
  for (const period of ['daily', 'weekly', 'monthly'] as const) await mind.consolidate(period)

  assert.equal(readFileSync(join(dir, 'unreadable.md'), 'utf8'), FILES['unreadable.md'], 'an unreadable frontmatter is left byte for byte')
  const archive = join(tmp.home, 'agents', 'default', 'users', 'ada', 'archive')
  for (const name of Object.keys(FILES)) {
    const somewhere = [join(dir, name), join(archive, 'forgotten', 'knowledge', name), join(archive, 'merged', 'knowledge', name)].some((path) => existsSync(path))
    assert.ok(somewhere, `${name} is live or archived`)
  }
  const jobs = await mind.backend.lifecycle.jobs(mind.agent, { status: ['failed'] })
  assert.deepEqual(jobs.map((job) => `${job.kind}: ${job.error}`), [], 'no run failed for good')
})
