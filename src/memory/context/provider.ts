/**
 * The working-memory provider seam (anna's `memory.Provider`): a required core every provider has,
 * and optional capabilities that callers detect once at run time with the type guards below —
 * never base-class methods that throw when called.
 *
 * Two providers ship: `lcm` (lossless context management: a DAG of summaries, all capabilities)
 * and `simple` (a sliding window: the core and sessions). Both use the same ContextStore
 * tables, so switching between them keeps every stored message.
 */
import type { MessageInput, MessageRole, StoredMessage, SummaryKind, SummaryMethod } from '../../core/message.ts'
import type { Viewer } from '../../core/owner.ts'
import type { MessagePart } from '../../core/message-parts.ts'

/** Whose conversation: one session of one agent, optionally with a known user. */
export interface ContextSession {
  sessionId: string
  agent: string
  user?: string
}

/** Defaults from anna's LCM (DESIGN.md §5). */
export const CONTEXT_DEFAULTS = Object.freeze({
  freshTail: 20,
  threshold: 0.75,
  leafChunk: 10,
  /** Summaries folded into one condensed summary at most (a run of 2+ is always folded). */
  condenseChunk: 4,
  /** A summary never aims above this, however large its source (input/3 would grow without end). */
  maxSummaryTokens: 1200,
  fullCompactionRounds: 10,
  budget: 16_000,
})

/** One slot of an assembled context, in chronological order. */
export interface AssembledItem {
  kind: 'message' | 'summary'
  /** The role to hand the model; summaries are recalled memory, given as `user` text. */
  role: MessageRole
  /** What the model sees: the message content, or the labelled summary. */
  content: string
  /** Tokens of `content` (o200k). */
  tokens: number
  /** Position in the context window. */
  position: number
  /** Every message this item stands for (a summary: transitively, down to raw messages), by seq order. */
  messageIds: number[]
  messageId?: number
  seq?: number
  at?: string
  name?: string
  /** A stored message's structured parts (tool calls and results), when it has them; `content` is their rendering. */
  parts?: MessagePart[]
  summaryId?: string
  depth?: number
  method?: SummaryMethod
  /** True when a fallback (not an LLM) wrote this summary. */
  degraded?: boolean
}

export interface AssembledContext {
  items: AssembledItem[]
  tokens: number
  budget: number
  /** How many items at the end are the fresh tail (raw messages, always included). */
  freshTailCount: number
  /** True only when the fresh tail alone exceeds the budget (then `items` is exactly the tail). */
  overBudget: boolean
  /** Older items that did not fit. */
  omittedItems: number
  /** The compaction that ran first, when the context had passed `threshold × budget`. */
  compaction?: CompactionResult
}

export interface AssembleOptions {
  /** Compact first when the context passes `threshold × budget` (LCM; default: the provider's setting). */
  autoCompact?: boolean
}

export interface ContextStats {
  sessionId: string
  conversationId: number | undefined
  messages: number
  /** Sum of every stored message's tokens. */
  messageTokens: number
  /** Current context window: items and their rendered tokens. */
  items: number
  contextTokens: number
  summaries: number
  maxDepth: number
  /** Summaries in the window written by a fallback (extractive or deterministic). */
  degradedSummaries: number
}

export interface ContextProvider {
  readonly kind: string
  /** Store messages in order (never lost, never rewritten) and add them to the context window. */
  append(session: ContextSession, messages: MessageInput[]): Promise<StoredMessage[]>
  /** The context within `budget` tokens: the fresh tail always, then older items newest first while they fit. */
  assemble(session: ContextSession, budget: number, freshTail?: number, options?: AssembleOptions): Promise<AssembledContext>
  stats(session: ContextSession): Promise<ContextStats>
  close(): Promise<void>
}

export type CompactionMode = 'incremental' | 'full'

export interface CompactionWarning {
  type: 'llm_failed'
  code: string
  message: string
}

export type CompactionResult =
  | {
      kind: 'compacted'
      mode: CompactionMode
      rounds: number
      leafSummaries: number
      condensedSummaries: number
      /** Summary ids created, in order. */
      created: string[]
      methods: Partial<Record<SummaryMethod, number>>
      /**
       * Stored tokens of the window before and after (content, without summary labels). A run
       * stopped at its time limit (`complete: false`) gives those of the items it folded and of the
       * summaries that replaced them: it does not read the whole window.
       */
      tokensBefore: number
      tokensAfter: number
      /** False when the run stopped at its time limit (`maxMs`) with work left for a later run. */
      complete: boolean
      /** True when any summary came from a fallback rather than an LLM. */
      degraded: boolean
      warnings: CompactionWarning[]
    }
  | { kind: 'skipped'; mode: CompactionMode; reason: string }

export interface Compactor {
  needsCompaction(session: ContextSession, budget: number): Promise<boolean>
  /**
   * Fold older turns into summaries. `maxMs`: stop after about that long (a slice; at least one
   * summary is written), leaving the rest to a later call — the result says `complete: false`.
   */
  compact(session: ContextSession, options?: { mode?: CompactionMode; freshTail?: number; maxMs?: number }): Promise<CompactionResult>
}

