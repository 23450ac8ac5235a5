/**
 * Lifecycle state on PostgreSQL (migration 1): session records, heartbeats, counters, the queue of
 * due work and stored turns, shared by every process on every host that uses the database.
 *
 * Each read-modify-write is one statement or one transaction that locks the row it reads
 * (`FOR UPDATE`), so two processes never both close a session or skip a count; a row that does not
 * exist yet is created with `INSERT … ON CONFLICT DO NOTHING` first, which waits for a concurrent
 * creator and then sees its row. Claims take the next due job with `FOR UPDATE SKIP LOCKED`:
 * claimers never wait on each other and never take the same job.
 */
import type { Clock } from '../../core/clock.ts'
import type { JobInput, JobSettlement, Lifecycle, QueuedJob, SessionRecord, TurnRecord } from '../contracts.ts'
import { checkedClaim, checkedClose, checkedJobInput, QUEUED_JOB_STATUSES, type QueuedJobRow, type SessionRow, toQueuedJob, toSession, toTurnRecord, type TurnRow as TurnRowOf } from '../lifecycle-records.ts'
import type { PostgresHandle } from './connection.ts'
import type { PgQueryable } from './driver.ts'
import { instant, invalid, requireText } from '../input-checks.ts'
import { jsonObject } from './rows.ts'

type TurnRow = TurnRowOf<unknown> & { reply_ids: number[] }

const JOB_STATUSES = QUEUED_JOB_STATUSES
type JobRow = QueuedJobRow
const decode = jsonObject
const toJob = (row: JobRow): QueuedJob => toQueuedJob(row, decode)
/** A turn with the replies stored for it (every message of the turn but the user's). */
const TURN_COLUMNS = `t.*, ARRAY(SELECT m.message_id FROM lifecycle_turn_messages m
  WHERE m.agent = t.agent AND m.session_id = t.session_id AND m.turn = t.turn AND m.message_id <> t.message_id ORDER BY m.message_id) AS reply_ids`

const toTurn = (row: TurnRow): TurnRecord => toTurnRecord(row, row.reply_ids, jsonObject)

/** Queues `job` (stamped `now`) on `db`; an existing job with its key is returned instead. */
async function insertJob(db: PgQueryable, job: JobInput, now: string): Promise<{ job: QueuedJob; created: boolean }> {
  const { runAfter, maxAttempts } = checkedJobInput(job)
  // Twice at most: the keyed job found in conflict can be pruned before it is read.
  for (let attempt = 0; ; attempt++) {
    const inserted = await db.query<JobRow>(
      `INSERT INTO lifecycle_jobs (agent, kind, dedupe_key, payload, status, run_after, max_attempts, created_at, updated_at)
       VALUES ($1, $2, $3, $4::json, 'queued', $5, $6, $7, $7)
       ON CONFLICT (agent, dedupe_key) DO NOTHING RETURNING *`,
      [job.agent, job.kind, job.key ?? null, JSON.stringify(job.payload), runAfter, maxAttempts, now],
    )
    if (inserted.rows[0]) return { job: toJob(inserted.rows[0]), created: true }
    const existing = await db.query<JobRow>('SELECT * FROM lifecycle_jobs WHERE agent = $1 AND dedupe_key = $2', [job.agent, job.key])
    if (existing.rows[0]) return { job: toJob(existing.rows[0]), created: false }
    if (attempt >= 1) throw new Error(`job key ${job.key} conflicted but its job cannot be read`)
  }
}

