/**
 * The error learner (Anton's cerebellum): supervised error correction at the scale of one tool
 * call. It watches executions through the dispatcher's pre/post hooks, buffers the calls that
 * failed or warned, and at the end of the turn asks the fast model once, for the whole buffer,
 * what generalisable lessons the failures teach. Lessons go through the one `Encoder`, tagged
 * with the tool, so they reach that tool's description as tool wisdom in later turns.
 *
 * Cheap path: a clean result costs one counter increment — no allocation, no I/O, no model call.
 *
 * The buffer belongs to one turn. At its end the session takes it (`drain`) and queues it as a
 * durable job, so the post-mortem (`learnFromFailures`) survives the process that saw the
 * failures. Offline (no LLM) and on a failed or invalid model answer it returns a typed result and
 * writes nothing, so no memory file can be corrupted; the job tries a failed model call again later.
 */
import { z } from 'zod'
import type { Engram, EngramScope } from '../../core/engram.ts'
import { describeError, EngramError } from '../../core/errors.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { EncodeReport, Encoder } from '../engrams/encoder.ts'
import type { ToolCallObservation, ToolObserver, ToolResultObservation } from './tool-observation.ts'

/** One failed or warning call, as kept for the end-of-turn pass. */
export interface BufferedFailure {
  tool: string
  intent?: string
  /** The input, serialised and cut to 500 characters. */
  input: string
  outcome: 'error' | 'warning' | 'killed'
  /** The error or warning text, cut to 2000 characters. */
  message: string
  round?: number
}

export type ErrorLearnerFlushResult =
  | { kind: 'empty' }
  | { kind: 'skipped'; reason: 'no LLM configured'; dropped: number }
  /** The model failed or answered off the mark; `code` is the error code when it failed. */
  | { kind: 'failed'; reason: string; code?: string; dropped: number }
  | { kind: 'encoded'; lessons: Engram[]; discarded: Array<{ tool: string; lesson: string; reason: string }>; report: EncodeReport }

export interface ErrorLearner extends ToolObserver {
  onPreExecute(call: ToolCallObservation): void
  onPostExecute(call: ToolCallObservation, result: ToolResultObservation): void
  /** End of turn: one batched model call over the buffer, lessons encoded, buffer cleared. */
  flush(options?: { signal?: AbortSignal }): Promise<ErrorLearnerFlushResult>
  /**
   * Take the buffer (and clear it) without learning yet: the session queues the failures as a
   * durable job, and `learnFromFailures` runs them in whichever process claims it.
   */
  drain(): BufferedFailure[]
  /** Drop the buffer without learning (a cancelled turn). */
  reset(): void
  readonly bufferedCount: number
  /** Calls seen by the pre-execute hook since creation. */
  readonly executedCount: number
  /** Failures not buffered because the turn's buffer was full. */
  readonly overflowCount: number
}

export interface ErrorLearnerOptions {
  encoder: Encoder
  llm: Llm
  /** Where lessons go (default global). Pass `project` when lessons should stay with a project. */
  scope?: EngramScope
  /** At most this many failures per turn are kept (default 20); the rest are counted. */
  maxBuffered?: number
  timeoutMs?: number
}

const INPUT_LIMIT = 500
const MESSAGE_LIMIT = 2000
const MAX_LESSONS = 5

const lessonsSchema = z.object({
  lessons: z
    .array(
      z.object({
        tool: z.string().min(1).describe('The exact name of the tool the lesson is about (one of the tools that failed).'),
        lesson: z
          .string()
          .min(10)
          .max(300)
          .describe('One generalisable sentence that would have prevented the failure next time. Not a description of what happened; no one-off names, ids or paths.'),
        confidence: z.enum(['high', 'medium']).describe('high only when the failure output makes the cause unambiguous.'),
      }),
    )
    .max(MAX_LESSONS)
    .describe('Lessons worth remembering; an empty list when the failures teach nothing general (a typo, a transient network error).'),
})

const SYSTEM = [
  'You review failed tool calls from one turn of an AI agent, post-mortem.',
  'For each call you see what the agent intended and what actually happened.',
  'Where intent and outcome diverge for a reason that will recur, write a short lesson the agent should follow next time.',
  'Skip transient failures and one-off mistakes. Never invent causes the output does not show.',
].join(' ')

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text
}

function serialise(input: unknown): string {
  try {
    return JSON.stringify(input) ?? String(input)
  } catch {
    return String(input)
  }
}

