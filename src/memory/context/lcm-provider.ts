/**
 * The LCM provider (lossless context management, anna's `memory/lcm`): every message kept, older
 * turns folded into a DAG of summaries, assembly within a token budget, search, describe and
 * expand — every capability.
 *
 * A compaction takes the session's named lock, so two never interleave, also across processes
 * sharing a home; appends take none (the store orders them, and a compaction checks the run it
 * folds in its own transaction). Assembly only reads, unless it must compact first: then it does
 * one bounded slice of the work (settings.assembleCompactMs) when no one else is compacting, and
 * leaves the rest to later slices or to a background run (the `context-compaction` job) — the
 * window it assembles is valid either way, what does not fit cut from the oldest raw messages.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { StoredMessage } from '../../core/message.ts'
import type { Conversation } from '../../storage/contracts.ts'
import { assembleContext, summaryItem, validateBudget, windowExceeds } from './assembler.ts'
import { compactConversation } from './compaction.ts'
import { type ContextIndexer, createContextIndexer } from './context-index.ts'
import { loadItems, MessageIdResolver } from './dag.ts'
import type {
  CompactionMode,
  CompactionResult,
  Compactor,
  ContextProvider,
  ExpandedNode,
  Explorer,
  ConversationReader,
  Searcher,
} from './provider.ts'
import { readerAgent, readerSees } from './provider.ts'
import { passageBounds, parseMessageRef } from './passages.ts'
import { isDegradedMethod } from './render.ts'
import { createSessionSupport, messageStats } from './session-support.ts'
import { type ContextProviderDeps, resolveSettings } from './settings.ts'
import { createSummarizer } from './summarizer.ts'

export type LcmContextProvider = ContextProvider & Compactor & Searcher & Explorer

/** How long a background compaction stands back after a turn's append or assemble (a turn goes on to prime). */
const FOREGROUND_MS = 50
/** Longest a background compaction stands back in a row before it does a slice anyway. */
const MAX_STAND_BACK_MS = 250

function notFound(what: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.notFound, category: 'user', message: `${what} was not found.`, fix })
}

/** `msg:12`, `12`, a passage `msg:12#p3` → 12; anything else → undefined. */
function parseMessageId(id: string): number | undefined {
  return parseMessageRef(id)?.messageId
}

/** `sum:sum_ab12`, `sum_ab12` → `sum_ab12`. */
function parseSummaryId(id: string): string | undefined {
  const trimmed = id.trim().replace(/^sum:/, '')
  return /^sum_[0-9a-f]+$/.test(trimmed) ? trimmed : undefined
}

