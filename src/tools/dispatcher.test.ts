import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { z } from 'zod'
import { ManualClock } from '../core/clock.ts'
import { EngramError } from '../core/errors.ts'
import { createPatternMonitor } from '../memory/learning/pattern-monitor.ts'
import type { ToolCallObservation, ToolResultObservation } from '../memory/learning/tool-observation.ts'
import { createSkillStore } from '../memory/skills/skill-store.ts'
import { createFileLocks } from '../storage/files/locks.ts'
import { makeTempHome } from '../testing/temp-home.ts'
import { createToolDispatcher, type ToolDefinition } from './dispatcher.ts'
import { createRecallSkillTool } from './recall-skill-tool.ts'

const echo: ToolDefinition<{ text: string }> = {
  name: 'echo',
  description: 'echo',
  inputSchema: z.object({ text: z.string() }),
  async run({ text }) {
    if (text === 'boom') throw new Error('kaboom')
    if (text === 'engram') throw new EngramError({ code: 'not_found', category: 'user', message: 'nothing here', fix: 'look elsewhere' })
    return { text }
  },
}

const workspace: ToolDefinition<{ name: string; code: string; description?: string }> = {
  name: 'workspace',
  description: 'run code in a named workspace',
  inputSchema: z.object({ name: z.string(), code: z.string().min(1), description: z.string().optional() }),
  workspace: {
    nameOf: (input) => (input as { name?: string }).name,
    payloadOf: (input) => (input as { code?: string }).code,
  },
  async run({ code }) {
    return code.includes('fail') ? { isError: true, text: "NameError: name 'df' is not defined" } : { text: 'ok' }
  },
}

test('observers see every call; their errors never break the tool call', async () => {
  const seen: Array<[string, ToolCallObservation, ToolResultObservation?]> = []
  const errors: string[] = []
  const dispatcher = createToolDispatcher({
    tools: [echo],
    observers: [
      { onPreExecute: () => { throw new Error('observer broke') } },
      { onPreExecute: (call) => seen.push(['pre', call]), onPostExecute: (call, result) => seen.push(['post', call, result]) },
    ],
    onObserverError: (error, where) => errors.push(`${where}: ${(error as Error).message}`),
  })
  const result = await dispatcher.execute('echo', { text: 'hi', description: 'say hi' })
  assert.deepEqual(result, { text: 'hi' })
  assert.equal(seen[0]?.[0], 'pre')
  assert.equal(seen[0]?.[1].intent, 'say hi')
  assert.equal(seen[1]?.[2]?.isError, false)
  assert.deepEqual(errors, ['onPreExecute: observer broke'])
})

test('thrown errors, invalid input and unknown tools become readable isError results', async () => {
  const dispatcher = createToolDispatcher({ tools: [echo] })
  const thrown = await dispatcher.execute('echo', { text: 'boom' })
  assert.equal(thrown.isError, true)
  assert.match(thrown.text, /Error: kaboom\nFix: /)
  const typed = await dispatcher.execute('echo', { text: 'engram' })
  assert.equal(typed.text, 'nothing here\nFix: look elsewhere')
  const invalid = await dispatcher.execute('echo', { text: 3 })
  assert.equal(invalid.isError, true)
  assert.match(invalid.text, /Invalid input for echo: text: .*\nFix: call echo again/)
  const unknown = await dispatcher.execute('nope', {})
  assert.match(unknown.text, /no tool named "nope"[\s\S]*call one of: echo/)
  // Each carries its code, message and fix apart from the text (decision 0062).
  assert.deepEqual(typed.error, { code: 'not_found', message: 'nothing here', fix: 'look elsewhere' })
  assert.deepEqual(thrown.error, { code: 'internal', message: 'Error: kaboom', fix: "check the tool's input; if it looks right, this is a bug in the tool." })
  assert.equal(invalid.error?.code, 'invalid_argument')
  assert.equal(invalid.error?.fix, 'call echo again with input matching its schema.')
  assert.deepEqual(unknown.error, { code: 'not_found', message: 'There is no tool named "nope".', fix: 'call one of: echo.' })
})

test('the dispatcher emits the pattern monitor events, workspace ones included', async () => {
  const monitor = createPatternMonitor({ mode: 'active' })
  const dispatcher = createToolDispatcher({ tools: [workspace], monitor })
  const results = [
    await dispatcher.execute('workspace', { name: 'build_pres', code: 'x = 1' }, { round: 0 }),
    await dispatcher.execute('workspace', { name: 'write_html', code: 'fail' }, { round: 1 }),
    await dispatcher.execute('workspace', { name: 'pres1', code: '' }, { round: 2 }),
  ]
  assert.deepEqual(monitor.events.map((e) => e.kind), [
    'tool_call', 'workspace_call', 'workspace_result', 'tool_result',
    'tool_call', 'workspace_call', 'workspace_result', 'tool_result',
    'tool_call', 'workspace_empty_input', 'tool_result',
  ])
  // Active mode: each result carries what fired with its call, each detector once per turn.
  assert.deepEqual(results.map((result) => (result.nudges ?? []).map((n) => /\(self-check: (\w+)\)$/.exec(n)?.[1])), [
    [],
    ['name_switch'],
    ['oversized_input', 'repeated_tool_error'],
  ])
  assert.match(results[2]?.nudges?.[0] ?? '', /^Never: Send more than ~5 KB in one tool input: .* \(self-check: oversized_input\)$/)
  assert.deepEqual(monitor.atRoundN(), [], 'one nudge per detector per turn')
  const passive = createToolDispatcher({ tools: [workspace], monitor: createPatternMonitor({ mode: 'passive' }) })
  for (const name of ['a', 'b', 'c']) assert.equal((await passive.execute('workspace', { name, code: '' })).nudges, undefined)
})

test('recall_skill resolves typos, credits the resolved label, and lists labels when nothing is close', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const store = createSkillStore({ dir: join(tmp.home, 'skills'), clock: new ManualClock(), locks: createFileLocks({ dir: join(tmp.home, '.locks') }) })
  await store.save({ label: 'csv_summary', name: 'CSV Summary', whenToUse: 'Explore a CSV file.', declarative: '1. Load it.' })
  await store.save({ label: 'deploy_staging', name: 'Deploy', whenToUse: 'Deploy to staging.', declarative: '1. Build.' })
  const dispatcher = createToolDispatcher({ tools: [createRecallSkillTool(store)] })

  const exact = await dispatcher.execute('recall_skill', { label: 'csv_summary' })
  assert.match(exact.text, /^# Skill csv_summary\nName: CSV Summary\n[\s\S]*## Procedure\n1\. Load it\./)
  const typo = await dispatcher.execute('recall_skill', { label: 'csv_sumary' })
  assert.equal(typo.isError, undefined)
  assert.match(typo.text, /no skill is labelled "csv_sumary"; this is the closest match, "csv_summary"/)
  assert.deepEqual(typo.data, { requested: 'csv_sumary', label: 'csv_summary', resolvedFrom: 'csv_sumary', recommended: 2 })
  assert.equal((await store.load('csv_summary'))?.stats.stage_1.recommended, 2)
  assert.equal((await store.load('deploy_staging'))?.stats.stage_1.recommended, 0)

  const unknown = await dispatcher.execute('recall_skill', { label: 'send_weekly_email' })
  assert.equal(unknown.isError, true)
  assert.match(unknown.text, /No skill is labelled "send_weekly_email"\.\nFix: Use one of the saved skills: csv_summary, deploy_staging\./)
})
