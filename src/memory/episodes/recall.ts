/**
 * Intentional recall of episodic memory (Anton's `recall` tool, AnimaWorks' second recall
 * pathway): searches the episode sections and the activity log of the last `daysBack` days,
 * ranked by BM25 with a small recency boost, newest first among equals. Every result names where
 * it came from (`episodes/<date>.md#<heading>` or `activity/<date>.jsonl#L<n>`) so the agent can
 * open the original.
 *
 * The ranking runs in TypeScript over the files of the window; when the shared search index
 * covers episodes and activity it can take over behind the same signature.
 */
import { ACTIVITY_LABELS, type ActivityType } from '../../core/activity.ts'
import { ageInDays, type Clock, isoDay } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { ActivityLog, DocumentStore } from '../../storage/contracts.ts'
import { instantOf } from '../../storage/activity-records.ts'
import { parseEpisodeSections, recalledSection } from './episode-format.ts'
import { formatEventLine } from './episode-summary.ts'
import { bm25Scores } from './text-ranking.ts'

export interface RecallOptions {
  /** Only memories of the last N days (default 30, as Anton's `days_back`). */
  daysBack?: number
  /** Most results returned (default 20, as Anton's `max_results`). */
  limit?: number
}

export interface RecallResult {
  source: 'episode' | 'activity'
  /** `episodes/<date>.md#<heading>` or `activity/<date>.jsonl#L<n>`. */
  ref: string
  /** When it happened (ISO). */
  ts: string
  /** The episode heading, or the event's label and type (`MSG< message_received`). */
  title: string
  text: string
  /** Higher is better; comparable within one answer only. */
  score: number
  type?: ActivityType
  session?: string
  /** Why an episode's text is degraded (summarised without an LLM), said once per answer, not in its text. */
  degraded?: string
}

export type Recall = (query: string, options?: RecallOptions) => Promise<RecallResult[]>

/** One owner's episodes and activity, with its prefix in the memory namespace (decision 0017). */
export interface RecallTree {
  activity: ActivityLog
  documents: DocumentStore
  /** `''` for the agent's tree, `users/<key>/` for a user's, `shared/` for the shared one. */
  namespace: string
}

export interface EpisodicRecallOptions {
  /** The agent's own tree (when `trees` is not given). */
  activity?: ActivityLog
  documents?: DocumentStore
  /** Every tree the reader may see (a session's view), most specific first. */
  trees?: RecallTree[]
  clock: Clock
}

export const RECALL_DEFAULT_DAYS = 30
export const RECALL_DEFAULT_LIMIT = 20
export const RECALL_MAX_LIMIT = 200
/** At most this much recency boost (a fresh memory scores up to 20% higher), halving every 30 days. */
const RECENCY_BOOST = 0.2
const RECENCY_HALF_LIFE_DAYS = 30
const RESULT_TEXT_LIMIT = 1200

interface Candidate extends Omit<RecallResult, 'score'> {
  searchText: string
}

function invalid(message: string, fix: string, details: Record<string, unknown>): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

/** Checks recall arguments; throws `invalid_argument` with the fix. Returns the effective values. */
export function checkRecallArguments(query: unknown, options: RecallOptions = {}): { query: string; daysBack: number; limit: number } {
  if (typeof query !== 'string' || query.trim() === '') {
    throw invalid('Recall needs a non-empty query.', 'Pass the words to look for, e.g. "deploy token".', { query })
  }
  const daysBack = options.daysBack ?? RECALL_DEFAULT_DAYS
  if (typeof daysBack !== 'number' || !Number.isFinite(daysBack) || daysBack <= 0) {
    throw invalid(`daysBack must be a positive number of days, got ${JSON.stringify(options.daysBack)}.`, 'Pass e.g. daysBack 7 (--days 7); leave it out for 30.', { daysBack: options.daysBack })
  }
  const limit = options.limit ?? RECALL_DEFAULT_LIMIT
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > RECALL_MAX_LIMIT) {
    throw invalid(`limit must be a whole number from 1 to ${RECALL_MAX_LIMIT}, got ${JSON.stringify(options.limit)}.`, 'Pass e.g. limit 10 (--limit 10); leave it out for 20.', { limit: options.limit })
  }
  return { query: query.trim(), daysBack, limit }
}

