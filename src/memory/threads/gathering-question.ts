/**
 * Recognising a question that asks for order, change or the whole story, and recalling the thread
 * that answers it (decision 0080). The recognition is a small closed grammar of the question's form
 * — not its subject — said in English: "in what order / the order in which / in order", "how did …
 * develop / change / evolve / progress", "summarize / a summary", "across / throughout our
 * conversations", "over time", "the whole story", "everything we discussed". Anything else is an
 * ordinary question: threads are not recalled for it, and priming and its ranking are what they were.
 */
import { memoryKinds } from '../../core/memory-kinds.ts'
import type { StoredUnit, UnitKind } from '../../storage/contracts.ts'
import type { RetrievalHit, RetrievalOptions, Retriever } from '../retrieval/search.ts'

/** The unit kinds recalled when a question gathers (the registry's `gathered` kinds). */
export const GATHERED_KINDS: readonly UnitKind[] = memoryKinds().flatMap(([, spec]) => (spec.primedBy === 'gathered' && spec.unit !== null ? [spec.unit as UnitKind] : []))

const GATHERING_FORMS: readonly RegExp[] = [
  /\bin (?:what|which) order\b/,
  /\b(?:what|which) order (?:did|do|does|have|has|had|was|were|should|is|are)\b/,
  /\bthe order (?:in which|of)\b/,
  /\bin order\b(?! to\b)/,
  /\bhow (?:did|has|have|do|does) .{0,120}?\b(?:develop|evolve|change|progress|grow|shift)(?:ed|s|d)?\b/,
  /\bsummar(?:y|ies|ize|ise|ized|ised|izing|ising)\b/,
  /\b(?:across|throughout|over) (?:all )?(?:of )?(?:our|my|the|these) (?:conversations?|sessions?|chats?|discussions?|talks?)\b/,
  /\bover time\b/,
  /\bthe whole story\b/,
  /\beverything (?:we|i)(?:['’]ve| have)? (?:discussed|covered|talked about|said)\b/,
]

/** Whether `question` asks for order, change or the whole story (the closed grammar above). */
export function asksForTheWholeStory(question: string): boolean {
  const text = question.toLowerCase().replace(/\s+/g, ' ')
  return GATHERING_FORMS.some((form) => form.test(text))
}

/** Threads a question recalls, their turns merged in time order: a story often spans two subjects ("the laptop for video editing"). */
const THREADS_RECALLED = 2

/** A recalled thread and the message ids it points back to, in time order. */
export interface RecalledThread {
  hit: RetrievalHit
  /** The ids of the messages it gathers (`StoredMessage.id` as a string), oldest first. */
  messageIds: string[]
}

/**
 * The thread that best answers `question` when its form gathers; undefined otherwise, or when no
 * thread matches. `options` are the caller's retrieval options (viewer, asOf…); kinds and limit are
 * this function's.
 */
export async function recallThread(retriever: Retriever, question: string, options: Omit<RetrievalOptions, 'kinds' | 'limit'>): Promise<RecalledThread | undefined> {
  if (GATHERED_KINDS.length === 0 || !asksForTheWholeStory(question)) return undefined
  const result = await retriever.search(question, { ...options, kinds: [...GATHERED_KINDS], limit: THREADS_RECALLED })
  const hit = result.hits[0]
  if (hit === undefined) return undefined
  // Messages are stored in the order they were said: their ids order the threads' turns as one story.
  const ids = new Set(result.hits.flatMap((thread) => thread.provenance.filter((id) => /^\d+$/.test(id))))
  return { hit, messageIds: [...ids].sort((a, b) => Number(a) - Number(b)) }
}

/**
 * The members of a thread as the message units priming packs (a long message: its first passage,
 * which priming makes whole when it fits), in the thread's order, scored as the thread was.
 */
export async function threadMemberHits(index: { get(ids: string[]): Promise<StoredUnit[]> }, thread: RecalledThread): Promise<RetrievalHit[]> {
  const wanted = thread.messageIds.flatMap((id) => [`msg:${id}`, `msg:${id}#p1`])
  const byId = new Map((await index.get(wanted)).map((unit) => [unit.id, unit]))
  return thread.messageIds.flatMap((id) => {
    const unit = byId.get(`msg:${id}`) ?? byId.get(`msg:${id}#p1`)
    return unit ? [{ unit, score: thread.hit.score, terms: { ...thread.hit.terms }, provenance: unit.provenance }] : []
  })
}
