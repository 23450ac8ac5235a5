/**
 * A consistency check of one conversation's context window and summary DAG — what "lossless"
 * means, checked from the stored rows (no cache): every message is covered exactly once by the
 * expansion of the current items, in seq order; item positions are strictly ordered; every edge
 * points at a stored message or summary of the same conversation; a summary's children are of a
 * lower depth (a leaf folds only messages). `engram context stats` and `engram doctor` run it; so do
 * the crash and property tests.
 */
import type { ContextStore } from '../../storage/contracts.ts'

export interface ConsistencyReport {
  ok: boolean
  problems: string[]
  messages: number
  items: number
  summaries: number
}

/** Check conversation `conversationId`; never throws for an inconsistency, it reports it. */
export async function checkContextConsistency(store: ContextStore, conversationId: number): Promise<ConsistencyReport> {
  const problems: string[] = []
  const items = await store.items(conversationId)
  for (let i = 1; i < items.length; i++) {
    if (items[i]!.position <= items[i - 1]!.position) problems.push(`item positions not strictly ordered at index ${i}`)
  }
  const seenSummaries = new Set<string>()
  const coverage: number[] = []

  async function expand(summaryId: string, parentDepth: number | undefined): Promise<void> {
    if (seenSummaries.has(summaryId)) {
      problems.push(`summary ${summaryId} is reachable twice`)
      return
    }
    seenSummaries.add(summaryId)
    const summary = await store.summary(summaryId)
    if (!summary) {
      problems.push(`edge to missing summary ${summaryId}`)
      return
    }
    if (summary.conversationId !== conversationId) problems.push(`summary ${summaryId} belongs to conversation ${summary.conversationId}`)
    if (parentDepth !== undefined && summary.depth >= parentDepth) problems.push(`summary ${summaryId} (depth ${summary.depth}) is folded by a summary of depth ${parentDepth}`)
    const children = await store.summaryChildren(summaryId)
    if (children.messageIds.length + children.summaryIds.length === 0) problems.push(`summary ${summaryId} folds nothing`)
    if (summary.kind === 'leaf' && children.summaryIds.length > 0) problems.push(`leaf summary ${summaryId} folds summaries`)
    if (summary.kind === 'leaf' && summary.depth !== 0) problems.push(`leaf summary ${summaryId} has depth ${summary.depth}`)
    const messages = await store.messagesById(children.messageIds)
    if (messages.length !== children.messageIds.length) problems.push(`summary ${summaryId} folds a missing message`)
    for (const message of messages) {
      if (message.conversationId !== conversationId) problems.push(`summary ${summaryId} folds message ${message.id} of another conversation`)
      coverage.push(message.seq)
    }
    for (const child of children.summaryIds) await expand(child, summary.depth)
  }

  for (const item of items) {
    if (item.kind === 'message') {
      const [message] = await store.messagesById([item.messageId])
      if (!message) problems.push(`item ${item.position} points at missing message ${item.messageId}`)
      else if (message.conversationId !== conversationId) problems.push(`item ${item.position} points at a message of another conversation`)
      else coverage.push(message.seq)
    } else {
      await expand(item.summaryId, undefined)
    }
  }

  const total = await store.messageCount(conversationId)
  const counts = new Map<number, number>()
  for (const seq of coverage) counts.set(seq, (counts.get(seq) ?? 0) + 1)
  for (let seq = 1; seq <= total; seq++) {
    const n = counts.get(seq) ?? 0
    if (n !== 1) problems.push(`message seq ${seq} is covered ${n} times`)
    if (problems.length > 50) break
  }
  if (coverage.length !== total && problems.length <= 50) problems.push(`coverage has ${coverage.length} entries for ${total} messages`)
  for (let i = 1; i < coverage.length && problems.length <= 50; i++) {
    if (coverage[i]! <= coverage[i - 1]!) {
      problems.push(`expansion out of order: seq ${coverage[i]} after ${coverage[i - 1]}`)
      break
    }
  }
  return { ok: problems.length === 0, problems, messages: total, items: items.length, summaries: seenSummaries.size }
}
