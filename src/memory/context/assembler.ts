/**
 * Context assembly (anna's Assembler): the fresh tail always — the newest raw messages, verbatim —
 * then older items, newest first, while they fit the budget; returned in chronological order.
 *
 * Only the items that end up in (or just past) the budget are read: the walk goes backwards from
 * the newest item in pages and stops at the first item that does not fit, so a 100,000-message
 * window (a backlog not compacted yet) costs what the budget holds, not a read of the whole list.
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
/** Largest page of items read at once while walking back. */
const MAX_PAGE = 512

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

/** The window's items, newest first, read a page at a time (pages grow: most walks stop early). */
async function* newestItems(store: ContextStore, conversationId: number): AsyncGenerator<ContextItem> {
  let before: number | undefined
  for (let size = BATCH; ; size = Math.min(size * 2, MAX_PAGE)) {
    const page = await store.items(conversationId, { ...(before !== undefined ? { before } : {}), limit: size, newest: true })
    for (let i = page.length - 1; i >= 0; i--) yield page[i]!
    if (page.length < size) return
    before = page[0]!.position
  }
}

/** Resolve items (newest first) to assembled items, a batch at a time. */
async function* newestFirst(input: Pick<AssembleInput, 'store' | 'resolver'>, items: AsyncIterable<ContextItem>): AsyncGenerator<AssembledItem> {
  let batch: ContextItem[] = []
  const resolve = async function* (): AsyncGenerator<AssembledItem> {
    const loaded = await loadItems(input.store, batch)
    for (const item of batch) {
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
    batch = []
  }
  for await (const item of items) {
    batch.push(item)
    if (batch.length >= BATCH) yield* resolve()
  }
  if (batch.length > 0) yield* resolve()
}

function missing(what: string): EngramError {
  return new EngramError({
    code: ErrorCode.storageCorrupt,
    category: 'system',
    message: `The context window points at ${what}, which is not stored.`,
    fix: 'Run `engram doctor`; restore engram.db from a backup if it reports corruption.',
  })
}

/**
 * Assemble one conversation's context within `budget` tokens. The window is walked from its
 * newest item back, a page at a time, and the walk stops at the first item that does not fit:
 * a window of 100,000 raw messages costs what the budget holds, not the whole list.
 */
export async function assembleContext(input: AssembleInput): Promise<AssembledContext> {
  validateBudget(input.budget, input.freshTail)
  const tail: AssembledItem[] = []
  const older: AssembledItem[] = []
  let tailTokens = 0
  let used = 0
  let inTail = true
  let overBudget = false
  // The first item left out (the newest of those older than everything kept), when the walk stopped early.
  let stoppedAt: number | undefined
  for await (const item of newestFirst(input, newestItems(input.store, input.conversationId))) {
    if (inTail) {
      // The fresh tail: the newest items while they are raw messages, at most freshTail of them.
      if (item.kind === 'message' && tail.length < input.freshTail) {
        tail.push(item)
        tailTokens += item.tokens
        continue
      }
      inTail = false
      used = tailTokens
      if (tailTokens > input.budget) {
        overBudget = true
        stoppedAt = item.position
        break
      }
      // A tail that fills the budget exactly leaves no room for anything older.
      if (used >= input.budget) {
        stoppedAt = item.position
        break
      }
    }
    // Stop at the first item that does not fit: skipping it for a smaller older one would leave a hole in the story.
    if (used + item.tokens > input.budget) {
      stoppedAt = item.position
      break
    }
    older.push(item)
    used += item.tokens
  }
  if (inTail) {
    used = tailTokens
    overBudget = tailTokens > input.budget
  }
  tail.reverse()
  older.reverse()
  const firstKept = older[0]?.position ?? tail[0]?.position
  const omittedItems = stoppedAt === undefined ? 0 : await input.store.countItems(input.conversationId, firstKept ?? stoppedAt + 1)
  if (overBudget) return { items: tail, tokens: tailTokens, budget: input.budget, freshTailCount: tail.length, overBudget: true, omittedItems }
  return { items: [...older, ...tail], tokens: used, budget: input.budget, freshTailCount: tail.length, overBudget: false, omittedItems }
}

/** Whether the whole window's rendered tokens exceed `limit` (reads only as far back as needed). */
export async function windowExceeds(input: Omit<AssembleInput, 'budget' | 'freshTail'>, limit: number): Promise<boolean> {
  let total = 0
  for await (const item of newestFirst(input, newestItems(input.store, input.conversationId))) {
    total += item.tokens
    if (total > limit) return true
  }
  return false
}
