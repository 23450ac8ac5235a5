/**
 * What recall derives from a unit's text — its content words, its information prior, its word-vector
 * embedding — depends on the text alone, and the same units come back turn after turn (priming, then
 * the agent's own search on the same topic). A bounded memo keyed by the unit's content hash keeps
 * that work off the hot path: a changed text has a new hash, so nothing stale is ever returned.
 * Least recently used entries go first.
 */
export interface UnitMemo<T> {
  get(hash: string, compute: () => T): T
  /** The value when known, else undefined (for batched computation of the misses). */
  peek(hash: string): T | undefined
  set(hash: string, value: T): void
  clear(): void
}

export function createUnitMemo<T>(capacity: number): UnitMemo<T> {
  const entries = new Map<string, T>()
  const touch = (hash: string, value: T): void => {
    entries.delete(hash)
    entries.set(hash, value)
    if (entries.size > capacity) entries.delete(entries.keys().next().value as string)
  }
  return {
    get(hash, compute) {
      const known = entries.get(hash)
      if (known !== undefined) {
        touch(hash, known)
        return known
      }
      const value = compute()
      touch(hash, value)
      return value
    },
    peek(hash) {
      const known = entries.get(hash)
      if (known !== undefined) touch(hash, known)
      return known
    },
    set: touch,
    clear: () => entries.clear(),
  }
}
