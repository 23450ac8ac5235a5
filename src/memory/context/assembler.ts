/**
 * Context assembly (anna's Assembler): the fresh tail always — the newest raw messages, verbatim —
 * then older items, newest first, while they fit the budget; returned in chronological order.
 *
 * Only the items that end up in (or just past) the budget are read: the walk goes backwards from
 * the newest item in small batches and stops at the first item that does not fit, so a 100,000
 * message conversation costs one read of the item list, not of every message.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { ContextItem, StoredMessage, Summary } from '../../core/message.ts'
import { partsOf } from '../../core/message-parts.ts'
import { countTokens } from '../../core/tokens.ts'
import type { ContextStore } from '../../storage/contracts.ts'
import { loadItems, type MessageIdResolver } from './dag.ts'
import type { AssembledContext, AssembledItem } from './provider.ts'
import { isDegradedMethod, renderSummary } from './render.ts'

export interface AssembleInput {
  store: ContextStore
  resolver: MessageIdResolver
  conversationId: number
  budget: number
  freshTail: number
}

const BATCH = 32

/** Throws `invalid_argument` unless budget and freshTail are non-negative integers. */
export function validateBudget(budget: number, freshTail: number): void {
  for (const [value, name, env] of [
    [budget, 'budget', 'ENGRAM_CONTEXT_BUDGET'],
    [freshTail, 'freshTail', 'ENGRAM_CONTEXT_FRESH_TAIL'],
  ] as const) {
    if (!Number.isInteger(value) || value < 0) {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: `${name} must be a non-negative whole number of ${name === 'budget' ? 'tokens' : 'messages'}, got ${JSON.stringify(value)}.`,
        fix: `Pass a whole number (context.${name} / ${env} sets the default).`,
      })
    }
  }
}

function messageItem(item: ContextItem & { kind: 'message' }, message: StoredMessage): AssembledItem {
  const out: AssembledItem = {
    kind: 'message',
    role: message.role,
    content: message.content,
    tokens: message.tokenCount,
    position: item.position,
    messageIds: [message.id],
    messageId: message.id,
    seq: message.seq,
    at: message.at,
  }
  if (message.name !== undefined) out.name = message.name
  const parts = partsOf(message.meta)
  if (parts) out.parts = parts
  return out
}

/** A summary as an assembled item: labelled, counted as rendered. */
export async function summaryItem(position: number, summary: Summary, resolver: MessageIdResolver): Promise<AssembledItem> {
  const messageIds = await resolver.messageIds(summary.id)
  const content = renderSummary(summary, summary.content, messageIds.length)
  return {
    kind: 'summary',
    role: 'user',
    content,
    tokens: countTokens(content),
    position,
    messageIds,
    summaryId: summary.id,
    depth: summary.depth,
    method: summary.method,
    degraded: isDegradedMethod(summary.method),
    at: summary.latestAt,
  }
}

/** Resolve items (newest first) to assembled items, one batch at a time. */
async function* newestFirst(input: AssembleInput, items: ContextItem[]): AsyncGenerator<AssembledItem> {
  for (let end = items.length; end > 0; end -= BATCH) {
    const batch = items.slice(Math.max(0, end - BATCH), end)
    const loaded = await loadItems(input.store, batch)
    for (let i = batch.length - 1; i >= 0; i--) {
      const item = batch[i]!
      if (item.kind === 'message') {
        const message = loaded.messages.get(item.messageId)
        if (!message) throw missing(`message ${item.messageId}`)
        yield messageItem(item, message)
      } else {
        const summary = loaded.summaries.get(item.summaryId)
        if (!summary) throw missing(`summary ${item.summaryId}`)
        yield await summaryItem(item.position, summary, input.resolver)
      }
    }
  }
}

function missing(what: string): EngramError {
  return new EngramError({
    code: ErrorCode.storageCorrupt,
    category: 'system',
    message: `The context window points at ${what}, which is not stored.`,
    fix: 'Run `engram doctor`; restore engram.db from a backup if it reports corruption.',
  })
}

/** Assemble one conversation's context within `budget` tokens. */
export async function assembleContext(input: AssembleInput): Promise<AssembledContext> {
  validateBudget(input.budget, input.freshTail)
  const items = await input.store.items(input.conversationId)
  // The fresh tail: the newest items while they are raw messages, at most freshTail of them.
  let tailStart = items.length
  while (tailStart > 0 && items.length - tailStart < input.freshTail && items[tailStart - 1]!.kind === 'message') tailStart--

  const tail: AssembledItem[] = []
  const older: AssembledItem[] = []
  let tailTokens = 0
  for await (const item of newestFirst(input, items.slice(tailStart))) {
    tail.push(item)
    tailTokens += item.tokens
  }
  tail.reverse()
  if (tailTokens > input.budget) {
    return { items: tail, tokens: tailTokens, budget: input.budget, freshTailCount: tail.length, overBudget: true, omittedItems: tailStart }
  }
  let used = tailTokens
  if (tailStart > 0 && used < input.budget) {
    for await (const item of newestFirst(input, items.slice(0, tailStart))) {
      // Stop at the first item that does not fit: skipping it for a smaller older one would leave a hole in the story.
      if (used + item.tokens > input.budget) break
      older.push(item)
      used += item.tokens
    }
  }
  older.reverse()
  return {
    items: [...older, ...tail],
    tokens: used,
    budget: input.budget,
    freshTailCount: tail.length,
    overBudget: false,
    omittedItems: tailStart - older.length,
  }
}

/** Whether the whole window's rendered tokens exceed `limit` (reads only as far back as needed). */
export async function windowExceeds(input: Omit<AssembleInput, 'budget' | 'freshTail'>, limit: number): Promise<boolean> {
  const items = await input.store.items(input.conversationId)
  let total = 0
  for await (const item of newestFirst({ ...input, budget: 0, freshTail: 0 }, items)) {
    total += item.tokens
    if (total > limit) return true
  }
  return false
}
