/**
 * The model's part of daily consolidation (decision 0031), the way a host meets it: users talk to the
 * agent through sessions, boundaries write episodes, and the next day's `maintain()` runs the
 * daily job — procedures distilled (a similar one skipped), knowledge extracted and validated (a
 * fabricated figure and an unsupported claim rejected), reconsolidation, a contradiction
 * superseding the old fact, which stays with its history — each user's in their own tree. Every
 * failure of the model in every step leaves the files as they were and the job failed with the
 * step and the reason. Offline the steps are pending, with why. Against the fake model server.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { call } from './support/tool-calls.ts'

const schemaName = (request: FakeChatRequest): string =>
  (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'

/** What the model was asked (system and user messages). */
function asked(request: FakeChatRequest): string {
  const messages = (request.body as { messages?: Array<{ content?: unknown }> }).messages ?? []
  return messages.map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content))).join('\n')
}

type Steps = 'procedures' | 'knowledge' | 'knowledge_check' | 'reconsolidation' | 'contradiction'

/** A model that writes episodes from the transcript and answers consolidation as a careful model would; `override` replaces one step's answer. */
function brain(override?: { step: Steps; answer: FakeChatStep }) {
  return (request: FakeChatRequest): FakeChatStep => {
    const name = schemaName(request)
    const text = asked(request)
    if (override && name === override.step) return override.answer
    switch (name) {
      case 'episode': {
        const said = [...text.matchAll(/(?:user|ada|bob)[^:\n]*: (.+)/gi)].map((m) => m[1]).join(' ')
        return { json: { title: 'Conversation', summary: said || 'They talked.', resolved: [], newTasks: [] } }
      }
      case 'procedures':
        return { json: { procedures: [{ title: 'Deploy staging', description: 'Deploy the staging server with Kamal', steps: ['Run the tests', 'Run kamal deploy on the staging server'] }] } }
      case 'knowledge':
        if (/Fly\.io/.test(text)) return { json: { items: [{ title: 'Staging deploys', content: 'The staging server is deployed with Fly.io now, no longer with Kamal.', sources: [1] }] } }
        if (/Kamal/.test(text))
          return {
            json: {
              items: [
                { title: 'Staging deploys', content: 'The staging server is deployed with Kamal.', sources: [1] },
                { title: 'Deploy budget', content: 'The deploy budget is 99k a year.', sources: [1] },
                { title: 'Deploy schedule', content: 'Deploys happen every morning before standup.', sources: [1] },
              ],
            },
          }
        return { json: { items: [] } }
      case 'knowledge_check':
        return /every morning/.test(text) ? { json: { supported: false, reason: 'the episodes never say when deploys happen' } } : { json: { supported: true, reason: 'stated in section 1' } }
      case 'reconsolidation':
        if (/Existing procedure/.test(text) && /Fly\.io/.test(text)) return { json: { update: true, reason: 'deploys moved to Fly.io', content: '# Deploy staging\n\n1. Run the tests\n2. Run fly deploy' } }
        return { json: { update: false, reason: 'still true' } }
      case 'contradiction':
        if (/Fly\.io/.test(text) && /Kamal/.test(text)) return { json: { relation: 'contradiction', strategy: 'supersede', reason: 'the deploy tool changed' } }
        return { json: { relation: 'unrelated', reason: 'different topics' } }
      default:
        return { json: { summary: 'A summary.' } }
    }
  }
}

async function talk(mind: Mind, clock: ManualClock, session: string, user: string, message: string): Promise<void> {
  const s = mind.session(session, { user })
  const turn = await s.begin(message)
  clock.advance(5_000)
  await s.end(turn, 'Noted.')
  await s.close()
  await mind.idle()
}

function snapshot(root: string): Map<string, string> {
  const files = new Map<string, string>()
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\/(knowledge|procedures|archive)\//.test(path)) files.set(relative(root, path), readFileSync(path, 'utf8'))
    }
  }
  walk(root)
  return files
}

async function dailyJob(mind: Mind) {
  const [job] = await mind.backend.lifecycle.jobs(mind.agent, { kind: 'consolidation-daily', limit: 1 })
  return job
}

