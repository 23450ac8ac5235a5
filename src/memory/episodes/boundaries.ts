/**
 * Session boundaries (AnimaWorks' `finalize_if_session_ended`): a session ends when it has been
 * idle for 10 minutes, when a heartbeat arrives (the agent's attention moves on), or when the
 * caller ends it explicitly. Each boundary runs immediate encoding for that session.
 *
 * The tracker keeps, per open session, when it was last active, from the activity it is shown
 * (`observe`, wired to the recorder's `onRecorded`) or told about (`touch`). What was already
 * encoded — `lastFinalizedTurn` — is not kept here but by the encoder's persistent cursor, so a
 * restarted process loses nothing: `resume()` reopens the sessions whose latest events were never
 * encoded.
 */
import type { ActivityEvent } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import type { ActivityLog } from '../../storage/contracts.ts'
import { instantOf } from '../../storage/files/activity-log.ts'
import type { BoundaryReason, ImmediateEncoder, ImmediateEncodingOutcome } from './immediate-encoding.ts'
import { compareRecords, ENCODER_ORIGIN } from './session-events.ts'

/** The seed's idle boundary: 10 minutes without a turn. */
export const SESSION_IDLE_MS = 10 * 60_000

export interface SessionTrackerOptions {
  encoder: ImmediateEncoder
  clock: Clock
  /** Idle time that ends a session (default 10 minutes). */
  idleMs?: number
  /** Needed by `resume()` only. */
  activity?: ActivityLog
  /** Called with every boundary's outcome (including failures as `{ kind: 'failed' }`). */
  onBoundary?: (outcome: BoundaryOutcome) => void
}

export type BoundaryOutcome = ImmediateEncodingOutcome | { kind: 'failed'; session: string; reason: BoundaryReason; error: string }

export interface OpenSession {
  session: string
  firstActivityAt: string
  lastActivityAt: string
}

export interface SessionTracker {
  /** Notes activity of `session` at `at` (default: now). */
  touch(session: string, at?: string): void
  /** Notes an activity event (ignores events without a session and the encoder's own). */
  observe(event: ActivityEvent): void
  /** Sessions with activity not yet finalized by this tracker, oldest activity first. */
  openSessions(): OpenSession[]
  /** Open sessions idle for at least the idle time, by the injected clock. */
  idleSessions(): string[]
  /** Runs the idle boundary for every idle session. */
  checkIdle(): Promise<BoundaryOutcome[]>
  /** A heartbeat arrived: every open session (except `exceptSession`) reaches its boundary. */
  heartbeat(options?: { exceptSession?: string }): Promise<BoundaryOutcome[]>
  /** Ends `session` explicitly (works for a session this tracker never saw, too). */
  end(session: string): Promise<BoundaryOutcome>
  /** The last turn already encoded for `session` (0 when none). */
  lastFinalizedTurn(session: string): Promise<number>
  /** After a restart: reopens sessions of the last `daysBack` days (default 1) with unencoded events. */
  resume(options?: { daysBack?: number }): Promise<string[]>
}

/** Creates a tracker. It never throws from a boundary: failures become `{ kind: 'failed' }`. */
export function createSessionTracker(options: SessionTrackerOptions): SessionTracker {
  const { encoder, clock } = options
  const idleMs = options.idleMs ?? SESSION_IDLE_MS
  const open = new Map<string, OpenSession>()

  function touch(session: string, at?: string): void {
    const when = at ?? clock.now().toISOString()
    const known = open.get(session)
    if (!known) {
      open.set(session, { session, firstActivityAt: when, lastActivityAt: when })
    } else if (instantOf(when) > instantOf(known.lastActivityAt)) {
      known.lastActivityAt = when
    }
  }

  async function finalize(session: string, reason: BoundaryReason): Promise<BoundaryOutcome> {
    const seen = open.get(session)
    const seenAt = seen?.lastActivityAt
    let outcome: BoundaryOutcome
    try {
      outcome = await encoder.finalizeSession(session, { reason, ...(seen ? { since: seen.firstActivityAt } : {}) })
    } catch (error) {
      outcome = { kind: 'failed', session, reason, error: describeError(error) }
    }
    // Activity that arrived while encoding keeps the session open for the next boundary.
    const now = open.get(session)
    if (outcome.kind !== 'failed' && outcome.kind !== 'busy' && now && now.lastActivityAt === seenAt) open.delete(session)
    try {
      options.onBoundary?.(outcome)
    } catch {
      // A failing listener must not undo a recorded boundary.
    }
    return outcome
  }

  function idleSessions(): string[] {
    const now = clock.now().getTime()
    return [...open.values()].filter((entry) => now - instantOf(entry.lastActivityAt) >= idleMs).map((entry) => entry.session)
  }

  async function runAll(sessions: string[], reason: BoundaryReason): Promise<BoundaryOutcome[]> {
    const outcomes: BoundaryOutcome[] = []
    // One at a time: each may call the LLM, and the state file is shared.
    for (const session of sessions) outcomes.push(await finalize(session, reason))
    return outcomes
  }

  return {
    touch,
    observe(event) {
      if (!event.session || event.meta?.origin === ENCODER_ORIGIN) return
      touch(event.session, event.ts)
    },
    openSessions: () => [...open.values()].map((entry) => ({ ...entry })).sort((a, b) => instantOf(a.lastActivityAt) - instantOf(b.lastActivityAt)),
    idleSessions,
    checkIdle: () => runAll(idleSessions(), 'idle'),
    heartbeat: (heartbeatOptions = {}) => runAll([...open.keys()].filter((session) => session !== heartbeatOptions.exceptSession), 'heartbeat'),
    end: (session) => finalize(session, 'end'),
    async lastFinalizedTurn(session) {
      return (await encoder.cursor(session))?.lastFinalizedTurn ?? 0
    },
    async resume(resumeOptions = {}) {
      if (!options.activity) return []
      const since = new Date(clock.now().getTime() - (resumeOptions.daysBack ?? 1) * 86_400_000).toISOString()
      const latest = new Map<string, { first: string; last: { ts: string; ref: string } }>()
      for (const record of await options.activity.read({ since })) {
        if (!record.session || record.meta?.origin === ENCODER_ORIGIN) continue
        const entry = latest.get(record.session)
        if (!entry) latest.set(record.session, { first: record.ts, last: record })
        else if (compareRecords(record, entry.last) > 0) entry.last = record
      }
      const reopened: string[] = []
      for (const [session, { first, last }] of latest) {
        const cursor = await encoder.cursor(session)
        if (cursor && compareRecords(last, { ts: cursor.untilTs, ref: cursor.untilRef }) <= 0) continue
        touch(session, first)
        touch(session, last.ts)
        reopened.push(session)
      }
      return reopened
    },
  }
}
