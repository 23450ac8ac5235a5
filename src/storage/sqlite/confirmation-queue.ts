/**
 * Pending confirmations (copilot mode): engrams the encoding gate held back until the user says
 * yes or no. They are rows in SQLite (`memory_confirmations`, migration 2), so they survive a
 * restart, and a UI reads them only after an answer, before the next prompt: `pending()` is a
 * plain read and nothing here pushes anything at the user mid-turn.
 *
 * The queue only records decisions. Saving an accepted engram is the encoder's job
 * (`EngramEncoder.acceptConfirmations`): it encodes first and marks the row accepted after, so a
 * crash in between leaves the row pending and a second accept finds the memory already saved
 * (deduplicated) instead of losing it.
 *
 * The database is typed structurally (what we call on it), so this memory system does not depend
 * on a concrete backend; the embedded backend's `node:sqlite` handle fits.
 */
import type { Clock } from '../../core/clock.ts'
import { type ConfirmationRow, documentDedupe, engramDedupe, selectionIds, toPendingConfirmation } from '../confirmation-records.ts'
import type { ConfirmationQueue, ConfirmationSelection, PendingConfirmation, PendingMemory, UserConfirmation } from '../contracts.ts'
import { changesOf, eraseInTransaction } from './erase.ts'

export type { ConfirmationQueue }

interface Statement {
  run(...params: Array<string | number | null>): unknown
  get(...params: Array<string | number | null>): unknown
  all(...params: Array<string | number | null>): unknown[]
}

/** The part of a SQLite handle the queue uses (`SqliteHandle` from the embedded backend fits). */
export interface ConfirmationDatabase {
  readonly db: { prepare(sql: string): Statement; exec?(sql: string): void }
  transaction<T>(fn: () => T): T
}

export interface SqliteConfirmationQueueOptions {
  agent: string
  /** The open project folder; project-scope confirmations are kept per project. */
  project?: string
  clock: Clock
}

type Row = ConfirmationRow

const ROW_COLUMNS = 'id, engram, reason, queued_at, asked_by'
const WHERE = 'memory_confirmations in engram.db'

const toPending = (row: Row): PendingConfirmation => toPendingConfirmation(row, WHERE)

/** The confirmation queue in the `memory_confirmations` table of an engram database. */
export function createSqliteConfirmationQueue(database: ConfirmationDatabase, options: SqliteConfirmationQueueOptions): ConfirmationQueue {
  const { agent, clock } = options
  const project = options.project ?? ''
  // Global-scope confirmations belong to the agent wherever it runs; project-scope ones only make
  // sense (and can only be saved) in their own project.
  // A user answers only what their own sessions asked (decision 0017).
  const visible = `agent = ? AND asked_by = ? AND status = 'pending' AND (scope = 'global' OR project = ?)`

  // Read before every prompt and after every answer: prepared once.
  let selectVisible: Statement | undefined
  function selectPending(ids: number[] | 'all', user: string | undefined): Row[] {
    selectVisible ??= database.db.prepare(`SELECT ${ROW_COLUMNS} FROM memory_confirmations WHERE ${visible} ORDER BY id`)
    const rows = selectVisible.all(agent, user ?? '', project) as unknown as Row[]
    if (ids === 'all') return rows
    const wanted = new Set(ids)
    return rows.filter((row) => wanted.has(row.id))
  }

  function decide(selection: ConfirmationSelection, status: 'accepted' | 'rejected', user: string | undefined): PendingConfirmation[] {
    const ids = selectionIds(selection)
    return database.transaction(() => {
      const rows = selectPending(ids, user)
      const update = database.db.prepare(`UPDATE memory_confirmations SET status = ?, decided_at = ? WHERE id = ? AND status = 'pending'`)
      const at = clock.now().toISOString()
      for (const row of rows) update.run(status, at, row.id)
      return rows.map(toPending)
    })
  }

  return {
    async pending(user) {
      return selectPending('all', user).map(toPending)
    },

    async enqueue(engram, reason, user) {
      const dedupe = engramDedupe(engram)
      const scopeProject = engram.scope === 'project' ? project : ''
      const owner = engram.owner ?? 'agent'
      const askedBy = user ?? ''
      return database.transaction(() => {
        const existing = database.db
          .prepare(
            `SELECT ${ROW_COLUMNS} FROM memory_confirmations WHERE agent = ? AND project = ? AND scope = ? AND owner = ? AND asked_by = ? AND dedupe = ? AND status = 'pending'`,
          )
          .get(agent, scopeProject, engram.scope, owner, askedBy, dedupe) as Row | undefined
        if (existing) return toPending(existing) as PendingMemory
        const queuedAt = clock.now().toISOString()
        const row = database.db
          .prepare(
            `INSERT INTO memory_confirmations (agent, project, scope, owner, asked_by, engram, dedupe, reason, queued_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending') RETURNING ${ROW_COLUMNS}`,
          )
          .get(agent, scopeProject, engram.scope, owner, askedBy, JSON.stringify(engram), dedupe, reason, queuedAt) as Row
        return toPending(row) as PendingMemory
      })
    },

    async enqueueDocument(document, reason, user) {
      const dedupe = documentDedupe(document)
      const askedBy = user ?? ''
      return database.transaction(() => {
        const existing = database.db
          .prepare(`SELECT ${ROW_COLUMNS} FROM memory_confirmations WHERE agent = ? AND project = '' AND scope = 'global' AND owner = ? AND asked_by = ? AND dedupe = ? AND status = 'pending'`)
          .get(agent, document.owner, askedBy, dedupe) as Row | undefined
        if (existing) return toPending(existing)
        const row = database.db
          .prepare(
            `INSERT INTO memory_confirmations (agent, project, scope, owner, asked_by, engram, dedupe, reason, queued_at, status) VALUES (?, '', 'global', ?, ?, ?, ?, ?, ?, 'pending') RETURNING ${ROW_COLUMNS}`,
          )
          .get(agent, document.owner, askedBy, JSON.stringify({ document }), dedupe, reason, clock.now().toISOString()) as Row
        return toPending(row)
      })
    },

    async accept(selection, user) {
      return decide(selection, 'accepted', user)
    },

    async reject(selection, user) {
      return decide(selection, 'rejected', user)
    },

    async ofUser(user) {
      const rows = database.db
        .prepare(`SELECT ${ROW_COLUMNS}, agent, status, decided_at FROM memory_confirmations WHERE asked_by = ? OR owner = ? ORDER BY id`)
        .all(user, `user:${user}`) as unknown as Array<Row & { agent: string; status: UserConfirmation['status']; decided_at: string | null }>
      return rows.map((row) => ({ ...toPending(row), agent: row.agent, status: row.status, ...(row.decided_at !== null ? { decidedAt: row.decided_at } : {}) }))
    },

    async purgeUser(user) {
      return eraseInTransaction(database, () => changesOf(database.db.prepare('DELETE FROM memory_confirmations WHERE asked_by = ? OR owner = ?').run(user, `user:${user}`)))
    },
  }
}