test('a night of consolidation: procedures distilled, facts extracted and validated, a later episode supersedes the old fact; each user keeps their own', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: brain() })
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'jobs.eager': false }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())

  await talk(mind, clock, 'ada-1', 'ada', 'We deploy the staging server with Kamal. To deploy: first run the tests, then run kamal deploy.')
  await talk(mind, clock, 'bob-1', 'bob', 'I like green tea in the afternoon.')
  await mind.maintain()

  clock.advanceDays(1)
  await mind.maintain()
  const first = await dailyJob(mind)
  assert.equal(first?.status, 'done', JSON.stringify(first))
  assert.equal(first?.result?.learned, 1)
  assert.equal(first?.result?.rejected, 2)
  assert.equal(first?.result?.distilled, 1)
  assert.equal(first?.result?.model, 'fake-model')

  const ada = mind.backend.owned('user:ada').documents
  const fact = await ada.read('knowledge', 'staging-deploys')
  assert.ok(fact, 'the fact is in ada\'s own tree')
  assert.match(fact.body, /deployed with Kamal/)
  assert.equal(fact.frontmatter.auto_consolidated, true)
  // Its episode says it outright ("We deploy the staging server with Kamal"): the seed's fast path, no model asked.
  assert.equal(fact.frontmatter.confidence, 0.9)
  assert.equal(fact.frontmatter.validation, 'entailed')
  assert.equal(fact.frontmatter.validated, true)
  assert.equal(fact.frontmatter.method, 'llm')
  assert.equal(fact.frontmatter.model, 'fake-model')
  assert.equal(fact.frontmatter.source_episodes, 1)
  assert.match(String((fact.frontmatter.sources as string[])[0]), /^episodes\/2026-03-02\.md#/)
  assert.equal((await ada.list('knowledge')).length, 1, 'the fabricated budget and the unsupported schedule were not written')
  const procedure = await ada.read('procedure', 'deploy-staging')
  assert.equal(procedure?.frontmatter.auto_distilled, true)
  assert.equal(procedure?.frontmatter.confidence, 0.4)
  assert.deepEqual(await mind.backend.documents.list('knowledge'), [], 'nothing of ada\'s became the agent\'s')
  assert.deepEqual(await mind.backend.owned('user:bob').documents.list('knowledge'), [])
  // What it changed and why is in ada's own activity log, nowhere else.
  const logged = (await mind.backend.owned('user:ada').activity.read({ types: ['memory_write'] })).filter((record) => record.meta?.action === 'consolidate')
  assert.ok(logged.some((record) => record.meta?.path === 'users/ada/knowledge/staging-deploys.md' && /extracted from episodes/.test(String(record.meta?.reason)) && record.meta?.model === 'fake-model'), JSON.stringify(logged))
  for (const other of ['agent', 'user:bob'] as const) {
    assert.ok(!(await mind.backend.owned(other).activity.read({ types: ['memory_write'] })).some((record) => /staging-deploys/.test(JSON.stringify(record))), other)
  }

  // Bob never finds what ada's episodes taught.
  const bobTurn = await mind.session('bob-2', { user: 'bob' }).begin('What do you know about staging deploys?')
  assert.doesNotMatch((await call(bobTurn.tools, 'search_memory', { query: 'staging deploy Kamal' })).text, /deployed with Kamal|users\/ada/)
  assert.doesNotMatch(bobTurn.system, /Kamal/)

  // A second run of the day's consolidation changes nothing.
  const before = snapshot(tmp.home)
  const again = await mind.consolidate('daily')
  assert.equal(again.knowledge.sections, 0)
  assert.deepEqual(snapshot(tmp.home), before)

  // Next day: the deploys moved. The fact is superseded and stays, the procedure reconsolidated.
  await talk(mind, clock, 'ada-2', 'ada', 'We moved the staging deploys from Kamal to Fly.io; to deploy: first run the tests, then run fly deploy.')
  clock.advanceDays(1)
  await mind.maintain()
  const second = await dailyJob(mind)
  assert.equal(second?.status, 'done', JSON.stringify(second))
  const old = await ada.read('knowledge', 'staging-deploys')
  const successor = await ada.read('knowledge', 'staging-deploys-2')
  assert.equal(old?.frontmatter.superseded_by, 'staging-deploys-2')
  assert.ok(typeof old?.frontmatter.valid_until === 'string')
  assert.equal(successor?.frontmatter.supersedes, 'staging-deploys')
  assert.match(successor?.body ?? '', /Fly\.io/)
  const reconsolidated = await ada.read('procedure', 'deploy-staging')
  assert.equal(reconsolidated?.frontmatter.version, 2)
  assert.equal(reconsolidated?.frontmatter.success_count, 0)
  assert.equal(reconsolidated?.frontmatter.confidence, 0.5)
  assert.match(reconsolidated?.body ?? '', /fly deploy/)
  assert.equal((await ada.list('procedure')).length, 1, 'the same procedure distilled again was skipped (≥ 0.85 similar)')
  const history = await mind.history('knowledge/staging-deploys.md', { user: 'ada' })
  assert.equal(history.lineage.superseded_by, 'staging-deploys-2')
  assert.ok(history.versions.some((v) => /superseded by staging-deploys-2: the deploy tool changed/.test(v.reason ?? '')), JSON.stringify(history.versions))
  const bobs = await mind.history('knowledge/staging-deploys.md', { user: 'bob' }).catch((error: Error) => error.message)
  assert.doesNotMatch(JSON.stringify(bobs), /superseded|users\/ada|Kamal/, 'bob sees no history of ada\'s fact')
})

