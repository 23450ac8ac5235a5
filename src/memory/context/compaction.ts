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
 * A pass reads the window in pages, oldest first, and folds each group as soon as its bounds are
 * known (the groups are the ones a whole-run reading would make), so a 100,000-message backlog is
 * never held or scanned at once. The work runs in slices of `sliceMs`: after each, the summaries
 * written are indexed in one batch and the event loop runs (a turn in the same process is not held
 * up); with `maxMs` the run stops after that long and says `complete: false`, the rest is left for
 * a later run — the window stays valid meanwhile, the assembler cuts what does not fit from the
 * oldest raw messages.
 *
 * Callers hold the session's compaction lock (one compaction at a time). Appends take no lock: they
 * only add items after the last one, and `replaceWithSummary` checks the run it folds inside its
 * own transaction.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { yieldToEventLoop } from '../../core/yield.ts'
import type { ContextItem, StoredMessage, Summary, SummaryMethod } from '../../core/message.ts'
import type { ContextStore, NewSummary } from '../../storage/contracts.ts'
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

/** A summary just written, with the raw messages it stands for when it is a leaf. */
export interface WrittenSummary {
  summary: Summary
  messageIds: number[] | undefined
}

export interface CompactionRun {
  store: ContextStore
  conversationId: number
  mode: CompactionMode
  settings: CompactionSettings
  summarizer: Summarizer
  /** Called after each slice with the summaries it stored (indexing them in one batch). */
  onSummaries?: (written: WrittenSummary[]) => Promise<void>
  /** Stop after about this many milliseconds (at least one summary is written first); the rest is left for a later run. */
  maxMs?: number
  /** Longest stretch of work between two turns of the event loop, in milliseconds (default SLICE_MS). */
  sliceMs?: number
  /**
   * Asked between slices: how long to stand back before the next one (0: go on). A background run
   * stands back while the process serves a turn (lcm-provider.ts).
   */
  standBack?: () => number
}

/** Default slice: short enough that a turn running beside a compaction waits at most this long per step. */
const SLICE_MS = 1
/** Summaries stored per transaction. */
const STORE_BATCH = 16
/** Summaries indexed per index update. */
const INDEX_BATCH = 8
/** Items read per page of the window. */
const PAGE = 1_000

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
  /** Tokens of the items folded, and of the summaries that replaced them. */
  foldedTokens: number
  writtenTokens: number
}

/** A summary made and not stored yet, with what it replaces. */
interface Pending {
  positions: number[]
  summary: NewSummary
  foldedTokens: number
}

/**
 * How a run spends its time. The event loop runs after every `sliceMs` of work, so a turn in the
 * same process waits about one slice at most for each of its own waits on I/O. Summaries are
 * stored STORE_BATCH at a time in one transaction, then indexed INDEX_BATCH at a time, the event
 * loop running between those writes too: a write costs a transaction, so they are batched, and a
 * batch is kept small enough to stay near one slice. With `maxMs` the run stops.
 */
class Pacer {
  readonly #run: CompactionRun
  readonly #outcome: PassOutcome
  readonly #started = performance.now()
  readonly #sliceMs: number
  #sliceStart = performance.now()
  #pending: Pending[] = []
  #stopped = false

  constructor(run: CompactionRun, outcome: PassOutcome) {
    this.#run = run
    this.#outcome = outcome
    this.#sliceMs = run.sliceMs ?? SLICE_MS
  }

  get stopped(): boolean {
    return this.#stopped
  }

