/**
 * Crash-safe file writes.
 *
 * `writeFileAtomic`: a reader (or a crash) sees either the old file or the new one, never half of
 * each — temp file in the same folder, fsync, rename over the target, fsync the folder so the
 * rename itself survives a power cut.
 *
 * A writer killed between its temp file and the rename leaves the temp file; the next writer of
 * the same file removes it once its writer is known dead (`sweepDeadTemps`).
 *
 * `appendLine`: one whole line per `write(2)` on an `O_APPEND` descriptor. For a regular local
 * file the kernel positions and writes each such call as a unit, so appenders in several
 * processes never interleave parts of their lines.
 */
import { createHash, randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import { type FileHandle, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { EngramError, ErrorCode } from '../core/errors.ts'

/** Suffix of the temp files `writeFileAtomic` leaves behind only when the process dies mid-write. */
export const TEMP_SUFFIX = '.tmp'

/** True for the temp files of an interrupted atomic write (listings skip them). */
export function isTempFileName(name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX)
}

/** This machine in temp file names, so a writer's pid is only judged on the host it ran on. */
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 6)
/**
 * A temp file this old is abandoned whoever wrote it: a write keeps its temp file for the time of
 * one write and fsync. Only temp files whose writer cannot be checked wait this long: those of
 * another host sharing the home, and those named before names carried a host (`.<name>.<pid>.<hex>.tmp`).
 */
const ABANDONED_MS = 60 * 60_000
/** A file's folder is looked through at a writer's first write of it, then at most this often. */
const SWEEP_EVERY_MS = 30_000

/** The temp file a write of `path` by process `pid` of this host uses: `.<name>.<pid>-<host>.<random>.tmp`. */
export function tempPathFor(path: string, pid: number = process.pid): string {
  return join(dirname(path), `.${basename(path)}.${pid}-${HOST_TAG}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`)
}

