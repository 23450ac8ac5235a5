/**
 * Keeps messages and summaries in the search index (units of kind `message` / `summary`, source
 * `conv:<id>`, provenance = the message ids they stand for), and searches them. A message longer
 * than PASSAGE_CHARS is indexed as passages (`msg:<id>#p<k>`, passages.ts), written in batches
 * with the event loop free between them, so indexing a 10 MB message neither holds one huge
 * transaction nor keeps a signal waiting.
 *
 * An append writes the messages and their units in one transaction (decision 0083:
 * `ContextStore.appendMessagesIndexed`, both backends, when the index is the store's own). A batch
 * larger than BATCH_CHARS, or an index of another database, is indexed after the store's commit: a
 * process killed between the two leaves stored messages that are not indexed. Nothing is lost (the
 * store is the truth); the first search of a conversation in a process catches the index up.
 */
import { contentHash } from '../../core/hash.ts'
import { ownerOfUser } from '../../core/owner.ts'
import type { MessageInput, StoredMessage, Summary } from '../../core/message.ts'
import { candidateUnits } from '../../storage/candidate-units.ts'
import type { AppendIndexing, Conversation, ContextStore, IndexUnit, SearchIndex } from '../../storage/contracts.ts'
import { yieldToEventLoop } from '../../core/yield.ts'
import { standingInstructions } from '../extraction/rules.ts'
import { allSummaryIds, type MessageIdResolver } from './dag.ts'
import { isLong, type Passage, PASSAGE_CHARS, passageBounds } from './passages.ts'
import type { SearchHit, SearchResult } from './provider.ts'

export const sourceOf = (conversationId: number): string => `conv:${conversationId}`

export function messageUnit(conversation: Conversation, message: StoredMessage): IndexUnit {
  const unit: IndexUnit = {
    id: `msg:${message.id}`,
    kind: 'message',
    text: message.content,
    source: sourceOf(conversation.id),
    provenance: [String(message.id)],
    agent: conversation.agent,
    createdAt: message.at,
    hash: contentHash(message.content),
    meta: { conversationId: conversation.id, sessionId: conversation.sessionId, seq: message.seq, role: message.role },
  }
  if (message.name !== undefined && unit.meta) unit.meta.name = message.name
  if (conversation.user !== undefined) unit.user = conversation.user
  unit.owner = ownerOfUser(conversation.user)
  return unit
}

/** One passage of a long message as a unit: its own id and text, the message's provenance and place. */
function passageUnit(conversation: Conversation, message: StoredMessage, passage: Passage, count: number): IndexUnit {
  const text = message.content.slice(passage.from, passage.to)
  const unit = messageUnit(conversation, { ...message, content: text })
  unit.id = `msg:${message.id}#p${passage.index}`
  unit.meta = { ...unit.meta, messageId: message.id, passage: passage.index, passages: count, from: passage.from, to: passage.to }
  return unit
}

/**
 * The standing instructions a user's message sets, each a `rule` unit beside the message (decision
 * 0079): the sentence as the user said it, the message's provenance, the conversation's source (it
 * goes with the conversation). Rules are what retrieval checks against every request by what the
 * request is about (retrieval/standing-instructions.ts), not only by the words it shares.
 */
function instructionUnits(conversation: Conversation, message: StoredMessage): IndexUnit[] {
  if (message.role !== 'user') return []
  return standingInstructions(message.content).map((said, i) => {
    const unit = messageUnit(conversation, { ...message, content: said })
    unit.id = `msg:${message.id}#i${i + 1}`
    unit.kind = 'rule'
    unit.meta = { ...unit.meta, messageId: message.id, instruction: true }
    return unit
  })
}

/**
 * The units of one message: the message itself, or its passages when it is long, and the
 * standing instructions it sets. `context` is
 * what its neighbours add (below); a long message's first passage takes the context before it, its
 * last passage the context after it. `lastOnly` gives only the last unit (the one whose context a
 * new next message changes).
 */
