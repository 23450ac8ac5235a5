/**
 * The retrieval evaluation protocol of ../shared/bench/FORMAT.md, run through engram's real
 * recall path. Per conversation: a fresh mind in a temporary home, on a manual clock; each
 * session of the data set is one engram session (the way an agent lives them: a session id per
 * sitting), its turns appended in order through `mind.context.append`, named by their speaker,
 * as the agent's own (`assistant`) messages when the data says the agent said them (`role`) and
 * as `user` messages otherwise, stamped from the session start; the clock then moves to the session's end,
 * the session's boundary gathers its threads (decision 0080) and `mind.maintain()` runs the background
 * work that would run between sittings. Every question is
 * then asked at its `asked_at` (or a day after the last session):
 *
 *   ranked       the retriever's ranking over the kinds priming recalls (summaries map to the
 *                messages they stand for, in order), as turn ids via each message's meta.turnId;
 *                a question about order, change or the whole story first has the turns of the
 *                threads it recalls, each taking its own rank, as priming packs them first;
 *   contexts[B]  the text `mind.primer.prime({ message, budget: B, maxChars: 4B, asOf })` injects
 *                (the format counts characters / 4 as tokens);
 *   ms           the time of the priming call at the largest budget (what an agent pays per turn).
 *
 * Priming records access to what it injects, as in real use, so later questions see earlier
 * recalls in the frequency term. Plain BM25 over turns runs beside it on the same data.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../core/clock.ts'
import { type ProgressOptions, startPhase } from '../core/progress.ts'
import { RELATED_KINDS } from '../memory/priming/prime.ts'
import { gatherThreads } from '../memory/threads/gather-threads.ts'
import { readThreads, recallThread } from '../memory/threads/gathering-question.ts'
import { openMindInternals } from '../mind-internals.ts'
import { dropPostgresSchema } from '../storage/postgres/connection.ts'
import { createPlainBm25, packPlain } from './plain-bm25.ts'
import { asInstant, type EvalConversation, type EvalDataset } from './retrieval-dataset.ts'
import { CONTEXT_BUDGETS, type QuestionMetrics, questionMetrics, type RunLine } from './retrieval-metrics.ts'

/** Spacing of turns inside a session when the data gives no time per turn. */
const TURN_SPACING_MS = 30_000
const RANKED_LIMIT = 50
/** FORMAT.md counts a context's tokens as its characters / 4. */
const CHARS_PER_TOKEN = 4
/** Turns the baseline's context packing looks at. */
const BASELINE_DEPTH = 400

export interface RetrievalEvalOptions extends ProgressOptions {
  /** Only the first N conversations. */
  conversations?: number
  /** Settings for every mind, by dotted key (e.g. `{ 'embed.provider': 'none' }`). */
  settings?: Record<string, unknown>
  /** Called with each run line as soon as it is known (the CLI streams them to the run file). */
  onLine?: (line: RunLine) => void
  /**
   * Run each conversation's mind on this PostgreSQL (the parity measure of decision 0037) instead of the
   * embedded backend: each in a schema of its own, dropped when the conversation is done.
   */
  databaseUrl?: string
}

export interface EvaluatedQuestion {
  id: string
  category: string
  engram: QuestionMetrics
  bm25: QuestionMetrics
}

const at = (ms: number): string => new Date(ms).toISOString()

