/**
 * Lifecycle state lives in the store, not in a process (DESIGN principle 9, decision 0022), with
 * real separate processes: an agent process runs sessions for two users and exits without doing
 * their background work; later `engram maintain` (the real CLI, as cron runs it) does every piece
 * of it exactly once — episodes, state update, resolution propagation, sleep replay, identity
 * extraction — and a second `maintain` does nothing. Two `maintain` processes at once still do
 * each piece once, and a process killed while it runs a job leaves it to the next one.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, beforeEach, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { ManualClock } from '../src/core/clock.ts'
import { parseEpisodeSections } from '../src/memory/episodes/episode-format.ts'
import type { JobOutcome } from '../src/memory/lifecycle/job-runner.ts'
import type { MaintenanceReport } from '../src/mind.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { type FakeChatRequest, type FakeChatStep, type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
const child = join(root, 'src/memory/lifecycle/test-support/sessions-child.ts')

let server: FakeOpenAiServer
/** Identity answers wait for this to be false (the kill test holds the first one). */
let holdIdentity = false

function schemaName(request: { body: unknown }): string {
  return (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
}

function answer(request: FakeChatRequest): FakeChatStep {
  switch (schemaName(request)) {
    case 'episode': {
      const u1 = JSON.stringify(request.messages).includes('4411')
      return {
        json: u1
          ? { title: 'Refund for a double charge', summary: 'Ada found invoice 4411 charged twice; the agent refunded it.', resolved: ['invoice 4411 charged twice'], newTasks: ['send the monthly report on Friday'] }
          : { title: 'Office move status', summary: 'The user asked about the office move; it is planned for May.', resolved: [], newTasks: [] },
      }
    }
    case 'consolidated_lessons':
      return { json: { rules: [{ text: 'Look up an invoice before answering about its charges', kind: 'always', scope: 'global', confidence: 'high' }], lessons: [] } }
    case 'identity_facts':
      return holdIdentity ? { hang: true } : { json: { facts: ['Name: Ada Lovelace', 'Role: handles the invoices'] } }
    // Daily consolidation of the day's episodes: nothing durable in them.
    case 'procedures':
      return { json: { procedures: [] } }
    case 'knowledge':
      return { json: { items: [] } }
    case 'reconsolidation':
      return { json: { update: false, reason: 'still true' } }
    default:
      return { fail: { status: 500, body: { error: { message: `unexpected request ${schemaName(request)}` } } } }
  }
}

function requestsBy(name: string): number {
  return server.requests.filter((request) => request.path === '/v1/chat/completions' && schemaName(request) === name).length
}

function llmEnv(tmp: TempHome): Record<string, string> {
  return {
    ...tmp.env,
    ENGRAM_HOME: tmp.home,
    ENGRAM_LLM_PROVIDER: 'openai-compatible',
    ENGRAM_LLM_BASE_URL: server.url,
    ENGRAM_LLM_MODEL: 'fake-model',
    ENGRAM_LLM_MAX_RETRIES: '0',
  }
}

/** Process A: sessions for two users, no LLM, work left queued (the serverless model), then exit. */
async function agentProcess(tmp: TempHome, start: Date): Promise<{ turns: Record<string, number[]> }> {
  const { stdout } = await run(process.execPath, [child, tmp.home, start.toISOString(), 'two-users'], {
    env: { ...tmp.env, ENGRAM_JOBS_EAGER: 'false' },
    cwd: root,
  })
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}')
}

async function maintainProcess(tmp: TempHome): Promise<MaintenanceReport> {
  const { stdout } = await run(process.execPath, [bin, 'maintain', '--json'], { env: llmEnv(tmp), cwd: root })
  const envelope = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { ok: boolean; data: MaintenanceReport }
  assert.equal(envelope.ok, true, stdout)
  return envelope.data
}

