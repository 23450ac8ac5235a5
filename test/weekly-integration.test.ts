/**
 * Weekly integration (decision 0031), as a host meets it: a user's agent writes knowledge through its
 * tools, a week passes, `maintain()` runs the weekly job. Offline: duplicates whose numbers and
 * names agree merge (the other to archive/merged/, restorable), "budget 40k" never merges with
 * "budget 30k", another user's identical fact is never merged with the first's, and the
 * contradiction scan and pattern distillation are pending with why. With a model: merged wording,
 * the contradiction scan superseding the older fact, a tool sequence repeated in three sessions
 * distilled into a procedure; a failing model leaves the files as they were.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import { call } from './support/tool-calls.ts'

const schemaName = (request: FakeChatRequest): string =>
  (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'

async function write(mind: Mind, user: string, path: string, content: string): Promise<void> {
  const turn = await mind.session(`write-${user}-${path}`, { user }).begin(`Note ${path}`)
  const result = await call(turn.tools, 'write_memory_file', { path, content })
  assert.ok(!result.isError, result.text)
}

async function weeklyJob(mind: Mind) {
  const [job] = await mind.backend.lifecycle.jobs(mind.agent, { kind: 'consolidation-weekly', limit: 1 })
  return job
}

test('offline: duplicates whose numbers and names agree merge and restore; different figures and other users never merge; the rest is pending', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'jobs.eager': false } })
  t.after(() => mind.close())

  await write(mind, 'ada', 'knowledge/kitchen-budget.md', '# Kitchen budget\n\nThe kitchen renovation budget is 40k, approved by Marta.\n')
  clock.advance(60_000)
  await write(mind, 'ada', 'knowledge/renovation-budget.md', '# Renovation budget\n\nThe budget for the kitchen renovation is 40k, approved by Marta.\n')
  await write(mind, 'ada', 'knowledge/bathroom-budget.md', '# Bathroom budget\n\nThe bathroom renovation budget is 30k, approved by Marta.\n')
  await write(mind, 'bob', 'knowledge/kitchen-budget.md', '# Kitchen budget\n\nThe kitchen renovation budget is 40k, approved by Marta.\n')

  // engram consolidate weekly --dry-run says what it would merge, and merges nothing.
  let out = ''
  const io = { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env: tmp.env, cwd: tmp.project, isTTY: false }
  assert.equal(await runCli(['consolidate', 'weekly', '--dry-run', '--home', tmp.home, '--human'], io), 0, out)
  assert.match(out, /would merge 1:\n {2}users\/ada\/knowledge\/kitchen-budget\.md → users\/ada\/knowledge\/renovation-budget\.md \(similarity/)
  assert.match(out, /pending: contradiction scan — no model configured/)
  assert.ok(await mind.backend.owned('user:ada').documents.read('knowledge', 'kitchen-budget'), 'a dry run merges nothing')

  clock.advanceDays(7)
  await mind.maintain()
  const job = await weeklyJob(mind)
  assert.equal(job?.status, 'done', JSON.stringify(job))
  assert.equal(job?.result?.merged, 1)

  const ada = mind.backend.owned('user:ada').documents
  const live = (await ada.list('knowledge')).map((ref) => ref.slug).sort()
  assert.deepEqual(live, ['bathroom-budget', 'renovation-budget'], 'the older duplicate merged into the newer; 30k never merges with 40k')
  const survivor = await ada.read('knowledge', 'renovation-budget')
  assert.deepEqual(survivor?.frontmatter.merged_from, ['kitchen-budget'])
  assert.equal(survivor?.frontmatter.merge_method, 'similarity')
  assert.match(survivor?.body ?? '', /The budget for the kitchen renovation is 40k/, 'offline the survivor keeps its own words')
  assert.ok(await mind.backend.owned('user:bob').documents.read('knowledge', 'kitchen-budget'), 'bob\'s identical fact is his, untouched')
  assert.match(JSON.stringify(job?.result?.pending ?? []), /contradiction scan: no model configured/)

  // A second run (a forced one) changes nothing more.
  assert.equal((await mind.consolidate('weekly')).merged.length, 0)

  // The merged document comes back with engram restore.
  const restored = await mind.restore('users/ada/archive/merged/knowledge/kitchen-budget.md', { user: 'ada' })
  assert.equal(restored.action, 'restored')
  assert.ok(await ada.read('knowledge', 'kitchen-budget'))
  await assert.rejects(mind.restore('archive/merged/knowledge/kitchen-budget.md', { user: 'bob' }), 'bob cannot restore ada\'s')
})

const deploy: ToolDefinition<{ target: string }> = {
  name: 'deploy',
  description: 'Deploy a build to a target.',
  inputSchema: z.object({ target: z.string() }),
  async run({ target }) {
    return { text: `deployed to ${target}` }
  },
}
const checkHealth: ToolDefinition<{ target: string }> = {
  name: 'check_health',
  description: 'Check a target is healthy.',
  inputSchema: z.object({ target: z.string() }),
  async run({ target }) {
    return { text: `${target} healthy` }
  },
}

function model(override?: { step: string; answer: FakeChatStep }) {
  return (request: FakeChatRequest): FakeChatStep => {
    const name = schemaName(request)
    if (override && name === override.step) return override.answer
    const text = JSON.stringify(request.body)
    switch (name) {
      case 'merge':
        return { json: { content: 'The kitchen renovation budget is 40k; Marta approved it.' } }
      case 'contradiction':
        return /Lisbon/.test(text) && /Porto/.test(text) ? { json: { relation: 'contradiction', strategy: 'supersede', reason: 'the office moved' } } : { json: { relation: 'unrelated', reason: '-' } }
      case 'procedures':
        if (!/Tools, in order/.test(text)) return { json: { procedures: [] } }
        return { json: { procedures: [{ title: 'Deploy and check', description: 'Deploy a build and check the target is healthy', steps: ['deploy to the target', 'check_health on the target'] }] } }
      case 'episode':
        return { json: { title: 'Deploy', summary: 'Deployed.', resolved: [], newTasks: [] } }
      case 'knowledge':
        return { json: { items: [] } }
      case 'reconsolidation':
        return { json: { update: false, reason: '-' } }
      default:
        return { json: { rules: [], lessons: [], facts: [] } }
    }
  }
}

async function withModel(t: { after(fn: () => unknown): void }, override?: { step: string; answer: FakeChatStep }) {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: model(override) })
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'llm.timeoutMs': 400, 'jobs.eager': false }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())
  await write(mind, 'ada', 'knowledge/kitchen-budget.md', '# Kitchen budget\n\nThe kitchen renovation budget is 40k, approved by Marta.\n')
  clock.advance(60_000)
  await write(mind, 'ada', 'knowledge/renovation-budget.md', '# Renovation budget\n\nThe budget for the kitchen renovation is 40k, approved by Marta.\n')
  await write(mind, 'ada', 'knowledge/office.md', '# Office\n\nThe team office is in Porto, near the river.\n')
  clock.advance(60_000)
  await write(mind, 'ada', 'knowledge/office-move.md', '# Office move\n\nThe team office is in Lisbon now, near the river.\n')
  for (const n of [1, 2, 3]) {
    const session = mind.session(`deploy-${n}`, { user: 'ada', tools: [deploy, checkHealth] })
    const turn = await session.begin(`Deploy build ${n} to staging`)
    await session.execute('deploy', { target: 'staging' })
    await session.execute('check_health', { target: 'staging' })
    await session.end(turn, 'Done.')
    clock.advance(60_000)
  }
  return { mind, clock, server, home: tmp.home }
}

test('with a model: merged wording, the contradiction scan supersedes the older fact, a repeated tool sequence becomes a procedure', async (t) => {
  const { mind, clock } = await withModel(t)
  clock.advanceDays(6)
  await mind.maintain()
  const job = await weeklyJob(mind)
  assert.equal(job?.status, 'done', JSON.stringify(job))
  const ada = mind.backend.owned('user:ada').documents
  const survivor = await ada.read('knowledge', 'renovation-budget')
  assert.equal(survivor?.frontmatter.merge_method, 'llm')
  assert.match(survivor?.body ?? '', /Marta approved it/)
  const office = await ada.read('knowledge', 'office')
  assert.equal(office?.frontmatter.superseded_by, 'office-move')
  assert.equal((await ada.read('knowledge', 'office-move'))?.frontmatter.supersedes, 'office')
  const procedure = await ada.read('procedure', 'deploy-and-check')
  assert.equal(procedure?.frontmatter.auto_distilled, true)
  assert.equal(procedure?.frontmatter.pattern, 'deploy → check_health')
  assert.deepEqual(await mind.backend.documents.list('procedure'), [], 'ada\'s pattern is ada\'s procedure')
})

const MODES: Array<[string, FakeChatStep, RegExp]> = [
  ['timeout', { hang: true }, /time|abort/i],
  ['5xx', { fail: { status: 503 } }, /503|failed/i],
  ['garbage', { invalidJson: true }, /invalid|JSON/i],
  ['schema violation', { json: { nothing: 'like the schema' } }, /invalid|schema/i],
]

test('every failure of the model in every weekly step writes nothing and is retried with the step and the reason', async (t) => {
  for (const [step, label] of [
    ['merge', 'duplicate merge'],
    ['contradiction', 'contradiction scan'],
    ['procedures', 'pattern distillation'],
  ] as const) {
    for (const [mode, answer, reason] of MODES) {
      const { mind, clock } = await withModel(t, { step, answer })
      const ada = mind.backend.owned('user:ada').documents
      const knowledge = async () => JSON.stringify(await Promise.all((await ada.list('knowledge')).map(async (ref) => ada.read('knowledge', ref.slug))))
      const before = await knowledge()
      clock.advanceDays(6)
      await mind.maintain()
      const job = await weeklyJob(mind)
      assert.equal(job?.status, 'queued', `${step}/${mode}`)
      assert.ok(job?.error?.includes(`${label}: `), `${step}/${mode}: ${job?.error}`)
      assert.match(job?.error ?? '', reason, `${step}/${mode}`)
      assert.equal(await knowledge(), before, `${step}/${mode}: files unchanged`)
      for (const ref of await ada.list('procedure')) {
        assert.equal((await ada.read('procedure', ref.slug))?.frontmatter.pattern, undefined, `${step}/${mode}: no pattern distilled`)
      }
    }
  }
})
