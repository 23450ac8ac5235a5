/**
 * The units behind index candidates: those the index handed up while ranking, and the rest read
 * in one batch. Callers of `SearchIndex.search` use this rather than `get` for every candidate.
 */
import type { IndexCandidate, SearchIndex, StoredUnit } from './contracts.ts'

export async function candidateUnits(index: SearchIndex, candidates: readonly IndexCandidate[]): Promise<Map<string, StoredUnit>> {
  const units = new Map<string, StoredUnit>()
  const unread: string[] = []
  for (const candidate of candidates) {
    if (candidate.unit) units.set(candidate.id, candidate.unit)
    else unread.push(candidate.id)
  }
  if (unread.length > 0) for (const unit of await index.get(unread)) units.set(unit.id, unit)
  return units
}