const MODES: Array<[string, FakeChatStep, RegExp]> = [
  ['timeout', { hang: true }, /time|abort/i],
  ['5xx', { fail: { status: 503 } }, /503|failed/i],
  ['garbage', { invalidJson: true }, /invalid|JSON/i],
  ['schema violation', { json: { nothing: 'like the schema' } }, /invalid|schema/i],
]
const STEPS: Array<[Steps, string]> = [
  ['procedures', 'procedure distillation'],
  ['reconsolidation', 'reconsolidation'],
  ['knowledge', 'knowledge extraction'],
  ['knowledge_check', 'validation'],
  ['contradiction', 'contradiction detection'],
]

test('every failure of the model in every step leaves the files as they were and fails the job with the step and the reason', async (t) => {
  for (const [step, label] of STEPS) {
    for (const [mode, answer, reason] of MODES) {
      const tmp = makeTempHome()
      const server = await startFakeOpenAiServer({ onChat: brain({ step, answer }) })
      const clock = new ManualClock('2026-03-02T09:00:00Z')
      const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'llm.timeoutMs': 400, 'jobs.eager': false }
      const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
      try {
        // An existing fact like the day's, so that every step is reached.
        await mind.backend.owned('user:ada').documents.write('knowledge', 'staging-deploys', { created_at: '2026-02-01T00:00:00.000Z', version: 1 }, '# Staging deploys\n\nThe staging server is deployed with Kamal.\n')
        await talk(mind, clock, 'ada-1', 'ada', 'We moved the staging deploys from Kamal to Fly.io; to deploy: first run the tests, then run fly deploy.')
        await mind.maintain()
        const before = snapshot(tmp.home)
        clock.advanceDays(1)
        await mind.maintain()
        const job = await dailyJob(mind)
        assert.equal(job?.status, 'queued', `${step}/${mode}: failed, to be retried`)
        assert.ok(job?.error?.includes(label), `${step}/${mode}: ${job?.error}`)
        assert.match(job?.error ?? '', reason, `${step}/${mode}`)
        assert.deepEqual(snapshot(tmp.home), before, `${step}/${mode}: files unchanged`)
        assert.ok((await mind.status()).jobs.retrying.some((retry) => retry.kind === 'consolidation-daily'))
      } finally {
        await mind.close()
        await server.close()
        tmp.cleanup()
      }
    }
  }
  t.diagnostic(`${STEPS.length * MODES.length} failure cases`)
})

test('offline, the model steps are pending with the reason, and a later run with a model takes the backlog', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const offline = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'jobs.eager': false } })
  await talk(offline, clock, 'ada-1', 'ada', 'We deploy the staging server with Kamal.')
  clock.advanceDays(1)
  await offline.maintain()
  const job = await dailyJob(offline)
  assert.equal(job?.status, 'skipped')
  assert.match(JSON.stringify(job?.result?.pending), /knowledge extraction: no model configured/)
  assert.deepEqual(await offline.backend.owned('user:ada').documents.list('knowledge'), [], 'nothing written as if a model had')
  await offline.close()

  const server = await startFakeOpenAiServer({ onChat: brain() })
  t.after(() => server.close())
  clock.advanceDays(1)
  const online = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'jobs.eager': false } })
  t.after(() => online.close())
  await online.maintain()
  assert.ok(await online.backend.owned('user:ada').documents.read('knowledge', 'staging-deploys'), 'the backlog day was consolidated')
})

test('a spent budget stops the run cleanly and leaves the rest for the next one', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: brain() })
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'jobs.eager': false, 'consolidation.llmCalls': 1 }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())
  await talk(mind, clock, 'ada-1', 'ada', 'We deploy the staging server with Kamal. To deploy: first run the tests, then run kamal deploy.')
  clock.advanceDays(1)
  const calls = server.requests.length
  await mind.maintain()
  const job = await dailyJob(mind)
  assert.equal(job?.status, 'skipped')
  assert.match(JSON.stringify(job?.result?.pending), /budget is spent/)
  assert.equal(server.requests.length - calls, 1, 'one call, as the budget allows')
  assert.deepEqual(await mind.backend.owned('user:ada').documents.list('knowledge'), [])
})