export function unitsOfMessage(
  conversation: Conversation,
  message: StoredMessage,
  context?: { before: { near: string; far: string }; after: { near: string; far: string } },
  lastOnly = false,
): IndexUnit[] {
  const join = (a: string, b: string): string => `${a}\n${b}`.trim()
  if (!isLong(message.content)) {
    const unit = messageUnit(conversation, message)
    if (context) unit.context = { near: join(context.before.near, context.after.near), far: join(context.before.far, context.after.far) }
    return lastOnly ? [unit] : [unit, ...instructionUnits(conversation, message)]
  }
  const bounds = passageBounds(message.content)
  const chosen = lastOnly ? bounds.slice(-1) : bounds
  const passages = chosen.map((passage) => {
    const unit = passageUnit(conversation, message, passage, bounds.length)
    if (context) {
      const first = passage.index === 1
      const last = passage.index === bounds.length
      unit.context = {
        near: join(first ? context.before.near : '', last ? context.after.near : ''),
        far: join(first ? context.before.far : '', last ? context.after.far : ''),
      }
    }
    return unit
  })
  return lastOnly ? passages : [...passages, ...instructionUnits(conversation, message)]
}

/**
 * Message units of `window` (consecutive messages of one conversation, in order) for the ones
 * at `from` and after, each with its neighbours as down-weighted context: the turn before and
 * after (`near`), two away (`far`). A question is often answered by the turn next to the one that
 * shares its words ("Did you go?" — "Yes, last Sunday, with the kids"). A neighbour gives at most
 * PASSAGE_CHARS of its text — the end of one before, the start of one after — so a long message
 * does not make its neighbours long. Messages before `from` are given with their last unit only
 * (their passages before it do not see the new neighbours).
 */
export function messageUnitsWithNeighbours(conversation: Conversation, window: readonly StoredMessage[], from = 0, refreshBefore = 0): IndexUnit[] {
  const before = (i: number): string => {
    const text = window[i]?.content ?? ''
    return text.length <= PASSAGE_CHARS ? text : text.slice(text.length - PASSAGE_CHARS)
  }
  const after = (i: number): string => {
    const text = window[i]?.content ?? ''
    return text.length <= PASSAGE_CHARS ? text : text.slice(0, PASSAGE_CHARS)
  }
  const out: IndexUnit[] = []
  for (let i = Math.max(0, from - refreshBefore); i < window.length; i++) {
    const context = { before: { near: before(i - 1), far: before(i - 2) }, after: { near: after(i + 1), far: after(i + 2) } }
    out.push(...unitsOfMessage(conversation, window[i] as StoredMessage, context, i < from))
  }
  return out
}

export function summaryUnit(conversation: Conversation, summary: Summary, messageIds: number[]): IndexUnit {
  const unit: IndexUnit = {
    id: `sum:${summary.id}`,
    kind: 'summary',
    text: summary.content,
    source: sourceOf(conversation.id),
    provenance: messageIds.map(String),
    agent: conversation.agent,
    createdAt: summary.latestAt,
    hash: contentHash(summary.content),
    meta: { conversationId: conversation.id, sessionId: conversation.sessionId, summaryId: summary.id, depth: summary.depth, method: summary.method },
  }
  if (conversation.user !== undefined) unit.user = conversation.user
  unit.owner = ownerOfUser(conversation.user)
  return unit
}

export interface ContextIndexer {
  /**
   * How an append of `messages` is indexed in the store's own transaction (the units of the new
   * messages, and of the two before them with their new neighbours); undefined without an index,
   * or for a batch too large for one transaction (then: append, then indexMessages).
   */
  appendIndexing(conversation: Conversation, messages: readonly MessageInput[]): AppendIndexing | undefined
  indexMessages(conversation: Conversation, messages: StoredMessage[]): Promise<void>
  /** Summaries written together (a compaction slice), in one index update. */
  indexSummaries(conversation: Conversation, summaries: Summary[]): Promise<void>
  search(conversations: Conversation[], query: string, limit: number): Promise<SearchResult>
}

