/**
 * The work after a turn, queued durably with everything it needs: the error learner's post-mortem
 * (the turn's failures), the pattern monitor's rules (the turn's events), identity extraction
 * (every 5th turn of an (agent, user), counted in the store, with the user's recent messages),
 * fact extraction from the turn's user message when `memory.extractFromTurns` is on (decision 0066)
 * and incremental compaction of the conversation. The process that ends the turn runs them at once in
 * the background; if it dies first, the next `maintain()` anywhere does.
 */
import { ownerOfUser } from '../../core/owner.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { JobInput, QueuedJob } from '../../storage/contracts.ts'
import type { ContextProvider, ContextSession } from '../context/provider.ts'
import { hasCompactor } from '../context/provider.ts'
import type { DeclarativeMemory } from '../engrams/declarative-memory.ts'
import { type ConversationMessage, IDENTITY_EVERY_TURNS } from '../engrams/identity.ts'
import { type BufferedFailure, learnFromFailures } from '../learning/error-learner.ts'
import { type PatternEvent, isEventKind } from '../learning/pattern-events.ts'
import { createPatternMonitor, knownRulesPredicate, PATTERN_MONITOR_MODES, type PatternMonitorMode } from '../learning/pattern-monitor.ts'
import type { ExtractionMessage } from '../extraction/extract.ts'
import type { ValueHistoryDeps } from '../extraction/value-history.ts'
import type { DroppedWork } from '../failures.ts'
import type { ViewerScope } from '../view.ts'
import type { JobHandler, JobHandlerResult } from './job-runner.ts'

export const ERROR_LEARNER_JOB = 'error-learner'
export const PATTERN_MONITOR_JOB = 'pattern-monitor'
export const IDENTITY_JOB = 'identity'
export const CONTEXT_COMPACTION_JOB = 'context-compaction'
export const FACT_EXTRACTION_JOB = 'fact-extraction'

/** The store's counter of turns per (agent, user) that paces identity extraction. */
export const IDENTITY_COUNTER = 'identity-turns'

/** Identity extraction reads the user's messages of the turns since its last pass, each cut to this. */
const IDENTITY_MESSAGE_CHARS = 2_000

/** Whether the `count`-th turn of an (agent, user) is one identity extraction runs at. */
export function identityDue(count: number): boolean {
  return count > 0 && count % IDENTITY_EVERY_TURNS === 0
}

/** What the end of a turn hands over. */
export interface TurnWork {
  sessionId: string
  user: string | undefined
  turn: number
  /** The turn's failed or warning tool calls (the error learner's buffer). */
  failures: BufferedFailure[]
  /** The turn's pattern-monitor events (only when a detector fired) and the monitor's mode. */
  patterns: { mode: PatternMonitorMode; events: readonly PatternEvent[] }
  /** The conversation passed its compaction threshold. */
  compactContext: boolean
  /** The stored id of the message that opened the turn (a library or HTTP turn; a calls-only turn has none). */
  messageId?: number
  /** A calls-only turn: the user's message it answered, when the host said it (MCP's `primed_context`); not stored. */
  said?: string
  /** A calls-only turn: the procedures and skills shown for it (MCP's `primed_context`), credited when the turn bore them out. */
  shown?: ReadonlyArray<{ kind: string; source: string }>
}

/**
 * The jobs a turn's end queues. `identity`, when this turn is one identity extraction runs at:
 * the (agent, user) turn count and the user's messages of their latest turns, oldest first.
 */
