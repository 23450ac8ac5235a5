/**
 * The heartbeat's lines in the activity log (`[10:00-10:01] HB: closed 1 session(s): mon; ran 2
 * job(s)`), written so that no owner's log names another owner's sessions (decision 0046: Bob's recent
 * activity showed Ada's session `mon`). The agent's log — primed into every session of the agent —
 * gets the patrol itself, with the agent's own sessions (those without a user) and the work that
 * belongs to no user; each user whose sessions the heartbeat closed, or whose work it ran, gets the
 * same pair of lines in their own log with only their sessions and work.
 */
import type { ClosedSession } from './session-boundaries.ts'
import type { JobOutcome } from './job-runner.ts'

/** What the log lines need of one heartbeat. */
export interface HeartbeatOutcome {
  closed: readonly ClosedSession[]
  jobs: readonly JobOutcome[]
}

export interface HeartbeatLogDeps {
  /** The user a session belongs to (undefined: the agent's own session, or none known). */
  userOfSession(sessionId: string): Promise<string | undefined>
  /**
   * Ends the heartbeat in one owner's log with `summary`: the agent's (`user` undefined), whose
   * start line was written when the patrol began, or a user's, which gets both lines now (their
   * log holds no start: nobody knew it concerned them until it ran).
   */
  write(user: string | undefined, summary: string): Promise<void>
}

function summaryOf(sessions: readonly string[], jobs: number): string {
  return `closed ${sessions.length} session(s)${sessions.length > 0 ? `: ${sessions.join(', ')}` : ''}; ran ${jobs} job(s)`
}

/**
 * Records the end of a heartbeat: in the agent's log always (the patrol ran), in each concerned
 * user's log when the heartbeat closed one of their sessions or ran their work.
 */
export async function recordHeartbeat(deps: HeartbeatLogDeps, beat: HeartbeatOutcome): Promise<void> {
  const owners = new Map<string | undefined, { sessions: string[]; jobs: number }>([[undefined, { sessions: [], jobs: 0 }]])
  const of = (user: string | undefined): { sessions: string[]; jobs: number } => {
    let entry = owners.get(user)
    if (!entry) {
      entry = { sessions: [], jobs: 0 }
      owners.set(user, entry)
    }
    return entry
  }
  const users = new Map<string, string | undefined>()
  for (const entry of beat.closed) {
    // A session record without its user (one opened before its first message named one) is asked
    // about again: naming a user's session in the agent's log is the leak this module prevents.
    const user = entry.user ?? (await deps.userOfSession(entry.session))
    users.set(entry.session, user)
    of(user).sessions.push(entry.session)
  }
  for (const job of beat.jobs) {
    let user: string | undefined
    if (job.session !== undefined) {
      if (!users.has(job.session)) users.set(job.session, await deps.userOfSession(job.session))
      user = users.get(job.session)
    }
    of(user).jobs++
  }
  for (const [user, entry] of owners) await deps.write(user, summaryOf(entry.sessions, entry.jobs))
}
