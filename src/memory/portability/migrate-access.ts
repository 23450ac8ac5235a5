/**
 * Access counts, moved by `engram migrate` (decision 0052): how often and how lately each memory
 * was recalled, which forgetting weighs (a memory recalled often is kept). They live on the search
 * index's units, which the target's reindex makes under the same ids (a unit's id is its file's
 * path and the entry's key, on every backend), so after the reindex each unit of the source that
 * was recalled is raised to the source's count and last access (`SearchIndex.raiseAccess`: never
 * lowered, and a rerun changes nothing). Units of conversations (messages, summaries) are not:
 * their ids are the store's, and the target indexes them at the first search of the conversation.
 */
import type { Backend, StoredUnit } from '../../storage/contracts.ts'
import type { TreeProblem } from './memory-tree.ts'

const PAGE = 1_000
/** Units a migration does not carry the counts of (see the module comment). */
const CONVERSATION_KINDS: ReadonlySet<string> = new Set(['message', 'summary'])

/** The recalled memory units of `agent` (and of what every agent shares) on `backend`'s index. */
async function recalledUnits(backend: Backend, agent: string): Promise<StoredUnit[]> {
  const units: StoredUnit[] = []
  for (let offset = 0; ; offset += PAGE) {
    const page = await backend.index.list({}, { limit: PAGE, offset })
    for (const unit of page) {
      if (unit.accessCount > 0 && !CONVERSATION_KINDS.has(unit.kind) && (unit.agent === undefined || unit.agent === agent)) units.push(unit)
    }
    if (page.length < PAGE) break
  }
  return units
}

/** Unit id → `<count>@<last access>`, of every recalled memory unit of `agent` on `backend` (for the digest). */
export async function accessOf(backend: Backend, agent: string): Promise<Record<string, string>> {
  await backend.index.flush?.()
  return Object.fromEntries((await recalledUnits(backend, agent)).map((unit) => [unit.id, `${unit.accessCount}@${unit.lastAccessAt ?? ''}`]))
}

/** Whether `target` holds at least `source`'s access (as many recalls, the last one as late). */
export function holdsAccess(source: string, target: string | undefined): boolean {
  if (target === undefined) return false
  const [count, last = ''] = source.split('@') as [string, string]
  const [targetCount, targetLast = ''] = target.split('@') as [string, string]
  return Number(targetCount) >= Number(count) && targetLast >= last
}

/** Raises the target's units to the source's access counts (see the module comment); returns how many changed and how many held them already. */
export async function moveAccess(from: Backend, to: Backend, agent: string, problems: TreeProblem[]): Promise<{ units: number; alreadyThere: number }> {
  if (!to.index.raiseAccess) {
    problems.push({ path: 'access counts', reason: `the ${to.name} target's index has no seam that sets them; not moved` })
    return { units: 0, alreadyThere: 0 }
  }
  await from.index.flush?.()
  const units = await recalledUnits(from, agent)
  let changed = 0
  for (let i = 0; i < units.length; i += PAGE) {
    const batch = units.slice(i, i + PAGE).map((unit) => ({ id: unit.id, count: unit.accessCount, ...(unit.lastAccessAt !== undefined ? { lastAccessAt: unit.lastAccessAt } : {}) }))
    changed += await to.index.raiseAccess(batch)
  }
  return { units: changed, alreadyThere: units.length - changed }
}
