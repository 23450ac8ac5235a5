/**
 * Lifecycle state on SQLite (migration 4): session records, heartbeats, counters, the queue of due
 * work and stored turns. Every read-modify-write runs in one `BEGIN IMMEDIATE` transaction, so two
 * processes sharing `engram.db` never both close a session, both claim a job or skip a count.
 */
import type { Clock } from '../../core/clock.ts'
import type { JobInput, JobSettlement, Lifecycle, QueuedJob, SessionRecord, TurnRecord } from '../contracts.ts'
import { checkedClaim, checkedClose, checkedJobInput, QUEUED_JOB_STATUSES, type QueuedJobRow, type SessionRow, toQueuedJob, toSession, toTurnRecord, type TurnRow as TurnRowOf } from '../lifecycle-records.ts'
import { instant, invalid, requireText as text } from '../input-checks.ts'
import { type SqliteHandle, statementCache } from './database.ts'
import { changesOf, eraseInTransaction } from './erase.ts'
import { parseJsonObject } from './json.ts'

type TurnRow = TurnRowOf<string>

const JOB_STATUSES = QUEUED_JOB_STATUSES
type JobRow = QueuedJobRow
const decode = (value: unknown): Record<string, unknown> => parseJsonObject(value as string)
const toJob = (row: JobRow): QueuedJob => toQueuedJob(row, decode)

