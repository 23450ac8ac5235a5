/**
 * Compaction (anna's CompactionEngine). A leaf pass folds contiguous runs of at least `leafChunk`
 * raw messages outside the fresh tail into depth-0 summaries; a condensed pass folds runs of at
 * least two same-depth summaries into one summary a level up. Incremental mode runs one of each;
 * full mode repeats them until a round changes nothing (at most `maxRounds`).
 *
 * Each summary is written together with the replacement of the items it folds, in one store
 * transaction (`replaceWithSummary`), so a failure or a crash at any point leaves the window and
 * the DAG consistent: every message is still covered exactly once. Results are discriminated:
 * `skipped` says why nothing happened, never `compacted` with nothing done.
 *
 * Callers hold the session's lock: compaction reads positions, then writes them.
 */
import type { ContextItem, StoredMessage, Summary, SummaryMethod } from '../../core/message.ts'
import type { ContextStore } from '../../storage/contracts.ts'
import { freshTailStart, loadItems } from './dag.ts'
import type { SourceSegment } from './extractive.ts'
import type { CompactionMode, CompactionResult } from './provider.ts'
import { shortTime, speakerOf } from './render.ts'
import type { Summarizer } from './summarizer.ts'

export interface CompactionSettings {
  freshTail: number
  leafChunk: number
  condenseChunk: number
  maxRounds: number
}

export interface CompactionRun {
  store: ContextStore
  conversationId: number
  mode: CompactionMode
  settings: CompactionSettings
  summarizer: Summarizer
  /** Called after each summary is stored (indexing); `messageIds` are the raw messages it stands for. */
  onSummary?: (summary: Summary, foldedMessageIds: number[] | undefined) => Promise<void>
}

/**
 * Split a run of `length` items into groups of `size`, each at least `min` long (a short remainder
 * joins the last group). Returns [start, end) index pairs.
 */
export function chunkRun(length: number, size: number, min: number): Array<[number, number]> {
  if (length < min) return []
  const groups: Array<[number, number]> = []
  let start = 0
  while (start < length) {
    let end = Math.min(start + size, length)
    if (length - end < min && end < length) end = length
    groups.push([start, end])
    start = end
  }
  return groups
}

/** Maximal runs of consecutive items for which `key` is equal and not undefined. */
function runsBy<T>(items: T[], key: (item: T) => string | undefined): Array<{ start: number; end: number }> {
  const runs: Array<{ start: number; end: number }> = []
  let start = 0
  while (start < items.length) {
    const k = key(items[start]!)
    let end = start + 1
    while (end < items.length && k !== undefined && key(items[end]!) === k) end++
    if (k !== undefined) runs.push({ start, end })
    start = end
  }
  return runs
}

function messageSegments(messages: StoredMessage[]): SourceSegment[] {
  return messages.map((message) => ({ prefix: `[${shortTime(message.at)}] ${speakerOf(message)}`, text: message.content }))
}

// Lines an extractive summary wrote keep their own speaker-and-time prefix when folded again.
const PREFIXED_LINE = /^(\[[^\]]{1,40}\] [^:]{1,80}): (.*)$/

function summarySegments(summaries: Summary[]): SourceSegment[] {
  const segments: SourceSegment[] = []
  for (const summary of summaries) {
    const fallbackPrefix = `[${shortTime(summary.earliestAt)} → ${shortTime(summary.latestAt)}] summary`
    for (const line of summary.content.split('\n')) {
      if (line.trim() === '') continue
      const match = PREFIXED_LINE.exec(line)
      segments.push(match ? { prefix: match[1]!, text: match[2]! } : { prefix: fallbackPrefix, text: line })
    }
  }
  return segments
}

function earliest(values: string[]): string {
  return values.reduce((a, b) => (Date.parse(b) < Date.parse(a) ? b : a))
}
function latest(values: string[]): string {
  return values.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a))
}

interface PassOutcome {
  leaf: number
  condensed: number
  created: string[]
  methods: Partial<Record<SummaryMethod, number>>
}

