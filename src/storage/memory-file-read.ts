/**
 * Reading a memory file that anyone may have put there (DESIGN §1 principle 10, decision 0025).
 *
 * Memory folders are plain folders a person edits, so a name the stores expect (`rules.md`,
 * `knowledge/notes.md`, `activity/2026-01-05.jsonl`) can be a folder, a named pipe (opening it
 * blocks until a writer comes — forever), a socket, a device, a symbolic link that loops, one that
 * leads out of the memory folder (to `~/.ssh/id_rsa`, to another user's tree), or a file of
 * hundreds of megabytes. Each of these is *skipped*, with a reason a person can act on, and never
 * read: the caller reports it and leaves the file as it is.
 *
 * Symbolic links are confined exactly as `read_memory_file` confines them (decision 0015): the
 * file's real path must be inside the real path of its root folder (the memory folder it belongs
 * to), so a user who links a whole folder elsewhere keeps it working, and a link that leaves it is
 * never read — by the indexer, priming, the memory context, or any other reader.
 *
 * A file is opened with `O_NONBLOCK` (a pipe swapped in after the check cannot block the open) and
 * checked again on the open descriptor, so what is read is what was checked.
 */
import { type BigIntStats, constants, lstatSync, realpathSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, sep } from 'node:path'

/** Where a memory file may lead and how much of it may be read. */
export interface MemoryFileLimits {
  /** The memory folder the file belongs to: its real path must stay inside this folder's real path. */
  root: string
  /** Files larger than this are skipped, never read (`memory.maxFileBytes`). */
  maxBytes: number
}

/** Default of `memory.maxFileBytes` (`ENGRAM_MEMORY_MAX_FILE_BYTES`) for stores opened without one. */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024

/**
 * What a file at a memory path is, before anything is read: for a file, the real path to open and
 * its stat (bigint, to the nanosecond: the stamp of the stores' read caches, file-stamp.ts).
 */
export type MemoryFileCheck =
  | { kind: 'file'; path: string; stat: BigIntStats }
  | { kind: 'missing' }
  | Skipped

export type MemoryFileRead =
  /** `stat` is the open descriptor's, taken before its bytes were read. */
  | { kind: 'read'; bytes: Buffer; stat: BigIntStats }
  | { kind: 'missing' }
  | Skipped

/** Something at a memory path that is not read; `oversized` is set when the only reason is its size. */
export interface Skipped {
  kind: 'skipped'
  reason: string
  oversized?: true
}

/** How a name that is not a regular file is described in reports. */
function notAFile(info: BigIntStats): string {
  if (info.isDirectory()) return 'a folder, not a file'
  if (info.isFIFO()) return 'a named pipe, not a file'
  if (info.isSocket()) return 'a socket, not a file'
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device, not a file'
  return 'not a regular file'
}

/** A file over the limit: its size, the limit, and how to raise it. */
export function oversized(size: bigint, maxBytes: number): Skipped {
  return {
    kind: 'skipped',
    reason: `${size} bytes, larger than memory.maxFileBytes (${maxBytes}); not read — split the file, or raise ENGRAM_MEMORY_MAX_FILE_BYTES`,
    oversized: true,
  }
}

function errorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ELOOP') return 'a symbolic link loop'
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)'
  if (code === 'ENAMETOOLONG') return 'a path too long to open'
  return `cannot be read (${code ?? (error instanceof Error ? error.message : String(error))})`
}

function within(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep)
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/**
 * Checks what is at `path` (inside `limits.root`) without reading it: a regular file within the
 * size limit whose real path stays inside the root (`file`, with the path to open), nothing
 * (`missing`), or something to skip and report (`skipped`). Never throws.
 */
export function checkMemoryFile(path: string, limits: MemoryFileLimits): MemoryFileCheck {
  let link: BigIntStats | undefined
  try {
    link = lstatSync(path, { throwIfNoEntry: false, bigint: true })
  } catch (error) {
    return isMissing(error) ? { kind: 'missing' } : { kind: 'skipped', reason: errorReason(error) }
  }
  if (link === undefined) return { kind: 'missing' }
  let target = path
  // A file directly in its root is inside it unless it is itself a link; deeper ones (topics/,
  // a skill's folder) may have a linked folder on the way, so their real path is always checked.
  if (link.isSymbolicLink() || dirname(path) !== limits.root) {
    let real: string
    try {
      real = realpathSync.native(path)
    } catch (error) {
      if (isMissing(error)) return link.isSymbolicLink() ? { kind: 'skipped', reason: 'a symbolic link to nothing' } : { kind: 'missing' }
      return { kind: 'skipped', reason: errorReason(error) }
    }
    let rootReal: string
    try {
      rootReal = realpathSync.native(limits.root)
    } catch {
      rootReal = limits.root
    }
    if (!within(real, rootReal)) return { kind: 'skipped', reason: 'a symbolic link that leads outside its memory folder' }
    target = real
  }
  let info: BigIntStats = link
  if (target !== path) {
    try {
      info = statSync(target, { bigint: true })
    } catch (error) {
      return isMissing(error) ? { kind: 'missing' } : { kind: 'skipped', reason: errorReason(error) }
    }
  }
  if (!info.isFile()) return { kind: 'skipped', reason: notAFile(info) }
  if (info.size > BigInt(limits.maxBytes)) return oversized(info.size, limits.maxBytes)
  return { kind: 'file', path: target, stat: info }
}

// O_NONBLOCK: opening a named pipe swapped in after the check returns at once instead of waiting for
// a writer. O_NOFOLLOW: the checked path is a real path, so a link swapped in after the check fails.
export const MEMORY_FILE_OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0)

/**
 * Reads a memory file whole, or says why not (see the file comment). Never throws and never
 * blocks on a special file.
 */
export async function readMemoryFile(path: string, limits: MemoryFileLimits): Promise<MemoryFileRead> {
  const checked = checkMemoryFile(path, limits)
  if (checked.kind !== 'file') return checked
  let handle: Awaited<ReturnType<typeof open>> | undefined
  try {
    handle = await open(checked.path, MEMORY_FILE_OPEN_FLAGS)
    const info = await handle.stat({ bigint: true })
    if (!info.isFile()) return { kind: 'skipped', reason: notAFile(info) }
    if (info.size > BigInt(limits.maxBytes)) return oversized(info.size, limits.maxBytes)
    const buffer = Buffer.allocUnsafe(Number(info.size))
    let at = 0
    while (at < buffer.length) {
      const { bytesRead } = await handle.read(buffer, at, buffer.length - at, at)
      if (bytesRead === 0) break
      at += bytesRead
    }
    return { kind: 'read', bytes: at === buffer.length ? buffer : buffer.subarray(0, at), stat: info }
  } catch (error) {
    return isMissing(error) ? { kind: 'missing' } : { kind: 'skipped', reason: errorReason(error) }
  } finally {
    await handle?.close().catch(() => {})
  }
}
