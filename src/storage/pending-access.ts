/**
 * Access statistics (the Hebbian term) waiting to be written, for every SearchIndex. Every recall
 * strengthens what it recalled; written per recall, the scattered row updates filled SQLite's WAL
 * with ~50 pages per turn (every twentieth turn or so paid for a checkpoint, 11–15 ms, the p95 of
 * priming at 100k units), and on PostgreSQL cost a round trip and a dead tuple each. Increments
 * wait here, merged per unit, and the backend writes them in one transaction within
 * ACCESS_FLUSH_MS (on a timer that does not keep the process alive), when ACCESS_FLUSH_UNITS units
 * are waiting, and on flush() (which closing the backend calls). Reads of the index add what is
 * waiting, so a recall is counted at once for this process; another process sees it within a
 * second. A process killed in between loses at most that second of access counts, never a memory.
 */
import type { StoredUnit } from './contracts.ts'

/** Access increments are written within this long of the first one waiting… */
const ACCESS_FLUSH_MS = 1_000
/** …or as soon as this many units are waiting. */
const ACCESS_FLUSH_UNITS = 2_000

/** What waits for one unit: how many accesses, and the latest of their times. */
export interface WaitingAccess {
  count: number
  last: string
}

/** The increments of one index waiting to be written. */
export interface PendingAccess {
  /** Counts one access of each of `ids` at `at` (an ISO instant); writes at once when many wait or the last write failed. */
  record(ids: readonly string[], at: string): Promise<void>
  /** Writes what waits now. A failure is thrown and what waited keeps waiting (the next record or flush retries it). */
  flush(): Promise<void>
  /** `unit` with what waits for it added (its count, and its last access when later). */
  apply(unit: StoredUnit): StoredUnit
}

/**
 * Pending access counts written by `write`, which gets the batch sorted by id (PostgreSQL locks
 * rows in id order) and must write it in one transaction: increments added, `last_access_at`
 * never moved backwards (a late, older access must not make a memory look staler).
 */
export function createPendingAccess(write: (batch: ReadonlyArray<readonly [string, WaitingAccess]>) => void | Promise<void>): PendingAccess {
  const pending = new Map<string, WaitingAccess>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let lastError: unknown
  let flushing: Promise<void> | undefined

  async function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer)
      timer = undefined
    }
    while (flushing) await flushing
    if (pending.size === 0) return
    const batch = [...pending].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    // Started at once (a synchronous writer has written when this returns to the caller's loop).
    const run = (async () => write(batch))()
    // Writes run one at a time: a second one started meanwhile would write the same increments.
    const mine = run.then(
      () => undefined,
      () => undefined,
    )
    flushing = mine
    try {
      await run
      lastError = undefined
    } catch (error) {
      lastError = error
      throw error
    } finally {
      if (flushing === mine) flushing = undefined
    }
    for (const [id, access] of batch) {
      if (pending.get(id) === access) pending.delete(id)
    }
  }

  return {
    async record(ids, at) {
      for (const id of new Set(ids)) {
        const known = pending.get(id)
        if (known) {
          known.count++
          if (known.last < at) known.last = at
        } else pending.set(id, { count: 1, last: at })
      }
      if (pending.size >= ACCESS_FLUSH_UNITS || lastError !== undefined) {
        await flush()
        return
      }
      if (!timer) {
        timer = setTimeout(() => {
          timer = undefined
          // Kept waiting on failure; the next record or flush retries and reports it.
          flush().catch(() => {})
        }, ACCESS_FLUSH_MS)
        timer.unref?.()
      }
    },
    flush,
    apply(unit) {
      const access = pending.get(unit.id)
      if (access === undefined) return unit
      unit.accessCount += access.count
      if (unit.lastAccessAt === undefined || unit.lastAccessAt < access.last) unit.lastAccessAt = access.last
      return unit
    },
  }
}
