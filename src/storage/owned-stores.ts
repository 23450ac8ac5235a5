/**
 * What every backend shares in how it is opened and how it keeps the stores of each owner
 * (decision 0017): the options common to all, and the stores per owner opened on first use.
 */
import type { Clock } from '../core/clock.ts'
import type { Owner } from '../core/owner.ts'
import type { OwnedStores } from './contracts.ts'

/** The options every backend is opened with (each adds where its data is). */
export interface BackendCommonOptions {
  agent: string
  /** Project folder: project-scope engrams are its memory (`<project>/.engram/memory/`, or its rows). */
  project?: string
  clock: Clock
  /** The embedder's vector space id and size; vectors of another space are rebuilt. */
  embedderId?: string
  dimensions?: number
  /** Called when an activity append fails (appends never throw into the caller). */
  onActivityError?: (error: unknown) => void
  /** Memory texts larger than this are skipped and reported, never read (`memory.maxFileBytes`, decision 0025). */
  maxFileBytes?: number
}

/** Stores per owner kept open at the most; beyond, the least recently opened user's are dropped (they are cheap to reopen). */
const OPEN_OWNERS = 1000

/** `Backend.owned`: each owner's stores made by `open` on first use and kept; the agent's and shared ones always. */
export function ownedStoresOf(open: (owner: Owner) => OwnedStores): (owner: Owner) => OwnedStores {
  const owned = new Map<Owner, OwnedStores>()
  return (owner) => {
    const known = owned.get(owner)
    if (known) return known
    const stores = open(owner)
    // A home serving many users keeps the stores of the most recent ones open.
    if (owned.size >= OPEN_OWNERS) {
      const oldest = [...owned.keys()].find((key) => key !== 'agent' && key !== 'shared')
      if (oldest !== undefined) owned.delete(oldest)
    }
    owned.set(owner, stores)
    return stores
  }
}
