/**
 * The context store's rows (anna's `ctx_*` tables) and the checks of what callers pass, shared by
 * the SQLite and PostgreSQL stores so that both read the same rows into the same values and refuse
 * the same input with the same errors. Each backend passes the decoder of its `meta` column (text
 * on SQLite, parsed `json` on PostgreSQL); the checks that need the database stay with each store.
 */
import { randomBytes } from 'node:crypto'
import { EngramError, ErrorCode } from '../core/errors.ts'
import {
  type ContextItem,
  MESSAGE_ROLES,
  type MessageInput,
  type MessageRole,
  type StoredMessage,
  SUMMARY_KINDS,
  SUMMARY_METHODS,
  type Summary,
  type SummaryKind,
  type SummaryMethod,
} from '../core/message.ts'
import type { Conversation, NewSummary } from './contracts.ts'
import type { JsonObjectDecoder } from './lifecycle-records.ts'

export interface ConversationRow {
  id: number
  session_id: string
  agent_id: string
  user_id: string | null
  created_at: string
}

export interface MessageRow {
  id: number
  conversation_id: number
  seq: number
  role: string
  name: string | null
  content: string
  token_count: number
  created_at: string
  /** A JSON object as the backend returns it (text on SQLite, a value on PostgreSQL), or null. */
  meta: unknown
}

export interface SummaryRow {
  id: string
  conversation_id: number
  kind: string
  depth: number
  content: string
  token_count: number
  source_token_count: number
  earliest_at: string
  latest_at: string
  method: string
  created_at: string
}

export interface ItemRow {
  position: number
  message_id: number | null
  summary_id: string | null
}

export const CONVERSATION_COLUMNS = 'id, session_id, agent_id, user_id, created_at'
export const MESSAGE_COLUMNS = 'id, conversation_id, seq, role, name, content, token_count, created_at, meta'
export const SUMMARY_COLUMNS =
  'id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, method, created_at'

/** A message as appended: the input plus the instant and token count the caller settled. */
export type MessageToAppend = MessageInput & { at: string; tokenCount: number }

export function toConversation(row: ConversationRow): Conversation {
  return { id: row.id, sessionId: row.session_id, agent: row.agent_id, user: row.user_id ?? undefined, createdAt: row.created_at }
}

export function toMessage(row: MessageRow, decode: JsonObjectDecoder): StoredMessage {
  const message: StoredMessage = {
    id: row.id,
    conversationId: row.conversation_id,
    seq: row.seq,
    role: row.role as MessageRole,
    content: row.content,
    at: row.created_at,
    tokenCount: row.token_count,
  }
  if (row.name !== null) message.name = row.name
  if (row.meta !== null && row.meta !== undefined) message.meta = decode(row.meta)
  return message
}

export function toSummary(row: SummaryRow): Summary {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    kind: row.kind as SummaryKind,
    depth: row.depth,
    content: row.content,
    tokenCount: row.token_count,
    sourceTokenCount: row.source_token_count,
    earliestAt: row.earliest_at,
    latestAt: row.latest_at,
    method: row.method as SummaryMethod,
    createdAt: row.created_at,
  }
}

export function toItem(row: ItemRow): ContextItem {
  return row.summary_id !== null
    ? { position: row.position, kind: 'summary', summaryId: row.summary_id }
    : { position: row.position, kind: 'message', messageId: row.message_id! }
}

/** A new summary id: `sum_` + 16 random hex digits. */
export function newSummaryId(): string {
  return `sum_${randomBytes(8).toString('hex')}`
}

/** Reorder rows to follow the ids asked for (callers pass ids in the order they want back); unknown ids and repeats are dropped. */
export function inRequestedOrder<K, T>(ids: readonly K[], rows: T[], key: (row: T) => K): T[] {
  const byKey = new Map(rows.map((row) => [key(row), row]))
  const out: T[] = []
  const seen = new Set<K>()
  for (const id of ids) {
    const row = byKey.get(id)
    if (row && !seen.has(id)) {
      seen.add(id)
      out.push(row)
    }
  }
  return out
}

export function invalidContext(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

export function conversationNotFound(conversationId: number): EngramError {
  return new EngramError({
    code: ErrorCode.notFound,
    category: 'user',
    message: `There is no conversation ${conversationId}.`,
    fix: 'Get the id from conversation(sessionId, owner) first.',
    details: { conversationId },
  })
}

export function requireCount(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw invalidContext(`${what} must be a non-negative integer, got ${JSON.stringify(value)}.`, `Pass a whole number for ${what}.`)
  }
  return value
}

/** An item range checked: integer bounds (absent = unbounded) and a limit (absent = none). */
export function checkItemRange(range: { after?: number; before?: number; limit?: number; newest?: boolean }): {
  after: number
  before: number
  limit: number | undefined
  newest: boolean
} {
  const bound = (value: number | undefined, what: string, fallback: number): number => {
    if (value === undefined) return fallback
    if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidContext(`${what} must be an integer position, got ${JSON.stringify(value)}.`, 'Pass positions exactly as items() returned them.')
    return Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, value))
  }
  return {
    after: bound(range.after, 'range.after', Number.MIN_SAFE_INTEGER),
    before: bound(range.before, 'range.before', Number.MAX_SAFE_INTEGER),
    limit: range.limit === undefined ? undefined : requireCount(range.limit, 'range.limit'),
    newest: range.newest === true,
  }
}

