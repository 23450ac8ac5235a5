/**
 * The lossless context store on SQLite (anna's `ctx_*` tables): messages are only ever appended,
 * summaries and their DAG edges are only ever added, and the context window (`ctx_items`) is the
 * one thing that changes — always in the same transaction as the DAG that explains the change.
 *
 * Item positions are integers that only grow. An append takes max + 1; `replaceWithSummary` gives
 * the summary the first position of the run it replaces and deletes the rest. Order is therefore
 * kept without renumbering (no rewrite of every later row, positions a caller holds stay valid
 * until that very item is folded), at the price of gaps: "contiguous" means adjacent in order, not
 * numerically consecutive.
 */
import type { Clock } from '../../core/clock.ts'
import type { MessageInput, StoredMessage, Summary } from '../../core/message.ts'
import {
  CONVERSATION_COLUMNS,
  type ConversationRow,
  checkItemRange,
  checkMessages,
  checkPositions,
  checkSummary,
  conversationNotFound,
  foreignMessages,
  foreignSummaries,
  type ItemRow,
  inRequestedOrder,
  invalidContext as invalid,
  MESSAGE_COLUMNS,
  type MessageRow,
  newSummaryId,
  notContiguous,
  requireCount,
  requireSessionOwner,
  SUMMARY_COLUMNS,
  type SummaryRow,
  toConversation,
  toItem,
  toMessage as toMessageWith,
  toSummary,
} from '../context-records.ts'
import type { ContextStore, NewSummary } from '../contracts.ts'
import type { SqliteHandle } from './database.ts'
import { changesOf, eraseInTransaction } from './erase.ts'
import { parseJsonObject } from './json.ts'
import { indexWriterOn, type PreparedIndexWrite } from './search-index.ts'

export interface SqliteContextStoreOptions {
  clock: Clock
}

/** `meta` is JSON text on SQLite. */
function toMessage(row: MessageRow): StoredMessage {
  return toMessageWith(row, (value) => parseJsonObject(value as string))
}

/**
 * A ContextStore over `handle`. Every write is one IMMEDIATE transaction, so several processes
 * can append to the same conversation: seqs never collide and each writer's order is kept.
 */
