/**
 * What both providers share: resolving a session to its conversation (cached: the mapping never
 * changes), the per-session lock and appending. Both write the same ContextStore tables, so
 * switching providers keeps every message.
 */
import { checkLength, DEFAULT_LIMITS } from '../../config/limits.ts'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { checkDerivedSessionId } from '../../core/session-ids.ts'
import { MESSAGE_ROLES, type MessageInput, type StoredMessage } from '../../core/message.ts'
import { countTokens } from '../../core/tokens.ts'
import type { AppendIndexing, Conversation, ContextStore, Locks } from '../../storage/contracts.ts'
import type { ContextSession, ContextStats } from './provider.ts'

export interface SessionSupportDeps {
  store: ContextStore
  locks: Locks
  clock: Clock
  /** How long a compaction waits for the session's lock (another compaction calling an LLM can take a while). */
  lockTimeoutMs: number
  /** Longest message stored, in characters (limits.messageChars). */
  maxMessageChars: number
}

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

export function validateSession(session: ContextSession): void {
  if (typeof session?.sessionId !== 'string' || session.sessionId.trim() === '') {
    throw invalid('A context session needs a non-empty sessionId.', 'Pass { sessionId, agent } (the CLI takes --session).')
  }
  if (typeof session.agent !== 'string' || session.agent === '') {
    throw invalid('A context session needs the agent name.', 'Pass { sessionId, agent } (agent defaults to ENGRAM_AGENT / --agent).')
  }
}

/**
 * Validate messages before anything is written: one bad message refuses the batch, with its index.
 * A message longer than `maxChars` is refused with `limit_exceeded` (limits.messageChars).
 */
export function validateMessages(messages: MessageInput[], maxChars: number = DEFAULT_LIMITS.messageChars): void {
  if (!Array.isArray(messages)) throw invalid('append expects an array of messages.', 'Pass [{ role, content }].')
  messages.forEach((message, i) => {
    if (typeof message !== 'object' || message === null) throw invalid(`messages[${i}] is not an object.`, 'Pass { role, content }.')
    if (!(MESSAGE_ROLES as readonly string[]).includes(message.role)) {
      throw invalid(`messages[${i}].role ${JSON.stringify(message.role)} is not a message role.`, `Use one of ${MESSAGE_ROLES.join(', ')}.`)
    }
    if (typeof message.content !== 'string') throw invalid(`messages[${i}].content must be a string.`, 'Pass the message text as content.')
    checkLength('messageChars', `messages[${i}].content`, message.content, maxChars)
    if (message.at !== undefined && (typeof message.at !== 'string' || Number.isNaN(Date.parse(message.at)))) {
      throw invalid(`messages[${i}].at must be an ISO-8601 instant, got ${JSON.stringify(message.at)}.`, 'Pass new Date(...).toISOString(), or omit it for now.')
    }
  })
}

export interface SessionSupport {
  conversation(session: ContextSession): Promise<Conversation>
  /** The conversation when it exists (reads never create one). */
  findConversation(session: ContextSession): Promise<Conversation | null>
  withSessionLock<T>(session: ContextSession, fn: () => Promise<T>): Promise<T>
  /** `fn` under the session's lock when it is free now; undefined (and `fn` not run) when another holds it. */
  tryWithSessionLock<T>(session: ContextSession, fn: () => Promise<T>): Promise<{ value: T } | undefined>
  /**
   * Store `messages`; with `indexing` (what to index for the conversation), index them in the same
   * transaction when the store can (`indexed: true`), else only store them (`indexed: false`).
   */
  append(
    session: ContextSession,
    messages: MessageInput[],
    indexing?: (conversation: Conversation) => AppendIndexing | undefined,
  ): Promise<{ conversation: Conversation; stored: StoredMessage[]; indexed: boolean }>
}

/**
 * A conversation belongs to the user it was opened with (decision 0017): another user, or a
 * session without a user, may not read or continue it.
 */
export function checkOwner(session: ContextSession, conversation: Conversation): Conversation {
  if (conversation.user === session.user) return conversation
  const whose = conversation.user === undefined ? 'the agent (it was opened without a user)' : 'another user'
  throw new EngramError({
    code: ErrorCode.accessDenied,
    category: 'user',
    message: `Session ${JSON.stringify(session.sessionId)} belongs to ${whose}; ${session.user === undefined ? 'a session without a user' : `user ${JSON.stringify(session.user)}`} cannot open it.`,
    fix: 'use one session id per conversation with one user (e.g. prefix it with the user id), and pass the same { user } every turn',
    details: { sessionId: session.sessionId },
  })
}

export function lockName(session: ContextSession): string {
  return `context:${session.agent}:${session.sessionId}`
}

