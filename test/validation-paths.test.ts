/**
 * Validation that does not throw away true facts (decision 0048), the way a host meets it: two users
 * talk to the agent, a new Session per turn; the next day's `maintain()` runs daily consolidation
 * against the fake model server. Ada said "a staging deploy takes two hours" and "the nightly
 * invoice export failed"; the model extracts "about 2 hours" (kept: the same fact, entailed, no
 * model call, the seed's 0.9), "the export succeeded" (rejected offline: its source says the
 * opposite, no model call), one paraphrase (the model's call, 0.7) and one invented figure
 * (rejected by the facts check). Which path decided is in the file, the run and the job's counts.
 * Offline nothing is written as if validated, and a later run with a model takes the backlog.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

/** A request as the server recorded it (chat or not): only its body is read. */
type Recorded = { body?: unknown }

const schemaName = (request: Recorded): string => (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'

function asked(request: Recorded): string {
  const messages = (request.body as { messages?: Array<{ content?: unknown }> }).messages ?? []
  return messages.map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content))).join('\n')
}

/** Episodes echo what the users said; extraction returns four candidates for ada's day; the model approves what it is asked. */
function model(request: FakeChatRequest): FakeChatStep {
  const text = asked(request)
  switch (schemaName(request)) {
    case 'episode': {
      const said = [...text.matchAll(/(?:user|ada|bob)[^:\n]*: (.+)/gi)].map((m) => m[1]).join(' ')
      return { json: { title: 'Conversation', summary: said || 'They talked.', resolved: [], newTasks: [] } }
    }
    case 'knowledge':
      if (/staging deploy takes two hours/.test(text))
        return {
          json: {
            items: [
              { title: 'Staging deploy duration', content: 'A staging deploy takes about 2 hours.', sources: [1] },
              { title: 'Invoice export', content: 'The nightly invoice export succeeded.', sources: [1] },
              { title: 'Deploy approvals', content: 'Every staging deploy needs an approval from Bob first.', sources: [1] },
              { title: 'Deploy window', content: 'Staging deploys are allowed only between 9 and 11.', sources: [1] },
            ],
          },
        }
      if (/green tea/.test(text)) return { json: { items: [{ title: 'Tea', content: 'The user drinks green tea in the afternoon.', sources: [1] }] } }
      return { json: { items: [] } }
    case 'knowledge_check':
      return { json: { supported: true, reason: 'stated in section 1' } }
    case 'contradiction':
      return { json: { relation: 'unrelated', reason: 'different topics' } }
    case 'procedures':
      return { json: { procedures: [] } }
    case 'reconsolidation':
      return { json: { update: false, reason: 'still true' } }
    default:
      return { json: { summary: 'A summary.' } }
  }
}

/** One turn, on a Session object of its own (as a host that keeps none between requests). */
async function say(mind: Mind, clock: ManualClock, session: string, user: string, message: string): Promise<void> {
  const s = mind.session(session, { user })
  const turn = await s.begin(message)
  clock.advance(5_000)
  await s.end(turn, 'Noted.')
  await mind.idle()
}

/** Ada's day in two sessions (two episode sections; the extractor cites the first for every fact), bob's in one. */
async function converse(mind: Mind, clock: ManualClock): Promise<void> {
  await say(mind, clock, 'ada-1', 'ada', 'For the record: a staging deploy takes two hours.')
  await say(mind, clock, 'ada-1', 'ada', 'Also, Bob has to approve every staging deploy before it starts.')
  await mind.session('ada-1', { user: 'ada' }).close()
  await say(mind, clock, 'ada-2', 'ada', 'Bad news, the nightly invoice export failed.')
  await mind.session('ada-2', { user: 'ada' }).close()
  await say(mind, clock, 'bob-1', 'bob', 'I drink green tea in the afternoon.')
  await mind.session('bob-1', { user: 'bob' }).close()
  await mind.idle()
  await mind.maintain()
}

const checks = (requests: readonly Recorded[]): string[] => requests.filter((request) => schemaName(request) === 'knowledge_check').map(asked)

async function dailyJob(mind: Mind) {
  const [job] = await mind.backend.lifecycle.jobs(mind.agent, { kind: 'consolidation-daily', limit: 1 })
  return job
}

