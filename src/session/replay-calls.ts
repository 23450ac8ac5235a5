/**
 * A turn's tool calls replayed from the activity log through a fresh error learner and pattern
 * monitor, on a dispatcher whose tools answer what they answered then: the failures and pattern
 * events the turn's end would have queued, for a turn whose process died before ending it
 * (memory/lifecycle/call-turns.ts, decision 0045). Nothing runs again; only the observers see the
 * calls a second time.
 */
import { z } from 'zod'
import type { Encoder } from '../memory/engrams/encoder.ts'
import { createErrorLearner } from '../memory/learning/error-learner.ts'
import type { ReplayedCalls } from '../memory/lifecycle/call-turns.ts'
import { createPatternMonitor, type PatternMonitorMode } from '../memory/learning/pattern-monitor.ts'
import type { Llm } from '../llm/contracts.ts'
import type { ActivityRecord } from '../storage/contracts.ts'
import { createToolDispatcher, type ToolDefinition, type ToolResult } from '../tools/dispatcher.ts'

/** The input as it was logged: JSON text (cut at 500 characters, then only text). */
function loggedInput(text: unknown): unknown {
  if (typeof text !== 'string') return {}
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function loggedResult(record: ActivityRecord): ToolResult {
  const meta = record.meta ?? {}
  return {
    text: typeof meta.result === 'string' ? meta.result : '',
    ...(meta.ok === false ? { isError: true } : {}),
    ...(meta.killed === true ? { killed: true } : {}),
    ...(typeof meta.warning === 'string' ? { warning: meta.warning } : {}),
  }
}

/** Replays `calls` (one turn's `tool_use` records, oldest first) as the session's dispatcher saw them. */
export async function replayLoggedCalls(calls: readonly ActivityRecord[], options: { mode: PatternMonitorMode; encoder: Encoder; llm: Llm }): Promise<ReplayedCalls> {
  const learner = createErrorLearner({ encoder: options.encoder, llm: options.llm })
  const monitor = createPatternMonitor({ mode: options.mode })
  let answer: ToolResult = { text: '' }
  const names = [...new Set(calls.map((call) => call.tool ?? ''))].filter((name) => name !== '')
  const tools: Array<ToolDefinition<unknown>> = names.map((name) => ({ name, description: name, inputSchema: z.unknown(), run: async () => answer }))
  const dispatcher = createToolDispatcher({ tools, observers: [learner], monitor })
  for (const call of calls) {
    if (!call.tool) continue
    answer = loggedResult(call)
    await dispatcher.execute(call.tool, loggedInput(call.meta?.input))
  }
  return { failures: learner.drain(), events: monitor.atEndOfTurn().length > 0 ? monitor.events : [] }
}