/** Lifecycle over `handle`; `clock` stamps when jobs were queued. */
export function createPostgresLifecycle(handle: PostgresHandle, options: { clock: Clock }): Lifecycle {
  const { pool } = handle

  const selectSession = async (db: PgQueryable, agent: string, sessionId: string, lock = false): Promise<SessionRow | undefined> =>
    (await db.query<SessionRow>(`SELECT * FROM lifecycle_sessions WHERE agent = $1 AND session_id = $2${lock ? ' FOR UPDATE' : ''}`, [agent, sessionId])).rows[0]

  async function touch(agent: string, sessionId: string, activity: { at: string; user?: string }, countTurn: boolean): Promise<{ session: SessionRecord; opened: boolean }> {
    requireText(agent, 'agent')
    requireText(sessionId, 'session id')
    const at = instant(activity.at, 'at')
    const user = activity.user === undefined || activity.user === '' ? null : activity.user
    const turn = countTurn ? 1 : 0
    return handle.transaction(async (db) => {
      for (;;) {
        const inserted = await db.query<SessionRow>(
          `INSERT INTO lifecycle_sessions (agent, session_id, user_id, status, opened_at, last_activity_at, turns) VALUES ($1, $2, $3, 'open', $4, $4, $5)
           ON CONFLICT (agent, session_id) DO NOTHING RETURNING *`,
          [agent, sessionId, user, at, turn],
        )
        if (inserted.rows[0]) return { session: toSession(inserted.rows[0]), opened: true }
        const before = await selectSession(db, agent, sessionId, true)
        // Erased between the two statements: create it again.
        if (!before) continue
        // A closed session that becomes active starts a new open period: the next close's boundary work covers it from here.
        const { rows } = await db.query<SessionRow>(
          `UPDATE lifecycle_sessions SET status = 'open', opened_at = CASE WHEN status = 'closed' THEN $3::timestamptz ELSE opened_at END,
             last_activity_at = greatest(last_activity_at, $3::timestamptz), turns = turns + $4, user_id = coalesce(user_id, $5),
             closed_at = NULL, close_reason = NULL
           WHERE agent = $1 AND session_id = $2 RETURNING *`,
          [agent, sessionId, at, turn, user],
        )
        return { session: toSession(rows[0] as SessionRow), opened: before.status === 'closed' }
      }
    })
  }

  return {
    touchSession(agent, sessionId, activity) {
      return touch(agent, sessionId, activity, false)
    },

    beginTurn(agent, sessionId, activity) {
      return touch(agent, sessionId, activity, true)
    },

    async session(agent, sessionId) {
      const row = await selectSession(pool, agent, sessionId)
      return row ? toSession(row) : null
    },

    async openSessions(agent, filter = {}) {
      const quietSince = filter.quietSince === undefined ? null : instant(filter.quietSince, 'quietSince')
      // COLLATE "C": ties ordered by bytes, as SQLite orders them, whatever the database's collation.
      const { rows } = await pool.query<SessionRow>(
        `SELECT * FROM lifecycle_sessions WHERE agent = $1 AND status = 'open' AND ($2::timestamptz IS NULL OR last_activity_at <= $2)
         ORDER BY last_activity_at, session_id COLLATE "C"`,
        [agent, quietSince],
      )
      return rows.map(toSession)
    },

    async closeSession(agent, sessionId, close) {
      const { at, expected } = checkedClose(agent, sessionId, close)
      return handle.transaction(async (db) => {
        for (;;) {
          const row = await selectSession(db, agent, sessionId, true)
          if (row) {
            if (row.status !== 'open') return false
            if (expected !== undefined && row.last_activity_at !== expected) return false
            await db.query(`UPDATE lifecycle_sessions SET status = 'closed', closed_at = $3, close_reason = $4 WHERE agent = $1 AND session_id = $2`, [
              agent,
              sessionId,
              at,
              close.reason,
            ])
          } else {
            // Only an explicit end closes a session never seen (activity from before this record existed).
            if (expected !== undefined) return false
            const inserted = await db.query(
              `INSERT INTO lifecycle_sessions (agent, session_id, user_id, status, opened_at, last_activity_at, turns, closed_at, close_reason)
               VALUES ($1, $2, NULL, 'closed', $3, $3, 0, $3, $4) ON CONFLICT (agent, session_id) DO NOTHING`,
              [agent, sessionId, at, close.reason],
            )
            // Another process created it meanwhile: decide on its row.
            if (inserted.rowCount !== 1) continue
          }
          for (const job of close.enqueue ?? []) await insertJob(db, { ...job, agent }, at)
          return true
        }
      })
    },

    async recordHeartbeat(agent, at) {
      requireText(agent, 'agent')
      const when = instant(at, 'at')
      return handle.transaction(async (db) => {
        const inserted = await db.query('INSERT INTO lifecycle_heartbeats (agent, last_at) VALUES ($1, $2) ON CONFLICT (agent) DO NOTHING', [agent, when])
        if (inserted.rowCount === 1) return undefined
        const previous = await db.query<{ last_at: string }>('SELECT last_at FROM lifecycle_heartbeats WHERE agent = $1 FOR UPDATE', [agent])
        await db.query('UPDATE lifecycle_heartbeats SET last_at = greatest(last_at, $2::timestamptz) WHERE agent = $1', [agent, when])
        return previous.rows[0]?.last_at
      })
    },

    async increment(agent, user, name, at) {
      requireText(agent, 'agent')
      requireText(name, 'counter name')
      const { rows } = await pool.query<{ value: number }>(
        `INSERT INTO lifecycle_counters (agent, user_id, name, value, updated_at) VALUES ($1, $2, $3, 1, $4)
         ON CONFLICT (agent, user_id, name) DO UPDATE SET value = lifecycle_counters.value + 1, updated_at = excluded.updated_at RETURNING value`,
        [agent, user ?? '', name, instant(at, 'at')],
      )
      return (rows[0] as { value: number }).value
    },

    enqueue(job) {
      return insertJob(pool, job, options.clock.now().toISOString())
    },

    async claim(agent, claim) {
      const { now, leaseUntil } = checkedClaim(agent, claim)
      return handle.transaction(async (db) => {
        // A job whose process died on its last attempt is given up rather than tried forever.
        await db.query(
          `UPDATE lifecycle_jobs SET status = 'failed', finished_at = $2, updated_at = $2, lease_owner = NULL, lease_until = NULL,
             error = 'its lease expired ' || attempts || ' time(s): the process running it stopped'
           WHERE agent = $1 AND status = 'running' AND lease_until <= $2 AND attempts >= max_attempts`,
          [agent, now],
        )
        const { rows } = await db.query<JobRow>(
          `UPDATE lifecycle_jobs SET status = 'running', lease_owner = $3, lease_until = $4, attempts = attempts + 1, updated_at = $2
           WHERE id = (
             SELECT id FROM lifecycle_jobs
              WHERE agent = $1 AND ((status = 'queued' AND run_after <= $2) OR (status = 'running' AND lease_until <= $2)) AND ($5::bigint IS NULL OR id = $5)
              ORDER BY run_after, id LIMIT 1 FOR UPDATE SKIP LOCKED)
           RETURNING *`,
          [agent, now, claim.owner, leaseUntil, claim.id ?? null],
        )
        return rows[0] ? toJob(rows[0]) : null
      })
    },

    async settle(id, owner, settlement: JobSettlement) {
      const at = instant(settlement.at, 'at')
      if (settlement.status === 'failed') {
        const retryAt = settlement.retryAt === undefined ? null : instant(settlement.retryAt, 'retryAt')
        const result = await pool.query(
          `UPDATE lifecycle_jobs SET
             status = CASE WHEN $4::timestamptz IS NOT NULL AND attempts < max_attempts THEN 'queued' ELSE 'failed' END,
             run_after = CASE WHEN $4::timestamptz IS NOT NULL AND attempts < max_attempts THEN $4::timestamptz ELSE run_after END,
             finished_at = CASE WHEN $4::timestamptz IS NOT NULL AND attempts < max_attempts THEN NULL ELSE $3::timestamptz END,
             error = $5, updated_at = $3, lease_owner = NULL, lease_until = NULL
           WHERE id = $1 AND status = 'running' AND lease_owner = $2`,
          [id, owner, at, retryAt, settlement.error],
        )
        return result.rowCount === 1
      }
      const result = await pool.query(
        `UPDATE lifecycle_jobs SET status = $4, result = $5::json, updated_at = $3, finished_at = $3, lease_owner = NULL, lease_until = NULL
         WHERE id = $1 AND status = 'running' AND lease_owner = $2`,
        [id, owner, at, settlement.status, JSON.stringify(settlement.result ?? {})],
      )
      return result.rowCount === 1
    },

    async jobs(agent, filter = {}) {
      if (filter.status !== undefined) {
        for (const status of filter.status) if (!JOB_STATUSES.includes(status)) throw invalid(`${JSON.stringify(status)} is not a job status.`, `Use ${JOB_STATUSES.join(', ')}.`)
      }
      const limit = filter.limit ?? -1
      const { rows } = await pool.query<JobRow>(
        `SELECT * FROM lifecycle_jobs WHERE agent = $1 AND ($2::text[] IS NULL OR status = ANY($2)) AND ($3::text IS NULL OR kind = $3)
         ORDER BY id DESC LIMIT $4`,
        [agent, filter.status ?? null, filter.kind ?? null, limit < 0 ? null : limit],
      )
      return rows.map(toJob)
    },

    async pruneJobs(agent, finishedBefore) {
      const before = instant(finishedBefore, 'finishedBefore')
      const result = await pool.query(`DELETE FROM lifecycle_jobs WHERE agent = $1 AND status IN ('done', 'skipped') AND finished_at < $2`, [agent, before])
      return result.rowCount ?? 0
    },

    async saveTurn(record) {
      requireText(record.agent, 'agent')
      requireText(record.sessionId, 'session id')
      if (!Number.isInteger(record.turn) || record.turn < 1) throw invalid('turn must be a whole number ≥ 1.', 'Pass the turn number from beginTurn.')
      const startedAt = instant(record.startedAt, 'startedAt')
      await handle.transaction(async (db) => {
        await db.query(
          `INSERT INTO lifecycle_turns (agent, session_id, turn, user_id, message_id, started_at, type, provenance) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json)
           ON CONFLICT (agent, session_id, turn) DO UPDATE SET user_id = excluded.user_id, message_id = excluded.message_id,
             started_at = excluded.started_at, type = excluded.type, provenance = excluded.provenance`,
          [record.agent, record.sessionId, record.turn, record.user ?? null, record.messageId, startedAt, record.type, JSON.stringify(record.provenance)],
        )
        await db.query(
          `INSERT INTO lifecycle_turn_messages (message_id, agent, session_id, turn) VALUES ($1, $2, $3, $4)
           ON CONFLICT (agent, message_id) DO UPDATE SET session_id = excluded.session_id, turn = excluded.turn`,
          [record.messageId, record.agent, record.sessionId, record.turn],
        )
      })
    },

    async addTurnReplies(agent, sessionId, turn, messageIds) {
      // Each id once: one statement cannot update the same row twice.
      const ids = [...new Set(messageIds)]
      if (ids.length === 0) return
      await pool.query(
        `INSERT INTO lifecycle_turn_messages (message_id, agent, session_id, turn) SELECT id, $2, $3, $4 FROM unnest($1::bigint[]) AS id
         ON CONFLICT (agent, message_id) DO UPDATE SET session_id = excluded.session_id, turn = excluded.turn`,
        [ids, agent, sessionId, turn],
      )
    },

    async turn(agent, ref) {
      const { rows } =
        'messageId' in ref
          ? await pool.query<TurnRow>(
              `SELECT ${TURN_COLUMNS} FROM lifecycle_turn_messages k JOIN lifecycle_turns t ON t.agent = k.agent AND t.session_id = k.session_id AND t.turn = k.turn
               WHERE k.agent = $1 AND k.message_id = $2`,
              [agent, ref.messageId],
            )
          : await pool.query<TurnRow>(`SELECT ${TURN_COLUMNS} FROM lifecycle_turns t WHERE t.agent = $1 AND t.session_id = $2 AND t.turn = $3`, [agent, ref.sessionId, ref.turn])
      return rows[0] ? toTurn(rows[0]) : null
    },

    async recentTurns(agent, user, limit) {
      if (!Number.isInteger(limit) || limit < 0) throw invalid('limit must be a whole number ≥ 0.', 'Pass how many turns to read.')
      const { rows } = await pool.query<TurnRow>(
        `SELECT ${TURN_COLUMNS} FROM lifecycle_turns t WHERE t.agent = $1 AND t.user_id IS NOT DISTINCT FROM $2 ORDER BY t.started_at DESC, t.turn DESC LIMIT $3`,
        [agent, user ?? null, limit],
      )
      return rows.map(toTurn)
    },

    async purgeUser(user) {
      requireText(user, 'user')
      return handle.transaction(async (db) => {
        await db.query(
          `DELETE FROM lifecycle_turn_messages m USING lifecycle_turns t
            WHERE t.user_id = $1 AND t.agent = m.agent AND t.session_id = m.session_id AND t.turn = m.turn`,
          [user],
        )
        const turns = (await db.query('DELETE FROM lifecycle_turns WHERE user_id = $1', [user])).rowCount ?? 0
        const sessions = (await db.query('DELETE FROM lifecycle_sessions WHERE user_id = $1', [user])).rowCount ?? 0
        const counters = (await db.query('DELETE FROM lifecycle_counters WHERE user_id = $1', [user])).rowCount ?? 0
        // Every job a session with a user queues names the user in its payload (turn-work, session-boundaries).
        const jobs = (await db.query(`DELETE FROM lifecycle_jobs WHERE payload->>'user' = $1`, [user])).rowCount ?? 0
        return { sessions, turns, counters, jobs }
      })
    },
  }
}