/** The episode sections of every tree: the agent's and each user's (decision 0017). */
function episodeSections(tmp: TempHome): Array<{ session: string | undefined; heading: string }> {
  const users = existsSync(join(tmp.home, 'agents/default/users')) ? readdirSync(join(tmp.home, 'agents/default/users')) : []
  const dirs = [join(tmp.home, 'agents/default/episodes'), ...users.map((user) => join(tmp.home, 'agents/default/users', user, 'episodes'))]
  return dirs.filter((dir) => existsSync(dir)).flatMap((dir) =>
    readdirSync(dir).flatMap((file) =>
      parseEpisodeSections(readFileSync(join(dir, file), 'utf8'))
        .filter((section) => section.heading !== '')
        .map((section) => ({ session: section.marker?.session, heading: section.heading })),
    ),
  )
}

function memoryFile(tmp: TempHome, name: string): string {
  const path = join(tmp.home, 'agents/default', name)
  return existsSync(path) ? readFileSync(path, 'utf8') : ''
}

/** A user's one profile (shared/users/<user>.md). */
function profileOf(tmp: TempHome, user: string): string {
  const path = join(tmp.home, 'shared/users', `${user}.md`)
  return existsSync(path) ? readFileSync(path, 'utf8') : ''
}

function ran(jobs: JobOutcome[]): string[] {
  return jobs.map((job) => `${job.kind}${job.session ? `:${job.session}` : ''}:${job.status}`).sort()
}

/** Everything the queued work of `agentProcess` must leave behind, once each. */
function assertWorkDoneOnce(tmp: TempHome): void {
  assert.equal(requestsBy('episode'), 2, 'one episode summary per session')
  assert.equal(requestsBy('consolidated_lessons'), 1, 'sleep replay of the working session (five tool steps), not of the short one')
  assert.equal(requestsBy('identity_facts'), 1, 'identity extraction at u1\'s fifth turn, none for u2 (two turns)')
  assert.equal(requestsBy('text') + requestsBy('lessons'), 0, 'nothing else called the model')

  assert.deepEqual(episodeSections(tmp).map((section) => section.session).sort(), ['chat-u1', 'chat-u2'])
  // u1's sessions: u1's current task, rules and profile (decision 0017).
  assert.match(memoryFile(tmp, 'users/u1/state/current_task.md'), /- \[ \] send the monthly report on Friday/)
  const resolutions = readFileSync(join(tmp.home, 'shared/resolutions.jsonl'), 'utf8').trim().split('\n')
  assert.equal(resolutions.length, 1)
  assert.match(resolutions[0] ?? '', /invoice 4411 charged twice/)
  assert.equal(memoryFile(tmp, 'users/u1/memory/rules.md').match(/Look up an invoice before answering/g)?.length, 1, 'the replayed rule, once')
  assert.equal(profileOf(tmp, 'u1').match(/Name: Ada Lovelace/g)?.length, 1, 'the identity fact, once')
}

before(async () => {
  server = await startFakeOpenAiServer({ onChat: answer })
})
after(async () => {
  await server.close()
})
beforeEach(() => {
  server.reset()
  holdIdentity = false
})

test('an agent process exits with its work queued; a later `engram maintain` does each piece once, and a second one nothing', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  // Process A ran two hours ago (its manual clock), so its sessions are long idle for the CLI's real clock.
  const a = await agentProcess(tmp, new Date(Date.now() - 2 * 60 * 60_000))
  assert.deepEqual(a.turns, { 'chat-u1': [1, 2, 3, 4, 5], 'chat-u2': [1, 2] }, 'turn numbers come from the store, though every turn had a new Session')
  assert.equal(server.requests.length, 0, 'process A called no model')

  const first = await maintainProcess(tmp)
  assert.deepEqual(first.closed.map((entry) => [entry.session, entry.user, entry.reason]).sort(), [
    ['chat-u1', 'u1', 'idle'],
    ['chat-u2', 'u2', 'idle'],
  ])
  assert.deepEqual(first.boundaries.map((outcome) => [outcome.session, outcome.kind]).sort(), [
    ['chat-u1', 'recorded'],
    ['chat-u2', 'recorded'],
  ])
  assert.deepEqual(ran(first.jobs), [
    // The day's consolidation, the week's integration and the month's forgetting (decisions 0030, 0031): queued by the first maintain of the period, once.
    'consolidation-daily:skipped',
    'consolidation-monthly:skipped',
    'consolidation-weekly:skipped',
    'identity:chat-u1:done',
    'immediate-encoding:chat-u1:done',
    'immediate-encoding:chat-u2:done',
    // No procedure was shown in either session: nothing to count.
    'procedure-outcomes:chat-u1:skipped',
    'procedure-outcomes:chat-u2:skipped',
    'sleep-replay:chat-u1:done',
    'sleep-replay:chat-u2:skipped',
    // Each user's one session shares no subject with an earlier one: no thread (decision 0080).
    'thread-gathering:chat-u1:skipped',
    'thread-gathering:chat-u2:skipped',
  ])
  assert.match(first.jobs.find((job) => job.kind === 'sleep-replay' && job.session === 'chat-u2')?.reason ?? '', /not worth replaying: too short/)
  assertWorkDoneOnce(tmp)

  const second = await maintainProcess(tmp)
  assert.deepEqual([second.closed, second.boundaries, second.jobs, second.compaction], [[], [], [], []], 'nothing is left to do')
  assertWorkDoneOnce(tmp)
})

