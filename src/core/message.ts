/** Conversation messages and the summaries the lossless context folds them into (anna's LCM). */

export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool'] as const
export type MessageRole = (typeof MESSAGE_ROLES)[number]

/** A message as an agent hands it to engram. */
export interface MessageInput {
  role: MessageRole
  content: string
  /** ISO-8601 instant; defaults to the clock's now when appended. */
  at?: string
  /** Speaker name (a participant, a tool). */
  name?: string
  meta?: Record<string, unknown>
}

/** A message as stored: never deleted, never rewritten. */
export interface StoredMessage {
  id: number
  conversationId: number
  /** 1-based position in its conversation. */
  seq: number
  role: MessageRole
  content: string
  name?: string
  at: string
  tokenCount: number
  meta?: Record<string, unknown>
}

export const SUMMARY_KINDS = ['leaf', 'condensed'] as const
export type SummaryKind = (typeof SUMMARY_KINDS)[number]

/**
 * How a summary was produced. Anything other than `llm-*` is degraded output and is labelled as
 * such wherever it is shown, so a fallback is never mistaken for an LLM summary.
 */
export const SUMMARY_METHODS = ['llm-normal', 'llm-aggressive', 'extractive', 'deterministic'] as const
export type SummaryMethod = (typeof SUMMARY_METHODS)[number]

export interface Summary {
  id: string
  conversationId: number
  kind: SummaryKind
  depth: number
  content: string
  tokenCount: number
  /** Tokens of everything this summary stands for, at the level below it. */
  sourceTokenCount: number
  earliestAt: string
  latestAt: string
  method: SummaryMethod
  createdAt: string
}

/** One slot of a conversation's current context window: a raw message or a summary. */
export type ContextItem =
  | { position: number; kind: 'message'; messageId: number }
  | { position: number; kind: 'summary'; summaryId: string }
