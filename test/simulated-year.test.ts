/**
 * A simulated year (decisions 0030 and 0031): an agent lives through 365 days of sessions with two
 * users on a manual clock, a host calling `maintain()` every evening, against the fake model
 * server — and the same year offline. Asserted over the whole path (createMind → session → tools
 * → maintain): knowledge extracted from episodes and validated (a fabricated figure and an
 * unsupported claim rejected); a later episode supersedes the old fact, which keeps its history;
 * a procedure distilled, reconsolidated as it changes and kept to its five newest versions;
 * forgetting takes exactly the unprotected memories that stopped mattering and none of the
 * protected ones; every archived memory restores; a second run of each consolidation changes
 * nothing; neither user ever sees the other's memories. Offline, every step that needs no model
 * runs, and the others are pending with why.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { call } from './support/tool-calls.ts'

const DAY = 86_400_000
const START = Date.parse('2026-01-05T00:00:00Z')

const schemaName = (request: FakeChatRequest): string =>
  (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'

function asked(request: FakeChatRequest): string {
  const messages = (request.body as { messages?: Array<{ content?: unknown }> }).messages ?? []
  return messages.map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content))).join('\n')
}

/** The model of the year: episodes echo the conversation; consolidation answers as a careful model would, plus two hallucinations. */
function yearModel(request: FakeChatRequest): FakeChatStep {
  const text = asked(request)
  switch (schemaName(request)) {
    case 'episode':
      return { json: { title: 'Conversation', summary: [...text.matchAll(/MSG[<>] (?:to )?\w+: (.*?)(?= \[\d\d:\d\d\]|$)/gm)].map((m) => m[1]).join(' ').slice(0, 1500) || 'They talked.', resolved: [], newTasks: [] } }
    case 'knowledge': {
      const items: Array<{ title: string; content: string; sources: number[] }> = []
      const moved = /moved the staging server from (\w+) to (\w+)/.exec(text)
      if (moved) items.push({ title: 'Staging server', content: `The staging server runs on ${moved[2]} now, no longer on ${moved[1]}.`, sources: [1] })
      else if (/Our staging server runs on Kamal/.test(text)) {
        items.push({ title: 'Staging server', content: 'The staging server runs on Kamal.', sources: [1] })
        items.push({ title: 'Staging costs', content: 'The staging server costs 500 dollars a month.', sources: [1] })
        items.push({ title: 'Staging owners', content: 'The staging server is managed by the platform team.', sources: [1] })
      }
      const editor = /My favourite editor is (\w+)/.exec(text)
      if (editor) items.push({ title: 'Favourite editor', content: `The user's favourite editor is ${editor[1]}.`, sources: [1] })
      return { json: { items } }
    }
    case 'knowledge_check':
      return /platform team/.test(text) ? { json: { supported: false, reason: 'the episodes never say who manages it' } } : { json: { supported: true, reason: 'stated' } }
    case 'contradiction':
      if (/runs on Kamal/.test(text) && /runs on Fly/.test(text)) return { json: { relation: 'contradiction', strategy: 'supersede', reason: 'the staging server moved to Fly' } }
      if ((text.match(/favourite editor/g) ?? []).length >= 2) return { json: { relation: 'duplicate', reason: 'the same fact' } }
      return { json: { relation: 'unrelated', reason: 'different things' } }
    case 'procedures':
      if (/To deploy: first run the tests, then kamal deploy/.test(text)) return { json: { procedures: [{ title: 'Deploy staging', description: 'Deploy the staging server', steps: ['Run the tests', 'Run kamal deploy'] }] } }
      return { json: { procedures: [] } }
    case 'reconsolidation': {
      const existing = /Existing procedure \(deploy-staging\):\n([\s\S]*?)\n\nNew episodes:/.exec(text)
      const change = /now also (.+?)\./.exec(text)
      if (existing?.[1] && change?.[1] && !existing[1].includes(change[1])) {
        const steps = existing[1].split('\n').filter((line) => /^\d+\. /.test(line)).length
        return { json: { update: true, reason: `the deploy now also needs: ${change[1]}`, content: `${existing[1].trim()}\n${steps + 1}. ${change[1]}` } }
      }
      return { json: { update: false, reason: 'still true' } }
    }
    case 'merge':
      return { json: { content: (/### Text 1\n([\s\S]*?)(?:\n\n### Text|$)/.exec(text)?.[1] ?? 'merged').trim() } }
    case 'identity_facts':
      return { json: { facts: [] } }
    case 'consolidated_lessons':
      return { json: { rules: [], lessons: [] } }
    case 'lessons':
      return { json: { lessons: [] } }
    default:
      return { json: { summary: 'A summary.' } }
  }
}

const CHANGES = ['run the migrations', 'warm the cache', 'notify the channel', 'tag the release', 'check the health page', 'update the changelog', 'rotate the logs']

/** What ada says on day `d` (the agent's work with her), or undefined. */
function adaSays(d: number): string | undefined {
  if (d === 3) return 'Our staging server runs on Kamal. To deploy: first run the tests, then kamal deploy.'
  if (d === 100) return 'We moved the staging server from Kamal to Fly this morning.'
  const change = d % 40 === 0 && d / 40 <= CHANGES.length ? CHANGES[d / 40 - 1] : undefined
  if (change) return `The deploy procedure for the staging server changed: after kamal deploy, now also ${change}.`
  if (d % 7 === 1) return 'Which host does the staging server run on these days?'
  if (d % 7 === 4) return 'When is the standup, and in which room?'
  return `Today I reviewed pull request ${d} of the billing service.`
}

function bobSays(d: number): string {
  if (d === 5) return 'My favourite editor is Helix.'
  if (d % 7 === 2) return 'Remind me, what is my favourite editor?'
  return `I watered the garden and read chapter ${d} of my novel.`
}

async function turn(mind: Mind, session: string, user: string | undefined, message: string, act?: (tools: Awaited<ReturnType<ReturnType<Mind['session']>['begin']>>['tools']) => Promise<void>) {
  const s = mind.session(session, user ? { user } : {})
  const t = await s.begin(message)
  await act?.(t.tools)
  await s.end(t, 'Noted.')
  await s.close()
  return t
}

function memoryFiles(root: string): Map<string, string> {
  const files = new Map<string, string>()
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\/(knowledge|procedures|episodes|archive)\//.test(path)) files.set(relative(root, path), readFileSync(path, 'utf8'))
    }
  }
  walk(root)
  return files
}

interface Year {
  mind: Mind
  home: string
  clock: ManualClock
  forgotten: string[]
  dailyResults: Array<Record<string, unknown>>
}

async function liveAYear(t: { after(fn: () => unknown): void }, withModel: boolean): Promise<Year> {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  // The default embedder, as users have it (the tests' hashing embedder finds everything a little).
  delete tmp.env.ENGRAM_EMBED_MODEL
  const clock = new ManualClock(START + 8 * 3_600_000)
  let settings: Record<string, unknown> = { 'jobs.eager': false }
  if (withModel) {
    const server = await startFakeOpenAiServer({ onChat: yearModel })
    t.after(() => server.close())
    settings = { ...settings, 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'year-model', 'llm.maxRetries': 0 }
  }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())

  // Day 0: what a person and the agent wrote by hand.
  await turn(mind, 'ada-0', 'ada', 'Please keep some notes for me.', async (tools) => {
    for (const [path, content] of [
      ['knowledge/vpn-note.md', '# VPN\n\nThe old VPN password rotates quarterly.\n'],
      ['knowledge/backup-key.md', '# Backup key\n\n[IMPORTANT] The backup key is in the red safe.\n'],
      ['knowledge/standup.md', '# Standup\n\nStandup is at 9:30 in room Atlas.\n'],
    ]) assert.ok(!(await call(tools, 'write_memory_file', { path, content })).isError)
  })
  await mind.backend.owned('user:ada').documents.write('knowledge', 'pinned-note', { protected: true, created_at: new Date(START).toISOString() }, '# Pinned\n\nThe office wifi is called Lighthouse.\n')
  await turn(mind, 'agent-0', undefined, 'Record the flaky deploy procedure and how it went.', async (tools) => {
    assert.ok(!(await call(tools, 'write_memory_file', { path: 'procedures/flaky-deploy.md', content: '---\ndescription: Deploy through the old jump host\n---\n# Flaky deploy\n\n1. ssh to the jump host\n2. run the old script\n' })).isError)
    for (let i = 0; i < 3; i++) assert.ok(!(await call(tools, 'report_procedure_outcome', { procedure: 'flaky-deploy', success: false, note: 'the jump host timed out' })).isError)
  })

  const forgotten: string[] = []
  const dailyResults: Array<Record<string, unknown>> = []
  for (let d = 1; d <= 365; d++) {
    clock.set(START + d * DAY + 9 * 3_600_000)
    const ada = adaSays(d)
    if (ada) {
      await turn(mind, `ada-${d}`, 'ada', ada, d === 50 ? async (tools) => {
        assert.ok(!(await call(tools, 'write_memory_file', { path: 'knowledge/daily-standup.md', content: '# Daily standup\n\nThe standup is at 9:30 in room Atlas.\n' })).isError)
      } : undefined)
    }
    clock.advance(3_600_000)
    await turn(mind, `bob-${d}`, 'bob', bobSays(d), d % 7 === 2 ? async (tools) => {
      await call(tools, 'search_memory', { query: 'favourite editor' })
    } : undefined)
    clock.set(START + d * DAY + 23 * 3_600_000)
    await mind.maintain()
    const month = new Date(clock.now()).toISOString().slice(0, 7)
    for (const job of await mind.backend.lifecycle.jobs(mind.agent, { kind: 'consolidation-monthly', limit: 1 })) {
      if (job.key === `consolidation-monthly:${month}` && job.finishedAt?.startsWith(new Date(clock.now()).toISOString().slice(0, 10))) forgotten.push(...(await forgottenPaths(tmp.home)))
    }
    const [daily] = await mind.backend.lifecycle.jobs(mind.agent, { kind: 'consolidation-daily', limit: 1 })
    if (daily?.result) dailyResults.push(daily.result)
  }
  return { mind, home: tmp.home, clock, forgotten: [...new Set(forgotten)], dailyResults }
}

