/**
 * Sleep replay (Anton's consolidator, hippocampal replay during slow-wave sleep): after a working
 * session ends, decide cheaply whether it is worth reviewing, and if so replay it in compressed
 * form — one line per step — to the fast model, which extracts durable rules and lessons. The
 * engrams come back with `source: consolidation`, a scope and a confidence, for the caller to hand
 * to the `Encoder` (whose gate queues medium confidence in copilot mode).
 */
import { z } from 'zod'
import type { Engram } from '../../core/engram.ts'
import { describeError, EngramError } from '../../core/errors.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { ActivityRecord } from '../../storage/contracts.ts'

/** One step of a working session (a scratchpad cell, a tool call, a command). */
export interface SessionStep {
  /** What the step meant to do. */
  description: string
  status: 'ok' | 'error' | 'warning' | 'cancelled'
  /** What ran (code, a command, arguments); a snippet is shown for failed steps. */
  input?: string
  output?: string
  error?: string
}

const STEP_DESCRIPTION_INPUT = 200
const STEP_TEXT = 500

/**
 * The steps of a session rebuilt from its `tool_use` events (they carry the input, the result,
 * `ok`, `killed` and `warning`), so replay needs nothing kept in the memory of the process that ran
 * the session: any process can replay it at its boundary. Other events are ignored.
 */
export function stepsFromActivity(records: readonly ActivityRecord[]): SessionStep[] {
  return records
    .filter((record) => record.type === 'tool_use')
    .map((record): SessionStep => {
      const meta = record.meta ?? {}
      const input = typeof meta.input === 'string' ? meta.input : ''
      const result = typeof meta.result === 'string' ? meta.result : ''
      const status: SessionStep['status'] = meta.killed === true ? 'cancelled' : meta.ok === false ? 'error' : typeof meta.warning === 'string' ? 'warning' : 'ok'
      const failed = status === 'error' || status === 'cancelled'
      return {
        description: `${record.tool ?? 'tool'} ${input.slice(0, STEP_DESCRIPTION_INPUT)}`.trim(),
        status,
        ...(input !== '' ? { input: input.slice(0, STEP_TEXT) } : {}),
        output: (status === 'warning' ? `${result}\n${String(meta.warning)}` : result).slice(0, STEP_TEXT),
        ...(failed ? { error: result.slice(0, STEP_TEXT) } : {}),
      }
    })
}

/** Sessions at least this long are replayed even when nothing failed: enough steps to mine. */
export const REPLAY_MIN_LONG_SESSION = 5
/** Sessions shorter than this are never replayed: too short to learn from. */
export const REPLAY_MIN_STEPS = 2

export type ReplayDecision = { replay: true; reason: 'error' | 'cancelled' | 'long' } | { replay: false; reason: 'too short' | 'uneventful' }

/** The seed's heuristics, no model call: a failure, a cancellation or ≥5 steps; never under 2. */
export function replayDecision(steps: readonly SessionStep[]): ReplayDecision {
  if (steps.length < REPLAY_MIN_STEPS) return { replay: false, reason: 'too short' }
  if (steps.some((step) => step.status === 'error')) return { replay: true, reason: 'error' }
  if (steps.some((step) => step.status === 'cancelled')) return { replay: true, reason: 'cancelled' }
  if (steps.length >= REPLAY_MIN_LONG_SESSION) return { replay: true, reason: 'long' }
  return { replay: false, reason: 'uneventful' }
}

const LINE_PART = 160
const SNIPPET = 240

function flat(text: string, limit: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > limit ? `${line.slice(0, limit)}…` : line
}

function firstLine(text: string | undefined): string {
  const line = (text ?? '').split('\n').find((l) => l.trim() !== '') ?? ''
  return flat(line, LINE_PART)
}

/**
 * The session compressed to one line per step: number, status, description, first line of output
 * (or of the error). Failed steps also get a one-line snippet of their input.
 */