export function turnJobs(work: TurnWork, identity: { count: number; messages: string[] } | undefined, at: string, facts?: string[]): Array<Omit<JobInput, 'agent'>> {
  const jobs: Array<Omit<JobInput, 'agent'>> = []
  const turnKey = `${work.sessionId}:${work.turn}`
  const common = { session: work.sessionId, ...(work.user !== undefined ? { user: work.user } : {}), turn: work.turn }
  // The offline work first (jobs run in the order queued): a process stopped while the model
  // answers the post-mortem has still learned the turn's rules.
  if (work.patterns.mode !== 'off' && work.patterns.events.length > 0) {
    jobs.push({ kind: PATTERN_MONITOR_JOB, key: `${PATTERN_MONITOR_JOB}:${turnKey}`, payload: { ...common, mode: work.patterns.mode, events: work.patterns.events }, runAfter: at })
  }
  if (work.failures.length > 0) {
    jobs.push({ kind: ERROR_LEARNER_JOB, key: `${ERROR_LEARNER_JOB}:${turnKey}`, payload: { ...common, failures: work.failures }, runAfter: at })
  }
  if (identity) {
    const messages: ConversationMessage[] = identity.messages.map((content) => ({ role: 'user', content: content.slice(0, IDENTITY_MESSAGE_CHARS) }))
    jobs.push({
      kind: IDENTITY_JOB,
      key: `${IDENTITY_JOB}:${work.user ?? ''}:${identity.count}`,
      payload: { ...common, count: identity.count, messages },
      runAfter: at,
    })
  }
  if (facts && facts.length > 0) {
    // The turn's time dates the events the user reports in it ("last Friday").
    const messages: ExtractionMessage[] = facts.map((content) => ({ role: 'user', content, at }))
    jobs.push({ kind: FACT_EXTRACTION_JOB, key: `${FACT_EXTRACTION_JOB}:${turnKey}`, payload: { ...common, messages }, runAfter: at })
  }
  if (work.compactContext) {
    jobs.push({ kind: CONTEXT_COMPACTION_JOB, key: `${CONTEXT_COMPACTION_JOB}:${turnKey}`, payload: common, runAfter: at })
  }
  return jobs
}

export interface TurnWorkHandlerOptions {
  agent: string
  llm: Llm
  memory: DeclarativeMemory
  /** The session's user's scope: what a turn teaches is theirs (decision 0017). */
  scope(user: string | undefined): ViewerScope
  context: ContextProvider
  freshTail: number
  /** Work given up after its last attempt (the error learner's), to be reported to the next turns (failures.ts). */
  onDropped?(work: DroppedWork): Promise<void>
  /** Where a fact that changes a value is recorded as superseding the earlier one (decision 0087). */
  values?: ValueHistoryDeps
}

function contextSession(agent: string, job: QueuedJob): ContextSession | undefined {
  const { session, user } = job.payload
  if (typeof session !== 'string' || session === '') return undefined
  return { sessionId: session, agent, ...(typeof user === 'string' && user !== '' ? { user } : {}) }
}

function userOf(job: QueuedJob): string | undefined {
  const { user } = job.payload
  return typeof user === 'string' && user !== '' ? user : undefined
}

function invalidPayload(job: QueuedJob, what: string): JobHandlerResult {
  return { status: 'failed', error: `job ${job.id} (${job.kind}): ${what}` }
}

/** `3 failed calls of deploy, fetch`: counts and tool names only (every session reads the report). */
function failedCalls(failures: readonly BufferedFailure[]): string {
  const tools = [...new Set(failures.map((failure) => failure.tool))]
  return `${failures.length} failed call${failures.length === 1 ? '' : 's'} of ${tools.join(', ')}`
}

