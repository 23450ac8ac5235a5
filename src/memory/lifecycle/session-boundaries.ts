/**
 * Session boundaries (AnimaWorks' `finalize_if_session_ended`), kept in the store: a session ends
 * when it has been idle for 10 minutes, when a heartbeat finds it quiet since the previous
 * heartbeat, or when the host ends it. Closing a session queues its boundary work in the same
 * transaction — immediate encoding (episode, state update, resolutions), sleep replay and the
 * automatic outcomes of the procedures shown in the session — so the work survives the process
 * that noticed the boundary, and any process's drain does it once.
 *
 * Activity keeps a session open: every event the recorder writes with a session id touches its
 * record, and a close is conditional on the last activity it saw (a live conversation is never
 * cut). A closed session that becomes active again starts a new open period; its next boundary
 * covers only that period (the encoder's cursor remembers the last finalized turn).
 */
import type { ActivityEvent } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import type { JobInput, Lifecycle, QueuedJob, SessionRecord } from '../../storage/contracts.ts'
import type { BoundaryReason } from '../episodes/immediate-encoding.ts'
import { ENCODER_ORIGIN } from '../episodes/session-events.ts'

/** The seed's idle boundary: 10 minutes without activity. */
export const SESSION_IDLE_MS = 10 * 60_000

export const ENCODING_JOB = 'immediate-encoding'
export const REPLAY_JOB = 'sleep-replay'
/** Success or failure of the procedures shown in the period and not reported by the agent (procedures/outcome-tracking.ts). */
export const PROCEDURE_OUTCOMES_JOB = 'procedure-outcomes'
/** The threads a session adds to, gathered at its boundary (memory/threads/, decision 0080). */
export const THREADS_JOB = 'thread-gathering'

/** A session a boundary closed (its boundary work is queued). */
export interface ClosedSession {
  session: string
  user: string | undefined
  reason: BoundaryReason
}

export interface SessionBoundariesOptions {
  agent: string
  lifecycle: Lifecycle
  clock: Clock
  /** Idle time that ends a session (default 10 minutes). */
  idleMs?: number
}

export interface SessionBoundaries {
  /**
   * Notes an activity event (ignores events without a session and the encoder's own). `user`: whose
   * tree the event was logged in; a session record takes the first user it is seen with.
   */
  observe(event: ActivityEvent, user?: string): Promise<void>
  /** Closes every open session idle for at least the idle time; each queues its boundary work. */
  closeIdle(): Promise<ClosedSession[]>
  /**
   * A heartbeat arrived: records it and closes the sessions quiet since the previous heartbeat
   * (none at the first one), and the idle ones.
   */
  heartbeat(): Promise<{ at: string; previous: string | undefined; closed: ClosedSession[] }>
  /**
   * Closes `sessionId` now (one never seen too) and queues its work; returns the encoding job to run
   * (new, or the one a boundary queued before).
   */
  end(sessionId: string): Promise<{ encodingJob: QueuedJob; closed: boolean }>
}

/** The work a boundary queues for one session's open period. */
export function boundaryJobs(
  session: Pick<SessionRecord, 'sessionId' | 'user' | 'lastActivityAt'> & { openedAt?: string },
  reason: BoundaryReason,
  at: string,
): Array<Omit<JobInput, 'agent'>> {
  const common = { session: session.sessionId, ...(session.user !== undefined ? { user: session.user } : {}) }
  // Keyed by the last activity the boundary saw: the same period is never queued twice, a later one is.
  const period = session.lastActivityAt
  return [
    {
      kind: ENCODING_JOB,
      key: `${ENCODING_JOB}:${session.sessionId}:${period}`,
      payload: { ...common, reason, ...(session.openedAt !== undefined ? { since: session.openedAt } : {}) },
      runAfter: at,
    },
    {
      kind: REPLAY_JOB,
      key: `${REPLAY_JOB}:${session.sessionId}:${period}`,
      payload: { ...common, ...(session.openedAt !== undefined ? { from: session.openedAt } : {}), until: period },
      runAfter: at,
    },
    {
      kind: PROCEDURE_OUTCOMES_JOB,
      key: `${PROCEDURE_OUTCOMES_JOB}:${session.sessionId}:${period}`,
      payload: { ...common, ...(session.openedAt !== undefined ? { from: session.openedAt } : {}), until: period },
      runAfter: at,
    },
    { kind: THREADS_JOB, key: `${THREADS_JOB}:${session.sessionId}:${period}`, payload: common, runAfter: at },
  ]
}

export function createSessionBoundaries(options: SessionBoundariesOptions): SessionBoundaries {
  const { agent, lifecycle, clock } = options
  const idleMs = options.idleMs ?? SESSION_IDLE_MS

  async function close(sessions: SessionRecord[], reason: BoundaryReason): Promise<ClosedSession[]> {
    const closed: ClosedSession[] = []
    for (const session of sessions) {
      const at = clock.now().toISOString()
      const won = await lifecycle.closeSession(agent, session.sessionId, {
        at,
        reason,
        ifLastActivityAt: session.lastActivityAt,
        enqueue: boundaryJobs(session, reason, at),
      })
      if (won) closed.push({ session: session.sessionId, user: session.user, reason })
    }
    return closed
  }

  async function closeIdle(): Promise<ClosedSession[]> {
    const quietSince = new Date(clock.now().getTime() - idleMs).toISOString()
    return close(await lifecycle.openSessions(agent, { quietSince }), 'idle')
  }

  return {
    async observe(event, user) {
      if (!event.session || event.meta?.origin === ENCODER_ORIGIN) return
      await lifecycle.touchSession(agent, event.session, { at: event.ts, ...(user !== undefined ? { user } : {}) })
    },
    closeIdle,
    async heartbeat() {
      const at = clock.now().toISOString()
      const previous = await lifecycle.recordHeartbeat(agent, at)
      const closed = previous === undefined ? [] : await close(await lifecycle.openSessions(agent, { quietSince: previous }), 'heartbeat')
      return { at, previous, closed: [...closed, ...(await closeIdle())] }
    },
    async end(sessionId) {
      const at = clock.now().toISOString()
      const record = await lifecycle.session(agent, sessionId)
      const period = record ?? { sessionId, user: undefined, lastActivityAt: at }
      const jobs = boundaryJobs(period, 'end', at)
      const closed = await lifecycle.closeSession(agent, sessionId, { at, reason: 'end', enqueue: jobs })
      // Queueing the same key again returns the job that is already there (queued, running or done).
      const { job } = await lifecycle.enqueue({ agent, ...(jobs[0] as Omit<JobInput, 'agent'>) })
      return { encodingJob: job, closed }
    },
  }
}