/** The post-mortem prompt: one block per failed call. Exported for tests and inspection. */
export function formatPostMortem(failures: readonly BufferedFailure[]): string {
  return failures
    .map((failure, i) =>
      [
        `### Call ${i + 1}: ${failure.tool} (${failure.outcome})`,
        `Intended: ${failure.intent ?? '(not stated)'}`,
        `Input: ${failure.input}`,
        `What happened: ${failure.message}`,
      ].join('\n'),
    )
    .join('\n\n')
}

/** Creates the learner. Register it as an observer of the tool dispatcher. */
export function createErrorLearner(options: ErrorLearnerOptions): ErrorLearner {
  const maxBuffered = options.maxBuffered ?? 20
  let buffer: BufferedFailure[] = []
  let executed = 0
  let overflow = 0

  const learner: ErrorLearner = {
    onPreExecute() {
      executed++
    },
    onPostExecute(call, result) {
      // The cheap path: most calls succeed, and a clean one must cost nothing.
      if (!result.isError && !result.killed && !result.warning?.trim()) return
      if (buffer.length >= maxBuffered) {
        overflow++
        return
      }
      buffer.push({
        tool: call.tool,
        input: cut(serialise(call.input), INPUT_LIMIT),
        outcome: result.killed ? 'killed' : result.isError ? 'error' : 'warning',
        message: cut(result.isError || result.killed ? result.text : (result.warning ?? ''), MESSAGE_LIMIT),
        ...(call.intent !== undefined ? { intent: call.intent } : {}),
        ...(call.round !== undefined ? { round: call.round } : {}),
      })
    },
    async flush(flushOptions = {}) {
      return learnFromFailures(learner.drain(), options, flushOptions)
    },
    drain() {
      const failures = buffer
      buffer = []
      overflow = 0
      return failures
    },
    reset() {
      buffer = []
      overflow = 0
    },
    get bufferedCount() {
      return buffer.length
    },
    get executedCount() {
      return executed
    },
    get overflowCount() {
      return overflow
    },
  }
  return learner
}

/**
 * The post-mortem of one turn's failures: one batched call to the fast model, lessons tagged with
 * the tool and encoded. Offline, or when the model fails or answers out of schema, nothing is
 * written and the result says why.
 */
export async function learnFromFailures(
  failures: readonly BufferedFailure[],
  options: Pick<ErrorLearnerOptions, 'encoder' | 'llm' | 'scope' | 'timeoutMs'>,
  flushOptions: { signal?: AbortSignal } = {},
): Promise<ErrorLearnerFlushResult> {
  const scope = options.scope ?? 'global'
  if (failures.length === 0) return { kind: 'empty' }
  if (!options.llm.available) return { kind: 'skipped', reason: 'no LLM configured', dropped: failures.length }

  let answer: z.infer<typeof lessonsSchema>
  try {
    answer = await options.llm.generateObject({
      schema: lessonsSchema,
      name: 'lessons',
      system: SYSTEM,
      messages: [{ role: 'user', content: formatPostMortem(failures) }],
      tier: 'fast',
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(flushOptions.signal ? { signal: flushOptions.signal } : {}),
    })
  } catch (error) {
    if (EngramError.is(error)) return { kind: 'failed', reason: `${error.code}: ${describeError(error)}`, code: error.code, dropped: failures.length }
    return { kind: 'failed', reason: describeError(error), dropped: failures.length }
  }

  // A lesson is only kept when it is about a tool that actually failed this turn: the tag
  // decides which tool description it is appended to.
  const tools = new Map(failures.map((failure) => [failure.tool.toLowerCase(), failure.tool]))
  const lessons: Engram[] = []
  const discarded: Array<{ tool: string; lesson: string; reason: string }> = []
  for (const item of answer.lessons) {
    const tool = tools.get(item.tool.trim().toLowerCase())
    const text = item.lesson.replace(/\s+/g, ' ').trim()
    if (!tool) {
      discarded.push({ tool: item.tool, lesson: text, reason: 'not one of the tools that failed this turn' })
      continue
    }
    lessons.push({ text, kind: 'lesson', scope, confidence: item.confidence, topic: tool, tool, source: 'consolidation' })
  }
  // Lessons only about tools that did not fail answer another question than the one asked: as
  // much a failed answer as one out of schema (tried again; the failures are not learned from).
  if (lessons.length === 0 && discarded.length > 0) return { kind: 'failed', reason: `every lesson (${discarded.length}) named a tool that did not fail this turn`, dropped: failures.length }
  const report = lessons.length > 0 ? await options.encoder.encode(lessons) : { saved: [], duplicates: [], pending: [], suppressed: [], rejected: [] }
  return { kind: 'encoded', lessons, discarded, report }
}
