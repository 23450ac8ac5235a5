/**
 * Recognising a question that asks for order, change or the whole story, and recalling the thread
 * that answers it (decision 0080). The recognition is a small closed grammar of the question's form
 * — not its subject — said in English: "in what order / the order in which / in order", "how did …
 * develop / change / evolve / progress" (a verb, not "her progress"), "summarize / a summary", "across / throughout our
 * conversations", "over time", "the whole story", "everything we discussed". Anything else is an
 * ordinary question: threads are not recalled for it, and priming and its ranking are what they were.
 *
 * Threads are not in the search index (decision 0080, amended): units there share the full-text
 * index's word statistics, and a thread — a subject's every line — moved the ranking of questions
 * that never recall one (BEAM information_extraction, LoCoMo single-hop). A gathering question
 * reads its viewer's threads whole and scores them by BM25 over the threads alone, their own
 * statistics, so any other question is ranked and primed exactly as it is without threads.
 */
import type { MemoryDoc } from '../../core/memory-doc.ts'
import type { DocumentStore, StoredUnit } from '../../storage/contracts.ts'
import { STOP_WORDS, stem, words } from '../../text/analyse.ts'
import type { RetrievalHit } from '../retrieval/search.ts'
import { threadMessageIds, threadText, threadTurnsAndReplies } from './gather-threads.ts'

