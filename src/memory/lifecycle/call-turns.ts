/**
 * Turns without a message (decision 0045): an MCP client's model calls tools and goes quiet, with
 * no `begin` or `end` to mark its turn. The connection marks it (`session.beginCalls` /
 * `endCalls`), and the end queues the same work a library turn's end does. What makes it durable:
 *
 * - Every call is in the user's activity log as it happens, tagged with the turn's number.
 * - Opening the turn queues a watch job (`call-turn:<session>:<turn>`) naming the process that holds it.
 * - Ending the turn queues its mark (`call-turn:<session>:<turn>:ended`, a job that does nothing):
 *   the queue's keys are how any process tells an ended turn, and the mark goes with the user's
 *   other queued jobs when the user is erased.
 *
 * A turn whose process died (SIGKILL, a crash) was never ended: any process's `maintain()` finds
 * its watch job without a mark, sees its writer gone and makes a copy of it due now. The watch
 * claims the turn's end by queueing its mark, rebuilds the turn's failures and pattern events by
 * replaying its logged calls through the error learner and the pattern monitor (`replay`), then
 * queues the turn's work under the keys its end would have used, so a turn is learned from once
 * whichever way it ends. A watch whose turn was ended has nothing to do.
 */
import type { Clock } from '../../core/clock.ts'
import type { ActivityRecord, JobInput, Lifecycle, QueuedJob } from '../../storage/contracts.ts'
import type { BufferedFailure } from '../learning/error-learner.ts'
import type { PatternEvent } from '../learning/pattern-events.ts'
import type { PatternMonitorMode } from '../learning/pattern-monitor.ts'
import type { JournalWriterIdentity } from '../journal/journal-events.ts'
import { judgeWriter, registerOpenStream, thisWriter } from '../journal/journal-writer.ts'
import type { ViewerScope } from '../view.ts'
import type { JobHandler } from './job-runner.ts'
import { turnJobs } from './turn-work.ts'

export const CALL_TURN_JOB = 'call-turn'

/**
 * When the watch of a turn runs by itself, if no `maintain()` found its process gone before: past
 * any turn a live connection keeps open (it ends one after two quiet minutes).
 */
const CALL_TURN_WATCH_MS = 60 * 60_000

function watchKey(sessionId: string, turn: number): string {
  return `${CALL_TURN_JOB}:${sessionId}:${turn}`
}

/** The mark of an ended turn. It stays queued as long as a watch may: `maintain()` reads the marks with the watches, in one query. */
function endMark(sessionId: string, user: string | undefined, turn: number, now: Date): Omit<JobInput, 'agent'> {
  return {
    kind: CALL_TURN_JOB,
    key: `${watchKey(sessionId, turn)}:ended`,
    payload: { session: sessionId, ...(user !== undefined ? { user } : {}), turn, ended: true },
    runAfter: new Date(now.getTime() + CALL_TURN_WATCH_MS).toISOString(),
  }
}

/** The id under which this process registers an open call turn (the journals' liveness registry). */
function openTurnId(agent: string, sessionId: string, turn: number): string {
  return `${CALL_TURN_JOB}:${agent}:${sessionId}:${turn}`
}

/** What a replay of a turn's logged calls gives: the error learner's buffer and the monitor's events (when a detector fired). */
export interface ReplayedCalls {
  failures: BufferedFailure[]
  events: readonly PatternEvent[]
}

export interface CallTurnDeps {
  agent: string
  clock: Clock
  store: Lifecycle
  scope(user: string | undefined): ViewerScope
  patternMonitorMode: PatternMonitorMode
  /** Replays logged tool calls through a fresh error learner and pattern monitor. */
  replay(calls: readonly ActivityRecord[], mode: PatternMonitorMode): Promise<ReplayedCalls>
}

