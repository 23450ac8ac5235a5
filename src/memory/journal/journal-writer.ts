/**
 * Who writes a streaming journal, and whether that writer still lives (docs/decisions/0018).
 *
 * A journal is a crash leftover only when its writer is dead; a second process opening the home
 * (`engram status`, a cron `engram maintain`, another agent process) must leave a live stream
 * alone. The start line names the writer; `judgeWriter` decides, most certain check first:
 *
 * 1. this process: alive exactly while the stream is open here (a per-process registry shared by
 *    every loaded copy of engram through `Symbol.for`);
 * 2. same host, same boot, same PID namespace, `/proc` readable: alive when `/proc/<pid>/stat`
 *    still shows the recorded start time. A reused pid has another start time, so it reads as dead;
 *    this check needs no timer in the writer, so a writer whose event loop is busy stays alive;
 * 3. a different boot of the same host: dead (the machine restarted);
 * 4. otherwise (no `/proc`, another host sharing the home, another container): no process with
 *    that pid on this host (`kill(pid, 0)` says ESRCH) is dead; anything else is judged by the
 *    heartbeat — the writer touches its file every 10 s, and a file untouched for 5 minutes has a
 *    dead writer. That is the conservative side: a dead stream waits a little for recovery, a live
 *    one is never taken for dead because a check was impossible.
 */
import { readFileSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { JournalWriterIdentity } from './journal-events.ts'

/** How often an open journal touches its file, so another host can see it is alive. */
export const HEARTBEAT_INTERVAL_MS = 10_000
/**
 * A journal untouched this long has a dead writer when no better check is possible: 30 missed
 * heartbeats, long enough for a stalled event loop or a slow network file system, short enough that
 * a restart a few minutes later recovers the stream.
 */
const HEARTBEAT_STALE_MS = 5 * 60_000

export const DEFAULT_PROC_ROOT = '/proc'

export interface WriterVerdict {
  alive: boolean
  /** Which check decided. */
  by: 'this-process' | 'proc' | 'boot' | 'signal' | 'heartbeat' | 'legacy'
  /** Why, in words, for warnings and `engram status`. */
  reason: string
}

export interface LivenessOptions {
  /** Where procfs is mounted; tests point it at an empty folder to take the no-`/proc` path. */
  procRoot?: string
  staleMs?: number
  /** Wall-clock now (ms); file times are wall-clock, never the injected memory clock. */
  nowMs?: number
}

/**
 * Start time of a process in clock ticks since boot: field 22 of `/proc/<pid>/stat`. A process
 * that has exited but is not yet reaped by its parent (a zombie: state Z or X) is gone: undefined
 * `started` with `exited` true.
 */
function processStat(procRoot: string, pid: number | 'self'): { started: number | undefined; exited: boolean } {
  const stat = readFileSync(join(procRoot, String(pid), 'stat'), 'utf8')
  // Field 2 (the command name) is in parentheses and may contain spaces or ")": fields 3… follow the last ")".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const value = Number(fields[22 - 3])
  return { started: Number.isSafeInteger(value) ? value : undefined, exited: fields[0] === 'Z' || fields[0] === 'X' }
}

function readOptional(read: () => string): string | undefined {
  try {
    return read().trim() || undefined
  } catch {
    return undefined
  }
}

const identities = new Map<string, JournalWriterIdentity>()

/** This process as a journal writer (computed once per proc root). */
export function thisWriter(procRoot: string = DEFAULT_PROC_ROOT): JournalWriterIdentity {
  const known = identities.get(procRoot)
  if (known) return known
  let started: number | undefined
  try {
    started = processStat(procRoot, 'self').started
  } catch {
    started = undefined
  }
  const boot = readOptional(() => readFileSync(join(procRoot, 'sys/kernel/random/boot_id'), 'utf8'))
  const pidns = readOptional(() => readlinkSync(join(procRoot, 'self/ns/pid')))
  const identity: JournalWriterIdentity = {
    host: hostname(),
    pid: process.pid,
    ...(started !== undefined ? { started } : {}),
    ...(boot ? { boot } : {}),
    ...(pidns ? { pidns } : {}),
  }
  identities.set(procRoot, identity)
  return identity
}

// The streams open in this process, shared by every copy of engram loaded into it (a bundled and
// an installed copy must not take each other's live streams for orphans).
const REGISTRY = Symbol.for('engram.journal.openStreams')
function openHere(): Set<string> {
  const holder = globalThis as { [REGISTRY]?: Set<string> }
  holder[REGISTRY] ??= new Set<string>()
  return holder[REGISTRY]
}

/** Marks a stream as being written by this process (`open`) or no longer (`finalize`, `abandon`). */
export function registerOpenStream(streamId: string, open: boolean): void {
  if (open) openHere().add(streamId)
  else openHere().delete(streamId)
}

function byHeartbeat(mtimeMs: number, options: LivenessOptions, why: string): WriterVerdict {
  const staleMs = options.staleMs ?? HEARTBEAT_STALE_MS
  const age = (options.nowMs ?? Date.now()) - mtimeMs
  return age >= staleMs
    ? { alive: false, by: 'heartbeat', reason: `${why}; its file has not been touched for ${Math.round(age / 1000)} s` }
    : { alive: true, by: 'heartbeat', reason: `${why}; its file was touched ${Math.max(0, Math.round(age / 1000))} s ago` }
}

/**
 * Whether the writer of a journal is alive. `stream` is the journal's id (for the in-process
 * check) and the file's mtime (the heartbeat). A journal without a readable writer (its start line
 * is still being written, or was cut) is judged by the heartbeat alone.
 */
export function judgeWriter(writer: JournalWriterIdentity | undefined, stream: { id: string; mtimeMs: number }, options: LivenessOptions = {}): WriterVerdict {
  if (!writer) return byHeartbeat(stream.mtimeMs, options, 'the journal does not name its writer')
  const procRoot = options.procRoot ?? DEFAULT_PROC_ROOT
  const self = thisWriter(procRoot)
  if (writer.host !== self.host) return byHeartbeat(stream.mtimeMs, options, `written on host ${writer.host}`)
  if (writer.boot !== undefined && self.boot !== undefined && writer.boot !== self.boot) {
    return { alive: false, by: 'boot', reason: 'written before this machine last restarted' }
  }
  if (writer.pidns !== undefined && self.pidns !== undefined && writer.pidns !== self.pidns) {
    return byHeartbeat(stream.mtimeMs, options, `written in another PID namespace (${writer.pidns})`)
  }
  if (writer.pid === self.pid && writer.started === self.started) {
    // Either this very process (the registry knows), or an earlier one with the same pid and no
    // start time to tell them apart, which is dead either way.
    return openHere().has(stream.id)
      ? { alive: true, by: 'this-process', reason: 'open in this process' }
      : { alive: false, by: 'this-process', reason: 'written by this process, which no longer has it open' }
  }
  if (writer.started !== undefined && self.started !== undefined) {
    try {
      const { started, exited } = processStat(procRoot, writer.pid)
      if (exited) return { alive: false, by: 'proc', reason: `process ${writer.pid} has exited (not yet reaped)` }
      if (started === writer.started) return { alive: true, by: 'proc', reason: `process ${writer.pid} is still running` }
      if (started !== undefined) return { alive: false, by: 'proc', reason: `pid ${writer.pid} now belongs to another process` }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { alive: false, by: 'proc', reason: `process ${writer.pid} has exited` }
      // Unreadable for another reason (hidepid, permissions): fall through to the weaker checks.
    }
  }
  try {
    process.kill(writer.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return { alive: false, by: 'signal', reason: `no process ${writer.pid} on this host` }
    // EPERM: a process with that pid exists and belongs to someone else.
  }
  return byHeartbeat(stream.mtimeMs, options, `a process ${writer.pid} exists but cannot be told apart from the writer`)
}