function snippet(text: string, query: string, width = 160): string {
  const terms = query.toLowerCase().split(/\s+/).filter((term) => term.length > 1)
  const lower = text.toLowerCase()
  let at = -1
  for (const term of terms) {
    const found = lower.indexOf(term)
    if (found >= 0 && (at < 0 || found < at)) at = found
  }
  const start = Math.max(0, at < 0 ? 0 : at - Math.floor(width / 3))
  const cut = text.slice(start, start + width).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${cut}${start + width < text.length ? '…' : ''}`
}

/** Characters of unit text written per transaction; the event loop runs between batches. */
const BATCH_CHARS = 128_000
const BATCH_UNITS = 500

/**
 * Upsert `units` in transactions of at most BATCH_UNITS units or BATCH_CHARS characters, letting
 * the event loop run between them (a signal, a timer): analysing a 10 MB message's passages in one
 * go would hold the process for seconds.
 */
async function upsertInBatches(index: SearchIndex, units: IndexUnit[]): Promise<void> {
  let batch: IndexUnit[] = []
  let chars = 0
  for (const unit of units) {
    batch.push(unit)
    chars += unit.text.length + (unit.context?.near?.length ?? 0) + (unit.context?.far?.length ?? 0)
    if (batch.length >= BATCH_UNITS || chars >= BATCH_CHARS) {
      await index.upsert(batch)
      batch = []
      chars = 0
      await yieldToEventLoop()
    }
  }
  if (batch.length > 0) await index.upsert(batch)
}

/** An indexer over `index`; without an index or without full-text search it scans (substring match) and says so. */
export function createContextIndexer(store: ContextStore, index: SearchIndex | undefined, resolver: MessageIdResolver): ContextIndexer {
  const caughtUp = new Set<number>()

  async function catchUp(target: SearchIndex, conversation: Conversation): Promise<void> {
    if (caughtUp.has(conversation.id)) return
    const known = await target.hashes(sourceOf(conversation.id))
    const missing: IndexUnit[] = []
    const PAGE = 2_000
    for (let fromSeq = 1; ; fromSeq += PAGE) {
      const page = await store.messages(conversation.id, { fromSeq, limit: PAGE })
      for (const message of page) {
        // A long message is caught up when its last passage is missing (passages are written in order).
        const last = isLong(message.content) ? `msg:${message.id}#p${passageBounds(message.content).length}` : `msg:${message.id}`
        if (!known.has(last)) missing.push(...unitsOfMessage(conversation, message))
      }
      if (page.length < PAGE) break
    }
    const items = await store.items(conversation.id)
    const absent = (await allSummaryIds(store, items)).filter((id) => !known.has(`sum:${id}`))
    for (const summary of await store.summariesById(absent)) missing.push(summaryUnit(conversation, summary, await resolver.messageIds(summary.id)))
    await upsertInBatches(target, missing)
    caughtUp.add(conversation.id)
  }

  async function scan(conversations: Conversation[], query: string, limit: number): Promise<SearchHit[]> {
    const terms = query.toLowerCase().split(/\s+/).filter(Boolean)
    const hits: SearchHit[] = []
    const consider = (text: string, hit: Omit<SearchHit, 'score' | 'snippet'>): void => {
      const lower = text.toLowerCase()
      const score = terms.filter((term) => lower.includes(term)).length
      if (score > 0) hits.push({ ...hit, score, snippet: snippet(text, query) })
    }
    for (const conversation of conversations) {
      const PAGE = 2_000
      for (let fromSeq = 1; ; fromSeq += PAGE) {
        const page = await store.messages(conversation.id, { fromSeq, limit: PAGE })
        for (const m of page) {
          consider(m.content, { id: `msg:${m.id}`, kind: 'message', sessionId: conversation.sessionId, conversationId: conversation.id, at: m.at, messageIds: [m.id], messageId: m.id })
        }
        if (page.length < PAGE) break
      }
      const ids = await allSummaryIds(store, await store.items(conversation.id))
      for (const s of await store.summariesById(ids)) {
        consider(s.content, {
          id: `sum:${s.id}`,
          kind: 'summary',
          sessionId: conversation.sessionId,
          conversationId: conversation.id,
          at: s.latestAt,
          messageIds: await resolver.messageIds(s.id),
          summaryId: s.id,
        })
      }
    }
    return hits.sort((a, b) => b.score - a.score || b.at.localeCompare(a.at)).slice(0, limit)
  }

  return {
    appendIndexing(conversation, messages) {
      if (!index) return undefined
      // The analysis then runs inside the write transaction: a batch up to BATCH_CHARS of text
      // (~0.04 ms per chat message) holds it for milliseconds; a larger one is indexed in batches,
      // with the event loop free between them, after the store's commit.
      let chars = 0
      for (const message of messages) chars += message.content.length
      if (chars > BATCH_CHARS || messages.length > BATCH_UNITS) return undefined
      return {
        index,
        before: 2,
        units: (window, appended) => {
          const from = window.length - appended
          // Seqs of one conversation are consecutive; a gap (never expected) indexes the new messages alone.
          const contiguous = window.every((message, i) => message.seq === window[0]!.seq + i)
          return contiguous ? messageUnitsWithNeighbours(conversation, window, from, from) : window.slice(from).flatMap((message) => unitsOfMessage(conversation, message))
        },
      }
    },
    async indexMessages(conversation, messages) {
      if (!index || messages.length === 0) return
      // The two messages before these gain new next-neighbours: they are indexed again with them.
      // Only those two are read back; the appended ones are in hand.
      const seqs = messages.map((m) => m.seq)
      const first = Math.min(...seqs)
      const last = Math.max(...seqs)
      const start = Math.max(1, first - 2)
      const inOrder = messages.every((m, i) => m.seq === first + i)
      const window = inOrder
        ? [...(first > start ? await store.messages(conversation.id, { fromSeq: start, toSeq: first - 1 }) : []), ...messages]
        : await store.messages(conversation.id, { fromSeq: start, toSeq: last })
      const contiguous = window.length === last - start + 1
      const units = contiguous ? messageUnitsWithNeighbours(conversation, window, first - start, first - start) : messages.flatMap((message) => unitsOfMessage(conversation, message))
      await upsertInBatches(index, units)
    },
    async indexSummaries(conversation, summaries) {
      if (!index || summaries.length === 0) return
      const units: IndexUnit[] = []
      for (const summary of summaries) units.push(summaryUnit(conversation, summary, await resolver.messageIds(summary.id)))
      await upsertInBatches(index, units)
    },
    async search(conversations, query, limit) {
      if (!index?.capabilities.fullText) return { hits: await scan(conversations, query, limit), via: 'scan' }
      if (conversations.length === 0) return { hits: [], via: 'index' }
      for (const conversation of conversations) await catchUp(index, conversation)
      const byId = new Map(conversations.map((conversation) => [conversation.id, conversation]))
      const candidates = await index.search({
        text: query,
        kinds: ['message', 'summary'],
        sources: conversations.map((conversation) => sourceOf(conversation.id)),
        limit,
      })
      const units = await candidateUnits(index, candidates)
      const hits: SearchHit[] = []
      for (const candidate of candidates) {
        const unit = units.get(candidate.id)
        const conversationId = Number(unit?.meta?.conversationId)
        const conversation = byId.get(conversationId)
        if (!unit || !conversation) continue
        const hit: SearchHit = {
          id: unit.id,
          kind: unit.kind === 'summary' ? 'summary' : 'message',
          sessionId: conversation.sessionId,
          conversationId,
          snippet: snippet(unit.text, query),
          at: unit.createdAt,
          messageIds: unit.provenance.map(Number),
          score: candidate.lexical ?? 0,
        }
        if (hit.kind === 'message') hit.messageId = Number(unit.provenance[0])
        else hit.summaryId = unit.id.slice(4)
        hits.push(hit)
      }
      return { hits, via: 'index' }
    },
  }
}