test('a fact its source states outright is kept without a model call, a contradicted one rejected without one; the record says which path decided', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: model })
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'jobs.eager': false }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())
  await converse(mind, clock)

  const before = server.requests.length
  clock.advanceDays(1)
  await mind.maintain()
  const job = await dailyJob(mind)
  assert.equal(job?.status, 'done', JSON.stringify(job))
  const asks = checks(server.requests.slice(before))
  // Only the paraphrase and bob's tea went to the model: "about 2 hours" was entailed, "succeeded" contradicted, "9 and 11" invented.
  assert.equal(asks.length, 2, asks.join('\n---\n'))
  assert.ok(asks.some((ask) => /approval from Bob/.test(ask)))
  assert.ok(asks.some((ask) => /green tea/.test(ask)))
  assert.ok(!asks.some((ask) => /about 2 hours|succeeded|between 9 and 11/.test(ask)), 'no model call for what the rules decided')
  assert.deepEqual(job?.result?.validation, { entailed: 1, model: 2, 'rejected-contradicted': 1, 'rejected-facts': 1 })

  const ada = mind.backend.owned('user:ada').documents
  const duration = await ada.read('knowledge', 'staging-deploy-duration')
  assert.ok(duration, 'the fact written as "about 2 hours" from "two hours" is kept')
  assert.match(duration.body, /about 2 hours/)
  assert.equal(duration.frontmatter.validation, 'entailed')
  assert.equal(duration.frontmatter.confidence, 0.9, 'the seed\'s fast-path confidence')
  assert.equal(duration.frontmatter.validated, true)
  const approvals = await ada.read('knowledge', 'deploy-approvals')
  assert.equal(approvals?.frontmatter.validation, 'model')
  assert.equal(approvals?.frontmatter.confidence, 0.7, 'the model\'s approval keeps its confidence')
  assert.equal(await ada.read('knowledge', 'invoice-export'), null, 'the contradicted claim is not written')
  assert.equal(await ada.read('knowledge', 'deploy-window'), null, 'the invented window is not written')
  assert.deepEqual((await ada.list('knowledge')).map((ref) => ref.slug).sort(), ['deploy-approvals', 'staging-deploy-duration'])
  const bob = await mind.backend.owned('user:bob').documents.read('knowledge', 'tea')
  assert.equal(bob?.frontmatter.validation, 'model')
  assert.deepEqual(await mind.backend.documents.list('knowledge'), [], 'nothing of the users\' became the agent\'s')

  // The write's reason in ada's own log says which path approved it.
  const logged = (await mind.backend.owned('user:ada').activity.read({ types: ['memory_write'] })).filter((record) => record.meta?.action === 'consolidate')
  assert.ok(logged.some((record) => record.meta?.path === 'users/ada/knowledge/staging-deploy-duration.md' && /validation: entailed/.test(String(record.meta?.reason))), JSON.stringify(logged))
  // `history` shows it with the fact's lineage.
  assert.equal((await mind.history('knowledge/staging-deploy-duration.md', { user: 'ada' })).lineage.validation, 'entailed')
})

test('the run says which path decided each candidate, and why a rejected one was rejected', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: model })
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0, 'jobs.eager': false }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())
  await converse(mind, clock)

  const run = await mind.consolidate('daily')
  const learned = Object.fromEntries(run.knowledge.learned.map((item) => [item.title, [item.validation, item.confidence]]))
  assert.deepEqual(learned, { 'Staging deploy duration': ['entailed', 0.9], 'Deploy approvals': ['model', 0.7], Tea: ['model', 0.7] })
  const rejected = Object.fromEntries(run.knowledge.rejected.map((item) => [item.title, item]))
  assert.equal(rejected['Invoice export']?.validation, 'rejected-contradicted')
  assert.match(rejected['Invoice export']?.why ?? '', /nightly invoice export failed/)
  assert.equal(rejected['Deploy window']?.validation, 'rejected-facts')
  assert.match(rejected['Deploy window']?.why ?? '', /9/)
})

test('offline: nothing is written as if validated, the validation waits with its reason; a later run with a model takes the backlog on the fast path', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const offline = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'jobs.eager': false } })
  await converse(offline, clock)
  clock.advanceDays(1)
  await offline.maintain()
  const job = await dailyJob(offline)
  assert.equal(job?.status, 'skipped')
  assert.match(JSON.stringify(job?.result?.pending), /validation: no model configured/)
  assert.deepEqual(job?.result?.validation, {})
  assert.deepEqual(await offline.backend.owned('user:ada').documents.list('knowledge'), [], 'nothing written as if a model had')
  await offline.close()

  const server = await startFakeOpenAiServer({ onChat: model })
  t.after(() => server.close())
  clock.advanceDays(1)
  const online = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'jobs.eager': false } })
  t.after(() => online.close())
  await online.maintain()
  const duration = await online.backend.owned('user:ada').documents.read('knowledge', 'staging-deploy-duration')
  assert.equal(duration?.frontmatter.validation, 'entailed', 'the backlog day, on the fast path')
  assert.ok(!checks(server.requests).some((ask) => /about 2 hours|succeeded/.test(ask)))
  assert.equal(await online.backend.owned('user:ada').documents.read('knowledge', 'invoice-export'), null)
})
