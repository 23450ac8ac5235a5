/**
 * One agent turn end to end on a real temp home: a dispatcher with the error learner observing
 * and the pattern monitor listening, a tool that keeps failing, then the end-of-turn drain of
 * both into the real encoder — lessons tagged with the tool in lessons.md, rules in rules.md.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { z } from 'zod'
import { createErrorLearner } from '../src/memory/learning/error-learner.ts'
import { createPatternMonitor, knownRulesPredicate } from '../src/memory/learning/pattern-monitor.ts'
import { openRealMemory } from '../src/memory/learning/test-support/real-memory.ts'
import { createLlm } from '../src/llm/create-llm.ts'
import { startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { createToolDispatcher, type ToolDefinition } from '../src/tools/dispatcher.ts'

const publish: ToolDefinition<{ target: string; description?: string }> = {
  name: 'publish',
  description: 'publish an artifact',
  inputSchema: z.object({ target: z.string(), description: z.string().optional() }),
  async run({ target }) {
    throw new Error(`Refusing to publish from chat: no artifact for target='${target}'`)
  },
}

test('a failing turn teaches a tool lesson and two rules, each written once', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer()
  t.after(() => server.close())
  const memory = openRealMemory(tmp.home)
  t.after(memory.close)
  const llm = createLlm({ provider: 'openai-compatible', baseUrl: server.url, apiKey: undefined, model: 'm', fastModel: 'fast', timeoutMs: 2_000, maxRetries: 0 })
  const learner = createErrorLearner({ encoder: memory.encoder, llm })
  const monitor = createPatternMonitor({ mode: 'active' })
  const dispatcher = createToolDispatcher({ tools: [publish], observers: [learner], monitor })

  const nudges: string[] = []
  for (let round = 0; round < 3; round++) {
    const result = await dispatcher.execute('publish', { target: `report-${round}`, description: 'publish the report' }, { round })
    assert.equal(result.isError, true)
    nudges.push(...(result.nudges ?? []).map((n) => /\(self-check: (\w+)\)$/.exec(n)?.[1] ?? n))
  }
  assert.deepEqual(nudges, ['repeated_tool_error', 'repeated_error_signature'])
  assert.equal(learner.bufferedCount, 3)

  server.enqueue({ json: { lessons: [{ tool: 'publish', lesson: 'Create the artifact before calling publish; publishing from chat needs an existing artifact.', confidence: 'high' }] } })
  const [lessons, rules] = await Promise.all([
    learner.flush(),
    knownRulesPredicate([memory.global]).then((hasSimilarLesson) => monitor.flush({ encoder: memory.encoder, hasSimilarLesson })),
  ])
  assert.equal(lessons.kind, 'encoded')
  assert.equal(rules.kind, 'encoded')
  const lessonsMd = readFileSync(join(memory.memoryDir, 'lessons.md'), 'utf8')
  assert.match(lessonsMd, /- Create the artifact before calling publish;.*<!-- .*topic:publish/)
  const rulesMd = readFileSync(join(memory.memoryDir, 'rules.md'), 'utf8')
  assert.equal(rulesMd.match(/^- When /gm)?.length, 2)
  assert.equal((await memory.global.recallToolWisdom('publish')).length >= 1, true)
})
