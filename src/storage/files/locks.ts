/**
 * Named exclusive locks shared by every process that uses one engram home.
 *
 * Each name is a `mkdir`-created lock folder under `dir` (proper-lockfile): creating a folder is
 * atomic on every local filesystem, and the holder touches its mtime every `staleMs / 2`. A lock
 * whose mtime is older than `staleMs` belongs to a process that died (SIGKILL, power cut) and is
 * taken over, so a crash never blocks memory forever. The same mechanism serializes callers
 * inside one process, so no separate in-process mutex is needed.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import lockfile from 'proper-lockfile'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { LockOutcome, Locks } from '../contracts.ts'

export interface FileLocksOptions {
  /** Folder holding the lock folders (created when missing). */
  dir: string
  /**
   * A lock not refreshed for this long is considered abandoned and taken over. Default 10 s;
   * proper-lockfile's minimum is 2 s.
   */
  staleMs?: number
  /** Called when a held lock was lost (its refresh failed and another process may have taken it). */
  onError?: (error: unknown) => void
}

const DEFAULT_TIMEOUT_MS = 10_000
const DEFAULT_STALE_MS = 10_000

/** File name for a lock: readable prefix plus a hash, so distinct names never share a file. */
export function lockFileName(name: string): string {
  const readable = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80)
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 12)
  return `${readable}-${hash}`
}

/** Locks backed by lock folders under `options.dir`. */
export function createFileLocks(options: FileLocksOptions): Locks {
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, 2_000)
  let folderReady = false

  async function tryAcquire(target: string): Promise<(() => Promise<void>) | undefined> {
    if (!folderReady) {
      mkdirSync(options.dir, { recursive: true })
      folderReady = true
    }
    try {
      return await lockfile.lock(target, {
        realpath: false,
        lockfilePath: `${target}.lock`,
        stale: staleMs,
        retries: 0,
        onCompromised: (error) => options.onError?.(error),
      })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return undefined
      throw new EngramError({
        code: ErrorCode.storageUnavailable,
        category: 'system',
        message: `Cannot create lock ${target}.lock: ${(error as Error).message}`,
        fix: 'Check that the engram home (ENGRAM_HOME) is writable by this user.',
        cause: error,
      })
    }
  }

  function holderOf(target: string): string | undefined {
    try {
      return readFileSync(`${target}.holder`, 'utf8').trim() || undefined
    } catch {
      return undefined
    }
  }

  return {
    async withLock<T>(name: string, fn: () => Promise<T>, lockOptions: { wait?: boolean; timeoutMs?: number } = {}): Promise<LockOutcome<T>> {
      const wait = lockOptions.wait ?? true
      const timeoutMs = lockOptions.timeoutMs ?? DEFAULT_TIMEOUT_MS
      const target = join(options.dir, lockFileName(name))
      const started = performance.now()
      let delay = 2
      let release = await tryAcquire(target)
      while (!release) {
        if (!wait) {
          const holder = holderOf(target)
          return holder === undefined ? { kind: 'busy' } : { kind: 'busy', holder }
        }
        if (performance.now() - started >= timeoutMs) {
          const holder = holderOf(target)
          throw new EngramError({
            code: ErrorCode.lockBusy,
            category: 'system',
            message: `Lock "${name}" is still held${holder ? ` by ${holder}` : ''} after ${timeoutMs} ms.`,
            fix: `Another engram process is writing the same memory; retry shortly. A lock left by a crashed process is cleared after ${Math.round(staleMs / 1000)} s.`,
            details: { name, timeoutMs, holder },
          })
        }
        // Jittered backoff, capped low: writes hold locks for milliseconds.
        await sleep(delay + Math.random() * delay)
        delay = Math.min(delay * 2, 10)
        release = await tryAcquire(target)
      }
      // Only informative (who holds a busy lock), so a failure to write it is ignored.
      await writeFile(`${target}.holder`, `pid ${process.pid} on ${hostname()}\n`).catch(() => {})
      try {
        return { kind: 'done', value: await fn() }
      } finally {
        await release().catch((error: unknown) => options.onError?.(error))
      }
    },
  }
}