export function requireInstant(value: unknown, what: string): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    throw invalidContext(`${what} must be an ISO-8601 instant, got ${JSON.stringify(value)}.`, `Pass ${what} as new Date(...).toISOString().`)
  }
  return value
}

export function requireSessionOwner(sessionId: unknown, owner: { agent: string; user?: string }): void {
  if (typeof sessionId !== 'string' || sessionId === '') throw invalidContext('sessionId must be a non-empty string.', 'Pass the session id.')
  if (typeof owner.agent !== 'string' || owner.agent === '') throw invalidContext('owner.agent must be a non-empty string.', 'Pass the agent id.')
}

/** Every message has a known role, text content, an instant and a token count; checked before anything is written. */
export function checkMessages(messages: readonly MessageToAppend[]): void {
  for (const [i, message] of messages.entries()) {
    if (!(MESSAGE_ROLES as readonly string[]).includes(message.role)) {
      throw invalidContext(`messages[${i}].role ${JSON.stringify(message.role)} is not a message role.`, `Use one of ${MESSAGE_ROLES.join(', ')}.`)
    }
    if (typeof message.content !== 'string') throw invalidContext(`messages[${i}].content must be a string.`, 'Pass the message text.')
    requireInstant(message.at, `messages[${i}].at`)
    requireCount(message.tokenCount, `messages[${i}].tokenCount`)
  }
}

/**
 * The checks of a new summary that need no database: kind, method, counts, instants, content, and
 * edges (at least one, none twice). Returns the edges; the store then checks that they are its own.
 */
export function checkSummary(summary: NewSummary): { messageIds: number[]; parentIds: string[] } {
  if (!(SUMMARY_KINDS as readonly string[]).includes(summary.kind)) {
    throw invalidContext(`Unknown summary kind ${JSON.stringify(summary.kind)}.`, `Use one of ${SUMMARY_KINDS.join(', ')}.`)
  }
  if (!(SUMMARY_METHODS as readonly string[]).includes(summary.method)) {
    throw invalidContext(`Unknown summary method ${JSON.stringify(summary.method)}.`, `Use one of ${SUMMARY_METHODS.join(', ')}.`)
  }
  requireCount(summary.depth, 'summary.depth')
  requireCount(summary.tokenCount, 'summary.tokenCount')
  requireCount(summary.sourceTokenCount, 'summary.sourceTokenCount')
  requireInstant(summary.earliestAt, 'summary.earliestAt')
  requireInstant(summary.latestAt, 'summary.latestAt')
  if (typeof summary.content !== 'string') throw invalidContext('summary.content must be a string.', 'Pass the summary text.')
  const messageIds = summary.messageIds ?? []
  const parentIds = summary.parentIds ?? []
  if (messageIds.length === 0 && parentIds.length === 0) {
    throw invalidContext(
      'A summary must fold at least one message or summary; without edges it could never be expanded.',
      'Pass messageIds for a leaf summary or parentIds for a condensed one.',
    )
  }
  if (new Set(messageIds).size !== messageIds.length || new Set(parentIds).size !== parentIds.length) {
    throw invalidContext('A summary lists the same message or summary twice.', 'Pass each folded id once.')
  }
  return { messageIds, parentIds }
}

export function foreignMessages(conversationId: number, messageIds: number[]): EngramError {
  return invalidContext(`Some messageIds are not messages of conversation ${conversationId}.`, 'Fold only messages of the same conversation.', { messageIds })
}

export function foreignSummaries(conversationId: number, parentIds: string[]): EngramError {
  return invalidContext(`Some parentIds are not summaries of conversation ${conversationId}.`, 'Fold only summaries of the same conversation.', { parentIds })
}

/** The positions to fold, sorted: at least one, integers, none twice. Whether they are current and adjacent is the store's to check. */
export function checkPositions(positions: number[]): number[] {
  if (positions.length === 0) throw invalidContext('replaceWithSummary needs at least one position.', 'Pass the positions of the items to fold.')
  if (!positions.every((p) => Number.isInteger(p))) {
    throw invalidContext('Item positions are integers.', 'Pass positions exactly as items() returned them.', { positions })
  }
  const sorted = [...positions].sort((a, b) => a - b)
  if (new Set(sorted).size !== sorted.length) throw invalidContext('A position is listed twice.', 'Pass each position once.', { positions })
  return sorted
}

/** The run found between the first and last position asked for, when it is not exactly them. */
export function notContiguous(conversationId: number, sorted: number[], found: number[]): EngramError {
  return invalidContext(
    `Positions ${sorted.join(', ')} are not a contiguous run of current items of conversation ${conversationId}.`,
    'Read items() again (another process may have compacted meanwhile) and pass adjacent positions.',
    { positions: sorted, found },
  )
}
