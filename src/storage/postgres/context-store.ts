/**
 * The lossless context store on PostgreSQL (migration 6): SQLite's `ctx_*` tables and rules, with
 * the same rows read by the same codec (`../context-records.ts`), for many processes on many hosts
 * sharing one database.
 *
 * - **Appends** run in one transaction that first locks the conversation row (`SELECT … FOR
 *   UPDATE`) and then, in the next statement (whose snapshot sees every append committed before the
 *   lock was granted), takes max(seq) + 1 and max(position) + 1. Appenders to one conversation queue
 *   on that row, so seqs are dense from 1 and positions follow seq order, whichever process appends;
 *   appenders to different conversations never wait on each other. The batch is one statement.
 * - **`replaceWithSummary`** takes the same row lock, so the run it checks (present, adjacent) is
 *   the run it replaces, and writes the summary, its edges and the items change in one transaction.
 * - **`conversation`** is found or created without a race: `INSERT … ON CONFLICT DO NOTHING`, then
 *   the row read back; a user is recorded on a conversation without messages under its row lock.
 * - **NUL.** PostgreSQL text cannot hold `\u0000`; SQLite stores it. A message is never refused or
 *   altered for it: a message (or summary) whose caller-given text (name, content, at; a summary's
 *   content, earliest_at, latest_at) holds a NUL is stored with `\` written `\\` and NUL written
 *   `\0`, and its `escaped` flag set; reads undo it. Rows without a NUL (nearly all) are stored as
 *   they are, so SQL and full-text search see the text itself. `meta` is `json`, whose text keeps a
 *   NUL as the escape `\u0000`. Session, agent and user ids are names, not content: one holding a
 *   NUL is refused with `invalid_argument`.
 * - Instants a caller gives are kept as the text given (as SQLite does), so a message reads back
 *   exactly as appended; instants engram stamps (`createdAt`) are timestamptz, read as ISO-8601.
 */
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { StoredMessage, Summary } from '../../core/message.ts'
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
  invalidContext,
  type MessageRow,
  type MessageToAppend,
  newSummaryId,
  notContiguous,
  requireCount,
  requireSessionOwner,
  type SummaryRow,
  toConversation,
  toItem,
  toMessage as toMessageWith,
  toSummary as toSummaryFrom,
} from '../context-records.ts'
import type { ContextStore, NewSummary } from '../contracts.ts'
import type { PostgresHandle } from './connection.ts'
import type { PgQueryable } from './driver.ts'
import { jsonObject } from './rows.ts'
import { postgresIndexWriterOn } from './search-index.ts'

export interface PostgresContextStoreOptions {
  clock: Clock
}

const NUL = '\u0000'
const MESSAGE_COLUMNS = 'id, conversation_id, seq, role, name, content, escaped, token_count, created_at, meta'
const SUMMARY_COLUMNS =
  'id, conversation_id, kind, depth, content, escaped, token_count, source_token_count, earliest_at, latest_at, method, created_at'

type EscapableMessageRow = MessageRow & { escaped: boolean }
type EscapableSummaryRow = SummaryRow & { escaped: boolean }

/** `\` → `\\`, NUL → `\0`: reversible, and text PostgreSQL can hold. */
export function escapeNul(text: string): string {
  return text.replace(/[\\\u0000]/g, (c) => (c === NUL ? '\\0' : '\\\\'))
}

export function unescapeNul(text: string): string {
  return text.replace(/\\([\\0])/g, (_, c: string) => (c === '0' ? NUL : '\\'))
}

function hasNul(...texts: Array<string | null | undefined>): boolean {
  return texts.some((text) => typeof text === 'string' && text.includes(NUL))
}

function toMessage(row: EscapableMessageRow): StoredMessage {
  const plain = row.escaped
    ? { ...row, content: unescapeNul(row.content), name: row.name === null ? null : unescapeNul(row.name), created_at: unescapeNul(row.created_at) }
    : row
  return toMessageWith(plain, jsonObject)
}