export interface CallTurns {
  /** The turn opened: its watch is queued, and this process says it holds it. */
  opened(sessionId: string, user: string | undefined, turn: number): Promise<void>
  /** The turn ended here (its work is queued): marked, so its watch has nothing to do. */
  ended(sessionId: string, user: string | undefined, turn: number): Promise<void>
  /** `maintain()`: the watches of turns whose process is gone are made due now; returns how many. */
  orphans(): Promise<number>
  handler: JobHandler
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

function writerOf(job: QueuedJob): JournalWriterIdentity | undefined {
  const writer = job.payload.writer
  return typeof writer === 'object' && writer !== null && typeof (writer as { pid?: unknown }).pid === 'number' ? (writer as JournalWriterIdentity) : undefined
}

export function createCallTurns(deps: CallTurnDeps): CallTurns {
  const { agent, clock, store } = deps

  /**
   * Marks the turn's end and says whether it was marked before (queueing a key that exists does
   * nothing): test and set, so of the watches of a dead process's turn one claims its end.
   */
  async function wasEnded(sessionId: string, user: string | undefined, turn: number): Promise<boolean> {
    const { created } = await store.enqueue({ agent, ...endMark(sessionId, user, turn, clock.now()) })
    return !created
  }

  /** Whether the process that opened the watch's turn still holds it (same host: its pid; elsewhere: the session's recent activity). */
  async function holderAlive(job: QueuedJob, sessionId: string, turn: number): Promise<{ alive: boolean; reason: string }> {
    const record = await store.session(agent, sessionId)
    const lastActivity = Date.parse(record?.lastActivityAt ?? text(job.payload.from) ?? '') || 0
    return judgeWriter(writerOf(job), { id: openTurnId(agent, sessionId, turn), mtimeMs: lastActivity }, { nowMs: clock.now().getTime() })
  }

  const handler: JobHandler = async (job) => {
    const sessionId = text(job.payload.session)
    const turn = job.payload.turn
    const from = text(job.payload.from)
    if (job.payload.ended === true) return { status: 'skipped', reason: 'marks the end of a call turn' }
    if (!sessionId || typeof turn !== 'number' || !from) return { status: 'failed', error: `job ${job.id} (${job.kind}) has no session, turn or start in its payload` }
    const user = text(job.payload.user)
    const holder = await holderAlive(job, sessionId, turn)
    if (holder.alive) {
      // A live process ends its own turns, and one that ended this turn has marked it. A turn open
      // for an hour is left to its process too (marked here: a test of the mark sets it).
      if (await wasEnded(sessionId, user, turn)) return { status: 'skipped', reason: 'the turn was ended by its connection' }
      return { status: 'skipped', reason: `the turn is still open an hour after it began (${holder.reason}); that process ends it` }
    }
    // The holder is gone, so nothing else ends the turn: marking it claims its end (one claimer of several watches).
    if (await wasEnded(sessionId, user, turn)) return { status: 'skipped', reason: 'the turn was ended by its connection' }
    const startedAt = clock.now().toISOString()
    const logged = await deps.scope(user).view.own.activity.read({ since: from, types: ['tool_use'] })
    const calls = logged.filter((record) => record.session === sessionId && record.meta?.turn === turn)
    const { failures, events } = await deps.replay(calls, deps.patternMonitorMode)
    const jobs = turnJobs({ sessionId, user, turn, failures, patterns: { mode: deps.patternMonitorMode, events }, compactContext: false }, undefined, startedAt)
    // Under the keys the turn's own end uses: a turn is learned from once, whichever way it ended.
    for (const work of jobs) await store.enqueue({ agent, ...work })
    return { status: 'done', result: { turn, calls: calls.length, failures: failures.length, patternEvents: events.length, queued: jobs.map((work) => work.kind), holder: holder.reason } }
  }

  return {
    async opened(sessionId, user, turn) {
      const from = clock.now().toISOString()
      registerOpenStream(openTurnId(agent, sessionId, turn), true)
      const watch: Omit<JobInput, 'agent'> = {
        kind: CALL_TURN_JOB,
        key: watchKey(sessionId, turn),
        payload: { session: sessionId, ...(user !== undefined ? { user } : {}), turn, from, writer: { ...thisWriter() } },
        runAfter: new Date(clock.now().getTime() + CALL_TURN_WATCH_MS).toISOString(),
      }
      await store.enqueue({ agent, ...watch })
    },

    async ended(sessionId, user, turn) {
      await store.enqueue({ agent, ...endMark(sessionId, user, turn, clock.now()) })
      registerOpenStream(openTurnId(agent, sessionId, turn), false)
    },

    async orphans() {
      const now = clock.now()
      let found = 0
      const queued = await store.jobs(agent, { status: ['queued'], kind: CALL_TURN_JOB })
      const marked = new Set(queued.filter((job) => job.payload.ended === true).map((job) => job.key))
      for (const job of queued) {
        const sessionId = text(job.payload.session)
        const turn = job.payload.turn
        // Due ones (copies made by an earlier look) run in this drain anyway.
        if (job.payload.ended === true || Date.parse(job.runAfter) <= now.getTime() || !sessionId || typeof turn !== 'number' || job.key === undefined) continue
        if (marked.has(`${job.key}:ended`) || (await holderAlive(job, sessionId, turn)).alive) continue
        const { created } = await store.enqueue({ agent, kind: CALL_TURN_JOB, key: `${job.key}:orphaned`, payload: job.payload, runAfter: now.toISOString() })
        if (created) found++
      }
      return found
    },

    handler,
  }
}