export function compressSteps(steps: readonly SessionStep[]): string {
  return steps
    .map((step, i) => {
      const outcome = step.status === 'error' || step.status === 'cancelled' ? firstLine(step.error ?? step.output) : firstLine(step.output)
      let line = `${i + 1}. [${step.status}] ${flat(step.description, LINE_PART)}${outcome ? ` → ${outcome}` : ''}`
      if ((step.status === 'error' || step.status === 'cancelled') && step.input?.trim()) line += ` | input: ${flat(step.input, SNIPPET)}`
      return line
    })
    .join('\n')
}

const replaySchema = z.object({
  rules: z
    .array(
      z.object({
        text: z.string().min(8).max(300).describe('A behavioural rule, one sentence, without "Always"/"Never" (the kind says it): e.g. "Call progress() before long API calls".'),
        kind: z.enum(['always', 'never', 'when']).describe('always: do this; never: do not do this; when: "If X → do Y".'),
        scope: z.enum(['global', 'project']).describe('project when the rule only holds for this codebase or data; else global.'),
        confidence: z.enum(['high', 'medium']).describe('high only when the session shows it unambiguously.'),
      }),
    )
    .max(5)
    .describe('Behavioural patterns worth following in future sessions.'),
  lessons: z
    .array(
      z.object({
        text: z.string().min(8).max(300).describe('A factual lesson, one sentence: e.g. "CoinGecko free tier rate-limits at ~50 req/min".'),
        topic: z.string().max(60).optional().describe('A short topic slug such as "pandas" or "api-coingecko".'),
        scope: z.enum(['global', 'project']),
        confidence: z.enum(['high', 'medium']),
      }),
    )
    .max(5)
    .describe('Facts learned about tools, data or services.'),
})

const SYSTEM = [
  'You replay a finished working session of an AI agent, one line per step, and extract what is worth remembering.',
  'Extract rules (behavioural patterns) and lessons (facts) that will help in future sessions.',
  'Only what the session shows; nothing about this one task that will not recur. Empty lists are fine.',
].join(' ')

export type ReplayResult =
  | { kind: 'extracted'; engrams: Engram[]; compressed: string }
  | { kind: 'skipped'; reason: 'no LLM configured' | 'not worth replaying'; decision?: ReplayDecision }
  | { kind: 'failed'; reason: string }

/**
 * Replay a session and extract engrams (rules and lessons, `source: consolidation`). Skips with a
 * typed reason when the session is not worth replaying or no model is configured; a failed or
 * invalid model answer is `failed`, never partial output.
 */
export async function replayAndExtract(steps: readonly SessionStep[], llm: Llm, options: { signal?: AbortSignal; timeoutMs?: number; force?: boolean } = {}): Promise<ReplayResult> {
  const decision = replayDecision(steps)
  if (!options.force && !decision.replay) return { kind: 'skipped', reason: 'not worth replaying', decision }
  if (!llm.available) return { kind: 'skipped', reason: 'no LLM configured' }
  const compressed = compressSteps(steps)
  let answer: z.infer<typeof replaySchema>
  try {
    answer = await llm.generateObject({
      schema: replaySchema,
      name: 'consolidated_lessons',
      system: SYSTEM,
      messages: [{ role: 'user', content: `Session (${steps.length} steps):\n${compressed}` }],
      tier: 'fast',
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    })
  } catch (error) {
    return { kind: 'failed', reason: EngramError.is(error) ? `${error.code}: ${describeError(error)}` : describeError(error) }
  }
  const engrams: Engram[] = [
    ...answer.rules.map((rule): Engram => ({ text: flat(rule.text, 300), kind: rule.kind, scope: rule.scope, confidence: rule.confidence, source: 'consolidation' })),
    ...answer.lessons.map((lesson): Engram => ({
      text: flat(lesson.text, 300),
      kind: 'lesson',
      scope: lesson.scope,
      confidence: lesson.confidence,
      source: 'consolidation',
      ...(lesson.topic?.trim() ? { topic: lesson.topic.trim() } : {}),
    })),
  ]
  return { kind: 'extracted', engrams, compressed }
}
