/**
 * A dropped extraction is a warning (decision 0028): when the error learner's model fails or answers
 * out of schema, the turn's failed tool calls are not learned from — the job is tried again (the
 * lifecycle's runner), and when its last attempt fails too, every next turn and `maintain()` are
 * told, in whatever process they run, how many calls of which tools were dropped and why. Through
 * createMind → session → a failing tool of the host, against the fake model server.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { renderStatus } from '../src/interfaces/cli/commands/status/index.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'

const deploy: ToolDefinition<{ target: string }> = {
  name: 'deploy',
  description: 'Deploy a build to a target.',
  inputSchema: z.object({ target: z.string() }),
  async run({ target }) {
    return { isError: true, text: `deploy failed: no target named ${target}` }
  },
}

const schemaName = (request: FakeChatRequest): string =>
  (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'

/** A fake model whose answers to the error learner come from `lessons`, one per call; everything else is answered well. */
async function modelAnswering(lessons: FakeChatStep[]) {
  return startFakeOpenAiServer({
    onChat: (request) => {
      switch (schemaName(request)) {
        case 'lessons':
          return lessons.shift() ?? { fail: { status: 500 } }
        case 'episode':
          return { json: { title: 'Deploys', summary: 'We tried to deploy.', resolved: [], newTasks: [] } }
        case 'consolidated_lessons':
          return { json: { rules: [], lessons: [] } }
        default:
          return { json: { summary: 'A summary.' } }
      }
    },
  })
}

async function failingTurn(mind: Mind, clock: ManualClock): Promise<void> {
  const session = mind.session('s1', { user: 'ada', tools: [deploy] })
  const turn = await session.begin('Please deploy the build to staging.')
  for (const target of ['staging', 'stagging']) await session.execute('deploy', { target })
  clock.advance(10_000)
  await session.end(turn, 'The deploy failed twice.')
  await mind.idle()
}

test('the model answers out of schema every time: the job is tried three times, then every next turn and maintain() are told what was dropped', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await modelAnswering([{ json: { lessons: 'none' } }, { invalidJson: true }, { json: { lessons: [{ tool: 'deploy' }] } }])
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const settings = { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0 }
  const mind = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => mind.close())

  await failingTurn(mind, clock)
  // The first attempt failed in the background: the next turn hears of the model's failure.
  const second = await mind.session('s1', { user: 'ada', tools: [deploy] }).begin('And now?')
  assert.ok(second.warnings.some((warning) => /LLM answered with invalid output .*\(lessons\)/.test(warning)), second.warnings.join('\n'))
  // It backs off: engram status says when it is tried next, and the next tick does not call the model again.
  const backingOff = (await mind.status()).jobs
  const retry = backingOff.retrying.find((job) => job.kind === 'error-learner')
  assert.ok(retry && retry.attempts === 1 && retry.maxAttempts === 3 && retry.nextAttempt > clock.now().toISOString(), JSON.stringify(backingOff))
  assert.match(renderStatus(await mind.status(), false), /retrying error-learner +attempt 1 of 3 failed; next not before /)
  assert.doesNotMatch(JSON.stringify((await mind.status()).jobs), /Answer began|"none"/, 'no excerpt of the model\'s answer')
  assert.equal((await mind.maintain()).jobs.filter((job) => job.kind === 'error-learner').length, 0, 'not tried again before its time')
  // Two more attempts, after the runner's back-off.
  const reports = []
  for (const wait of [61_000, 11 * 60_000]) {
    clock.advance(wait)
    reports.push(await mind.maintain())
  }
  const outcomes = reports.flatMap((report) => report.jobs.filter((job) => job.kind === 'error-learner').map((job) => job.status))
  assert.deepEqual(outcomes, ['retrying', 'failed'])
  const failed = (await mind.status()).jobs.failed.find((job) => job.kind === 'error-learner')
  assert.equal(failed?.attempts, 3, 'status lists the job that failed for good')
  assert.match(renderStatus(await mind.status(), false), /failed error-learner +after 3 attempt/)
  assert.match(reports[0]?.warnings.join('\n') ?? '', /lessons from 2 failed calls of deploy not learned yet \(tried again later\)/)
  const dropped = reports[1]?.failures.find((group) => group.kind === 'dropped')
  assert.ok(dropped, JSON.stringify(reports[1]?.failures))
  assert.equal(dropped.title, 'Lessons not learned from failed tool calls')
  assert.equal(dropped.message, '2 failed calls of deploy; the model failed on all 3 attempts (llm_invalid_output).')
  assert.match(dropped.fix, /llm\.fastModel \/ ENGRAM_LLM_FAST_MODEL/)
  assert.doesNotMatch(JSON.stringify(dropped), /staging|no target named/, 'no word of what the user or the tool said')

  // Another process's next turn is told as well (the report lives in the home, not in this process).
  const other = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings })
  t.after(() => other.close())
  const next = await other.session('s2', { user: 'bob' }).begin('Hello.')
  assert.ok(
    next.warnings.some((warning) => warning.startsWith('Lessons not learned from failed tool calls at 2026-03-02 09:12 UTC (lessons): 2 failed calls of deploy; the model failed on all 3 attempts (llm_invalid_output). Fix: ')),
    next.warnings.join('\n'),
  )
  // Not something the agent did: priming leaves it out of recent activity.
  assert.doesNotMatch(next.systemParts.primed ?? '', /not learned/)
})

test('the model fails once, then answers: the retried job learns the lesson and nothing is dropped', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const lesson = 'Check that the deploy target exists before deploying to it.'
  const server = await modelAnswering([{ fail: { status: 503 } }, { json: { lessons: [{ tool: 'deploy', lesson, confidence: 'high' }] } }])
  t.after(() => server.close())
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({
    home: tmp.home,
    env: tmp.env,
    ignoreConfigFile: true,
    clock,
    settings: { 'llm.provider': 'openai-compatible', 'llm.baseUrl': server.url, 'llm.model': 'fake-model', 'llm.maxRetries': 0 },
  })
  t.after(() => mind.close())
  await failingTurn(mind, clock)
  clock.advance(61_000)
  const report = await mind.maintain()
  assert.deepEqual(report.jobs.filter((job) => job.kind === 'error-learner').map((job) => job.status), ['done'])
  assert.equal(report.failures.find((group) => group.kind === 'dropped'), undefined)
  const turn = await mind.session('s1', { user: 'ada', tools: [deploy] }).begin('Deploy again?')
  assert.match(turn.tools.find((tool) => tool.name === 'deploy')?.description ?? '', new RegExp(lesson.replace(/\./g, '\\.')))
})