export function createSqliteContextStore(handle: SqliteHandle, options: SqliteContextStoreOptions): ContextStore {
  const { db } = handle
  const { clock } = options

  const selectConversation = db.prepare(`SELECT ${CONVERSATION_COLUMNS} FROM ctx_conversations WHERE session_id = ? AND agent_id = ?`)
  const selectConversationById = db.prepare('SELECT id FROM ctx_conversations WHERE id = ?')

  const selectItems = db.prepare(
    'SELECT position, message_id, summary_id FROM ctx_items WHERE conversation_id = ? AND position > ? AND position < ? ORDER BY position LIMIT ?',
  )
  const selectNewestItems = db.prepare(
    'SELECT position, message_id, summary_id FROM ctx_items WHERE conversation_id = ? AND position > ? AND position < ? ORDER BY position DESC LIMIT ?',
  )
  const countItemsBefore = db.prepare('SELECT count(*) AS n FROM ctx_items WHERE conversation_id = ? AND position < ?')
  const selectWindowStats = db.prepare(
    `SELECT count(*) AS items, coalesce(sum(coalesce(m.token_count, s.token_count)), 0) AS tokens, coalesce(max(i.position), 0) AS last
     FROM ctx_items i LEFT JOIN ctx_messages m ON m.id = i.message_id LEFT JOIN ctx_summaries s ON s.id = i.summary_id
     WHERE i.conversation_id = ?`,
  )

  const selectTop = db.prepare(
    `SELECT (SELECT coalesce(max(seq), 0) FROM ctx_messages WHERE conversation_id = ?1) AS seq,
            (SELECT coalesce(max(position), 0) FROM ctx_items WHERE conversation_id = ?1) AS position`,
  )
  const insertMessage = db.prepare(
    `INSERT INTO ctx_messages (conversation_id, seq, role, name, content, token_count, created_at, meta)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  )
  const insertItem = db.prepare('INSERT INTO ctx_items (conversation_id, position, message_id) VALUES (?, ?, ?)')

  /** Inside the caller's transaction: the messages stored after the conversation's last one, each with its context item. */
  function insertMessages(conversationId: number, messages: Array<MessageInput & { at: string; tokenCount: number }>): StoredMessage[] {
    requireConversation(conversationId)
    // Read inside the IMMEDIATE transaction: no other process can append between this read
    // and our inserts, so seq and position never collide across processes.
    const top = selectTop.get(conversationId) as { seq: number; position: number }
    // The stored message is built from what was written, not read back: only its id is new.
    return messages.map((message, i) => {
      const seq = top.seq + i + 1
      const name = message.name ?? null
      const meta = message.meta === undefined ? null : JSON.stringify(message.meta)
      const { id } = insertMessage.get(conversationId, seq, message.role, name, message.content, message.tokenCount, message.at, meta) as { id: number }
      insertItem.run(conversationId, top.position + i + 1, id)
      const row: MessageRow = { id, conversation_id: conversationId, seq, role: message.role, name, content: message.content, token_count: message.tokenCount, created_at: message.at, meta }
      return toMessage(row)
    })
  }

  function requireConversation(conversationId: number): void {
    if (!Number.isInteger(conversationId) || !selectConversationById.get(conversationId)) throw conversationNotFound(conversationId)
  }

  // Looked up by primary key, then checked for the conversation (`+conversation_id` keeps the
  // planner off the conversation index, which would scan every message of the conversation per
  // summary: compaction of a 100k backlog went quadratic on it).
  const countOwnMessages = db.prepare('SELECT count(*) AS n FROM ctx_messages WHERE id IN (SELECT value FROM json_each(?)) AND +conversation_id = ?')
  const countOwnSummaries = db.prepare('SELECT count(*) AS n FROM ctx_summaries WHERE id IN (SELECT value FROM json_each(?)) AND +conversation_id = ?')

  function validateSummary(conversationId: number, summary: NewSummary): { messageIds: number[]; parentIds: string[] } {
    const { messageIds, parentIds } = checkSummary(summary)
    if (messageIds.length > 0) {
      const found = countOwnMessages.get(JSON.stringify(messageIds), conversationId) as { n: number }
      if (found.n !== messageIds.length) throw foreignMessages(conversationId, messageIds)
    }
    if (parentIds.length > 0) {
      const found = countOwnSummaries.get(JSON.stringify(parentIds), conversationId) as { n: number }
      if (found.n !== parentIds.length) throw foreignSummaries(conversationId, parentIds)
    }
    return { messageIds, parentIds }
  }

  // Prepared once: an append reads the two messages before it back, and preparing cost more than reading them.
  const selectMessageRange = db.prepare(
    `SELECT ${MESSAGE_COLUMNS} FROM ctx_messages
     WHERE conversation_id = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
  )
  const selectMessagesById = db.prepare(`SELECT ${MESSAGE_COLUMNS} FROM ctx_messages WHERE id IN (SELECT value FROM json_each(?))`)
  const selectSummariesById = db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM ctx_summaries WHERE id IN (SELECT value FROM json_each(?))`)
  const selectMessageEdges = db.prepare('SELECT message_id FROM ctx_summary_messages WHERE summary_id = ? ORDER BY ord')
  const selectSummaryEdges = db.prepare('SELECT folded_summary_id FROM ctx_summary_parents WHERE summary_id = ? ORDER BY ord')
  const selectRun = db.prepare('SELECT position FROM ctx_items WHERE conversation_id = ? AND position BETWEEN ? AND ? ORDER BY position')

  /** The positions must be existing items of the conversation with no other item between them. */
  function validateRun(conversationId: number, positions: number[]): number[] {
    const sorted = checkPositions(positions)
    const first = sorted[0]!
    const last = sorted[sorted.length - 1]!
    const between = selectRun.all(conversationId, first, last) as Array<{ position: number }>
    const contiguous = between.length === sorted.length && between.every((row, i) => row.position === sorted[i])
    if (!contiguous) throw notContiguous(conversationId, sorted, between.map((row) => row.position))
    return sorted
  }

  const insertSummary = db.prepare(`INSERT INTO ctx_summaries (${SUMMARY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${SUMMARY_COLUMNS}`)
  const insertMessageEdge = db.prepare('INSERT INTO ctx_summary_messages (summary_id, message_id, ord) VALUES (?, ?, ?)')
  const insertSummaryEdge = db.prepare('INSERT INTO ctx_summary_parents (summary_id, folded_summary_id, ord) VALUES (?, ?, ?)')
  const deleteItems = db.prepare('DELETE FROM ctx_items WHERE conversation_id = ? AND position BETWEEN ? AND ?')
  const insertSummaryItem = db.prepare('INSERT INTO ctx_items (conversation_id, position, summary_id) VALUES (?, ?, ?)')

  /** One summary replacing a run of items; inside the caller's transaction. */
  function replaceOne(conversationId: number, positions: number[], summary: NewSummary): Summary {
    // Validation runs inside the transaction: the items read are the items replaced.
    const run = validateRun(conversationId, positions)
    const { messageIds, parentIds } = validateSummary(conversationId, summary)
    const id = newSummaryId()
    const row = insertSummary.get(
      id,
      conversationId,
      summary.kind,
      summary.depth,
      summary.content,
      summary.tokenCount,
      summary.sourceTokenCount,
      summary.earliestAt,
      summary.latestAt,
      summary.method,
      clock.now().toISOString(),
    ) as unknown as SummaryRow
    for (const [ord, messageId] of messageIds.entries()) insertMessageEdge.run(id, messageId, ord)
    for (const [ord, foldedId] of parentIds.entries()) insertSummaryEdge.run(id, foldedId, ord)
    deleteItems.run(conversationId, run[0]!, run[run.length - 1]!)
    insertSummaryItem.run(conversationId, run[0]!, id)
    return toSummary(row)
  }

  const store: ContextStore = {
    async conversation(sessionId, owner) {
      requireSessionOwner(sessionId, owner)
      // Every turn asks for its conversation: answer from a plain read when nothing must be written,
      // so the common case never takes the write lock.
      const known = selectConversation.get(sessionId, owner.agent) as ConversationRow | undefined
      if (known && (known.user_id !== null || owner.user === undefined)) return toConversation(known)
      return handle.transaction(() => {
        const existing = selectConversation.get(sessionId, owner.agent) as ConversationRow | undefined
        if (existing) {
          // A session first seen without a user learns it before its first message; messages already
          // stored are the agent's (decision 0017), so such a conversation keeps no user. An existing
          // user is never overwritten.
          const empty = existing.user_id === null && owner.user !== undefined && db.prepare('SELECT 1 FROM ctx_messages WHERE conversation_id = ? LIMIT 1').get(existing.id) === undefined
          if (empty && owner.user !== undefined) {
            db.prepare('UPDATE ctx_conversations SET user_id = ? WHERE id = ?').run(owner.user, existing.id)
            return toConversation({ ...existing, user_id: owner.user })
          }
          return toConversation(existing)
        }
        db.prepare('INSERT INTO ctx_conversations (session_id, agent_id, user_id, created_at) VALUES (?, ?, ?, ?)').run(
          sessionId,
          owner.agent,
          owner.user ?? null,
          clock.now().toISOString(),
        )
        return toConversation(selectConversation.get(sessionId, owner.agent) as unknown as ConversationRow)
      })
    },

    async findConversation(sessionId, agent) {
      const row = selectConversation.get(sessionId, agent) as ConversationRow | undefined
      return row ? toConversation(row) : null
    },

    async listConversations(agent) {
      const rows = (
        agent === undefined
          ? db.prepare(`SELECT ${CONVERSATION_COLUMNS} FROM ctx_conversations ORDER BY id`).all()
          : db.prepare(`SELECT ${CONVERSATION_COLUMNS} FROM ctx_conversations WHERE agent_id = ? ORDER BY id`).all(agent)
      ) as unknown as ConversationRow[]
      return rows.map(toConversation)
    },

    async appendMessages(conversationId, messages) {
      checkMessages(messages)
      if (messages.length === 0) return []
      return handle.transaction(() => insertMessages(conversationId, messages))
    },

    async appendMessagesIndexed(conversationId, messages, indexing) {
      const prepare = indexWriterOn(handle, indexing.index)
      if (prepare === undefined) return undefined
      checkMessages(messages)
      if (messages.length === 0) return []
      let write: PreparedIndexWrite | undefined
      // One transaction, one commit: the store's rows and the index's (an append used to commit
      // twice, and a crash between the two left messages unindexed until a search caught up).
      const stored = handle.transaction(() => {
        const appended = insertMessages(conversationId, messages)
        const first = appended[0]!.seq
        const before = first > 1 && indexing.before > 0 ? (selectMessageRange.all(conversationId, Math.max(1, first - indexing.before), first - 1, -1) as unknown as MessageRow[]).map(toMessage) : []
        write = prepare(indexing.units([...before, ...appended], appended.length))
        write?.rows()
        return appended
      })
      write?.committed()
      return stored
    },

    async messages(conversationId, range = {}) {
      const rows = selectMessageRange
        .all(
          conversationId,
          range.fromSeq ?? 1,
          range.toSeq ?? Number.MAX_SAFE_INTEGER,
          range.limit === undefined ? -1 : requireCount(range.limit, 'range.limit'),
        ) as unknown as MessageRow[]
      return rows.map(toMessage)
    },

    async messagesById(ids) {
      if (ids.length === 0) return []
      const rows = selectMessagesById.all(JSON.stringify(ids)) as unknown as MessageRow[]
      return inRequestedOrder(ids, rows, (row) => row.id).map(toMessage)
    },

    async messageCount(conversationId) {
      const row = db.prepare('SELECT count(*) AS n FROM ctx_messages WHERE conversation_id = ?').get(conversationId) as { n: number }
      return row.n
    },

    async items(conversationId, range = {}) {
      const { after, before, limit, newest } = checkItemRange(range)
      const rows = (newest ? selectNewestItems : selectItems).all(conversationId, after, before, limit ?? -1) as unknown as ItemRow[]
      if (newest) rows.reverse()
      return rows.map(toItem)
    },

    async countItems(conversationId, before) {
      const row = countItemsBefore.get(conversationId, before === undefined ? Number.MAX_SAFE_INTEGER : checkItemRange({ before }).before) as { n: number }
      return row.n
    },

    async windowStats(conversationId) {
      const row = selectWindowStats.get(conversationId) as { items: number; tokens: number; last: number }
      return { items: row.items, tokens: row.tokens, lastPosition: row.last }
    },

    async replaceWithSummary(conversationId, positions, summary) {
      return handle.transaction(() => {
        requireConversation(conversationId)
        return replaceOne(conversationId, positions, summary)
      })
    },

    async replaceWithSummaries(conversationId, replacements) {
      if (replacements.length === 0) return []
      return handle.transaction(() => {
        requireConversation(conversationId)
        return replacements.map(({ positions, summary }) => replaceOne(conversationId, positions, summary))
      })
    },

    async summary(id) {
      const row = db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM ctx_summaries WHERE id = ?`).get(id) as SummaryRow | undefined
      return row ? toSummary(row) : null
    },

    async summariesById(ids) {
      if (ids.length === 0) return []
      const rows = selectSummariesById.all(JSON.stringify(ids)) as unknown as SummaryRow[]
      return inRequestedOrder(ids, rows, (row) => row.id).map(toSummary)
    },

    async summaryChildren(id) {
      const messages = selectMessageEdges.all(id) as Array<{ message_id: number }>
      const summaries = selectSummaryEdges.all(id) as Array<{ folded_summary_id: string }>
      return { messageIds: messages.map((row) => row.message_id), summaryIds: summaries.map((row) => row.folded_summary_id) }
    },

    async summaryParents(target) {
      const rows = (
        'summaryId' in target
          ? db
              .prepare(
                `SELECT p.summary_id FROM ctx_summary_parents p JOIN ctx_summaries s ON s.id = p.summary_id
                 WHERE p.folded_summary_id = ? ORDER BY s.created_at, p.summary_id`,
              )
              .all(target.summaryId)
          : db
              .prepare(
                `SELECT m.summary_id FROM ctx_summary_messages m JOIN ctx_summaries s ON s.id = m.summary_id
                 WHERE m.message_id = ? ORDER BY s.created_at, m.summary_id`,
              )
              .all(target.messageId)
      ) as Array<{ summary_id: string }>
      return rows.map((row) => row.summary_id)
    },

    async purgeUser(user) {
      if (typeof user !== 'string' || user === '') throw invalid('user must be a non-empty string.', 'Pass the id of the user to erase.')
      return eraseInTransaction(handle, () => {
        const theirs = 'SELECT id FROM ctx_conversations WHERE user_id = ?'
        const summaries = `SELECT id FROM ctx_summaries WHERE conversation_id IN (${theirs})`
        // Children before parents: foreign keys are on.
        db.prepare(`DELETE FROM ctx_items WHERE conversation_id IN (${theirs})`).run(user)
        db.prepare(`DELETE FROM ctx_summary_messages WHERE summary_id IN (${summaries})`).run(user)
        db.prepare(`DELETE FROM ctx_summary_parents WHERE summary_id IN (${summaries})`).run(user)
        const summaryCount = changesOf(db.prepare(`DELETE FROM ctx_summaries WHERE conversation_id IN (${theirs})`).run(user))
        const messageCount = changesOf(db.prepare(`DELETE FROM ctx_messages WHERE conversation_id IN (${theirs})`).run(user))
        db.prepare(`DELETE FROM ctx_review_marks WHERE conversation_id IN (${theirs})`).run(user)
        db.prepare(
          'DELETE FROM ctx_session_info WHERE EXISTS (SELECT 1 FROM ctx_conversations c WHERE c.user_id = ? AND c.session_id = ctx_session_info.session_id AND c.agent_id = ctx_session_info.agent_id)',
        ).run(user)
        const conversationCount = changesOf(db.prepare('DELETE FROM ctx_conversations WHERE user_id = ?').run(user))
        db.prepare('DELETE FROM ctx_agent_memory WHERE user_id = ?').run(user)
        return { conversations: conversationCount, messages: messageCount, summaries: summaryCount }
      })
    },
  }
  return store
}