export function createSessionSupport(deps: SessionSupportDeps): SessionSupport {
  const { store, locks, clock } = deps
  const cache = new Map<string, Conversation>()
  const key = (session: ContextSession): string => `${session.agent}\u0000${session.sessionId}`

  async function conversation(session: ContextSession): Promise<Conversation> {
    validateSession(session)
    // The one place a conversation is created: an id an interface derives for another user is
    // never taken, on either backend (decision 0054). Reads need no such check: checkOwner refuses
    // another user's conversation, and one that does not exist holds nothing.
    checkDerivedSessionId(session.sessionId, session.user)
    const hit = cache.get(key(session))
    // A session first seen without its user learns it later: ask the store once more then.
    if (hit && (hit.user !== undefined || session.user === undefined)) return checkOwner(session, hit)
    const owner = session.user === undefined ? { agent: session.agent } : { agent: session.agent, user: session.user }
    const found = await store.conversation(session.sessionId, owner)
    cache.set(key(session), found)
    return checkOwner(session, found)
  }

  const support: SessionSupport = {
    conversation,
    async findConversation(session) {
      validateSession(session)
      const hit = cache.get(key(session))
      if (hit) return checkOwner(session, hit)
      const found = await store.findConversation(session.sessionId, session.agent)
      if (found) cache.set(key(session), found)
      return found ? checkOwner(session, found) : null
    },
    async withSessionLock(session, fn) {
      const outcome = await locks.withLock(lockName(session), fn, { wait: true, timeoutMs: deps.lockTimeoutMs })
      if (outcome.kind === 'done') return outcome.value
      // With wait: true a busy lock throws lock_busy; this is only reached by a Locks that answers busy anyway.
      throw new EngramError({
        code: ErrorCode.lockBusy,
        category: 'system',
        message: `The context of session ${session.sessionId} is locked${outcome.holder ? ` by ${outcome.holder}` : ''}.`,
        fix: 'Another process is appending to or compacting this session; retry shortly.',
      })
    },
    async tryWithSessionLock(session, fn) {
      const outcome = await locks.withLock(lockName(session), fn, { wait: false })
      return outcome.kind === 'done' ? { value: outcome.value } : undefined
    },
    // An append takes no lock: the store's transaction makes it atomic and orders it against other
    // appends (SQLite's write lock, PostgreSQL's conversation row), and a compaction checks the run it
    // folds inside its own transaction, so an append landing during a compaction is safe. The lock
    // cost ~1.1 ms of file work per append and made every turn wait behind a running compaction.
    async append(session, messages, indexing) {
      validateMessages(messages, deps.maxMessageChars)
      let conv = await conversation(session)
      if (messages.length === 0) return { conversation: conv, stored: [], indexed: true }
      const now = clock.now().toISOString()
      const rows = messages.map((message) => ({ ...message, at: message.at ?? now, tokenCount: countTokens(message.content) }))
      const write = async (target: Conversation): Promise<{ conversation: Conversation; stored: StoredMessage[]; indexed: boolean }> => {
        const plan = indexing?.(target)
        const together = plan !== undefined && store.appendMessagesIndexed !== undefined ? await store.appendMessagesIndexed(target.id, rows, plan) : undefined
        if (together !== undefined) return { conversation: target, stored: together, indexed: true }
        return { conversation: target, stored: await store.appendMessages(target.id, rows), indexed: false }
      }
      try {
        return await write(conv)
      } catch (error) {
        // The cached conversation was erased (its user was forgotten, decision 0023): the session
        // starts a new one rather than failing every turn of a long-lived process.
        if (!EngramError.is(error) || error.code !== ErrorCode.notFound) throw error
        cache.delete(key(session))
        conv = await conversation(session)
        return write(conv)
      }
    },
  }
  return support
}

/** Message counts of a session, shared by every provider's `stats` (windows differ, messages do not). */
export async function messageStats(store: ContextStore, session: ContextSession, conversation: Conversation | null | undefined): Promise<ContextStats> {
  const stats: ContextStats = {
    sessionId: session.sessionId,
    conversationId: conversation?.id,
    messages: 0,
    messageTokens: 0,
    items: 0,
    contextTokens: 0,
    summaries: 0,
    maxDepth: 0,
    degradedSummaries: 0,
  }
  if (!conversation) return stats
  const PAGE = 2_000
  for (let fromSeq = 1; ; fromSeq += PAGE) {
    const page = await store.messages(conversation.id, { fromSeq, limit: PAGE })
    stats.messages += page.length
    for (const message of page) stats.messageTokens += message.tokenCount
    if (page.length < PAGE) break
  }
  return stats
}