async function leafPass(run: CompactionRun, outcome: PassOutcome): Promise<void> {
  const { store, conversationId, settings } = run
  const items = await store.items(conversationId)
  const older = items.slice(0, freshTailStart(items, settings.freshTail))
  const runs = runsBy(older, (item) => (item.kind === 'message' ? 'message' : undefined))
  for (const { start, end } of runs) {
    for (const [from, to] of chunkRun(end - start, settings.leafChunk, settings.leafChunk)) {
      const group = older.slice(start + from, start + to) as Array<ContextItem & { kind: 'message' }>
      const messages = await store.messagesById(group.map((item) => item.messageId))
      const sourceTokens = messages.reduce((sum, message) => sum + message.tokenCount, 0)
      const output = await run.summarizer.summarize({ segments: messageSegments(messages), sourceTokens, kind: 'leaf' })
      const messageIds = messages.map((message) => message.id)
      const summary = await store.replaceWithSummary(
        conversationId,
        group.map((item) => item.position),
        {
          kind: 'leaf',
          depth: 0,
          content: output.content,
          tokenCount: output.tokenCount,
          sourceTokenCount: sourceTokens,
          earliestAt: earliest(messages.map((message) => message.at)),
          latestAt: latest(messages.map((message) => message.at)),
          method: output.method,
          messageIds,
        },
      )
      record(outcome, summary, 'leaf')
      await run.onSummary?.(summary, messageIds)
    }
  }
}

async function condensedPass(run: CompactionRun, outcome: PassOutcome): Promise<void> {
  const { store, conversationId, settings } = run
  const items = await store.items(conversationId)
  const older = items.slice(0, freshTailStart(items, settings.freshTail))
  const { summaries } = await loadItems(
    store,
    older.filter((item) => item.kind === 'summary'),
  )
  const depthOf = (item: ContextItem): string | undefined => (item.kind === 'summary' ? String(summaries.get(item.summaryId)?.depth) : undefined)
  for (const { start, end } of runsBy(older, depthOf)) {
    for (const [from, to] of chunkRun(end - start, settings.condenseChunk, 2)) {
      const group = older.slice(start + from, start + to) as Array<ContextItem & { kind: 'summary' }>
      const folded = group.map((item) => summaries.get(item.summaryId)!)
      const depth = folded[0]!.depth + 1
      const sourceTokens = folded.reduce((sum, summary) => sum + summary.tokenCount, 0)
      const output = await run.summarizer.summarize({ segments: summarySegments(folded), sourceTokens, kind: 'condensed' })
      const summary = await store.replaceWithSummary(
        conversationId,
        group.map((item) => item.position),
        {
          kind: 'condensed',
          depth,
          content: output.content,
          tokenCount: output.tokenCount,
          sourceTokenCount: sourceTokens,
          earliestAt: earliest(folded.map((s) => s.earliestAt)),
          latestAt: latest(folded.map((s) => s.latestAt)),
          method: output.method,
          parentIds: folded.map((s) => s.id),
        },
      )
      record(outcome, summary, 'condensed')
      await run.onSummary?.(summary, undefined)
    }
  }
}

function record(outcome: PassOutcome, summary: Summary, kind: 'leaf' | 'condensed'): void {
  if (kind === 'leaf') outcome.leaf++
  else outcome.condensed++
  outcome.created.push(summary.id)
  outcome.methods[summary.method] = (outcome.methods[summary.method] ?? 0) + 1
}

/** Stored tokens of the current window (content only, without summary labels). */
async function windowTokens(store: ContextStore, conversationId: number): Promise<number> {
  const items = await store.items(conversationId)
  const loaded = await loadItems(store, items)
  let total = 0
  for (const message of loaded.messages.values()) total += message.tokenCount
  for (const summary of loaded.summaries.values()) total += summary.tokenCount
  return total
}

/** Run one compaction. The caller holds the session lock. */
export async function compactConversation(run: CompactionRun): Promise<CompactionResult> {
  const outcome: PassOutcome = { leaf: 0, condensed: 0, created: [], methods: {} }
  const tokensBefore = await windowTokens(run.store, run.conversationId)
  const maxRounds = run.mode === 'full' ? run.settings.maxRounds : 1
  let rounds = 0
  while (rounds < maxRounds) {
    const before = outcome.created.length
    await leafPass(run, outcome)
    await condensedPass(run, outcome)
    rounds++
    if (outcome.created.length === before) break
  }
  if (outcome.created.length === 0) {
    return {
      kind: 'skipped',
      mode: run.mode,
      reason: `nothing to compact: no run of ${run.settings.leafChunk}+ messages and no 2+ summaries of one depth outside the fresh tail of ${run.settings.freshTail}`,
    }
  }
  const methods = outcome.methods
  const degraded = (methods.extractive ?? 0) + (methods.deterministic ?? 0) > 0
  return {
    kind: 'compacted',
    mode: run.mode,
    rounds,
    leafSummaries: outcome.leaf,
    condensedSummaries: outcome.condensed,
    created: outcome.created,
    methods,
    tokensBefore,
    tokensAfter: await windowTokens(run.store, run.conversationId),
    degraded,
    warnings: [...run.summarizer.warnings],
  }
}
