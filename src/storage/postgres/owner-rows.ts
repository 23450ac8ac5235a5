/**
 * Which rows belong to one owner's memory (decision 0017) on PostgreSQL: the embedded backend gives
 * each owner a tree of its own (`agents/<a>/…`, `agents/<a>/users/<key>/…`, `shared/…`); here each
 * owned table carries `(agent, owner)` and every statement filters on both. Shared memory is
 * home-wide, so its rows have agent `''` and every agent of the database sees the same ones.
 */
import { isOwner, type Owner } from '../../core/owner.ts'
import { invalid } from '../input-checks.ts'

export interface OwnerRows {
  agent: string
  owner: string
}

/** The `(agent, owner)` columns of `owner`'s rows for `agent`; refuses an empty agent or a bad user id. */
export function ownerRows(agent: string, owner: Owner): OwnerRows {
  if (owner === 'shared') return { agent: '', owner }
  if (typeof agent !== 'string' || agent === '') throw invalid('agent must be a non-empty string.', 'Pass the agent id (--agent or ENGRAM_AGENT).')
  if (!isOwner(owner)) throw invalid(`${JSON.stringify(owner)} is not an owner.`, "Use 'agent', 'shared' or 'user:<id>' with a valid user id.")
  return { agent, owner }
}