export function createLcmProvider(deps: ContextProviderDeps): LcmContextProvider {
  const settings = resolveSettings(deps.settings)
  const { store } = deps
  const support = createSessionSupport({ store, locks: deps.locks, clock: deps.clock, lockTimeoutMs: settings.lockTimeoutMs, maxMessageChars: settings.maxMessageChars })
  const resolver = new MessageIdResolver(store)
  const indexer: ContextIndexer = createContextIndexer(store, deps.index, resolver)
  // After an automatic compaction found nothing to do, the window it saw (item count and last
  // position). Until the window changes, retrying on every assemble would only cost a lock and a scan.
  const fruitless = new Map<number, string>()
  const windowSignature = async (conversationId: number): Promise<string> => {
    const [last] = await store.items(conversationId, { limit: 1, newest: true })
    return `${await store.countItems(conversationId)}:${last?.position ?? 0}`
  }

  /** The conversation when the reader may see it; another user's is "not found" (its existence is not told). */
  async function conversationOfReader(reader: ConversationReader, conversationId: number): Promise<Conversation> {
    const agent = readerAgent(reader)
    const owned = (await store.listConversations(agent)).find((conversation) => conversation.id === conversationId && readerSees(reader, conversation))
    if (!owned) throw notFound(`Conversation ${conversationId} of agent ${agent}`, 'Use ids from your own search results or assembled context.')
    return owned
  }

  async function isInWindow(conversationId: number, target: { messageId: number } | { summaryId: string }): Promise<boolean> {
    const items = await store.items(conversationId)
    return items.some((item) =>
      'messageId' in target ? item.kind === 'message' && item.messageId === target.messageId : item.kind === 'summary' && item.summaryId === target.summaryId,
    )
  }

  // Turns come first. A turn calls append and assemble (begin: append, assemble, then priming; end:
  // append): after each, a background compaction stands back for FOREGROUND_MS, so a turn's own
  // waits on I/O are not spent behind compaction slices — but never longer than MAX_STAND_BACK_MS
  // in a row, so a process serving turn after turn still compacts.
  let foregroundAt = Number.NEGATIVE_INFINITY
  let stoodBack = 0
  const foreground = (): void => {
    foregroundAt = performance.now()
  }
  const standBack = (): number => {
    const wait = FOREGROUND_MS - (performance.now() - foregroundAt)
    if (wait <= 0 || stoodBack >= MAX_STAND_BACK_MS) {
      stoodBack = 0
      return 0
    }
    stoodBack += wait
    return wait
  }

  /** One compaction run; the caller holds the session's lock. An assemble's own slice is foreground work: it does not stand back. */
  function compactLocked(
    conversation: Conversation,
    options: { mode?: CompactionMode; freshTail?: number; maxMs?: number },
    background = true,
  ): Promise<CompactionResult> {
    return compactConversation({
      store,
      conversationId: conversation.id,
      mode: options.mode ?? 'incremental',
      settings: { freshTail: options.freshTail ?? settings.freshTail, leafChunk: settings.leafChunk, condenseChunk: settings.condenseChunk, maxRounds: settings.fullCompactionRounds },
      summarizer: createSummarizer({
        llm: deps.llm,
        maxSummaryTokens: settings.maxSummaryTokens,
        ...(settings.summaryTimeoutMs !== undefined ? { timeoutMs: settings.summaryTimeoutMs } : {}),
      }),
      ...(options.maxMs !== undefined ? { maxMs: options.maxMs } : {}),
      ...(background ? { standBack } : {}),
      onSummaries: (written) => indexer.indexSummaries(conversation, written.map((w) => w.summary)),
    })
  }

  const provider: LcmContextProvider = {
    kind: 'lcm',

    async append(session, messages) {
      foreground()
      const { conversation, stored, indexed } = await support.append(session, messages, (target) => indexer.appendIndexing(target, messages))
      // Stored without their index rows (a store that cannot write both at once, a large batch):
      // indexed now, after the store's commit; a crash here leaves messages unindexed, never lost
      // (search catches up).
      if (!indexed) await indexer.indexMessages(conversation, stored)
      foreground()
      return stored
    },

    async assemble(session, budget, freshTail = settings.freshTail, options = {}) {
      validateBudget(budget, freshTail)
      foreground()
      const conversation = await support.findConversation(session)
      if (!conversation) return { items: [], tokens: 0, budget, freshTailCount: 0, overBudget: false, omittedItems: 0 }
      const autoCompact = options.autoCompact ?? settings.autoCompact
      let compaction: Awaited<ReturnType<Compactor['compact']>> | undefined
      if (autoCompact && (await provider.needsCompaction(session, budget))) {
        const seen = fruitless.get(conversation.id)
        if (seen === undefined || seen !== (await windowSignature(conversation.id))) {
          // One slice, and only when no one else is compacting this session (a background run is).
          const slice = await support.tryWithSessionLock(session, () => compactLocked(conversation, { mode: 'incremental', freshTail, maxMs: settings.assembleCompactMs }, false))
          compaction = slice?.value
          if (compaction?.kind === 'skipped') fruitless.set(conversation.id, await windowSignature(conversation.id))
          else if (compaction) fruitless.delete(conversation.id)
        }
      }
      const assembled = await assembleContext({ store, resolver, conversationId: conversation.id, budget, freshTail })
      foreground()
      return compaction ? { ...assembled, compaction } : assembled
    },

    async stats(session) {
      const conversation = await support.findConversation(session)
      const stats = await messageStats(store, session, conversation)
      if (!conversation) return stats
      const items = await store.items(conversation.id)
      const loaded = await loadItems(store, items)
      stats.items = items.length
      for (const message of loaded.messages.values()) stats.contextTokens += message.tokenCount
      for (const item of items) {
        if (item.kind !== 'summary') continue
        const summary = loaded.summaries.get(item.summaryId)
        if (!summary) continue
        stats.summaries++
        stats.maxDepth = Math.max(stats.maxDepth, summary.depth)
        if (isDegradedMethod(summary.method)) stats.degradedSummaries++
        stats.contextTokens += (await summaryItem(item.position, summary, resolver)).tokens
      }
      return stats
    },

    async close() {},

    async needsCompaction(session, budget) {
      validateBudget(budget, settings.freshTail)
      const conversation = await support.findConversation(session)
      if (!conversation) return false
      return windowExceeds({ store, resolver, conversationId: conversation.id }, settings.threshold * budget)
    },

    async compact(session, options = {}) {
      const mode = options.mode ?? 'incremental'
      const conversation = await support.findConversation(session)
      if (!conversation) return { kind: 'skipped', mode, reason: `session ${session.sessionId} has no messages yet` }
      return support.withSessionLock(session, () => compactLocked(conversation, options))
    },

    async search(reader, query, options = {}) {
      if (typeof query !== 'string' || query.trim() === '') {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'The search query is empty.', fix: 'Pass one or more words to look for.' })
      }
      const limit = options.limit ?? 10
      const agent = readerAgent(reader)
      let conversations: Conversation[]
      if (options.sessionId !== undefined) {
        const one = await store.findConversation(options.sessionId, agent)
        conversations = one ? [one] : []
      } else {
        conversations = await store.listConversations(agent)
      }
      return indexer.search(
        conversations.filter((conversation) => readerSees(reader, conversation)),
        query,
        limit,
      )
    },

    async describe(reader, id) {
      const summaryId = parseSummaryId(id)
      if (summaryId) {
        const summary = await store.summary(summaryId)
        if (!summary) throw notFound(`Summary ${summaryId}`, 'Use a summary id from the assembled context or a search hit.')
        const conversation = await conversationOfReader(reader, summary.conversationId)
        const [children, foldedBy, messageIds] = await Promise.all([
          store.summaryChildren(summary.id),
          store.summaryParents({ summaryId: summary.id }),
          resolver.messageIds(summary.id),
        ])
        const ends = await store.messagesById(messageIds.length > 0 ? [messageIds[0]!, messageIds[messageIds.length - 1]!] : [])
        return {
          kind: 'summary',
          id: summary.id,
          conversationId: summary.conversationId,
          sessionId: conversation.sessionId,
          summaryKind: summary.kind,
          depth: summary.depth,
          method: summary.method,
          degraded: isDegradedMethod(summary.method),
          earliestAt: summary.earliestAt,
          latestAt: summary.latestAt,
          createdAt: summary.createdAt,
          tokenCount: summary.tokenCount,
          sourceTokenCount: summary.sourceTokenCount,
          children,
          foldedBy,
          messageCount: messageIds.length,
          seqRange: ends.length > 0 ? { from: ends[0]!.seq, to: ends[ends.length - 1]!.seq } : undefined,
          inContext: foldedBy.length === 0 && (await isInWindow(summary.conversationId, { summaryId: summary.id })),
        }
      }
      const messageId = parseMessageId(id)
      const [message] = messageId === undefined ? [] : await store.messagesById([messageId])
      if (!message) throw notFound(`"${id}"`, 'Pass a summary id (sum_…) or a message id (msg:<n>).')
      const conversation = await conversationOfReader(reader, message.conversationId)
      const foldedBy = await store.summaryParents({ messageId: message.id })
      return {
        kind: 'message',
        id: message.id,
        conversationId: message.conversationId,
        sessionId: conversation.sessionId,
        seq: message.seq,
        role: message.role,
        ...(message.name !== undefined ? { name: message.name } : {}),
        at: message.at,
        tokenCount: message.tokenCount,
        chars: message.content.length,
        passages: passageBounds(message.content).length,
        foldedBy,
        inContext: foldedBy.length === 0 && (await isInWindow(message.conversationId, { messageId: message.id })),
      }
    },

    async expand(reader, id, options = {}) {
      const summaryId = parseSummaryId(id)
      const ref = summaryId ? undefined : parseMessageRef(id)
      if (ref) {
        // A message opens to itself, whole; a passage of a long one to that passage.
        const [message] = await store.messagesById([ref.messageId])
        if (!message) throw notFound(`Message "${id}"`, 'Use a message id (msg:<n>) or passage id (msg:<n>#p<k>) from your search results.')
        await conversationOfReader(reader, message.conversationId)
        if (ref.passage === undefined) return { id: `msg:${message.id}`, nodes: [messageNode(message)], truncated: false }
        const bounds = passageBounds(message.content)
        const passage = bounds[ref.passage - 1]
        if (!passage) throw notFound(`Passage ${ref.passage} of msg:${message.id}`, `That message has ${bounds.length} passage${bounds.length === 1 ? '' : 's'}: use msg:${message.id}#p1 to #p${bounds.length}, or msg:${message.id} for all of it.`)
        const node = { ...messageNode(message), content: message.content.slice(passage.from, passage.to), passage: { index: passage.index, count: bounds.length, from: passage.from, to: passage.to } }
        return { id: `msg:${message.id}#p${passage.index}`, nodes: [node], truncated: false }
      }
      if (!summaryId) throw notFound(`"${id}"`, 'expand takes a summary id (sum_…), a message id (msg:<n>) or a passage id (msg:<n>#p<k>).')
      const summary = await store.summary(summaryId)
      if (!summary) throw notFound(`Summary ${summaryId}`, 'Use a summary id from the assembled context or a search hit.')
      await conversationOfReader(reader, summary.conversationId)
      const limit = options.limit ?? Number.POSITIVE_INFINITY
      const nodes: ExpandedNode[] = []
      let total: number
      if (options.toMessages) {
        const ids = await resolver.messageIds(summaryId)
        total = ids.length
        for (const message of await store.messagesById(ids.slice(0, Math.min(ids.length, limit)))) nodes.push(messageNode(message))
      } else {
        const children = await store.summaryChildren(summaryId)
        total = children.messageIds.length + children.summaryIds.length
        for (const message of await store.messagesById(children.messageIds.slice(0, limit))) nodes.push(messageNode(message))
        for (const child of await store.summariesById(children.summaryIds.slice(0, Math.max(0, limit - nodes.length)))) {
          nodes.push({
            kind: 'summary',
            id: child.id,
            depth: child.depth,
            method: child.method,
            degraded: isDegradedMethod(child.method),
            earliestAt: child.earliestAt,
            latestAt: child.latestAt,
            content: child.content,
            tokenCount: child.tokenCount,
          })
        }
      }
      return { id: summaryId, nodes, truncated: nodes.length < total }
    },
  }

  return provider
}

function messageNode(message: StoredMessage): ExpandedNode {
  return {
    kind: 'message',
    id: message.id,
    seq: message.seq,
    role: message.role,
    ...(message.name !== undefined ? { name: message.name } : {}),
    at: message.at,
    content: message.content,
    tokenCount: message.tokenCount,
  }
}
