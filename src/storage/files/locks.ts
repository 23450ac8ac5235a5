/**
 * Named exclusive locks shared by every process that uses one engram home (docs/decisions/0027).
 *
 * A lock is an operating-system lock on a small file: `BEGIN IMMEDIATE` on an empty SQLite file
 * `<dir>/<name>.lock.db` (SQLite's own byte-range locks, fcntl on Unix, LockFileEx on Windows). The
 * kernel drops such a lock the instant its holder dies, SIGKILL included, so a dead holder never
 * blocks anyone: there is no stale time to wait out, no timer refreshing a heartbeat, and no
 * takeover that could race another taker. A holder whose event loop is busy for minutes keeps its
 * lock, as it should.
 *
 * Callers in one process queue in arrival order (a line per lock), so only the head of each line
 * asks the operating system; between processes the heads retry with jittered back-off capped at
 * `MAX_BACKOFF_MS`, which bounds how late a waiter notices a release. Between processes the lock
 * is passed on fairly: a waiting head stamps `<name>.waiting`, and a holder that finds it stamped
 * when it releases lets its own next caller wait `YIELD_MS`, longer than any waiter's pause, so the
 * other process gets its turn instead of watching one busy process take the lock again and again.
 *
 * A lock's files are removed when its last caller here releases it, so a home keeps no file per
 * memory file it ever wrote (a reindex of 16,000 files used to leave 32,002 in `.locks/`). The
 * holder unlinks them while it still holds the lock; a process that was already waiting on the
 * unlinked file then gets a lock on a file no path names, so every taker checks, once it holds the
 * lock, that the path still names the file it locked (the device and inode it opened) and starts
 * over on the path's new file when not (decision 0073).
 *
 * Waiting queues instead of failing (DESIGN principle 10): `timeoutMs` is how long a waiter
 * tolerates *no progress* — the same holder keeping the lock — not the time it waits in total,
 * so a waiter behind many short holders is never turned away; only a holder that stays for
 * `timeoutMs` (hung, or a task that must not wait) ends the wait with `lock_busy`.
 */
import { createHash } from 'node:crypto'
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { DatabaseSync } from 'node:sqlite'
import { setTimeout as sleep } from 'node:timers/promises'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { LockOutcome, Locks } from '../contracts.ts'
import { nodeSqlite } from '../node-sqlite.ts'
import { joinLine, type Line, lineOf, turnInLine } from '../lock-lines.ts'

export interface FileLocksOptions {
  /** Folder holding the lock files (created when missing). */
  dir: string
}

/**
 * How long a waiter bears a holder that does not let go. A holder's event loop can stall for
 * seconds (a synchronous SQLite wait on a busy engram.db, a starved CPU): 32 agent processes on 2
 * cores saw holders keep a memory file's lock over 10 s, and their waiters' calls were rejected at
 * the old 10 s. A live holder is worth waiting for; only one stuck for a minute is reported.
 */
const DEFAULT_TIMEOUT_MS = 60_000
/**
 * Longest pause between two tries of a held lock is 1.5 × this (jitter). A release (or a holder's
 * death) is noticed at most that late: far below the issue's one-second goal, while eight waiting
 * processes cost under a thousand cheap tries (a lock call, a small read, a stamp) per second in all.
 */
const MAX_BACKOFF_MS = 10
/** How long a holder's next caller in the same process stands back when another process waits: over any waiter's pause. */
const YIELD_MS = 1.5 * MAX_BACKOFF_MS + 5
/** SQLite's "database is locked": another connection holds the lock. */
const SQLITE_BUSY = 5
/** SQLite's "file is not a database": the lock file holds bytes someone else wrote. */
const SQLITE_NOTADB = 26

/** A lock file opened by this process: SQLite's connection, and our own descriptor telling which file it is. */
interface Held {
  db: DatabaseSync
  fd: number
  dev: bigint
  ino: bigint
}

/** Closes SQLite's connection first, then our descriptor (closing ours first would drop SQLite's lock). */
function close(held: Held): void {
  try {
    held.db.close()
  } finally {
    closeSync(held.fd)
  }
}

/** Ends the transaction that is the lock, and closes the file. */
function release(held: Held): void {
  try {
    held.db.exec('ROLLBACK')
  } finally {
    close(held)
  }
}

/**
 * Removes a held lock's files: the note and the stamp first, the lock file last, so a note is
 * never left behind by a holder that dies between. A failure (a file already gone; Windows, where
 * an open file cannot be removed) leaves the file for the next holder: never unsafe.
 */