function toSummary(row: EscapableSummaryRow): Summary {
  const plain = row.escaped
    ? { ...row, content: unescapeNul(row.content), earliest_at: unescapeNul(row.earliest_at), latest_at: unescapeNul(row.latest_at) }
    : row
  return toSummaryFrom(plain)
}

/** Ids that can be stored at all: anything else matches no row (SQLite's answer too). */
function storableIds(ids: readonly number[]): number[] {
  return ids.filter((id) => Number.isSafeInteger(id))
}

function storableText(values: readonly string[]): string[] {
  return values.filter((value) => typeof value === 'string' && !value.includes(NUL))
}

/** A bound of a seq range as a whole number the bigint column compares with, or null when it matches nothing. */
function seqBound(value: number, round: (n: number) => number): number | null {
  if (typeof value !== 'number' || Number.isNaN(value)) return null
  return Math.min(Math.max(round(value), Number.MIN_SAFE_INTEGER), Number.MAX_SAFE_INTEGER)
}

function refuseNulName(value: string | undefined, what: string): void {
  if (value !== undefined && hasNul(value)) {
    throw invalidContext(`${what} holds a NUL character, which PostgreSQL text cannot store.`, `Pass ${what} without \\u0000.`)
  }
}

/**
 * A ContextStore over `handle`'s schema. Every write is one transaction; appends and compactions
 * of one conversation queue on its row lock, so any number of processes can share it.
 */