test('two `engram maintain` processes at once still do each piece of work exactly once', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  await agentProcess(tmp, new Date(Date.now() - 2 * 60 * 60_000))
  const reports = await Promise.all([maintainProcess(tmp), maintainProcess(tmp)])
  const jobs = reports.flatMap((report) => report.jobs)
  assert.deepEqual(ran(jobs), [
    'consolidation-daily:skipped',
    'consolidation-monthly:skipped',
    'consolidation-weekly:skipped',
    'identity:chat-u1:done',
    'immediate-encoding:chat-u1:done',
    'immediate-encoding:chat-u2:done',
    // No procedure was shown in either session: nothing to count.
    'procedure-outcomes:chat-u1:skipped',
    'procedure-outcomes:chat-u2:skipped',
    'sleep-replay:chat-u1:done',
    'sleep-replay:chat-u2:skipped',
    // Each user's one session shares no subject with an earlier one: no thread (decision 0080).
    'thread-gathering:chat-u1:skipped',
    'thread-gathering:chat-u2:skipped',
  ])
  assert.equal(new Set(jobs.map((job) => job.id)).size, jobs.length, 'no job ran in both')
  assert.equal(reports.flatMap((report) => report.closed).length, 2, 'each session was closed by one of them')
  assertWorkDoneOnce(tmp)
  assert.deepEqual((await maintainProcess(tmp)).jobs, [])
})

test('a process killed while its background job runs leaves the job to the next process, once its lease expires', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  holdIdentity = true
  const start = new Date('2026-03-02T09:00:00.000Z')
  const agent = spawn(process.execPath, [child, tmp.home, start.toISOString(), 'five-turns-then-wait'], { env: llmEnv(tmp), cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  agent.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<void>((resolveExit) => agent.on('exit', () => resolveExit()))
  // The fifth turn queued identity extraction; the process claimed it and is waiting for the model.
  for (let waited = 0; requestsBy('identity_facts') === 0; waited += 20) {
    assert.ok(waited < 20_000, `the agent process never started identity extraction: ${stderr}`)
    await sleep(20)
  }
  agent.kill('SIGKILL')
  await exited

  holdIdentity = false
  // The next process starts on the same store; until the dead process's lease expires, the job is not its to take.
  const clock = new ManualClock(new Date(start.getTime() + 5 * 60_000))
  const mind = await openMindInternals({ home: tmp.home, env: llmEnv(tmp), clock })
  t.after(() => mind.close())
  const running = await mind.backend.lifecycle.jobs('default', { kind: 'identity' })
  assert.deepEqual(
    running.map((job) => [job.status, job.attempts]),
    [['running', 1]],
  )
  assert.deepEqual((await mind.maintain()).jobs.filter((job) => job.kind === 'identity'), [], 'the lease still holds')

  clock.advance(20 * 60_000)
  const report = await mind.maintain()
  assert.deepEqual(
    report.jobs.filter((job) => job.kind === 'identity').map((job) => job.status),
    ['done'],
  )
  const [identity] = await mind.backend.lifecycle.jobs('default', { kind: 'identity' })
  assert.deepEqual([identity?.status, identity?.attempts], ['done', 2])
  assert.equal(profileOf(tmp, 'u1').match(/Name: Ada Lovelace/g)?.length, 1)
  assert.deepEqual((await mind.maintain()).jobs, [])
})