/** Lifecycle over `handle`; `clock` stamps when jobs were queued. */
export function createSqliteLifecycle(handle: SqliteHandle, options: { clock: Clock }): Lifecycle {
  const { db } = handle
  // The statements of every turn (its count, the session's touch, its record) are prepared once:
  // preparing them again cost ~0.1 ms of a `begin` (decision 0093).
  const prepared = statementCache(db)

  const selectSession = (agent: string, sessionId: string): SessionRow | undefined =>
    prepared('SELECT * FROM lifecycle_sessions WHERE agent = ? AND session_id = ?').get(agent, sessionId) as SessionRow | undefined

  function touch(agent: string, sessionId: string, activity: { at: string; user?: string }, countTurn: boolean): { session: SessionRecord; opened: boolean } {
    text(agent, 'agent')
    text(sessionId, 'session id')
    const at = instant(activity.at, 'at')
    const user = activity.user === undefined || activity.user === '' ? null : activity.user
    const turn = countTurn ? 1 : 0
    return handle.transaction(() => {
      const row = selectSession(agent, sessionId)
      if (!row) {
        prepared(
          `INSERT INTO lifecycle_sessions (agent, session_id, user_id, status, opened_at, last_activity_at, turns) VALUES (?, ?, ?, 'open', ?, ?, ?)`,
        ).run(agent, sessionId, user, at, at, turn)
      } else if (row.status === 'closed') {
        // A new open period: the boundary work of the next close covers it from here.
        prepared(
          `UPDATE lifecycle_sessions SET status = 'open', opened_at = ?, last_activity_at = max(last_activity_at, ?), turns = turns + ?,
             user_id = coalesce(user_id, ?), closed_at = NULL, close_reason = NULL WHERE agent = ? AND session_id = ?`,
        ).run(at, at, turn, user, agent, sessionId)
      } else {
        prepared(
          `UPDATE lifecycle_sessions SET last_activity_at = max(last_activity_at, ?), turns = turns + ?, user_id = coalesce(user_id, ?)
           WHERE agent = ? AND session_id = ?`,
        ).run(at, turn, user, agent, sessionId)
      }
      return { session: toSession(selectSession(agent, sessionId) as SessionRow), opened: !row || row.status === 'closed' }
    })
  }

  function insertJob(job: JobInput, now: string): { job: QueuedJob; created: boolean } {
    const { runAfter, maxAttempts } = checkedJobInput(job)
    const inserted = db
      .prepare(
        `INSERT INTO lifecycle_jobs (agent, kind, dedupe_key, payload, status, run_after, max_attempts, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?)
         ON CONFLICT (agent, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING RETURNING *`,
      )
      .get(job.agent, job.kind, job.key ?? null, JSON.stringify(job.payload), runAfter, maxAttempts, now, now) as JobRow | undefined
    if (inserted) return { job: toJob(inserted), created: true }
    const existing = db.prepare('SELECT * FROM lifecycle_jobs WHERE agent = ? AND dedupe_key = ?').get(job.agent, job.key ?? null) as unknown as JobRow
    return { job: toJob(existing), created: false }
  }

  function toTurn(row: TurnRow): TurnRecord {
    const messages = db
      .prepare('SELECT message_id FROM lifecycle_turn_messages WHERE agent = ? AND session_id = ? AND turn = ? ORDER BY message_id')
      .all(row.agent, row.session_id, row.turn) as unknown as Array<{ message_id: number }>
    return toTurnRecord(row, messages.map((m) => m.message_id).filter((id) => id !== row.message_id), decode)
  }

  return {
    async touchSession(agent, sessionId, activity) {
      return touch(agent, sessionId, activity, false)
    },

    async beginTurn(agent, sessionId, activity) {
      return touch(agent, sessionId, activity, true)
    },

    async session(agent, sessionId) {
      const row = selectSession(agent, sessionId)
      return row ? toSession(row) : null
    },

    async openSessions(agent, filter = {}) {
      const rows = (
        filter.quietSince === undefined
          ? db.prepare(`SELECT * FROM lifecycle_sessions WHERE agent = ? AND status = 'open' ORDER BY last_activity_at, session_id`).all(agent)
          : db
              .prepare(`SELECT * FROM lifecycle_sessions WHERE agent = ? AND status = 'open' AND last_activity_at <= ? ORDER BY last_activity_at, session_id`)
              .all(agent, instant(filter.quietSince, 'quietSince'))
      ) as unknown as SessionRow[]
      return rows.map(toSession)
    },

    async closeSession(agent, sessionId, close) {
      const { at, expected } = checkedClose(agent, sessionId, close)
      return handle.transaction(() => {
        const row = selectSession(agent, sessionId)
        if (row) {
          if (row.status !== 'open') return false
          if (expected !== undefined && row.last_activity_at !== expected) return false
          db.prepare(`UPDATE lifecycle_sessions SET status = 'closed', closed_at = ?, close_reason = ? WHERE agent = ? AND session_id = ?`).run(
            at,
            close.reason,
            agent,
            sessionId,
          )
        } else {
          // Only an explicit end closes a session never seen (activity from before this record existed).
          if (expected !== undefined) return false
          db.prepare(
            `INSERT INTO lifecycle_sessions (agent, session_id, user_id, status, opened_at, last_activity_at, turns, closed_at, close_reason)
             VALUES (?, ?, NULL, 'closed', ?, ?, 0, ?, ?)`,
          ).run(agent, sessionId, at, at, at, close.reason)
        }
        for (const job of close.enqueue ?? []) insertJob({ ...job, agent }, at)
        return true
      })
    },

    async recordHeartbeat(agent, at) {
      text(agent, 'agent')
      const when = instant(at, 'at')
      return handle.transaction(() => {
        const row = db.prepare('SELECT last_at FROM lifecycle_heartbeats WHERE agent = ?').get(agent) as { last_at: string } | undefined
        db.prepare('INSERT INTO lifecycle_heartbeats (agent, last_at) VALUES (?, ?) ON CONFLICT (agent) DO UPDATE SET last_at = max(last_at, excluded.last_at)').run(
          agent,
          when,
        )
        return row?.last_at
      })
    },

    async increment(agent, user, name, at) {
      text(agent, 'agent')
      text(name, 'counter name')
      const row = db
        .prepare(
          `INSERT INTO lifecycle_counters (agent, user_id, name, value, updated_at) VALUES (?, ?, ?, 1, ?)
           ON CONFLICT (agent, user_id, name) DO UPDATE SET value = value + 1, updated_at = excluded.updated_at RETURNING value`,
        )
        .get(agent, user ?? '', name, instant(at, 'at')) as { value: number }
      return row.value
    },

    async enqueue(job) {
      return handle.transaction(() => insertJob(job, options.clock.now().toISOString()))
    },

    async claim(agent, claim) {
      const { now, leaseUntil } = checkedClaim(agent, claim)
      return handle.transaction(() => {
        // A job whose process died on its last attempt is given up rather than tried forever.
        db.prepare(
          `UPDATE lifecycle_jobs SET status = 'failed', finished_at = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL,
             error = 'its lease expired ' || attempts || ' time(s): the process running it stopped'
           WHERE agent = ? AND status = 'running' AND lease_until <= ? AND attempts >= max_attempts`,
        ).run(now, now, agent, now)
        const due = `agent = ? AND ((status = 'queued' AND run_after <= ?) OR (status = 'running' AND lease_until <= ?))`
        const row = (
          claim.id === undefined
            ? db.prepare(`SELECT id FROM lifecycle_jobs WHERE ${due} ORDER BY run_after, id LIMIT 1`).get(agent, now, now)
            : db.prepare(`SELECT id FROM lifecycle_jobs WHERE ${due} AND id = ?`).get(agent, now, now, claim.id)
        ) as { id: number } | undefined
        if (!row) return null
        const claimed = db
          .prepare(
            `UPDATE lifecycle_jobs SET status = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1, updated_at = ?
             WHERE id = ? RETURNING *`,
          )
          .get(claim.owner, leaseUntil, now, row.id) as unknown as JobRow
        return toJob(claimed)
      })
    },

    async settle(id, owner, settlement: JobSettlement) {
      const at = instant(settlement.at, 'at')
      return handle.transaction(() => {
        const row = db.prepare(`SELECT * FROM lifecycle_jobs WHERE id = ? AND status = 'running' AND lease_owner = ?`).get(id, owner) as JobRow | undefined
        if (!row) return false
        if (settlement.status === 'failed') {
          const retry = settlement.retryAt !== undefined && row.attempts < row.max_attempts
          db.prepare(
            `UPDATE lifecycle_jobs SET status = ?, run_after = ?, error = ?, updated_at = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?`,
          ).run(
            retry ? 'queued' : 'failed',
            retry ? instant(settlement.retryAt as string, 'retryAt') : row.run_after,
            settlement.error,
            at,
            retry ? null : at,
            id,
          )
        } else {
          db.prepare(
            `UPDATE lifecycle_jobs SET status = ?, result = ?, updated_at = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?`,
          ).run(settlement.status, JSON.stringify(settlement.result ?? {}), at, at, id)
        }
        return true
      })
    },

    async jobs(agent, filter = {}) {
      const where = ['agent = ?']
      const params: Array<string | number> = [agent]
      if (filter.status !== undefined) {
        for (const status of filter.status) if (!JOB_STATUSES.includes(status)) throw invalid(`${JSON.stringify(status)} is not a job status.`, `Use ${JOB_STATUSES.join(', ')}.`)
        where.push(`status IN (${filter.status.map(() => '?').join(', ') || "''"})`)
        params.push(...filter.status)
      }
      if (filter.kind !== undefined) {
        where.push('kind = ?')
        params.push(filter.kind)
      }
      const limit = filter.limit ?? -1
      const rows = db.prepare(`SELECT * FROM lifecycle_jobs WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`).all(...params, limit) as unknown as JobRow[]
      return rows.map(toJob)
    },

    async pruneJobs(agent, finishedBefore) {
      const before = instant(finishedBefore, 'finishedBefore')
      const result = db.prepare(`DELETE FROM lifecycle_jobs WHERE agent = ? AND status IN ('done', 'skipped') AND finished_at < ?`).run(agent, before) as { changes: number | bigint }
      return Number(result.changes)
    },

    async saveTurn(record) {
      text(record.agent, 'agent')
      text(record.sessionId, 'session id')
      if (!Number.isInteger(record.turn) || record.turn < 1) throw invalid('turn must be a whole number ≥ 1.', 'Pass the turn number from beginTurn.')
      const startedAt = instant(record.startedAt, 'startedAt')
      handle.transaction(() => {
        prepared(
          `INSERT INTO lifecycle_turns (agent, session_id, turn, user_id, message_id, started_at, type, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (agent, session_id, turn) DO UPDATE SET user_id = excluded.user_id, message_id = excluded.message_id,
             started_at = excluded.started_at, type = excluded.type, provenance = excluded.provenance`,
        ).run(record.agent, record.sessionId, record.turn, record.user ?? null, record.messageId, startedAt, record.type, JSON.stringify(record.provenance))
        prepared('INSERT OR REPLACE INTO lifecycle_turn_messages (message_id, agent, session_id, turn) VALUES (?, ?, ?, ?)').run(
          record.messageId,
          record.agent,
          record.sessionId,
          record.turn,
        )
      })
    },

    async addTurnReplies(agent, sessionId, turn, messageIds) {
      handle.transaction(() => {
        const insert = prepared('INSERT OR REPLACE INTO lifecycle_turn_messages (message_id, agent, session_id, turn) VALUES (?, ?, ?, ?)')
        for (const id of messageIds) insert.run(id, agent, sessionId, turn)
      })
    },

    async turn(agent, ref) {
      let key: { session_id: string; turn: number } | undefined
      if ('messageId' in ref) {
        key = db.prepare('SELECT session_id, turn FROM lifecycle_turn_messages WHERE agent = ? AND message_id = ?').get(agent, ref.messageId) as
          | { session_id: string; turn: number }
          | undefined
      } else {
        key = { session_id: ref.sessionId, turn: ref.turn }
      }
      if (!key) return null
      const row = db.prepare('SELECT * FROM lifecycle_turns WHERE agent = ? AND session_id = ? AND turn = ?').get(agent, key.session_id, key.turn) as TurnRow | undefined
      return row ? toTurn(row) : null
    },

    async recentTurns(agent, user, limit) {
      if (!Number.isInteger(limit) || limit < 0) throw invalid('limit must be a whole number ≥ 0.', 'Pass how many turns to read.')
      const rows = (
        user === undefined
          ? db.prepare('SELECT * FROM lifecycle_turns WHERE agent = ? AND user_id IS NULL ORDER BY started_at DESC, turn DESC LIMIT ?').all(agent, limit)
          : db.prepare('SELECT * FROM lifecycle_turns WHERE agent = ? AND user_id = ? ORDER BY started_at DESC, turn DESC LIMIT ?').all(agent, user, limit)
      ) as unknown as TurnRow[]
      return rows.map(toTurn)
    },

    async purgeUser(user) {
      text(user, 'user')
      return eraseInTransaction(handle, () => {
        db.prepare(
          `DELETE FROM lifecycle_turn_messages WHERE EXISTS (SELECT 1 FROM lifecycle_turns t WHERE t.user_id = ? AND t.agent = lifecycle_turn_messages.agent
             AND t.session_id = lifecycle_turn_messages.session_id AND t.turn = lifecycle_turn_messages.turn)`,
        ).run(user)
        const turns = changesOf(db.prepare('DELETE FROM lifecycle_turns WHERE user_id = ?').run(user))
        const sessions = changesOf(db.prepare('DELETE FROM lifecycle_sessions WHERE user_id = ?').run(user))
        const counters = changesOf(db.prepare('DELETE FROM lifecycle_counters WHERE user_id = ?').run(user))
        // Every job a session with a user queues names the user in its payload (turn-work, session-boundaries).
        const jobs = changesOf(db.prepare("DELETE FROM lifecycle_jobs WHERE json_valid(payload) AND json_extract(payload, '$.user') = ?").run(user))
        return { sessions, turns, counters, jobs }
      })
    },
  }
}