function removeFiles(target: string): void {
  for (const suffix of ['.holder', '.waiting', '.lock.db']) {
    try {
      rmSync(`${target}${suffix}`, { force: true })
    } catch {}
  }
}

/** File name for a lock: readable prefix plus a hash, so distinct names never share a file. */
export function lockFileName(name: string): string {
  const readable = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80)
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 12)
  return `${readable}-${hash}`
}

/** The callers of one lock in this process, in arrival order; `waiting[0]` holds or is acquiring it. */
// Shared by every Locks of this process (two minds on one home queue in the same line).
const lines = new Map<string, Line>()
let acquisitions = 0

/** The last holder's note (its first 512 bytes: whatever else was written into the file is not read). */
function holderOf(target: string): string | undefined {
  let fd: number | undefined
  try {
    fd = openSync(`${target}.holder`, 'r')
    const bytes = Buffer.alloc(512)
    return bytes.toString('utf8', 0, readSync(fd, bytes, 0, bytes.length, 0)).trim() || undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** A waiting head's stamp: "someone in another process wants this lock", as wall-clock time set explicitly. */
function stampWaiting(target: string): void {
  const now = new Date()
  try {
    utimesSync(`${target}.waiting`, now, now)
  } catch {
    // Missing at the first wait (then created); any other failure only costs fairness, never safety.
    try {
      writeFileSync(`${target}.waiting`, '')
    } catch {}
  }
}

/** Whether a waiter stamped the lock after `sinceMs` (wall clock). */
function waitedOnSince(target: string, sinceMs: number): boolean {
  try {
    const info = statSync(`${target}.waiting`, { throwIfNoEntry: false })
    return info !== undefined && info.mtimeMs >= sinceMs
  } catch {
    return false
  }
}

function busyError(name: string, timeoutMs: number, holder: string | undefined): EngramError {
  return new EngramError({
    code: ErrorCode.lockBusy,
    category: 'system',
    message: `Lock "${name}" has been held${holder ? ` by ${holder}` : ''} for ${timeoutMs} ms without being released.`,
    fix: 'Another engram process is busy with the same memory for unusually long (a hung process?); retry shortly. A lock of a process that died is released at once.',
    details: { name, timeoutMs, holder },
  })
}

/** Locks backed by lock files under `options.dir`. */
export function createFileLocks(options: FileLocksOptions): Locks {
  const { DatabaseSync } = nodeSqlite()
  let folderReady = false

  /**
   * Opens the lock file twice: a descriptor of our own first, whose device and inode tell which
   * file this taker opened (SQLite does not expose its descriptor), then SQLite on the same path.
   * Our descriptor stays open until SQLite's is closed: on Unix, closing any descriptor of a file
   * drops every lock this process holds on it, and while it is open the inode cannot be reused.
   */
  function open(target: string): Held {
    if (!folderReady) {
      mkdirSync(options.dir, { recursive: true })
      folderReady = true
    }
    let fd: number | undefined
    try {
      fd = openSync(`${target}.lock.db`, constants.O_RDONLY | constants.O_CREAT)
      const opened = fstatSync(fd, { bigint: true })
      return { db: new DatabaseSync(`${target}.lock.db`), fd, dev: opened.dev, ino: opened.ino }
    } catch (error) {
      if (fd !== undefined) closeSync(fd)
      throw new EngramError({
        code: ErrorCode.storageUnavailable,
        category: 'system',
        message: `Cannot open lock file ${target}.lock.db: ${(error as Error).message}`,
        fix: 'Check that the engram home (ENGRAM_HOME) is writable by this user.',
        cause: error,
      })
    }
  }

  /** One try: true when this connection now holds the lock. */
  function tryLock(db: DatabaseSync, target: string): boolean {
    for (let attempt = 0; ; attempt++) {
      try {
        // The journal in memory (nothing is ever written; Node's defensive mode refuses OFF): a
        // journal file left beside a removed lock file would look hot to the taker of its next file.
        db.exec('PRAGMA journal_mode = MEMORY; BEGIN IMMEDIATE')
        return true
      } catch (error) {
        const code = (error as { errcode?: number }).errcode
        if (code === SQLITE_BUSY) return false
        // Nothing is ever written into a lock file, so it is empty; one with content (written by
        // something else) cannot be locked by anyone, and emptying it in place is always safe.
        if (code === SQLITE_NOTADB && attempt === 0) {
          truncateSync(`${target}.lock.db`, 0)
          continue
        }
        throw error
      }
    }
  }

  /** Whether the lock's path still names the file `held` opened: false once its holder removed it (then the lock held is on a file nobody else can find). */
  function stillNamed(target: string, held: Held): boolean {
    const now = statSync(`${target}.lock.db`, { bigint: true, throwIfNoEntry: false })
    return now !== undefined && now.dev === held.dev && now.ino === held.ino
  }

  /** Takes the operating-system lock, retrying while another process holds it; undefined on timeout. */
  async function acquire(target: string, line: Line, wait: boolean, timeoutMs: number): Promise<Held | undefined> {
    const standBack = (line.yieldUntil ?? 0) - performance.now()
    delete line.yieldUntil
    if (wait && standBack > 0) await sleep(standBack)
    for (;;) {
      const held = await acquireOpened(target, line, wait, timeoutMs)
      if (held !== 'moved') return held
    }
  }

  /**
   * Takes the lock on the file its path names now; 'moved' when its holder removed that file
   * meanwhile (SQLite may then refuse the file with an I/O error): the caller opens the new one.
   */
  async function acquireOpened(target: string, line: Line, wait: boolean, timeoutMs: number): Promise<Held | undefined | 'moved'> {
    const held = open(target)
    const { db } = held
    const moved = (): 'moved' => {
      close(held)
      return 'moved'
    }
    try {
      let delay = 1
      let seen = holderOf(target)
      for (;;) {
        let locked: boolean
        try {
          locked = tryLock(db, target)
        } catch (error) {
          if (!stillNamed(target, held)) return moved()
          throw error
        }
        if (locked) {
          if (stillNamed(target, held)) return held
          // Its holder removed the file while this taker waited on it: a lock nobody else can see.
          db.exec('ROLLBACK')
          return moved()
        }
        if (!stillNamed(target, held)) return moved()
        if (wait) stampWaiting(target)
        const holder = holderOf(target)
        if (holder !== seen) {
          // Another process's holder finished and a new one took over: the line moves.
          seen = holder
          line.progressAt = performance.now()
        }
        if (!wait || performance.now() - line.progressAt >= timeoutMs) {
          close(held)
          return undefined
        }
        // Jittered back-off: waiting processes spread out instead of retrying in step.
        await sleep(delay / 2 + Math.random() * delay)
        delay = Math.min(delay * 2, MAX_BACKOFF_MS)
      }
    } catch (error) {
      close(held)
      throw error
    }
  }

  return {
    async withLock<T>(name: string, fn: () => Promise<T>, lockOptions: { wait?: boolean; timeoutMs?: number } = {}): Promise<LockOutcome<T>> {
      const wait = lockOptions.wait ?? true
      const timeoutMs = lockOptions.timeoutMs ?? DEFAULT_TIMEOUT_MS
      const target = join(options.dir, lockFileName(name))

      const current = lineOf(lines, target)
      if (current.waiting.length > 0 && !wait) {
        const holder = current.holder ?? holderOf(target)
        return holder === undefined ? { kind: 'busy' } : { kind: 'busy', holder }
      }
      const { turn, leave } = joinLine(lines, target, current)

      let held: Held | undefined
      try {
        if (!(await turnInLine(current, turn, timeoutMs))) throw busyError(name, timeoutMs, current.holder ?? holderOf(target))
        held = await acquire(target, current, wait, timeoutMs)
      } catch (error) {
        leave()
        throw error
      }
      if (!held) {
        leave()
        const holder = holderOf(target)
        if (!wait) return holder === undefined ? { kind: 'busy' } : { kind: 'busy', holder }
        throw busyError(name, timeoutMs, holder)
      }

      acquisitions++
      const acquiredAt = Date.now()
      const holder = `pid ${process.pid} on ${hostname()}, since ${new Date(acquiredAt).toISOString()} (#${acquisitions})`
      current.holder = holder
      // Who holds a busy lock, for messages; also how waiters elsewhere see the lock change hands.
      // Only informative, so a failure to write it is ignored.
      await writeFile(`${target}.holder`, `${holder}\n`).catch(() => {})
      try {
        return { kind: 'done', value: await fn() }
      } finally {
        delete current.holder
        // Nobody else here wants it next: its files go, while it is still held (see the top).
        if (current.waiting.length === 1) removeFiles(target)
        try {
          release(held)
        } finally {
          current.progressAt = performance.now()
          // Another process asked for the lock while this one held it: it goes first.
          if (current.waiting.length > 1 && waitedOnSince(target, acquiredAt)) current.yieldUntil = current.progressAt + YIELD_MS
          leave()
        }
      }
    },
  }
}
