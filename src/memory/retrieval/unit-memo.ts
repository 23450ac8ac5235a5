/**
 * What recall derives from a unit's text — its content words, its information prior, its word-vector
 * embedding — depends on the text alone, and the same units come back turn after turn (priming, then
 * the agent's own search on the same topic). A bounded memo keyed by the unit's content hash keeps
 * that work off the hot path: a changed text has a new hash, so nothing stale is ever returned.
 *
 * Entries unused for a while go first, in two generations of half the capacity each: a hit in the
 * recent one costs one lookup; a hit in the older one moves the entry to the recent one; when the
 * recent one is full it becomes the older one and the older one is dropped. (A strict LRU order —
 * delete and re-insert on every hit — was 6% of priming's CPU at 100k units, for the same hits.)
 */
export interface UnitMemo<T> {
  get(hash: string, compute: () => T): T
  /** The value when known, else undefined (for batched computation of the misses). */
  peek(hash: string): T | undefined
  set(hash: string, value: T): void
  clear(): void
}

export function createUnitMemo<T>(capacity: number): UnitMemo<T> {
  const generation = Math.max(1, Math.floor(capacity / 2))
  let recent = new Map<string, T>()
  let older = new Map<string, T>()
  const remember = (hash: string, value: T): void => {
    if (recent.size >= generation && !recent.has(hash)) {
      older = recent
      recent = new Map()
    }
    recent.set(hash, value)
  }
  const peek = (hash: string): T | undefined => {
    const known = recent.get(hash)
    if (known !== undefined) return known
    const old = older.get(hash)
    if (old !== undefined) remember(hash, old)
    return old
  }
  return {
    get(hash, compute) {
      const known = peek(hash)
      if (known !== undefined) return known
      const value = compute()
      remember(hash, value)
      return value
    },
    peek,
    set: remember,
    clear: () => {
      recent = new Map()
      older = new Map()
    },
  }
}
