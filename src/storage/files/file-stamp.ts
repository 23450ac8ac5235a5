/**
 * When a file read earlier may be used again without reading it: the one rule of the stores' read
 * caches (the activity log's parsed days, the text of memory files and documents, the folder
 * listing of the day files), so that none of them can return what a file no longer says.
 *
 * A stamp is taken with the read: the file's device and inode, size, and modification and change
 * times to the nanosecond. A later stat with the same stamp shows the same file unchanged — with
 * one exception every cache of this kind has to face ("racy git"): a file system keeps times at
 * the resolution of a clock tick (a few milliseconds on Linux, seconds elsewhere), so a file
 * rewritten in place within the same tick, at the same size, keeps its stamp. The change time
 * cannot be set back by anyone (`utimes` moves it forward), so once a file's times are older than
 * that resolution when it is read, any later write gives it a new stamp. Until then the stamp is
 * *unsettled*, and the caller checks the bytes themselves.
 */
import type { BigIntStats } from 'node:fs'

/**
 * How long after its last change a file's stamp is not trusted alone: above the coarsest
 * timestamp resolution of a common file system (FAT's 2 s), and above the tick of the kernel clock
 * that stamps writes (which can lag the wall clock by a tick).
 */
export const SETTLE_MS = 3_000

export interface FileStamp {
  dev: bigint
  ino: bigint
  size: bigint
  mtimeNs: bigint
  ctimeNs: bigint
  /** The stamp's times were settled when it was taken: an equal stamp later means unchanged bytes. */
  settled: boolean
}

/** The stamp of `stat`, taken when the file was read at `readAtMs` (wall-clock milliseconds, before the read). */
export function fileStamp(stat: BigIntStats, readAtMs: number = Date.now()): FileStamp {
  const changedMs = Math.max(Number(stat.mtimeNs / 1_000_000n), Number(stat.ctimeNs / 1_000_000n))
  return { dev: stat.dev, ino: stat.ino, size: stat.size, mtimeNs: stat.mtimeNs, ctimeNs: stat.ctimeNs, settled: readAtMs - changedMs > SETTLE_MS }
}

/** Same file (device, inode), same size and times. */
export function sameStamp(stamp: FileStamp, stat: BigIntStats): boolean {
  return stamp.ino === stat.ino && stamp.dev === stat.dev && stamp.size === stat.size && stamp.mtimeNs === stat.mtimeNs && stamp.ctimeNs === stat.ctimeNs
}

/**
 * Whether what was read with `stamp` is still what the file holds, judged by `stat` alone: the
 * same stamp, settled. False means "read it again" (or compare the bytes), never "it changed".
 */
export function unchanged(stamp: FileStamp, stat: BigIntStats): boolean {
  return stamp.settled && sameStamp(stamp, stat)
}
