import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { z } from 'zod'
import { createLlm } from '../../llm/create-llm.ts'
import { createNoneLlm } from '../../llm/none-llm.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../../testing/fake-openai-server.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { createToolDispatcher, type ToolDefinition } from '../../tools/dispatcher.ts'
import { createErrorLearner } from './error-learner.ts'
import { openRealMemory } from './test-support/real-memory.ts'

let server: FakeOpenAiServer
before(async () => {
  server = await startFakeOpenAiServer()
})
after(() => server.close())

const llmOf = () =>
  createLlm({ provider: 'openai-compatible', baseUrl: server.url, apiKey: 'k', model: 'planner', fastModel: 'fast', timeoutMs: 2_000, maxRetries: 0 }, { retryBaseDelayMs: 1 })

const readCsv: ToolDefinition<{ path: string; description?: string }> = {
  name: 'read_csv',
  description: 'read a csv',
  inputSchema: z.object({ path: z.string(), description: z.string().optional() }),
  async run({ path }) {
    if (path.includes('mixed')) return { isError: true, text: 'DtypeWarning: Columns (3) have mixed types. Specify dtype option on import or set low_memory=False.' }
    if (path.includes('warn')) return { text: 'loaded', warning: 'FutureWarning: parse_dates is deprecated' }
    return { text: 'loaded 10 rows' }
  },
}

function setup(t: { after(fn: () => void): void }, llm = llmOf()) {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const memory = openRealMemory(tmp.home)
  t.after(memory.close)
  const learner = createErrorLearner({ encoder: memory.encoder, llm })
  const dispatcher = createToolDispatcher({ tools: [readCsv], observers: [learner] })
  return { tmp, memory, learner, dispatcher }
}

test('cheap path: clean results only bump a counter — no buffer, no model call, no file', async (t) => {
  server.reset()
  const { learner, dispatcher, tmp } = setup(t)
  for (let i = 0; i < 5; i++) await dispatcher.execute('read_csv', { path: 'ok.csv' })
  assert.equal(learner.executedCount, 5)
  assert.equal(learner.bufferedCount, 0)
  assert.deepEqual(await learner.flush(), { kind: 'empty' })
  assert.equal(server.requests.length, 0)
  assert.ok(!existsSync(join(tmp.home, 'agents')), 'nothing was written under the home')
})

test('failures are buffered per turn and one batched call encodes lessons tagged with the tool', async (t) => {
  server.reset()
  const { learner, dispatcher, memory } = setup(t)
  await dispatcher.execute('read_csv', { path: 'mixed.csv', description: 'load the sales data' })
  await dispatcher.execute('read_csv', { path: 'ok.csv' })
  await dispatcher.execute('read_csv', { path: 'warn.csv' })
  assert.equal(learner.bufferedCount, 2)
  server.enqueue({
    json: {
      lessons: [
        { tool: 'read_csv', lesson: 'For CSV files with mixed column types, pass low_memory=False to pd.read_csv.', confidence: 'high' },
        { tool: 'made_up_tool', lesson: 'This lesson is about a tool that did not fail.', confidence: 'medium' },
      ],
    },
  })
  const result = await learner.flush()
  assert.equal(result.kind, 'encoded')
  if (result.kind !== 'encoded') return
  assert.equal(result.report.saved.length, 1)
  assert.equal(result.discarded[0]?.tool, 'made_up_tool')
  assert.equal(server.requests.length, 1, 'one batched call for the whole turn')
  const prompt = JSON.stringify(server.requests[0]?.body)
  assert.match(prompt, /Intended: load the sales data/)
  assert.match(prompt, /FutureWarning/)
  assert.equal(server.requests[0]?.body.model, 'fast', 'the fast tier')
  const lessons = readFileSync(join(memory.memoryDir, 'lessons.md'), 'utf8')
  assert.match(lessons, /^- For CSV files with mixed column types, pass low_memory=False to pd\.read_csv\. <!-- .*topic:read_csv.*-->$/m)
  assert.match(lessons, /source:consolidation/)
  const wisdom = await memory.global.recallToolWisdom('read_csv')
  assert.equal(wisdom.length, 1)
  assert.equal(learner.bufferedCount, 0)
})

test('model failures, invalid answers and lessons only about tools that did not fail write nothing and drop the buffer', async (t) => {
  server.reset()
  const { learner, dispatcher, memory } = setup(t)
  const offTarget = { json: { lessons: [{ tool: 'made_up_tool', lesson: 'This lesson is about a tool that did not fail.', confidence: 'high' }] } }
  for (const step of [{ fail: { status: 500 } }, { invalidJson: true as const }, { json: { lessons: [{ tool: 'read_csv' }] } }, offTarget]) {
    await dispatcher.execute('read_csv', { path: 'mixed.csv' })
    server.enqueue(step)
    const result = await learner.flush()
    assert.equal(result.kind, 'failed', JSON.stringify(step))
    if (result.kind === 'failed') assert.equal(result.dropped, 1)
    assert.equal(learner.bufferedCount, 0)
  }
  assert.ok(!existsSync(join(memory.memoryDir, 'lessons.md')))
})

test('offline: flush is a typed skip; reset drops the buffer', async (t) => {
  const { learner, dispatcher, tmp } = setup(t, createNoneLlm())
  await dispatcher.execute('read_csv', { path: 'mixed.csv' })
  assert.deepEqual(await learner.flush(), { kind: 'skipped', reason: 'no LLM configured', dropped: 1 })
  await dispatcher.execute('read_csv', { path: 'mixed.csv' })
  learner.reset()
  assert.equal(learner.bufferedCount, 0)
  assert.deepEqual(await learner.flush(), { kind: 'empty' })
  assert.deepEqual(readdirSync(tmp.home).filter((n) => n === 'agents'), [])
})
