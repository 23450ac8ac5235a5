import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createLlm } from '../../llm/create-llm.ts'
import { createNoneLlm } from '../../llm/none-llm.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../../testing/fake-openai-server.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { compressSteps, replayAndExtract, replayDecision, type SessionStep, stepsFromActivity } from './sleep-replay.ts'
import { openRealMemory } from './test-support/real-memory.ts'

let server: FakeOpenAiServer
before(async () => {
  server = await startFakeOpenAiServer()
})
after(() => server.close())
const llmOf = () => createLlm({ provider: 'openai-compatible', baseUrl: server.url, apiKey: undefined, model: 'planner', fastModel: 'fast', timeoutMs: 2_000, maxRetries: 0 })

const ok = (description: string): SessionStep => ({ description, status: 'ok', output: 'done' })

test("should_replay's heuristics", () => {
  assert.equal(replayDecision([]).replay, false)
  assert.deepEqual(replayDecision([{ description: 'x', status: 'error', error: 'boom' }]), { replay: false, reason: 'too short' })
  assert.deepEqual(replayDecision([ok('a'), { description: 'b', status: 'error', error: 'boom' }]), { replay: true, reason: 'error' })
  assert.deepEqual(replayDecision([ok('a'), { description: 'b', status: 'cancelled' }]), { replay: true, reason: 'cancelled' })
  assert.deepEqual(replayDecision([ok('a'), ok('b'), ok('c'), ok('d')]), { replay: false, reason: 'uneventful' })
  assert.deepEqual(replayDecision([ok('a'), ok('b'), ok('c'), ok('d'), ok('e')]), { replay: true, reason: 'long' })
})

test('steps are rebuilt from the tool_use events of the activity log', () => {
  const steps = stepsFromActivity([
    { ts: '2026-03-02T09:00:00.000Z', ref: 'activity/2026-03-02.jsonl#L1', type: 'message_received', content: 'plot the prices', session: 's' },
    { ts: '2026-03-02T09:00:01.000Z', ref: 'activity/2026-03-02.jsonl#L2', type: 'tool_use', tool: 'python', session: 's', meta: { input: '{"code":"df.plot()"}', result: 'ok', ok: true } },
    { ts: '2026-03-02T09:00:02.000Z', ref: 'activity/2026-03-02.jsonl#L3', type: 'tool_use', tool: 'python', session: 's', meta: { input: '{"code":"pd.read_csv(x)"}', result: 'FileNotFoundError: x', ok: false } },
    { ts: '2026-03-02T09:00:03.000Z', ref: 'activity/2026-03-02.jsonl#L4', type: 'tool_use', tool: 'shell', session: 's', meta: { input: 'sleep 999', result: 'killed after 60 s', ok: false, killed: true } },
    { ts: '2026-03-02T09:00:04.000Z', ref: 'activity/2026-03-02.jsonl#L5', type: 'tool_use', tool: 'shell', session: 's', meta: { input: 'ls -l', result: 'a b', ok: true, warning: 'deprecated flag' } },
  ])
  assert.deepEqual(
    steps.map((step) => [step.description, step.status, step.error]),
    [
      ['python {"code":"df.plot()"}', 'ok', undefined],
      ['python {"code":"pd.read_csv(x)"}', 'error', 'FileNotFoundError: x'],
      ['shell sleep 999', 'cancelled', 'killed after 60 s'],
      ['shell ls -l', 'warning', undefined],
    ],
  )
  assert.deepEqual(replayDecision(steps), { replay: true, reason: 'error' })
})

test('compression: one line per step, a code snippet for failed steps', () => {
  const text = compressSteps([
    { description: 'fetch prices', status: 'ok', output: '\n200 rows\nmore' },
    { description: 'parse dates', status: 'error', input: 'pd.to_datetime(df["d"])\nprint(1)', error: 'ParserError: Unknown string format: n/a' },
  ])
  assert.deepEqual(text.split('\n'), [
    '1. [ok] fetch prices → 200 rows',
    '2. [error] parse dates → ParserError: Unknown string format: n/a | input: pd.to_datetime(df["d"]) print(1)',
  ])
})

test('replayAndExtract: rules and lessons with scope and confidence, then through the encoder', async (t) => {
  server.reset()
  const steps: SessionStep[] = [ok('fetch page 1'), { description: 'fetch page 2', status: 'error', error: 'HTTP 429 Too Many Requests' }]
  server.enqueue({
    json: {
      rules: [{ text: 'If fetching paginated API data → async + progress() between pages', kind: 'when', scope: 'global', confidence: 'medium' }],
      lessons: [{ text: 'CoinGecko free tier rate-limits at ~50 req/min', topic: 'api-coingecko', scope: 'global', confidence: 'high' }],
    },
  })
  const result = await replayAndExtract(steps, llmOf())
  assert.equal(result.kind, 'extracted')
  if (result.kind !== 'extracted') return
  assert.deepEqual(result.engrams, [
    { text: 'If fetching paginated API data → async + progress() between pages', kind: 'when', scope: 'global', confidence: 'medium', source: 'consolidation' },
    { text: 'CoinGecko free tier rate-limits at ~50 req/min', kind: 'lesson', scope: 'global', confidence: 'high', source: 'consolidation', topic: 'api-coingecko' },
  ])
  assert.match(JSON.stringify(server.requests[0]?.body), /2\. \[error\] fetch page 2 → HTTP 429/)
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const memory = openRealMemory(tmp.home)
  t.after(memory.close)
  const report = await memory.encoder.encode(result.engrams)
  assert.equal(report.saved.length, 2)
  assert.match(readFileSync(join(memory.memoryDir, 'lessons.md'), 'utf8'), /CoinGecko free tier rate-limits at ~50 req\/min <!-- .*topic:api-coingecko/)
})

test('offline, not worth replaying, and model failures are typed results with nothing extracted', async () => {
  server.reset()
  const steps: SessionStep[] = [ok('a'), { description: 'b', status: 'error', error: 'x' }]
  assert.deepEqual(await replayAndExtract(steps, createNoneLlm()), { kind: 'skipped', reason: 'no LLM configured' })
  const short = await replayAndExtract([ok('a')], llmOf())
  assert.equal(short.kind, 'skipped')
  assert.equal(server.requests.length, 0)
  server.enqueue({ fail: { status: 503 } }, { json: { rules: [{ text: 'x' }], lessons: [] } }, { hang: true })
  assert.equal((await replayAndExtract(steps, llmOf())).kind, 'failed')
  assert.equal((await replayAndExtract(steps, llmOf())).kind, 'failed')
  const hung = await replayAndExtract(steps, llmOf(), { timeoutMs: 200 })
  assert.equal(hung.kind, 'failed')
  if (hung.kind === 'failed') assert.match(hung.reason, /timeout/)
})
