/**
 * The simple provider: a sliding window over the raw messages (anna's `memory/simple`). It keeps
 * the newest messages that fit the budget, the fresh tail always; no summaries, no compaction, no
 * search. It reads `ctx_messages` directly, so a conversation the LCM provider compacted still
 * assembles here from its raw messages, and appends still add context items, so switching back to
 * LCM loses nothing.
 */
import type { StoredMessage } from '../../core/message.ts'
import { partsOf } from '../../core/message-parts.ts'
import { validateBudget } from './assembler.ts'
import type { AssembledContext, AssembledItem, ContextProvider } from './provider.ts'
import { createSessionSupport, messageStats } from './session-support.ts'
import { type ContextProviderDeps, resolveSettings } from './settings.ts'

export type SimpleContextProvider = ContextProvider

function asItem(message: StoredMessage): AssembledItem {
  const item: AssembledItem = {
    kind: 'message',
    role: message.role,
    content: message.content,
    tokens: message.tokenCount,
    // The sliding window has no context items of its own: the seq is its position.
    position: message.seq,
    messageIds: [message.id],
    messageId: message.id,
    seq: message.seq,
    at: message.at,
  }
  if (message.name !== undefined) item.name = message.name
  const parts = partsOf(message.meta)
  if (parts) item.parts = parts
  return item
}

export function createSimpleProvider(deps: ContextProviderDeps): SimpleContextProvider {
  const settings = resolveSettings(deps.settings)
  const { store } = deps
  const support = createSessionSupport({ store, locks: deps.locks, clock: deps.clock, lockTimeoutMs: settings.lockTimeoutMs, maxMessageChars: settings.maxMessageChars })

  return {
    kind: 'simple',
    async append(session, messages) {
      return (await support.append(session, messages)).stored
    },
    async assemble(session, budget, freshTail = settings.freshTail) {
      validateBudget(budget, freshTail)
      const conversation = await support.findConversation(session)
      const empty: AssembledContext = { items: [], tokens: 0, budget, freshTailCount: 0, overBudget: false, omittedItems: 0 }
      if (!conversation) return empty
      const last = await store.messageCount(conversation.id)
      const picked: AssembledItem[] = []
      let used = 0
      let tailCount = 0
      const PAGE = 64
      let stopped = false
      for (let toSeq = last; toSeq >= 1 && !stopped; toSeq -= PAGE) {
        const page = await store.messages(conversation.id, { fromSeq: Math.max(1, toSeq - PAGE + 1), toSeq })
        for (let i = page.length - 1; i >= 0; i--) {
          const message = page[i]!
          if (tailCount < freshTail) {
            picked.push(asItem(message))
            used += message.tokenCount
            tailCount++
            continue
          }
          if (used > budget || used + message.tokenCount > budget) {
            stopped = true
            break
          }
          picked.push(asItem(message))
          used += message.tokenCount
        }
      }
      picked.reverse()
      return { items: picked, tokens: used, budget, freshTailCount: tailCount, overBudget: used > budget, omittedItems: last - picked.length }
    },
    async stats(session) {
      const conversation = await support.findConversation(session)
      const stats = await messageStats(store, session, conversation)
      if (!conversation) return stats
      // The window of a sliding-window provider is every raw message.
      stats.items = stats.messages
      stats.contextTokens = stats.messageTokens
      return stats
    },
    async close() {},
  }
}