async function evaluateConversation(conversation: EvalConversation, options: RetrievalEvalOptions): Promise<EvaluatedQuestion[]> {
  const root = mkdtempSync(join(tmpdir(), 'engram-eval-'))
  const starts = conversation.sessions.map((s) => (s.started_at ? Date.parse(asInstant(s.started_at)) : Number.NaN))
  const firstStart = starts.find((ms) => Number.isFinite(ms)) ?? Date.parse('2024-01-01T09:00:00Z')
  const clock = new ManualClock(firstStart)
  const schema = options.databaseUrl === undefined ? undefined : `eval_${randomBytes(6).toString('hex')}`
  const mind = await openMindInternals({
    home: join(root, 'home'),
    env: { HOME: join(root, 'user-home'), PATH: process.env.PATH ?? '' },
    ignoreConfigFile: true,
    reindexOnOpen: false,
    clock,
    settings: {
      ...options.settings,
      ...(options.databaseUrl !== undefined ? { 'storage.url': options.databaseUrl, 'storage.schema': schema } : {}),
    },
  })
  try {
    const turnOfMessage = new Map<string, string>()
    const turns = new Map<string, { speaker: string; text: string }>()
    const order: Array<{ id: string; text: string }> = []
    let lastMs = firstStart
    // Stopped (Ctrl-C) between two sessions or questions: the temporary home goes, the run file keeps the lines written; a run again starts over.
    const living = startPhase(options, `${conversation.id}: sessions`, conversation.sessions.length)
    for (const [si, session] of conversation.sessions.entries()) {
      await living.checkpoint()
      const start = Math.max(Number.isFinite(starts[si]) ? (starts[si] as number) : lastMs + 3_600_000, lastMs)
      clock.set(start)
      const messages = session.turns.map((turn, ti) => {
        turns.set(turn.id, { speaker: turn.speaker, text: turn.text })
        order.push({ id: turn.id, text: turn.text })
        const turnAt = turn.at ? Date.parse(asInstant(turn.at)) : Number.NaN
        const role: 'user' | 'assistant' = turn.role === 'assistant' ? 'assistant' : 'user'
        return { role, name: turn.speaker, content: turn.text, at: at(Number.isFinite(turnAt) ? turnAt : start + ti * TURN_SPACING_MS), meta: { turnId: turn.id } }
      })
      const stored = await mind.context.append({ sessionId: `${conversation.id}#${session.id}`, agent: mind.agent }, messages)
      stored.forEach((message, i) => {
        const turnId = messages[i]?.meta.turnId
        if (turnId !== undefined) turnOfMessage.set(String(message.id), turnId)
      })
      lastMs = start + session.turns.length * TURN_SPACING_MS
      clock.set(lastMs)
      // The session's boundary gathers its threads, as a host's boundary job does (decision 0080).
      await gatherThreads({ context: mind.backend.context, documents: mind.scope().view.own.documents, agent: mind.agent, clock }, `${conversation.id}#${session.id}`)
      await mind.maintain()
      living.step()
    }
    await mind.idle()
    await mind.indexed()

    const bm25 = createPlainBm25(order)
    const out: EvaluatedQuestion[] = []
    const asking = startPhase(options, `${conversation.id}: questions`, conversation.questions.length)
    for (const question of conversation.questions) {
      await asking.checkpoint()
      const askedMs = question.asked_at ? Date.parse(asInstant(question.asked_at)) : lastMs + 86_400_000
      const asOf = at(Math.max(askedMs, lastMs))
      clock.set(asOf)
      const result = await mind.retriever.search(question.question, { kinds: [...RELATED_KINDS], limit: RANKED_LIMIT, asOf, recordAccess: false, allOwners: true })
      // A question about order, change or the whole story recalls its thread, as priming does: the
      // thread is scored by expanding it into its member turns, each taking its own rank, first.
      const thread = await recallThread(() => readThreads([mind.scope().view.own.documents]), question.question)
      const ranked: string[] = []
      const seen = new Set<string>()
      for (const provenance of [thread?.messageIds ?? [], ...result.hits.map((hit) => hit.provenance)]) {
        for (const messageId of provenance) {
          const turnId = turnOfMessage.get(messageId)
          if (turnId === undefined || seen.has(turnId)) continue
          seen.add(turnId)
          ranked.push(turnId)
        }
      }
      const contexts: Record<string, string> = {}
      let ms = 0
      for (const budget of CONTEXT_BUDGETS) {
        const started = performance.now()
        // FORMAT.md scores a context by characters / 4, not by o200k tokens (conversational
        // English runs about 4.3 characters a token): ask priming to respect that cap too, as a
        // host that budgets by characters would.
        const primed = await mind.primer.prime({ message: question.question, budget, maxChars: budget * CHARS_PER_TOKEN, asOf, type: 'question' })
        ms = performance.now() - started
        contexts[String(budget)] = primed.text
      }
      const line: RunLine = { id: question.id, ranked: ranked.slice(0, RANKED_LIMIT), contexts, ms: Math.round(ms * 100) / 100 }
      options.onLine?.(line)

      const baselineStarted = performance.now()
      const baselineRanked = bm25.rank(question.question, BASELINE_DEPTH)
      const baselineContexts: Record<string, string> = {}
      for (const budget of CONTEXT_BUDGETS) baselineContexts[String(budget)] = packPlain(turns, baselineRanked, budget)
      const baseline: RunLine = { id: question.id, ranked: baselineRanked.slice(0, RANKED_LIMIT), contexts: baselineContexts, ms: performance.now() - baselineStarted }

      const scored = { category: question.category, evidence: question.evidence, staleEvidence: question.stale_evidence }
      const text = (id: string): string | undefined => turns.get(id)?.text
      out.push({ id: question.id, category: question.category, engram: questionMetrics(scored, line, text), bm25: questionMetrics(scored, baseline, text) })
      asking.step()
    }
    return out
  } finally {
    await mind.close()
    rmSync(root, { recursive: true, force: true })
    // The conversation's schema goes with it: an eval leaves nothing in the database.
    if (options.databaseUrl !== undefined) await dropPostgresSchema(options.databaseUrl, schema as string)
  }
}

/** Run the protocol over `dataset`; returns each question's metrics for engram and the baseline. */
export async function runRetrievalEval(dataset: EvalDataset, options: RetrievalEvalOptions = {}): Promise<EvaluatedQuestion[]> {
  const conversations = options.conversations === undefined ? dataset.conversations : dataset.conversations.slice(0, options.conversations)
  const out: EvaluatedQuestion[] = []
  for (const [i, conversation] of conversations.entries()) {
    out.push(...(await evaluateConversation(conversation, options)))
    options.onProgress?.({ phase: 'conversations', done: i + 1, total: conversations.length })
  }
  return out
}