function clip(text: string): string {
  return text.length > RESULT_TEXT_LIMIT ? `${text.slice(0, RESULT_TEXT_LIMIT - 1)}…` : text
}

/** Creates `recall(query, { daysBack, limit })` over the episodes and activity logs of the reader's trees. */
export function createEpisodicRecall(options: EpisodicRecallOptions): Recall {
  const { clock } = options
  const trees: RecallTree[] =
    options.trees ?? (options.activity && options.documents ? [{ activity: options.activity, documents: options.documents, namespace: '' }] : [])
  if (trees.length === 0) throw new Error('createEpisodicRecall needs trees, or an activity log and a document store')

  async function episodeCandidates(tree: RecallTree, sinceDay: string): Promise<Candidate[]> {
    const { documents, namespace } = tree
    const candidates: Candidate[] = []
    for (const slug of await documents.slugs('episode')) {
      if (slug < sinceDay) continue
      const ref = { slug }
      const doc = await documents.read('episode', ref.slug)
      if (!doc) continue
      for (const section of parseEpisodeSections(doc.body)) {
        // As priming and search recall it: the extractive notice becomes `degraded`, not text.
        const recalled = recalledSection(section)
        const body = section.heading === '' ? recalled.body.replace(/^#\s.*$/m, '').trim() : recalled.body
        if (body === '' && section.heading === '') continue
        const time = /^(\d{2}):(\d{2})/.exec(section.heading)
        candidates.push({
          source: 'episode',
          ref: section.heading === '' ? `${namespace}episodes/${ref.slug}.md` : `${namespace}episodes/${ref.slug}.md#${section.heading}`,
          ts: `${ref.slug}T${time ? `${time[1]}:${time[2]}` : '00:00'}:00.000Z`,
          title: section.heading || ref.slug,
          text: clip(body),
          ...(section.marker ? { session: section.marker.session } : {}),
          ...(recalled.degraded !== undefined ? { degraded: recalled.degraded } : {}),
          searchText: `${section.heading}\n${body}`,
        })
      }
    }
    return candidates
  }

  async function activityCandidates(tree: RecallTree, since: string): Promise<Candidate[]> {
    return (await tree.activity.read({ since })).map((record) => {
      const line = formatEventLine(record, RESULT_TEXT_LIMIT)
      return {
        source: 'activity',
        ref: `${tree.namespace}${record.ref}`,
        ts: record.ts,
        title: `${ACTIVITY_LABELS[record.type]} ${record.type}`,
        text: line,
        type: record.type,
        ...(record.session ? { session: record.session } : {}),
        searchText: `${line} ${record.tool ?? ''} ${record.channel ?? ''}`,
      }
    })
  }

  return async function recall(query, recallOptions = {}) {
    const checked = checkRecallArguments(query, recallOptions)
    const now = clock.now()
    const since = new Date(now.getTime() - checked.daysBack * 86_400_000)
    const candidates: Candidate[] = []
    for (const tree of trees) candidates.push(...(await episodeCandidates(tree, isoDay(since))), ...(await activityCandidates(tree, since.toISOString())))
    const scores = bm25Scores(
      checked.query,
      candidates.map((candidate) => candidate.searchText),
    )
    const ranked: RecallResult[] = []
    candidates.forEach((candidate, index) => {
      const lexical = scores[index] ?? 0
      if (lexical <= 0) return
      const age = Math.max(0, ageInDays(candidate.ts, now))
      const { searchText: _searchText, ...result } = candidate
      ranked.push({ ...result, score: lexical * (1 + RECENCY_BOOST * 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)) })
    })
    ranked.sort((a, b) => b.score - a.score || instantOf(b.ts) - instantOf(a.ts))
    return ranked.slice(0, checked.limit)
  }
}
