/**
 * Walking the summary DAG. Summaries and their edges never change once written, so what a summary
 * stands for can be cached for the life of a provider.
 */
import type { ContextItem, StoredMessage, Summary } from '../../core/message.ts'
import type { ContextStore } from '../../storage/contracts.ts'

const CACHE_LIMIT = 50_000

/** Memoised "which raw messages does this summary stand for", in seq order. */
export class MessageIdResolver {
  readonly #store: ContextStore
  readonly #cache = new Map<string, number[]>()

  constructor(store: ContextStore) {
    this.#store = store
  }

  /** Every message id a summary folds, transitively, ascending (ids grow with seq in a conversation). */
  async messageIds(summaryId: string): Promise<number[]> {
    const hit = this.#cache.get(summaryId)
    if (hit) return hit
    const children = await this.#store.summaryChildren(summaryId)
    const ids = [...children.messageIds]
    for (const child of children.summaryIds) ids.push(...(await this.messageIds(child)))
    ids.sort((a, b) => a - b)
    if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear()
    this.#cache.set(summaryId, ids)
    return ids
  }
}

/** Messages and summaries of some items, fetched in batches. */
export async function loadItems(
  store: ContextStore,
  items: ContextItem[],
): Promise<{ messages: Map<number, StoredMessage>; summaries: Map<string, Summary> }> {
  const messages = new Map<number, StoredMessage>()
  const summaries = new Map<string, Summary>()
  const BATCH = 500
  for (let start = 0; start < items.length; start += BATCH) {
    const slice = items.slice(start, start + BATCH)
    const messageIds: number[] = []
    const summaryIds: string[] = []
    for (const item of slice) {
      if (item.kind === 'message') messageIds.push(item.messageId)
      else summaryIds.push(item.summaryId)
    }
    for (const message of await store.messagesById(messageIds)) messages.set(message.id, message)
    for (const summary of await store.summariesById(summaryIds)) summaries.set(summary.id, summary)
  }
  return { messages, summaries }
}

/**
 * Every summary reachable from the current items, children before parents. Every summary ever
 * written is reachable: a summary leaves the window only by being folded into another one.
 */
export async function allSummaryIds(store: ContextStore, items: ContextItem[]): Promise<string[]> {
  const out: string[] = []
  const seen = new Set<string>()
  const visit = async (id: string): Promise<void> => {
    if (seen.has(id)) return
    seen.add(id)
    const children = await store.summaryChildren(id)
    for (const child of children.summaryIds) await visit(child)
    out.push(id)
  }
  for (const item of items) if (item.kind === 'summary') await visit(item.summaryId)
  return out
}