export interface SearchHit {
  /** `msg:<id>`, `msg:<id>#p<k>` (a passage of a long message) or `sum:<summary id>`. */
  id: string
  kind: 'message' | 'summary'
  sessionId: string
  conversationId: number
  /** A short excerpt around the match. */
  snippet: string
  at: string
  /** Messages this hit stands for (provenance). */
  messageIds: number[]
  score: number
  messageId?: number
  summaryId?: string
}

export interface SearchOptions {
  /** Limit to this session of the agent (default: every conversation of the agent). */
  sessionId?: string
  limit?: number
}

export interface SearchResult {
  hits: SearchHit[]
  /** `index` (FTS5 BM25) or `scan` (substring match, when full-text search is unavailable: degraded). */
  via: 'index' | 'scan'
}

/**
 * Whose conversations a search or an exploration may reach: an agent name reaches every
 * conversation of that agent (administrators, the CLI's operator view of one session); a viewer
 * reaches only its own user's conversations and the agent's conversations without a user
 * (decision 0017). Everything on behalf of a session passes its viewer.
 */
export type ConversationReader = string | Viewer

export interface Searcher {
  search(reader: ConversationReader, query: string, options?: SearchOptions): Promise<SearchResult>
}

export interface SummaryDescription {
  kind: 'summary'
  id: string
  conversationId: number
  sessionId: string
  summaryKind: SummaryKind
  depth: number
  method: SummaryMethod
  degraded: boolean
  earliestAt: string
  latestAt: string
  createdAt: string
  tokenCount: number
  sourceTokenCount: number
  /** What it folds (downwards edges). */
  children: { messageIds: number[]; summaryIds: string[] }
  /** The summaries that fold it (upwards edges); empty while it is in the context window. */
  foldedBy: string[]
  /** Raw messages it stands for, transitively, and their seq range. */
  messageCount: number
  seqRange: { from: number; to: number } | undefined
  inContext: boolean
}

export interface MessageDescription {
  kind: 'message'
  id: number
  conversationId: number
  sessionId: string
  seq: number
  role: MessageRole
  name?: string
  at: string
  tokenCount: number
  /** Length of its text, and how many passages the search index holds of it (1 for a message of at most PASSAGE_CHARS). */
  chars: number
  passages: number
  foldedBy: string[]
  inContext: boolean
}

/** Where a passage lies in its message: 1-based index of `count`, character offsets [from, to). */
export interface PassagePlace {
  index: number
  count: number
  from: number
  to: number
}

export type ExpandedNode =
  | { kind: 'message'; id: number; seq: number; role: MessageRole; name?: string; at: string; content: string; tokenCount: number; passage?: PassagePlace }
  | { kind: 'summary'; id: string; depth: number; method: SummaryMethod; degraded: boolean; earliestAt: string; latestAt: string; content: string; tokenCount: number }

export interface Expansion {
  id: string
  /** Direct children, or every raw message when `toMessages` was asked. */
  nodes: ExpandedNode[]
  /** True when `limit` cut the list. */
  truncated: boolean
}

export interface Explorer {
  /** Metadata and lineage of a summary (`sum_…`) or a message (`msg:<id>` or the number). */
  describe(reader: ConversationReader, id: string): Promise<SummaryDescription | MessageDescription>
  /**
   * A summary's children, or (`toMessages`) every raw message it stands for. A message id gives the
   * message whole; a passage id (`msg:<id>#p<k>`, a search hit of a long message) gives that passage.
   */
  expand(reader: ConversationReader, id: string, options?: { toMessages?: boolean; limit?: number }): Promise<Expansion>
}

/** The agent a reader belongs to. */
export function readerAgent(reader: ConversationReader): string {
  return typeof reader === 'string' ? reader : reader.agent
}

/** Whether a reader may see a conversation of its agent. */
export function readerSees(reader: ConversationReader, conversation: { user: string | undefined }): boolean {
  return typeof reader === 'string' || conversation.user === undefined || conversation.user === reader.user
}

function hasMethods(value: unknown, names: string[]): boolean {
  return typeof value === 'object' && value !== null && names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
}

export function hasCompactor<P extends ContextProvider>(provider: P): provider is P & Compactor {
  return hasMethods(provider, ['needsCompaction', 'compact'])
}
export function hasSearcher<P extends ContextProvider>(provider: P): provider is P & Searcher {
  return hasMethods(provider, ['search'])
}
export function hasExplorer<P extends ContextProvider>(provider: P): provider is P & Explorer {
  return hasMethods(provider, ['describe', 'expand'])
}

/** The capability names a provider has, for `status` and tool generation. */
export function providerCapabilities(provider: ContextProvider): string[] {
  const out: string[] = []
  if (hasCompactor(provider)) out.push('compactor')
  if (hasSearcher(provider)) out.push('searcher')
  if (hasExplorer(provider)) out.push('explorer')
  return out
}