  /** A summary made: stored with the next batch; the run stops here once past `maxMs`. */
  async add(pending: Pending): Promise<void> {
    this.#pending.push(pending)
    if (this.#run.maxMs !== undefined && performance.now() - this.#started >= this.#run.maxMs) {
      this.#stopped = true
      await this.flush()
      return
    }
    if (this.#pending.length >= STORE_BATCH) await this.flush()
    await this.breathe()
  }

  /** At the end of a slice: let the event loop run (and wait out a turn when asked to stand back). */
  async breathe(): Promise<void> {
    if (performance.now() - this.#sliceStart < this.#sliceMs) return
    if (!(await this.standBack())) await yieldToEventLoop()
    this.#sliceStart = performance.now()
  }

  /** Wait out a turn when asked to; true when it waited. */
  async standBack(): Promise<boolean> {
    const wait = this.#run.standBack?.() ?? 0
    if (wait <= 0) return false
    await sleep(wait)
    this.#sliceStart = performance.now()
    return true
  }

  /** Store the summaries made so far (one transaction) and hand them to `onSummaries`, a batch at a time. */
  async flush(): Promise<void> {
    if (this.#pending.length === 0) return
    // A write is the longest step of a run: a turn that has just begun goes first, even mid-slice.
    await this.standBack()
    const batch = this.#pending
    this.#pending = []
    const { store, conversationId } = this.#run
    const summaries = await store.replaceWithSummaries(
      conversationId,
      batch.map(({ positions, summary }) => ({ positions, summary })),
    )
    const outcome = this.#outcome
    summaries.forEach((summary, i) => {
      if (summary.kind === 'leaf') outcome.leaf++
      else outcome.condensed++
      outcome.created.push(summary.id)
      outcome.methods[summary.method] = (outcome.methods[summary.method] ?? 0) + 1
      outcome.foldedTokens += batch[i]!.foldedTokens
      outcome.writtenTokens += summary.tokenCount
    })
    const written = summaries.map((summary, i) => ({ summary, messageIds: batch[i]!.summary.messageIds }))
    for (let i = 0; i < written.length; i += INDEX_BATCH) {
      if (!(await this.standBack())) await this.breathe()
      await this.#run.onSummaries?.(written.slice(i, i + INDEX_BATCH))
    }
  }
}

/**
 * Position of the first protected item: the last `freshTail` message items and everything after
 * the first of them are never compacted. MAX when nothing is protected, MIN when everything is.
 */
async function protectedFrom(store: ContextStore, conversationId: number, freshTail: number): Promise<number> {
  if (freshTail <= 0) return Number.MAX_SAFE_INTEGER
  let before: number | undefined
  let seen = 0
  for (;;) {
    const page = await store.items(conversationId, { ...(before !== undefined ? { before } : {}), limit: PAGE, newest: true })
    for (let i = page.length - 1; i >= 0; i--) {
      if (page[i]!.kind === 'message') seen++
      if (seen >= freshTail) return page[i]!.position
    }
    if (page.length < PAGE) return Number.MIN_SAFE_INTEGER
    before = page[0]!.position
  }
}

/** The items before `boundary`, oldest first, a page at a time. */
async function* itemsBefore(run: CompactionRun, boundary: number, pacer: Pacer): AsyncGenerator<ContextItem[]> {
  let after: number | undefined
  for (;;) {
    const page = await run.store.items(run.conversationId, { ...(after !== undefined ? { after } : {}), before: boundary, limit: PAGE })
    if (page.length > 0) yield page
    if (page.length < PAGE) return
    after = page[page.length - 1]!.position
    await pacer.breathe()
  }
}

/**
 * Groups of consecutive items with one key (undefined breaks a run), as `chunkRun` cuts each
 * whole run, yielded as soon as a group's bounds are known: a group of `size` is final once
 * `size + min` items of its run are seen.
 */
async function* groupsOf<T>(pages: AsyncIterable<T[]>, key: (item: T) => string | undefined, size: number, min: number): AsyncGenerator<T[]> {
  let run: T[] = []
  let from = 0
  let runKey: string | undefined
  const rest = function* (): Generator<T[]> {
    const left = run.slice(from)
    for (const [a, b] of chunkRun(left.length, size, min)) yield left.slice(a, b)
    run = []
    from = 0
  }
  for await (const page of pages) {
    for (const item of page) {
      const k = key(item)
      if (k === undefined || k !== runKey) {
        yield* rest()
        runKey = k
        if (k === undefined) continue
      }
      run.push(item)
      if (run.length - from >= size + min) {
        yield run.slice(from, from + size)
        from += size
        if (from > 4 * size) {
          run = run.slice(from)
          from = 0
        }
      }
    }
  }
  yield* rest()
}

async function leafPass(run: CompactionRun, pacer: Pacer): Promise<void> {
  const { store, conversationId, settings } = run
  const boundary = await protectedFrom(store, conversationId, settings.freshTail)
  const pages = itemsBefore(run, boundary, pacer)
  for await (const group of groupsOf(pages, (item) => (item.kind === 'message' ? 'message' : undefined), settings.leafChunk, settings.leafChunk)) {
    const messages = await store.messagesById(group.map((item) => (item as ContextItem & { kind: 'message' }).messageId))
    const sourceTokens = messages.reduce((sum, message) => sum + message.tokenCount, 0)
    const output = await run.summarizer.summarize({ segments: messageSegments(messages), sourceTokens, kind: 'leaf' })
    await pacer.add({
      positions: group.map((item) => item.position),
      foldedTokens: sourceTokens,
      summary: {
        kind: 'leaf',
        depth: 0,
        content: output.content,
        tokenCount: output.tokenCount,
        sourceTokenCount: sourceTokens,
        earliestAt: earliest(messages.map((message) => message.at)),
        latestAt: latest(messages.map((message) => message.at)),
        method: output.method,
        messageIds: messages.map((message) => message.id),
      },
    })
    if (pacer.stopped) return
  }
  // The condensed pass reads what this pass wrote.
  await pacer.flush()
}

async function condensedPass(run: CompactionRun, pacer: Pacer): Promise<void> {
  const { store, conversationId, settings } = run
  const boundary = await protectedFrom(store, conversationId, settings.freshTail)
  // Each page's summaries are read with it; a group carries its own.
  async function* withSummaries(): AsyncGenerator<Array<{ item: ContextItem; summary?: Summary }>> {
    for await (const page of itemsBefore(run, boundary, pacer)) {
      const ids = page.flatMap((item) => (item.kind === 'summary' ? [item.summaryId] : []))
      const byId = new Map((await store.summariesById(ids)).map((summary) => [summary.id, summary]))
      yield page.map((item) => (item.kind === 'summary' ? { item, summary: byId.get(item.summaryId)! } : { item }))
    }
  }
  for await (const group of groupsOf(withSummaries(), (entry) => (entry.summary ? String(entry.summary.depth) : undefined), settings.condenseChunk, 2)) {
    const folded = group.map((entry) => entry.summary!)
    const depth = folded[0]!.depth + 1
    const sourceTokens = folded.reduce((sum, summary) => sum + summary.tokenCount, 0)
    const output = await run.summarizer.summarize({ segments: summarySegments(folded), sourceTokens, kind: 'condensed' })
    await pacer.add({
      positions: group.map((entry) => entry.item.position),
      foldedTokens: sourceTokens,
      summary: {
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
    })
    if (pacer.stopped) return
  }
  await pacer.flush()
}

/** Run one compaction. The caller holds the session's compaction lock. */
export async function compactConversation(run: CompactionRun): Promise<CompactionResult> {
  const outcome: PassOutcome = { leaf: 0, condensed: 0, created: [], methods: {}, foldedTokens: 0, writtenTokens: 0 }
  const pacer = new Pacer(run, outcome)
  const maxRounds = run.mode === 'full' ? run.settings.maxRounds : 1
  let rounds = 0
  try {
    while (rounds < maxRounds && !pacer.stopped) {
      const before = outcome.created.length
      await leafPass(run, pacer)
      if (!pacer.stopped) await condensedPass(run, pacer)
      rounds++
      if (outcome.created.length === before) break
    }
  } finally {
    // What was written is indexed even when a later step failed.
    await pacer.flush()
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
  // Stored tokens of the window (content only, without summary labels): read once after, and
  // before = after + what was folded − what replaced it. A run stopped at its time limit does not
  // read the whole window (a slice must stay short): its figures are those of what it folded.
  const complete = !pacer.stopped
  const tokensAfter = complete ? (await run.store.windowStats(run.conversationId)).tokens : outcome.writtenTokens
  const tokensBefore = complete ? tokensAfter + outcome.foldedTokens - outcome.writtenTokens : outcome.foldedTokens
  return {
    kind: 'compacted',
    mode: run.mode,
    rounds,
    leafSummaries: outcome.leaf,
    condensedSummaries: outcome.condensed,
    created: outcome.created,
    methods,
    tokensBefore,
    tokensAfter,
    complete,
    degraded,
    warnings: [...run.summarizer.warnings],
  }
}
