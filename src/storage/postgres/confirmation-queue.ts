/**
 * Pending confirmations on PostgreSQL (migration 3), the same rows as SQLite's
 * `memory_confirmations`, shared by every process of every agent that uses the database.
 *
 * Each change is one statement: an enqueue inserts with `ON CONFLICT DO NOTHING` on the
 * one-pending-row index and reads the pending row back when another process queued it first; an
 * answer is one `UPDATE … WHERE status = 'pending' RETURNING`, so two processes answering at once
 * each get the rows they decided and none twice.
 */
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { contentHash } from '../../core/hash.ts'
import { type ConfirmationRow, documentDedupe, engramDedupe, selectionIds, toPendingConfirmation } from '../confirmation-records.ts'
import type { ConfirmationQueue, ConfirmationSelection, PendingConfirmation, PendingMemory, UserConfirmation } from '../contracts.ts'
import type { PostgresHandle } from './connection.ts'
import { requireText } from '../input-checks.ts'

export interface PostgresConfirmationQueueOptions {
  agent: string
  /** The open project folder; project-scope confirmations are kept per project. */
  project?: string
  clock: Clock
}

const ROW_COLUMNS = 'id, engram, reason, queued_at, asked_by'

interface Pending {
  project: string
  scope: 'global' | 'project'
  owner: string
  askedBy: string
  engram: string
  /** SQLite's key, hashed: it holds NUL separators, which PostgreSQL text cannot. */
  dedupe: string
  reason: string
}

/** The confirmation queue of `options.agent` in the `memory_confirmations` table of `handle`'s schema. */
export function createPostgresConfirmationQueue(handle: PostgresHandle, options: PostgresConfirmationQueueOptions): ConfirmationQueue {
  const { pool } = handle
  const { clock } = options
  const agent = requireText(options.agent, 'agent')
  const project = options.project ?? ''
  const where = `memory_confirmations in schema "${handle.schema}" of the database`
  const toPending = (row: ConfirmationRow): PendingConfirmation => toPendingConfirmation(row, where)
  // Global-scope confirmations belong to the agent wherever it runs; project-scope ones only to
  // their project. A user answers only what their own sessions asked (decision 0017).
  const visible = `agent = $1 AND asked_by = $2 AND status = 'pending' AND (scope = 'global' OR project = $3)`

  async function queue(pending: Pending): Promise<PendingConfirmation> {
    const key = [agent, pending.project, pending.scope, pending.owner, pending.askedBy, pending.dedupe]
    // Another process may queue the same memory, or answer it, between the two statements: try again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const inserted = await pool.query<ConfirmationRow>(
        `INSERT INTO memory_confirmations (agent, project, scope, owner, asked_by, dedupe, engram, reason, queued_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (agent, project, scope, owner, asked_by, dedupe) WHERE status = 'pending' DO NOTHING
         RETURNING ${ROW_COLUMNS}`,
        [...key, pending.engram, pending.reason, clock.now().toISOString()],
      )
      if (inserted.rows[0]) return toPending(inserted.rows[0])
      const existing = await pool.query<ConfirmationRow>(
        `SELECT ${ROW_COLUMNS} FROM memory_confirmations
         WHERE agent = $1 AND project = $2 AND scope = $3 AND owner = $4 AND asked_by = $5 AND dedupe = $6 AND status = 'pending'`,
        key,
      )
      if (existing.rows[0]) return toPending(existing.rows[0])
    }
    throw new EngramError({
      code: ErrorCode.storageUnavailable,
      category: 'system',
      message: `A confirmation for ${pending.owner} could not be queued: other processes kept queuing and answering the same memory meanwhile.`,
      fix: 'Try again; if it persists, look for a process answering confirmations in a loop (engram confirm --accept all).',
    })
  }

  async function decide(selection: ConfirmationSelection, status: 'accepted' | 'rejected', user: string | undefined): Promise<PendingConfirmation[]> {
    const ids = selectionIds(selection)
    const { rows } = await pool.query<ConfirmationRow>(
      `UPDATE memory_confirmations SET status = $4, decided_at = $5
       WHERE ${visible} AND ($6::bigint[] IS NULL OR id = ANY($6))
       RETURNING ${ROW_COLUMNS}`,
      [agent, user ?? '', project, status, clock.now().toISOString(), ids === 'all' ? null : ids],
    )
    return rows.sort((a, b) => a.id - b.id).map(toPending)
  }

  return {
    async pending(user) {
      const { rows } = await pool.query<ConfirmationRow>(`SELECT ${ROW_COLUMNS} FROM memory_confirmations WHERE ${visible} ORDER BY id`, [agent, user ?? '', project])
      return rows.map(toPending)
    },

    async enqueue(engram, reason, user) {
      const pending = await queue({
        project: engram.scope === 'project' ? project : '',
        scope: engram.scope,
        owner: engram.owner ?? 'agent',
        askedBy: user ?? '',
        engram: JSON.stringify(engram),
        dedupe: contentHash(engramDedupe(engram)),
        reason,
      })
      return pending as PendingMemory
    },

    async enqueueDocument(document, reason, user) {
      return queue({
        project: '',
        scope: 'global',
        owner: document.owner,
        askedBy: user ?? '',
        engram: JSON.stringify({ document }),
        dedupe: contentHash(documentDedupe(document)),
        reason,
      })
    },

    accept: (selection, user) => decide(selection, 'accepted', user),
    reject: (selection, user) => decide(selection, 'rejected', user),

    async ofUser(user) {
      const { rows } = await pool.query<ConfirmationRow & { agent: string; status: UserConfirmation['status']; decided_at: string | null }>(
        `SELECT ${ROW_COLUMNS}, agent, status, decided_at FROM memory_confirmations WHERE asked_by = $1 OR owner = $2 ORDER BY id`,
        [user, `user:${user}`],
      )
      return rows.map((row) => ({ ...toPending(row), agent: row.agent, status: row.status, ...(row.decided_at !== null ? { decidedAt: row.decided_at } : {}) }))
    },

    async purgeUser(user) {
      const result = await pool.query('DELETE FROM memory_confirmations WHERE asked_by = $1 OR owner = $2', [user, `user:${user}`])
      return result.rowCount ?? 0
    },
  }
}
