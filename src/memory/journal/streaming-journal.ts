/**
 * The streaming journal (AnimaWorks' `StreamingJournal`): a write-ahead log of the turn being
 * streamed, so a hard crash (SIGKILL, OOM, power cut) loses at most about the last second of text.
 *
 *   open() → writeText() / toolStart() / toolEnd() → finalize()   the file is deleted
 *   open() → … → crash                                             the file stays (an orphan)
 *   next start: hasOrphan() → recover()                            the file is archived
 *
 * Text is buffered and written as one `text` line, then fsync'd, when 500 characters are waiting
 * or 1 second after the oldest waiting chunk (a timer that does not keep the process alive).
 *
 * The file operations are synchronous on purpose: a stream handler calls `writeText` per token
 * and must not have to await it, and the order of lines must be the order of calls. Each flush is
 * one small write plus an fsync, at most a few per second.
 *
 * Recovery moves the orphan to `journal/recovered/streaming-<time>.jsonl` rather than deleting
 * it: the caller may crash again before it has stored what was recovered, and lossless means
 * lossless. A journal never fails the turn: write errors go to `onError`.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { TOOL_INPUT_LIMIT, TOOL_RESULT_LIMIT } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import type { JournalEvent } from './journal-events.ts'
import { type JournalRecovery, readJournal } from './journal-recovery.ts'

export const JOURNAL_FILE = 'streaming.jsonl'
export const RECOVERED_DIR = 'recovered'
/** The seed's buffer: flush at least every second… */
export const FLUSH_INTERVAL_MS = 1000
/** …or as soon as this many characters wait. */
export const FLUSH_SIZE_CHARS = 500

export interface StreamingJournalOptions {
  /** The agent's `journal/` folder (HomeLayout.journalDir). */
  dir: string
  clock: Clock
  flushIntervalMs?: number
  flushChars?: number
  /** Receives write failures; the journal keeps going (the turn matters more than its log). */
  onError?: (error: unknown) => void
}

export interface JournalOpenOptions {
  /** What started the turn: `message`, `heartbeat`, `cron`, `dm`, … */
  trigger: string
  from?: string
  sessionId?: string
}

export interface StreamingJournal {
  /** `<dir>/streaming.jsonl` */
  readonly path: string
  readonly isOpen: boolean
  /**
   * Starts a journal and writes its `start` line. An orphan left by a crash that nobody recovered
   * is first moved to `recovered/` (never overwritten); the returned value says where.
   */
  open(options: JournalOpenOptions): { movedOrphanTo?: string }
  /** Buffers a text chunk; flushes at 500 characters or after 1 second. */
  writeText(chunk: string): void
  /** Records a tool call's start (flushing text first, to keep the order); returns its id. */
  toolStart(call: { tool: string; id?: string; input?: unknown }): string
  toolEnd(call: { id: string; tool?: string; ok: boolean; result?: unknown }): void
  /** Writes buffered text now. */
  flush(): void
  /** Writes `done`, closes and deletes the journal: the turn completed and is stored elsewhere. */
  finalize(): void
  /** Whether a journal from an earlier process is on disk. */
  hasOrphan(): boolean
  /** Reads the orphan (null when there is none) and moves it to `recovered/`. */
  recover(): JournalRecovery | null
}

function asText(value: unknown, limit: number): string | undefined {
  if (value === undefined) return undefined
  let text: string
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))
  } catch {
    text = String(value)
  }
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text
}

/** Creates a journal for one agent. Nothing is written until `open()`. */
export function createStreamingJournal(options: StreamingJournalOptions): StreamingJournal {
  const { dir, clock } = options
  const path = join(dir, JOURNAL_FILE)
  const flushIntervalMs = options.flushIntervalMs ?? FLUSH_INTERVAL_MS
  const flushChars = options.flushChars ?? FLUSH_SIZE_CHARS
  let fd: number | undefined
  let buffer = ''
  let timer: NodeJS.Timeout | undefined
  let toolCounter = 0

  function report(error: unknown): void {
    try {
      options.onError?.(error)
    } catch {
      // A failing reporter must not break the stream.
    }
  }

  function writeEvent(event: JournalEvent): void {
    if (fd === undefined) return
    try {
      const bytes = Buffer.from(`${JSON.stringify(event)}\n`, 'utf8')
      let offset = 0
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset)
      fsyncSync(fd)
    } catch (error) {
      report(error)
    }
  }

  function flush(): void {
    if (timer) {
      clearTimeout(timer)
      timer = undefined
    }
    if (buffer === '' || fd === undefined) return
    const text = buffer
    buffer = ''
    writeEvent({ type: 'text', ts: clock.now().toISOString(), text })
  }

  function archiveOrphan(suffix: string): string {
    const folder = join(dir, RECOVERED_DIR)
    mkdirSync(folder, { recursive: true })
    const stamp = clock.now().toISOString().replace(/[:.]/g, '-')
    for (let n = 1; ; n++) {
      const name = `streaming-${stamp}${n === 1 ? '' : `-${n}`}${suffix}.jsonl`
      const target = join(folder, name)
      if (existsSync(target)) continue
      renameSync(path, target)
      return `${RECOVERED_DIR}/${name}`
    }
  }

  return {
    path,
    get isOpen() {
      return fd !== undefined
    },

    open(openOptions) {
      if (fd !== undefined) this.finalize()
      mkdirSync(dir, { recursive: true })
      const moved = existsSync(path) ? archiveOrphan('-unrecovered') : undefined
      buffer = ''
      toolCounter = 0
      fd = openSync(path, 'w')
      writeEvent({
        type: 'start',
        ts: clock.now().toISOString(),
        trigger: openOptions.trigger,
        ...(openOptions.from ? { from: openOptions.from } : {}),
        ...(openOptions.sessionId ? { session: openOptions.sessionId } : {}),
      })
      return moved ? { movedOrphanTo: moved } : {}
    },

    writeText(chunk) {
      if (fd === undefined || chunk === '') return
      buffer += chunk
      if (buffer.length >= flushChars) {
        flush()
        return
      }
      if (!timer) {
        timer = setTimeout(flush, flushIntervalMs)
        // A journal waiting to flush must not keep a finished process alive.
        timer.unref()
      }
    },

    toolStart(call) {
      flush()
      toolCounter++
      const id = call.id ?? `tool-${toolCounter}`
      const input = asText(call.input, TOOL_INPUT_LIMIT)
      writeEvent({ type: 'tool_start', ts: clock.now().toISOString(), id, tool: call.tool, ...(input !== undefined ? { input } : {}) })
      return id
    },

    toolEnd(call) {
      flush()
      const result = asText(call.result, TOOL_RESULT_LIMIT)
      writeEvent({ type: 'tool_end', ts: clock.now().toISOString(), id: call.id, ...(call.tool ? { tool: call.tool } : {}), ok: call.ok, ...(result !== undefined ? { result } : {}) })
    },

    flush,

    finalize() {
      if (fd === undefined) return
      flush()
      writeEvent({ type: 'done', ts: clock.now().toISOString() })
      try {
        closeSync(fd)
      } catch (error) {
        report(error)
      }
      fd = undefined
      try {
        unlinkSync(path)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') report(error)
      }
    },

    hasOrphan() {
      return fd === undefined && existsSync(path)
    },

    recover() {
      if (fd !== undefined || !existsSync(path)) return null
      const text = readFileSync(path, 'utf8')
      const recovery = readJournal(text, `journal/${JOURNAL_FILE}`)
      recovery.archivedTo = archiveOrphan('')
      return recovery
    },
  }
}