export function createPostgresContextStore(handle: PostgresHandle, options: PostgresContextStoreOptions): ContextStore {
  const { pool } = handle
  const { clock } = options

  async function selectConversation(db: PgQueryable, sessionId: string, agent: string): Promise<ConversationRow | undefined> {
    const { rows } = await db.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM ctx_conversations WHERE session_id = $1 AND agent_id = $2`, [
      sessionId,
      agent,
    ])
    return rows[0]
  }

  /** Lock the conversation's row for the rest of the transaction; not_found when there is none. */
  async function lockConversation(client: PgQueryable, conversationId: number): Promise<void> {
    if (!Number.isSafeInteger(conversationId)) throw conversationNotFound(conversationId)
    const { rows } = await client.query('SELECT id FROM ctx_conversations WHERE id = $1 FOR UPDATE', [conversationId])
    if (rows.length === 0) throw conversationNotFound(conversationId)
  }

  /** The positions must be current items of the conversation with no other item between them. */
  /** One summary replacing a run of items, in the caller's transaction, under the conversation's row lock. */
  async function replaceOne(client: PgQueryable, conversationId: number, positions: number[], summary: NewSummary): Promise<Summary> {
    // Under the row lock: the run checked is the run replaced.
    const run = await validateRun(client, conversationId, positions)
    const { messageIds, parentIds } = await validateSummary(client, conversationId, summary)
    const escaped = hasNul(summary.content, summary.earliestAt, summary.latestAt)
    const text = (value: string): string => (escaped ? escapeNul(value) : value)
    const id = newSummaryId()
    const { rows } = await client.query<EscapableSummaryRow>(
      `INSERT INTO ctx_summaries (${SUMMARY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${SUMMARY_COLUMNS}`,
      [
        id,
        conversationId,
        summary.kind,
        summary.depth,
        text(summary.content),
        escaped,
        summary.tokenCount,
        summary.sourceTokenCount,
        text(summary.earliestAt),
        text(summary.latestAt),
        summary.method,
        clock.now().toISOString(),
      ],
    )
    if (messageIds.length > 0) {
      await client.query(
        'INSERT INTO ctx_summary_messages (summary_id, message_id, ord) SELECT $1, m.id, m.ord - 1 FROM unnest($2::bigint[]) WITH ORDINALITY AS m (id, ord)',
        [id, messageIds],
      )
    }
    if (parentIds.length > 0) {
      await client.query(
        'INSERT INTO ctx_summary_parents (summary_id, folded_summary_id, ord) SELECT $1, p.id, p.ord - 1 FROM unnest($2::text[]) WITH ORDINALITY AS p (id, ord)',
        [id, parentIds],
      )
    }
    await client.query('DELETE FROM ctx_items WHERE conversation_id = $1 AND position BETWEEN $2 AND $3', [conversationId, run[0]!, run[run.length - 1]!])
    await client.query('INSERT INTO ctx_items (conversation_id, position, summary_id) VALUES ($1, $2, $3)', [conversationId, run[0]!, id])
    return toSummary(rows[0]!)
  }

  async function validateRun(client: PgQueryable, conversationId: number, positions: number[]): Promise<number[]> {
    const sorted = checkPositions(positions)
    // A position past what bigint holds (or than a number keeps exactly) is no item's.
    if (!sorted.every((p) => Number.isSafeInteger(p))) throw notContiguous(conversationId, sorted, [])
    const first = sorted[0]!
    const last = sorted[sorted.length - 1]!
    const { rows } = await client.query<{ position: number }>(
      'SELECT position FROM ctx_items WHERE conversation_id = $1 AND position BETWEEN $2 AND $3 ORDER BY position',
      [conversationId, first, last],
    )
    const contiguous = rows.length === sorted.length && rows.every((row, i) => row.position === sorted[i])
    if (!contiguous) throw notContiguous(conversationId, sorted, rows.map((row) => row.position))
    return sorted
  }

  async function validateSummary(client: PgQueryable, conversationId: number, summary: NewSummary): Promise<{ messageIds: number[]; parentIds: string[] }> {
    const { messageIds, parentIds } = checkSummary(summary)
    if (messageIds.length > 0) {
      const ids = storableIds(messageIds)
      const { rows } = await client.query<{ n: number }>('SELECT count(*) AS n FROM ctx_messages WHERE conversation_id = $1 AND id = ANY($2::bigint[])', [
        conversationId,
        ids,
      ])
      if (ids.length !== messageIds.length || rows[0]?.n !== messageIds.length) throw foreignMessages(conversationId, messageIds)
    }
    if (parentIds.length > 0) {
      const ids = storableText(parentIds)
      const { rows } = await client.query<{ n: number }>('SELECT count(*) AS n FROM ctx_summaries WHERE conversation_id = $1 AND id = ANY($2::text[])', [
        conversationId,
        ids,
      ])
      if (ids.length !== parentIds.length || rows[0]?.n !== parentIds.length) throw foreignSummaries(conversationId, parentIds)
    }
    return { messageIds, parentIds }
  }

  async function insertMessages(client: PgQueryable, conversationId: number, messages: readonly MessageToAppend[]): Promise<StoredMessage[]> {
    // A statement of its own after the lock: in READ COMMITTED it sees every append committed by
    // the transactions this one waited for (a subquery in the locking statement would not).
    const top = await client.query<{ seq: number; position: number }>(
      `SELECT (SELECT coalesce(max(seq), 0) FROM ctx_messages WHERE conversation_id = $1) AS seq,
              (SELECT coalesce(max(position), 0) FROM ctx_items WHERE conversation_id = $1) AS position`,
      [conversationId],
    )
    const { seq, position } = top.rows[0]!
    const escaped = messages.map((message) => hasNul(message.content, message.name, message.at))
    const text = (value: string, i: number): string => (escaped[i] ? escapeNul(value) : value)
    const { rows } = await client.query<EscapableMessageRow>(
      `WITH batch AS (
         SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::boolean[], $8::bigint[], $9::text[], $10::json[])
           WITH ORDINALITY AS m (role, name, content, escaped, token_count, created_at, meta, ord)
       ), stored AS (
         INSERT INTO ctx_messages (conversation_id, seq, role, name, content, escaped, token_count, created_at, meta)
         SELECT $1, $2::bigint + ord, role, name, content, escaped, token_count, created_at, meta FROM batch ORDER BY ord
         RETURNING ${MESSAGE_COLUMNS}
       ), placed AS (
         INSERT INTO ctx_items (conversation_id, position, message_id)
         SELECT $1, $3::bigint + (seq - $2::bigint), id FROM stored
       )
       SELECT ${MESSAGE_COLUMNS} FROM stored ORDER BY seq`,
      [
        conversationId,
        seq,
        position,
        messages.map((message) => message.role),
        messages.map((message, i) => (message.name === undefined || message.name === null ? null : text(message.name, i))),
        messages.map((message, i) => text(message.content, i)),
        escaped,
        messages.map((message) => message.tokenCount),
        messages.map((message, i) => text(message.at, i)),
        messages.map((message) => (message.meta === undefined ? null : JSON.stringify(message.meta))),
      ],
    )
    return rows.map(toMessage)
  }

  const store: ContextStore = {
    async conversation(sessionId, owner) {
      requireSessionOwner(sessionId, owner)
      refuseNulName(sessionId, 'sessionId')
      refuseNulName(owner.agent, 'owner.agent')
      refuseNulName(owner.user, 'owner.user')
      // Another process may create the conversation between our read and our insert, or erase it
      // between our insert and our update: each pass reads again what the others did.
      for (let attempt = 0; attempt < 5; attempt++) {
        // Every turn asks for its conversation: a plain read answers when nothing must be written.
        const known = await selectConversation(pool, sessionId, owner.agent)
        if (known && (known.user_id !== null || owner.user === undefined)) return toConversation(known)
        if (!known) {
          const created = await pool.query<ConversationRow>(
            `INSERT INTO ctx_conversations (session_id, agent_id, user_id, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (session_id, agent_id) DO NOTHING RETURNING ${CONVERSATION_COLUMNS}`,
            [sessionId, owner.agent, owner.user ?? null, clock.now().toISOString()],
          )
          if (created.rows[0]) return toConversation(created.rows[0])
          continue
        }
        const user = owner.user ?? null
        const settled = await handle.transaction(async (client) => {
          const { rows } = await client.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM ctx_conversations WHERE id = $1 FOR UPDATE`, [known.id])
          const existing = rows[0]
          if (!existing || existing.user_id !== null) return existing
          // A session first seen without a user learns it before its first message; messages
          // already stored are the agent's (decision 0017), so such a conversation keeps no user.
          // Under the row lock, so no append slips in between this check and the update.
          const stored = await client.query('SELECT 1 FROM ctx_messages WHERE conversation_id = $1 LIMIT 1', [existing.id])
          if (stored.rows.length > 0) return existing
          await client.query('UPDATE ctx_conversations SET user_id = $2 WHERE id = $1', [existing.id, user])
          return { ...existing, user_id: user }
        })
        if (settled) return toConversation(settled)
      }
      throw new EngramError({
        code: ErrorCode.storageUnavailable,
        category: 'system',
        message: `The conversation of session ${sessionId} (agent ${owner.agent}) could not be found or created: other processes kept creating and erasing it meanwhile.`,
        fix: 'Try again; if it persists, look for a process erasing this user in a loop (engram forget --user … --purge).',
      })
    },

    async findConversation(sessionId, agent) {
      if (hasNul(sessionId, agent)) return null
      const row = await selectConversation(pool, sessionId, agent)
      return row ? toConversation(row) : null
    },

    async listConversations(agent) {
      if (agent !== undefined && hasNul(agent)) return []
      const { rows } =
        agent === undefined
          ? await pool.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM ctx_conversations ORDER BY id`)
          : await pool.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM ctx_conversations WHERE agent_id = $1 ORDER BY id`, [agent])
      return rows.map(toConversation)
    },

    async appendMessages(conversationId, messages) {
      checkMessages(messages)
      if (messages.length === 0) return []
      return handle.transaction(async (client) => {
        await lockConversation(client, conversationId)
        return insertMessages(client, conversationId, messages)
      })
    },

    async appendMessagesIndexed(conversationId, messages, indexing) {
      const write = postgresIndexWriterOn(handle, indexing.index)
      if (write === undefined) return undefined
      checkMessages(messages)
      if (messages.length === 0) return []
      // One transaction: the store's rows and the index's commit together (an append used to
      // commit twice, and a crash between the two left messages unindexed until a search caught up).
      return handle.transaction(async (client) => {
        await lockConversation(client, conversationId)
        const appended = await insertMessages(client, conversationId, messages)
        const first = appended[0]!.seq
        const before =
          first > 1 && indexing.before > 0
            ? (
                await client.query<EscapableMessageRow>(
                  `SELECT ${MESSAGE_COLUMNS} FROM ctx_messages WHERE conversation_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
                  [conversationId, Math.max(1, first - indexing.before), first],
                )
              ).rows.map(toMessage)
            : []
        await write(client, indexing.units([...before, ...appended], appended.length))
        return appended
      })
    },

    async messages(conversationId, range = {}) {
      const limit = range.limit === undefined ? null : requireCount(range.limit, 'range.limit')
      const from = seqBound(range.fromSeq ?? 1, Math.ceil)
      const to = seqBound(range.toSeq ?? Number.MAX_SAFE_INTEGER, Math.floor)
      if (!Number.isSafeInteger(conversationId) || from === null || to === null) return []
      const { rows } = await pool.query<EscapableMessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM ctx_messages WHERE conversation_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
        [conversationId, from, to, limit],
      )
      return rows.map(toMessage)
    },

    async messagesById(ids) {
      const wanted = storableIds(ids)
      if (wanted.length === 0) return []
      const { rows } = await pool.query<EscapableMessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM ctx_messages WHERE id = ANY($1::bigint[])`, [wanted])
      return inRequestedOrder(ids, rows, (row) => row.id).map(toMessage)
    },

    async messageCount(conversationId) {
      if (!Number.isSafeInteger(conversationId)) return 0
      const { rows } = await pool.query<{ n: number }>('SELECT count(*) AS n FROM ctx_messages WHERE conversation_id = $1', [conversationId])
      return rows[0]?.n ?? 0
    },

    async items(conversationId, range = {}) {
      const { after, before, limit, newest } = checkItemRange(range)
      if (!Number.isSafeInteger(conversationId)) return []
      const { rows } = await pool.query<ItemRow>(
        `SELECT position, message_id, summary_id FROM ctx_items WHERE conversation_id = $1 AND position > $2 AND position < $3
         ORDER BY position ${newest ? 'DESC' : ''} LIMIT $4`,
        [conversationId, after, before, limit ?? null],
      )
      if (newest) rows.reverse()
      return rows.map(toItem)
    },

    async countItems(conversationId, before) {
      const bound = before === undefined ? Number.MAX_SAFE_INTEGER : checkItemRange({ before }).before
      if (!Number.isSafeInteger(conversationId)) return 0
      const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ctx_items WHERE conversation_id = $1 AND position < $2', [conversationId, bound])
      return Number(rows[0]?.n ?? 0)
    },

    async windowStats(conversationId) {
      if (!Number.isSafeInteger(conversationId)) return { items: 0, tokens: 0, lastPosition: 0 }
      const { rows } = await pool.query<{ items: number; tokens: number; last: number }>(
        `SELECT count(*)::int AS items, coalesce(sum(coalesce(m.token_count, s.token_count)), 0)::bigint AS tokens, coalesce(max(i.position), 0)::bigint AS last
         FROM ctx_items i LEFT JOIN ctx_messages m ON m.id = i.message_id LEFT JOIN ctx_summaries s ON s.id = i.summary_id
         WHERE i.conversation_id = $1`,
        [conversationId],
      )
      const row = rows[0]
      return { items: Number(row?.items ?? 0), tokens: Number(row?.tokens ?? 0), lastPosition: Number(row?.last ?? 0) }
    },

    async replaceWithSummary(conversationId, positions, summary) {
      return handle.transaction(async (client) => {
        await lockConversation(client, conversationId)
        return replaceOne(client, conversationId, positions, summary)
      })
    },

    async replaceWithSummaries(conversationId, replacements) {
      if (replacements.length === 0) return []
      return handle.transaction(async (client) => {
        await lockConversation(client, conversationId)
        const written: Summary[] = []
        for (const { positions, summary } of replacements) written.push(await replaceOne(client, conversationId, positions, summary))
        return written
      })
    },

    async summary(id) {
      if (typeof id !== 'string' || hasNul(id)) return null
      const { rows } = await pool.query<EscapableSummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM ctx_summaries WHERE id = $1`, [id])
      return rows[0] ? toSummary(rows[0]) : null
    },

    async summariesById(ids) {
      const wanted = storableText(ids)
      if (wanted.length === 0) return []
      const { rows } = await pool.query<EscapableSummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM ctx_summaries WHERE id = ANY($1::text[])`, [wanted])
      return inRequestedOrder(ids, rows, (row) => row.id).map(toSummary)
    },

    async summaryChildren(id) {
      if (typeof id !== 'string' || hasNul(id)) return { messageIds: [], summaryIds: [] }
      const messages = await pool.query<{ message_id: number }>('SELECT message_id FROM ctx_summary_messages WHERE summary_id = $1 ORDER BY ord', [id])
      const summaries = await pool.query<{ folded_summary_id: string }>(
        'SELECT folded_summary_id FROM ctx_summary_parents WHERE summary_id = $1 ORDER BY ord',
        [id],
      )
      return { messageIds: messages.rows.map((row) => row.message_id), summaryIds: summaries.rows.map((row) => row.folded_summary_id) }
    },

    async summaryParents(target) {
      if ('summaryId' in target) {
        if (typeof target.summaryId !== 'string' || hasNul(target.summaryId)) return []
        const { rows } = await pool.query<{ summary_id: string }>(
          `SELECT p.summary_id FROM ctx_summary_parents p JOIN ctx_summaries s ON s.id = p.summary_id
           WHERE p.folded_summary_id = $1 ORDER BY s.created_at, p.summary_id`,
          [target.summaryId],
        )
        return rows.map((row) => row.summary_id)
      }
      if (!Number.isSafeInteger(target.messageId)) return []
      const { rows } = await pool.query<{ summary_id: string }>(
        `SELECT m.summary_id FROM ctx_summary_messages m JOIN ctx_summaries s ON s.id = m.summary_id
         WHERE m.message_id = $1 ORDER BY s.created_at, m.summary_id`,
        [target.messageId],
      )
      return rows.map((row) => row.summary_id)
    },

    async purgeUser(user) {
      if (typeof user !== 'string' || user === '') throw invalidContext('user must be a non-empty string.', 'Pass the id of the user to erase.')
      if (hasNul(user)) return { conversations: 0, messages: 0, summaries: 0 }
      return handle.transaction(async (client) => {
        // Lock the user's conversations first, as appends and compactions do: an append waiting on
        // one finds it gone (not_found) instead of writing into what is being erased.
        const locked = await client.query<{ id: number }>('SELECT id FROM ctx_conversations WHERE user_id = $1 ORDER BY id FOR UPDATE', [user])
        const ids = locked.rows.map((row) => row.id)
        if (ids.length === 0) return { conversations: 0, messages: 0, summaries: 0 }
        const theirs = 'SELECT id FROM ctx_summaries WHERE conversation_id = ANY($1::bigint[])'
        // Children before parents: the foreign keys hold throughout.
        await client.query('DELETE FROM ctx_items WHERE conversation_id = ANY($1::bigint[])', [ids])
        await client.query(`DELETE FROM ctx_summary_messages WHERE summary_id IN (${theirs})`, [ids])
        await client.query(`DELETE FROM ctx_summary_parents WHERE summary_id IN (${theirs})`, [ids])
        const summaries = await client.query('DELETE FROM ctx_summaries WHERE conversation_id = ANY($1::bigint[])', [ids])
        const messages = await client.query('DELETE FROM ctx_messages WHERE conversation_id = ANY($1::bigint[])', [ids])
        const conversations = await client.query('DELETE FROM ctx_conversations WHERE id = ANY($1::bigint[])', [ids])
        return { conversations: conversations.rowCount ?? 0, messages: messages.rowCount ?? 0, summaries: summaries.rowCount ?? 0 }
      })
    },
  }
  return store
}