/** The forms that ask for what was said, both sides of it: a summary, the whole story, everything discussed. */
const SUMMARY_FORMS: readonly RegExp[] = [
  /\bsummar(?:y|ies|ize|ise|ized|ised|izing|ising)\b/,
  /\bthe whole story\b/,
  /\beverything (?:we|i)(?:['’]ve| have)? (?:discussed|covered|talked about|said)\b/,
]

const GATHERING_FORMS: readonly RegExp[] = [
  /\bin (?:what|which) order\b/,
  /\b(?:what|which) order (?:did|do|does|have|has|had|was|were|should|is|are)\b/,
  /\bthe order (?:in which|of)\b/,
  /\bin order\b(?! to\b)/,
  // The word of change is the question's verb: after an article or a possessive it is a noun ("how did she
  // feel about her progress" asks about a feeling, not how something changed). What changed sits between
  // "how did" and the verb ("how did my sourdough develop"): the form's words are around it, not it.
  /\bhow (?:did|has|have|do|does) (?<subject>.{0,120}?)(?<!\b(?:a|an|the|my|your|his|her|our|their|its|this|that) )\b(?:develop|evolve|change|progress|grow|shift)(?:ed|s|d)?\b/,
  /\b(?:across|throughout|over) (?:all )?(?:of )?(?:our|my|the|these) (?:conversations?|sessions?|chats?|discussions?|talks?)\b/,
  /\bover time\b/,
  ...SUMMARY_FORMS,
]

/** Whether `question` asks for order, change or the whole story (the closed grammar above). */
export function asksForTheWholeStory(question: string): boolean {
  const text = question.toLowerCase().replace(/\s+/g, ' ')
  return GATHERING_FORMS.some((form) => form.test(text))
}

/**
 * What a gathering question is about: its words without the form that made it gather ("in what
 * order", "summarize", "across our sessions" say how to tell, not what about), stemmed, stop words out.
 * A form whose subject sits inside it names that part `subject`, and it stays: only the words around it go.
 */
function subjectTerms(question: string): string[] {
  let text = question.toLowerCase().replace(/\s+/g, ' ')
  for (const form of GATHERING_FORMS) {
    text = text.replace(new RegExp(form.source, 'g'), (...match: unknown[]) => {
      // The last argument is the named groups when the form has any (the whole text when it has none).
      const groups = match.at(-1)
      return ` ${typeof groups === 'object' && groups !== null ? ((groups as { subject?: string }).subject ?? '') : ''} `
    })
  }
  return [...new Set(words(text).filter((word) => !STOP_WORDS.has(word)).map(stem))]
}

/** Threads a question recalls, their turns merged in time order: a story often spans two subjects ("the laptop for video editing"). */
const THREADS_RECALLED = 2
/** BM25's constants, as the search index's (FTS5's) are. */
const BM25_K1 = 1.2
const BM25_B = 0.75

/** The threads a question may recall: the documents of its viewer's trees (`threads/*.md`), read whole. */
export type ThreadSource = () => Promise<ReadonlyArray<{ body: string; slug?: string }>>

/** The threads of these trees' document stores (a viewer's own and the agent's), read whole. */
export async function readThreads(stores: ReadonlyArray<Pick<DocumentStore, 'slugs' | 'read'>>): Promise<MemoryDoc[]> {
  const read = await Promise.all(stores.map(async (store) => Promise.all((await store.slugs('thread')).map((slug) => store.read('thread', slug)))))
  return read.flat().filter((doc): doc is MemoryDoc => doc !== null)
}

/** The recalled threads' turns, as the message ids they point back to, in time order, and the best thread's score. */
export interface RecalledThread {
  /** The best thread's BM25 over the threads (their own statistics). */
  score: number
  /** The ids of the messages it gathers (`StoredMessage.id` as a string), oldest first. */
  messageIds: string[]
  /** Each message's thread (its subject's slug, the better thread's when two hold it), when the source names them. */
  subjects: ReadonlyMap<string, string>
}

/** The term counts of threads read before, by their text: a thread changes only at a session boundary. */
const THREAD_TERMS_KEPT = 2_000
const threadTerms = new Map<string, { tf: ReadonlyMap<string, number>; length: number }>()

/** A thread's content-word stems with their counts, and how many it has; counted once per text. */
function termsOfThread(body: string): { tf: ReadonlyMap<string, number>; length: number } {
  const known = threadTerms.get(body)
  if (known) return known
  const tf = new Map<string, number>()
  let length = 0
  for (const word of words(threadText(body))) {
    if (STOP_WORDS.has(word)) continue
    length++
    const term = stem(word)
    tf.set(term, (tf.get(term) ?? 0) + 1)
  }
  if (threadTerms.size >= THREAD_TERMS_KEPT) threadTerms.delete(threadTerms.keys().next().value as string)
  const counted = { tf, length }
  threadTerms.set(body, counted)
  return counted
}

/**
 * The turns of the threads that best answer `question` when its form gathers; undefined otherwise,
 * or when no thread shares a word with what it asks about. The threads are scored by BM25 over the
 * threads alone (k1 1.2, b 0.75, idf ln(1 + (N − n + 0.5)/(n + 0.5))): a subject's every line is
 * long, and the other kinds' statistics are not theirs to move.
 */
export async function recallThread(threads: ThreadSource, question: string): Promise<RecalledThread | undefined> {
  if (!asksForTheWholeStory(question)) return undefined
  const asked = subjectTerms(question)
  if (asked.length === 0) return undefined
  const wanted = new Set(asked)
  const bodies = await threads()
  if (bodies.length === 0) return undefined
  const counted = bodies.map((thread) => {
    const terms = termsOfThread(thread.body)
    const tf = new Map<string, number>()
    for (const term of wanted) {
      const f = terms.tf.get(term)
      if (f !== undefined) tf.set(term, f)
    }
    return { thread, tf, length: terms.length }
  })
  const n = counted.length
  const avgdl = counted.reduce((sum, thread) => sum + thread.length, 0) / n || 1
  const idf = new Map(asked.map((term) => {
    const df = counted.filter((thread) => thread.tf.has(term)).length
    return [term, Math.log(1 + (n - df + 0.5) / (df + 0.5))] as const
  }))
  const scored = counted
    .map((thread) => {
      let score = 0
      for (const [term, f] of thread.tf) score += (idf.get(term) ?? 0) * ((f * (BM25_K1 + 1)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * thread.length) / avgdl)))
      return { thread: thread.thread, score }
    })
    .filter((thread) => thread.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, THREADS_RECALLED)
  const best = scored[0]
  if (best === undefined) return undefined
  // Messages are stored in the order they were said: their ids order the threads' turns as one story.
  // A summary asks for what was said on both sides: each turn, then the reply that answered it; an
  // order or a change is the sequence of the turns themselves.
  const text = question.toLowerCase().replace(/\s+/g, ' ')
  const both = SUMMARY_FORMS.some((form) => form.test(text))
  const subjects = new Map<string, string>()
  const ids = new Set<string>()
  for (const { thread } of scored) {
    for (const id of both ? threadTurnsAndReplies(thread.body) : threadMessageIds(thread.body)) {
      ids.add(id)
      if (thread.slug !== undefined && !subjects.has(id)) subjects.set(id, thread.slug)
    }
  }
  return { score: best.score, messageIds: [...ids].sort((a, b) => Number(a) - Number(b)), subjects }
}

/**
 * The members of a thread as the message units priming packs (a long message: its first passage,
 * which priming makes whole when it fits), in the thread's order.
 */
export async function threadMemberHits(index: { get(ids: string[]): Promise<StoredUnit[]> }, thread: RecalledThread): Promise<RetrievalHit[]> {
  const wanted = thread.messageIds.flatMap((id) => [`msg:${id}`, `msg:${id}#p1`])
  const byId = new Map((await index.get(wanted)).map((unit) => [unit.id, unit]))
  const terms = { lexical: 1, dense: 0, fused: 1, recency: 0, frequency: 0, graph: 0, information: 1, history: 1 }
  return thread.messageIds.flatMap((id) => {
    const unit = byId.get(`msg:${id}`) ?? byId.get(`msg:${id}#p1`)
    return unit ? [{ unit, score: thread.score, terms: { ...terms }, provenance: unit.provenance }] : []
  })
}
