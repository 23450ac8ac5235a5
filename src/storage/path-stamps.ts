/**
 * What a set of files and folders looked like when they were read, for a cache kept above the
 * stores (the skill library's summaries): each path's stamp (files/file-stamp.ts — device, inode,
 * size, times to the nanosecond, trusted alone once settled), or that it was missing.
 */
import { statSync } from 'node:fs'
import { type FileStamp, fileStamp, unchanged } from './files/file-stamp.ts'

export type PathStamps = ReadonlyArray<{ path: string; stamp: FileStamp | undefined }>

/** Stamps of `paths`, taken before they are read (so that a write during the read is seen later). */
export function stampPaths(paths: readonly string[], readAtMs: number = Date.now()): PathStamps {
  return paths.map((path) => {
    try {
      const stat = statSync(path, { bigint: true, throwIfNoEntry: false })
      return { path, stamp: stat === undefined ? undefined : fileStamp(stat, readAtMs) }
    } catch {
      // A path that cannot be stat'ed (a symlink loop, no permission) is stamped as missing: the read
      // that follows says what is wrong with it, and `stillStamped` fails on the same error, so what
      // was read is never trusted for it.
      return { path, stamp: undefined }
    }
  })
}

/** Whether every path is still as stamped: the same settled stamp, or still missing. Any error reads as changed. */
export function stillStamped(stamps: PathStamps): boolean {
  try {
    return stamps.every(({ path, stamp }) => {
      const stat = statSync(path, { bigint: true, throwIfNoEntry: false })
      return stamp === undefined ? stat === undefined : stat !== undefined && unchanged(stamp, stat)
    })
  } catch {
    return false
  }
}
