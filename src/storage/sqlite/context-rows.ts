/** Rows of the `ctx_*` tables and how they map to the contract's types. */
import type { MessageRole, StoredMessage, Summary, SummaryKind, SummaryMethod } from '../../core/message.ts'
import type { Conversation } from '../contracts.ts'
import { parseJsonObject } from './json.ts'

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
  meta: string | null
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

export const MESSAGE_COLUMNS = 'id, conversation_id, seq, role, name, content, token_count, created_at, meta'
export const SUMMARY_COLUMNS =
  'id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at, method, created_at'

export function toConversation(row: ConversationRow): Conversation {
  return { id: row.id, sessionId: row.session_id, agent: row.agent_id, user: row.user_id ?? undefined, createdAt: row.created_at }
}

export function toMessage(row: MessageRow): StoredMessage {
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
  if (row.meta !== null) message.meta = parseJsonObject(row.meta)
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