/** Whether the process that wrote temp file `name` is certainly gone. */
function writerIsDead(name: string, prefix: string, ageMs: number): boolean {
  if (ageMs >= ABANDONED_MS) return true
  const match = /^(\d+)-([0-9a-f]{6})\.[0-9a-f]+$/.exec(name.slice(prefix.length, -TEMP_SUFFIX.length))
  if (!match || match[2] !== HOST_TAG) return false
  try {
    process.kill(Number(match[1]), 0)
    // A process with that pid runs (ours, another writer, or a stranger who reused the pid): kept.
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

const swept = new Map<string, number>()

/**
 * Removes the temp files that writers of `path` killed mid-write left beside it: those whose
 * writer, named by pid and host, no longer runs on this host, and those older than an hour. A live
 * writer's temp file is never touched. Best effort: returns the names removed, never throws. Called
 * by every write of `path` (at its first, then at most every 30 s; `force` skips that wait).
 */
export async function sweepDeadTemps(path: string, force = false): Promise<string[]> {
  const now = Date.now()
  if (!force && now - (swept.get(path) ?? Number.NEGATIVE_INFINITY) < SWEEP_EVERY_MS) return []
  if (swept.size >= 10_000) swept.clear()
  swept.set(path, now)
  const folder = dirname(path)
  const prefix = `.${basename(path)}.`
  const removed: string[] = []
  try {
    for (const name of await readdir(folder)) {
      if (!name.startsWith(prefix) || !name.endsWith(TEMP_SUFFIX)) continue
      const info = await stat(join(folder, name)).catch(() => undefined)
      if (!info?.isFile() || !writerIsDead(name, prefix, now - info.mtimeMs)) continue
      await unlink(join(folder, name)).then(
        () => removed.push(name),
        () => {},
      )
    }
  } catch {
    // An unreadable folder: nothing to clean now; the write itself reports real problems.
  }
  return removed
}

/** Replaces `path` with `data` atomically; creates missing folders. Keeps an existing file's mode. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const folder = dirname(path)
  await mkdir(folder, { recursive: true })
  const mode = await stat(path).then(
    (info) => info.mode & 0o777,
    () => 0o644,
  )
  const temp = tempPathFor(path)
  let handle: FileHandle | undefined
  try {
    handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode)
    await handle.writeFile(data)
    await handle.sync()
    await handle.close()
    handle = undefined
    await rename(temp, path)
  } catch (error) {
    await handle?.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
  await syncFolder(folder)
  await sweepDeadTemps(path)
}

/** fsync a folder so a rename or create in it is durable. Not every platform allows it. */
export async function syncFolder(folder: string): Promise<void> {
  let handle: FileHandle | undefined
  try {
    handle = await open(folder, 'r')
    await handle.sync()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // Windows cannot open folders; some filesystems refuse fsync on them. The data is already
    // renamed into place; only durability across a power cut is weaker there.
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF') throw error
  } finally {
    await handle?.close().catch(() => {})
  }
}

/**
 * Whether the file's last line lacks its newline. Another process's append can be seen half
 * copied, so a missing newline is looked at again after a moment: only one that stays is a line
 * cut off by a crash. (Guessing wrong costs one blank line, which readers skip.)
 */
/** Whether the file open as `fd` ends inside a line: read at most three times, 1 ms apart (another process may be mid-write). */
async function endsMidLine(fd: number): Promise<boolean> {
  const last = Buffer.alloc(1)
  for (let attempt = 0; attempt < 3; attempt++) {
    const size = fstatSync(fd).size
    if (size === 0) return false
    readSync(fd, last, 0, 1, size - 1)
    if (last[0] === 0x0a) return false
    await sleep(1)
  }
  return true
}

/**
 * Appends `line` plus a newline in a single write with O_APPEND; creates the file and its folder.
 * If the file does not end with a newline (a line cut off by a crash), a newline is written first
 * in the same write, so the new line is never glued onto the broken one. Readers must skip blank
 * lines.
 *
 * The calls are synchronous (decision 0096): an append is a line of the activity log on every turn,
 * and five calls through the thread pool (open, stat, read, write, close) cost ~0.75 ms of CPU in
 * hand-offs between threads, where the same system calls on the page cache take microseconds. No
 * fsync: an append reaches the disk with the next flush of the page cache, as before.
 * Throws `invalid_argument` when `line` contains a line break.
 */
export async function appendLine(path: string, line: string): Promise<void> {
  if (line.includes('\n') || line.includes('\r')) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'system',
      message: `Cannot append to ${path}: the line contains a line break and would become two records.`,
      fix: 'Serialize the record on one line (JSON.stringify escapes line breaks).',
    })
  }
  // The folder is made only when it is missing (ENOENT), not checked on every line.
  const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT
  let fd: number
  try {
    fd = openSync(path, flags, 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    mkdirSync(dirname(path), { recursive: true })
    fd = openSync(path, flags, 0o644)
  }
  try {
    const prefix = (await endsMidLine(fd)) ? '\n' : ''
    const bytes = Buffer.from(`${prefix}${line}\n`, 'utf8')
    const written = writeSync(fd, bytes, 0, bytes.length)
    if (written !== bytes.length) throw shortWrite(path, written, bytes.length)
  } finally {
    closeSync(fd)
  }
}

/**
 * Append `text` (whole lines) to an existing file in one O_APPEND write and fsync it. Used where a
 * file only grows at its end; a crash can at worst leave a cut-off last line, which readers report
 * and keep rather than drop.
 */
export async function appendText(path: string, text: string): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_APPEND)
  try {
    const bytes = Buffer.from(text, 'utf8')
    await writeWhole(handle, bytes, path)
    await handle.sync()
  } finally {
    await handle.close()
  }
  // A file that only grows may have been created by an atomic write that was killed.
  await sweepDeadTemps(path)
}

/** One write of all of `bytes`; a short write (disk full, quota) is an error, never half a record. */
async function writeWhole(handle: FileHandle, bytes: Buffer, path: string): Promise<void> {
  const { bytesWritten } = await handle.write(bytes, 0, bytes.length)
  if (bytesWritten !== bytes.length) throw shortWrite(path, bytesWritten, bytes.length)
}

function shortWrite(path: string, bytesWritten: number, expected: number): EngramError {
  return new EngramError({
    code: ErrorCode.storageUnavailable,
    category: 'system',
    message: `Short write appending to ${path}: ${bytesWritten} of ${expected} bytes.`,
    fix: 'Check free disk space and quotas on the engram home (ENGRAM_HOME).',
    details: { path, bytesWritten, expected },
  })
}
