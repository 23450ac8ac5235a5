/**
 * A deliberate search that gathers (decision 0080, "Search returns threads too"): when the query asks
 * for order, change or the whole story and the viewer holds a thread on what it asks about, the
 * thread's turns come first, in time order, each the message unit it is; then the ordinary hits,
 * without the turns already listed, within the limit asked. Every other query is the ordinary search
 * untouched: `recallThread` answers it with one regular-expression test and reads nothing.
 *
 * The ordinary search runs as it would without threads (same query, same limit), so its ranking and
 * the accesses it records are the same: a turn listed because a thread holds it is not recalled by the
 * query, as priming's access record has it.
 */
import type { UnitKind } from '../../storage/contracts.ts'
import type { RetrievalHit } from '../retrieval/search.ts'
import { recallThread, type ThreadSource, threadMemberHits } from './gathering-question.ts'

/**
 * A search hit, and when it is listed because a thread holds it, that thread's subject (its slug) and
 * how many turns the recalled threads hold for the viewer (more than are listed when the limit cut them).
 */
export type GatheredHit = RetrievalHit & { thread?: string; threadTurns?: number }

export interface ThreadSearchDeps {
  /** The viewer's threads (its user's and the agent's trees), read only when the query gathers. */
  threads: ThreadSource
  index: Parameters<typeof threadMemberHits>[0]
  /** Whether the viewer may see a member turn (its owner, its agent): a thread points at ids only. */
  visible: (hit: RetrievalHit) => boolean
}

export interface ThreadSearchOptions {
  limit: number
  kinds?: readonly UnitKind[]
  /** Messages never listed (the turn being answered), as the ordinary search leaves them out. */
  excludeMessageIds?: readonly number[]
}

/**
 * `ordinary` (the search as it is without threads) with a gathering query's thread turns first.
 * The two run at once; a query that does not gather gets `ordinary`'s hits, the same array.
 */
export async function searchWithThreads(deps: ThreadSearchDeps, query: string, options: ThreadSearchOptions, ordinary: () => Promise<RetrievalHit[]>): Promise<GatheredHit[]> {
  const wantsMessages = options.kinds === undefined || options.kinds.includes('message')
  const [hits, thread] = await Promise.all([ordinary(), wantsMessages ? recallThread(deps.threads, query) : undefined])
  if (thread === undefined) return hits
  const excluded = new Set((options.excludeMessageIds ?? []).map(String))
  const visible = (await threadMemberHits(deps.index, thread)).filter((hit) => deps.visible(hit) && !hit.provenance.every((id) => excluded.has(id)))
  // The story's beginning, when it is longer than the limit: the header tells how much more there is.
  const members = visible.slice(0, options.limit).map((hit): GatheredHit => {
    const subject = hit.provenance.map((id) => thread.subjects.get(id)).find((slug) => slug !== undefined)
    return subject === undefined ? hit : { ...hit, thread: subject, threadTurns: visible.length }
  })
  if (members.length === 0) return hits
  const listed = new Set(members.map((hit) => hit.unit.id))
  return [...members, ...hits.filter((hit) => !listed.has(hit.unit.id))].slice(0, options.limit)
}