/** Handlers of the jobs `turnJobs` queues. */
export function turnWorkHandlers(options: TurnWorkHandlerOptions): Record<string, JobHandler> {
  const { memory } = options
  return {
    async [ERROR_LEARNER_JOB](job) {
      const failures = job.payload.failures
      if (!Array.isArray(failures)) return invalidPayload(job, 'no failures in the payload')
      const result = await learnFromFailures(failures as BufferedFailure[], { encoder: options.scope(userOf(job)).encoder, llm: options.llm })
      if (result.kind === 'failed') {
        const what = failedCalls(failures as BufferedFailure[])
        if (job.attempts < job.maxAttempts) return { status: 'retry', error: `error learner: lessons from ${what} not learned yet (tried again later): ${result.reason}` }
        // The last attempt: the failures are dropped, and every next turn is told (whatever process it runs in).
        await options.onDropped?.({
          title: 'Lessons not learned from failed tool calls',
          task: 'lessons',
          message: `${what}; the model failed on all ${job.attempts} attempts (${result.code ?? 'its answers were off the mark'}).`,
          fix: 'see the LLM failures reported with task "lessons" and fix the model (llm.fastModel / ENGRAM_LLM_FAST_MODEL); the calls are kept in the failed error-learner job',
        })
        return { status: 'failed', error: `error learner: lessons from ${what} dropped after ${job.attempts} attempts: ${result.reason}` }
      }
      if (result.kind === 'skipped') return { status: 'skipped', reason: result.reason }
      if (result.kind === 'empty') return { status: 'skipped', reason: 'no failures' }
      return { status: 'done', result: { lessons: result.lessons.map((lesson) => lesson.text), saved: result.report.saved.length, discarded: result.discarded.length } }
    },

    async [PATTERN_MONITOR_JOB](job) {
      const { mode, events } = job.payload
      if (!Array.isArray(events) || !PATTERN_MONITOR_MODES.includes(mode as PatternMonitorMode)) return invalidPayload(job, 'no events or mode in the payload')
      const monitor = createPatternMonitor({ mode: mode as PatternMonitorMode })
      for (const event of events as PatternEvent[]) {
        if (isEventKind(event?.kind)) monitor.observe(event.kind, event.detail as never, { severity: event.severity, round: event.round })
      }
      const scope = options.scope(userOf(job))
      const result = await monitor.flush({ encoder: scope.encoder, hasSimilarLesson: await knownRulesPredicate([...scope.view.engramStores('global'), ...scope.view.engramStores('project')]) })
      if (result.kind !== 'encoded') return { status: 'skipped', reason: result.kind === 'off' ? 'the pattern monitor is off' : 'no pattern fired' }
      return { status: 'done', result: { rules: result.lessons.map((lesson) => lesson.rule), saved: result.report.saved.length, known: result.skippedAsKnown.length } }
    },

    async [IDENTITY_JOB](job) {
      const { messages, count } = job.payload
      if (!Array.isArray(messages) || typeof count !== 'number') return invalidPayload(job, 'no messages or count in the payload')
      const user = userOf(job)
      // Facts about a user go into their one profile (decision 0017).
      const update = await memory.identity.maybeUpdateIdentity(messages as ConversationMessage[], count, user === undefined ? {} : { user })
      if (update.kind === 'skipped') return { status: 'skipped', reason: update.reason }
      return { status: 'done', result: { method: update.method, facts: update.facts, saved: update.report.saved.length, ...(update.llmError ? { llmError: update.llmError } : {}) } }
    },

    async [FACT_EXTRACTION_JOB](job) {
      const { messages } = job.payload
      if (!Array.isArray(messages)) return invalidPayload(job, 'no messages in the payload')
      // Loaded when a turn's facts are first extracted, not when a mind opens (decision 0082).
      const { extractAndEncodeFacts } = await import('../extraction/extract.ts')
      // The turn's user's scope: what they said about themselves goes to their own tree, through the gate.
      const user = userOf(job)
      const values = options.values ? { ...options.values, owner: ownerOfUser(user), profile: async () => (user === undefined ? [] : options.memory.profiles.facts(user)) } : undefined
      const extracted = await extractAndEncodeFacts(messages as ExtractionMessage[], options.scope(user).encoder, { llm: options.llm, ...(values ? { values } : {}) })
      const { report } = extracted
      const result = {
        method: extracted.method,
        facts: extracted.engrams.map((engram) => `${engram.kind}: ${engram.text}`),
        saved: report.saved.length,
        pending: report.pending.length,
        duplicates: report.duplicates.length,
        ...(report.rejected.length > 0 ? { rejected: report.rejected.map((item) => item.reason) } : {}),
        ...(extracted.changes ? { changed: extracted.changes.map((change) => `${change.subject}: ${change.from} → ${change.to} (${change.new} supersedes ${change.old})`) } : {}),
        ...(extracted.degraded ? { degraded: extracted.degraded } : {}),
      }
      if (extracted.engrams.length === 0) return { status: 'skipped', reason: extracted.degraded ?? 'no fact stated in the turn', result }
      return { status: 'done', result }
    },

    async [CONTEXT_COMPACTION_JOB](job) {
      const session = contextSession(options.agent, job)
      if (!session) return invalidPayload(job, 'no session in the payload')
      const context = options.context
      if (!hasCompactor(context)) return { status: 'skipped', reason: 'the context provider does not compact' }
      const result = await context.compact(session, { mode: 'incremental', freshTail: options.freshTail })
      return { status: 'done', result: result as unknown as Record<string, unknown> }
    },
  }
}