/** Every file in an archive/forgotten/ knowledge or procedure folder, as a memory path. */
async function forgottenPaths(home: string): Promise<string[]> {
  return [...memoryFiles(home).keys()].filter((path) => /archive\/forgotten\/(knowledge|procedure)\//.test(path))
}

async function assertIsolation(mind: Mind): Promise<void> {
  const bob = await turn(mind, 'bob-check', 'bob', 'What runs the staging server, where is the backup key, when is standup?')
  // The results, without the line that repeats the query.
  const bobSearch = (await call(bob.tools, 'search_memory', { query: 'staging server Kamal Fly backup key standup Atlas VPN' })).text.split('\n').slice(1).join('\n')
  assert.doesNotMatch(`${bob.system}\n${bobSearch}`, /Kamal|Fly\b|red safe|Atlas|Lighthouse|users\/ada/, 'nothing of ada\'s reaches bob')
  const ada = await turn(mind, 'ada-check', 'ada', 'What is the favourite editor?')
  const adaSearch = (await call(ada.tools, 'search_memory', { query: 'favourite editor Helix garden novel' })).text.split('\n').slice(1).join('\n')
  assert.doesNotMatch(`${ada.system}\n${adaSearch}`, /Helix|garden|novel|users\/bob/, 'nothing of bob\'s reaches ada')
}

async function assertSecondRunsChangeNothing(mind: Mind, home: string): Promise<void> {
  for (const period of ['daily', 'weekly', 'monthly'] as const) {
    await mind.consolidate(period)
    const once = memoryFiles(home)
    await mind.consolidate(period)
    assert.deepEqual(memoryFiles(home), once, `a second ${period} run changes nothing`)
  }
}

async function assertEveryArchivedRestores(mind: Mind, home: string): Promise<number> {
  let restored = 0
  for (const path of memoryFiles(home).keys()) {
    const match = /users\/(\w+)\/archive\/(forgotten|merged)\/(knowledge|procedure)\/([^/]+)\.md$/.exec(path) ?? /agents\/default\/archive\/(forgotten|merged)\/(knowledge|procedure)\/([^/]+)\.md$/.exec(path)
    if (!match) continue
    const user = match.length === 5 ? match[1] : undefined
    const memoryPath = `${user ? `users/${user}/` : ''}archive/${match.at(-3)}/${match.at(-2)}/${match.at(-1)}.md`
    const outcome = await mind.restore(memoryPath, user ? { user } : {})
    assert.equal(outcome.action, 'restored', memoryPath)
    restored++
  }
  return restored
}

test('a simulated year with a model: learn, validate, supersede, reconsolidate, keep five versions, forget what stopped mattering, restore, keep users apart', async (t) => {
  const { mind, home, forgotten } = await liveAYear(t, true)
  const ada = mind.backend.owned('user:ada').documents
  const bob = mind.backend.owned('user:bob').documents

  // Knowledge extracted and validated; the hallucinations rejected.
  const knowledge = await Promise.all((await ada.list('knowledge')).map(async (ref) => ada.read('knowledge', ref.slug)))
  const staging = knowledge.filter((doc) => /staging server runs on/.test(doc?.body ?? ''))
  assert.equal(staging.length, 2, staging.map((doc) => doc?.slug).join(', '))
  assert.ok(!knowledge.some((doc) => /500 dollars|platform team/.test(doc?.body ?? '')), 'the fabricated figure and the unsupported claim were rejected')
  const old = staging.find((doc) => /Kamal\.$/m.test(doc?.body ?? ''))
  const successor = staging.find((doc) => /Fly now/.test(doc?.body ?? ''))
  assert.equal(old?.frontmatter.validated, true)
  // "Our staging server runs on Kamal" says it outright: the seed's fast path (decision 0048).
  assert.equal(old?.frontmatter.confidence, 0.9)
  assert.equal(old?.frontmatter.validation, 'entailed')
  // The later episode superseded it; it stays, with its history.
  assert.equal(old?.frontmatter.superseded_by, successor?.slug)
  assert.equal(successor?.frontmatter.supersedes, old?.slug)
  const history = await mind.history(`knowledge/${old?.slug}.md`, { user: 'ada' })
  assert.ok(history.validity?.until, JSON.stringify(history))
  assert.ok((await bob.list('knowledge')).some((ref) => ref.slug === 'favourite-editor'), 'bob\'s fact is his')

  // The procedure: distilled, reconsolidated at each change, its versions kept to five.
  const deploy = await ada.read('procedure', 'deploy-staging')
  assert.equal(deploy?.frontmatter.auto_distilled, true)
  assert.equal(deploy?.frontmatter.version, 1 + CHANGES.length)
  for (const change of CHANGES) assert.match(deploy?.body ?? '', new RegExp(change))
  assert.ok((await ada.versions('procedure', 'deploy-staging')).length <= 5)
  assert.ok(existsSync(join(home, 'agents/default/users/ada/archive/forgotten/versions/procedure')), 'older versions moved, not deleted')

  // Forgetting: exactly what stopped mattering, never what is protected.
  assert.ok(forgotten.some((path) => /users\/ada\/archive\/forgotten\/knowledge\/vpn-note\.md$/.test(path)), forgotten.join('\n'))
  assert.ok(forgotten.some((path) => /archive\/forgotten\/procedure\/flaky-deploy\.md$/.test(path)), forgotten.join('\n'))
  for (const kept of ['backup-key', 'pinned-note', 'deploy-staging', 'favourite-editor']) assert.ok(!forgotten.some((path) => path.includes(`/${kept}.md`)), `${kept} is never forgotten`)
  // The duplicate standup notes were merged.
  assert.equal((await ada.list('knowledge')).filter((ref) => /standup/.test(ref.slug)).length, 1)

  await assertIsolation(mind)
  await assertSecondRunsChangeNothing(mind, home)
  const restored = await assertEveryArchivedRestores(mind, home)
  assert.ok(restored >= 3, `restored ${restored}`)
})

test('the same year offline: every step that needs no model runs, the others are pending with why', async (t) => {
  const { mind, home, forgotten, dailyResults } = await liveAYear(t, false)
  const ada = mind.backend.owned('user:ada').documents
  assert.ok(dailyResults.some((result) => /knowledge extraction: no model configured/.test(JSON.stringify(result.pending))), 'the model steps are pending, with why')
  assert.ok(!(await ada.list('knowledge')).some((ref) => /staging/.test(ref.slug)), 'nothing is written as if a model had')
  assert.equal(await ada.read('procedure', 'deploy-staging'), null)
  assert.ok(forgotten.some((path) => /vpn-note\.md$/.test(path)), forgotten.join('\n'))
  assert.ok(forgotten.some((path) => /flaky-deploy\.md$/.test(path)), forgotten.join('\n'))
  for (const kept of ['backup-key', 'pinned-note']) assert.ok(!forgotten.some((path) => path.includes(`/${kept}.md`)))
  const standup = (await ada.list('knowledge')).filter((ref) => /standup/.test(ref.slug))
  assert.equal(standup.length, 1, 'duplicates merged by similarity')
  assert.equal((await ada.read('knowledge', standup[0]?.slug ?? ''))?.frontmatter.merge_method, 'similarity')
  await assertIsolation(mind)
  await assertSecondRunsChangeNothing(mind, home)
  assert.ok((await assertEveryArchivedRestores(mind, home)) >= 3)
})
