/**
 * Erasure on SQLite (decision 0023). A plain DELETE leaves the deleted rows' bytes in free pages
 * of the file until they are reused, where anyone holding `engram.db` can still read them. An
 * erasure runs with `secure_delete` on, so SQLite overwrites what it frees with zeros (the rest of
 * the time it stays off: it costs a write of every freed page), then checkpoints the write-ahead log.
 */

/** The part of a SQLite handle an erasure uses (`SqliteHandle` fits). */
export interface ErasableDatabase {
  readonly db: { prepare(sql: string): { get(...params: never[]): unknown }; exec?(sql: string): void }
  transaction<T>(fn: () => T): T
}

/**
 * Runs `fn` in one write transaction with `secure_delete` on, then restores the previous setting
 * (a handle that cannot run PRAGMAs just gets the transaction).
 */
export function eraseInTransaction<T>(handle: ErasableDatabase, fn: () => T): T {
  const exec = handle.db.exec?.bind(handle.db)
  if (!exec) return handle.transaction(fn)
  const before = (handle.db.prepare('PRAGMA secure_delete').get() as { secure_delete: number } | undefined)?.secure_delete ?? 0
  exec('PRAGMA secure_delete = 1')
  let result: T
  try {
    result = handle.transaction(fn)
  } finally {
    exec(`PRAGMA secure_delete = ${before === 2 ? 'FAST' : before === 1 ? '1' : '0'}`)
  }
  // The write-ahead log still holds the pages as they were before: copy the zeroed ones into the
  // file and empty the log. A reader in another process can keep it from finishing; the log's old
  // frames are then overwritten by later writes instead.
  try {
    exec('PRAGMA wal_checkpoint(TRUNCATE)')
  } catch {
    // Busy: see above.
  }
  return result
}

/** How many rows the last statement changed. */
export function changesOf(result: unknown): number {
  return Number((result as { changes: number | bigint }).changes)
}
