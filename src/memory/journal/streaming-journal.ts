/**
 * The streaming journal of one stream (AnimaWorks' `StreamingJournal`): a write-ahead log of a
 * reply being streamed, so a hard crash (SIGKILL, OOM, power cut) loses at most about the last
 * second of text. Each stream has its own file, `journal/streams/<stream>.jsonl`, so concurrent
 * streams never share one (docs/decisions/0018); `journal-folder.ts` opens them and recovers the
 * ones whose writer died.
 *
 *   open → writeText() / toolStart() / toolEnd() → finalize()   the file is deleted
 *   open → … → crash, or abandon()                              the file stays (an orphan)
 *
 * Text is buffered and written as one `text` line, then fsync'd, when 500 characters are waiting
 * or 1 second after the oldest waiting chunk (a timer that does not keep the process alive). While
 * open, the file is touched every 10 s (the heartbeat another host judges it by).
 *
 * The file operations are synchronous on purpose: a stream handler calls `writeText` per token
 * and must not have to await it, and the order of lines must be the order of calls. Each flush is
 * one small write plus an fsync, at most a few per second. A journal never fails the turn: write
 * errors go to `onError`, and a journal that could not be created writes nothing.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, futimesSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { TOOL_INPUT_LIMIT, TOOL_RESULT_LIMIT } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import type { JournalEvent } from './journal-events.ts'
import { DEFAULT_PROC_ROOT, HEARTBEAT_INTERVAL_MS, registerOpenStream, thisWriter } from './journal-writer.ts'

/** The seed's buffer: flush at least every second… */
const FLUSH_INTERVAL_MS = 1000
/** …or as soon as this many characters wait. */
const FLUSH_SIZE_CHARS = 500

export interface StreamingJournalOptions {
  /** The folder of live streams (`journal/streams`). */
  dir: string
  clock: Clock
  flushIntervalMs?: number
  flushChars?: number
  heartbeatMs?: number
  procRoot?: string
  /** Receives write failures; the journal keeps going (the turn matters more than its log). */
  onError?: (error: unknown) => void
}

export interface JournalOpenOptions {
  /** What started the turn: `message`, `heartbeat`, `cron`, `dm`, … */
  trigger: string
  from?: string
  sessionId?: string
  /** The stored id of the user message this reply answers (`turn.messageId`). */
  turn?: number
}

export interface StreamingJournal {
  /** The stream's id, also its file name: `streams/<id>.jsonl`. */
  readonly id: string
  readonly path: string
  readonly sessionId: string | undefined
  readonly turn: number | undefined
  readonly isOpen: boolean
  /** Buffers a text chunk; flushes at 500 characters or after 1 second. */
  writeText(chunk: string): void
  /** Records a tool call's start (flushing text first, to keep the order); returns its id. */
  toolStart(call: { tool: string; id?: string; input?: unknown }): string
  toolEnd(call: { id: string; tool?: string; ok: boolean; result?: unknown }): void
  /** Writes buffered text now. */
  flush(): void
  /** Writes `done`, closes and deletes the journal: the turn completed and is stored elsewhere. */
  finalize(): void
  /**
   * Writes buffered text, closes the file and leaves it for recovery, as a crash would: this
   * process will not finish the stream (the mind is closing with the reply not stored).
   */
  abandon(): void
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

/** A new stream id: sortable by the clock's time, unique by 8 random hex digits. */
export function newStreamId(clock: Clock): string {
  return `${clock.now().toISOString().replace(/[-:.]/g, '')}-${randomBytes(4).toString('hex')}`
}

/** Creates `<dir>/<new id>.jsonl` and writes its `start` line, naming this process as the writer. */
export function openStreamingJournal(options: StreamingJournalOptions, openOptions: JournalOpenOptions): StreamingJournal {
  const { dir, clock } = options
  const flushIntervalMs = options.flushIntervalMs ?? FLUSH_INTERVAL_MS
  const flushChars = options.flushChars ?? FLUSH_SIZE_CHARS
  const id = newStreamId(clock)
  const path = join(dir, `${id}.jsonl`)
  let fd: number | undefined
  let buffer = ''
  let timer: NodeJS.Timeout | undefined
  let heartbeat: NodeJS.Timeout | undefined
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

  function close(): void {
    if (heartbeat) clearInterval(heartbeat)
    heartbeat = undefined
    if (fd !== undefined) {
      try {
        closeSync(fd)
      } catch (error) {
        report(error)
      }
    }
    fd = undefined
    registerOpenStream(id, false)
  }

  try {
    mkdirSync(dir, { recursive: true })
    // `wx`: a stream never reuses a file, not even one with the same id.
    fd = openSync(path, 'wx')
    registerOpenStream(id, true)
    syncFolder(dir)
  } catch (error) {
    report(error)
    fd = undefined
  }
  writeEvent({
    type: 'start',
    ts: clock.now().toISOString(),
    trigger: openOptions.trigger,
    ...(openOptions.from ? { from: openOptions.from } : {}),
    ...(openOptions.sessionId ? { session: openOptions.sessionId } : {}),
    ...(openOptions.turn !== undefined ? { turn: openOptions.turn } : {}),
    stream: id,
    writer: thisWriter(options.procRoot ?? DEFAULT_PROC_ROOT),
  })
  if (fd !== undefined) {
    heartbeat = setInterval(() => {
      if (fd === undefined) return
      try {
        const now = new Date()
        futimesSync(fd, now, now)
      } catch (error) {
        report(error)
      }
    }, options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS)
    // Neither timer may keep a finished process alive.
    heartbeat.unref()
  }

  return {
    id,
    path,
    sessionId: openOptions.sessionId,
    turn: openOptions.turn,
    get isOpen() {
      return fd !== undefined
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
        timer.unref()
      }
    },

    toolStart(call) {
      flush()
      toolCounter++
      const callId = call.id ?? `tool-${toolCounter}`
      const input = asText(call.input, TOOL_INPUT_LIMIT)
      writeEvent({ type: 'tool_start', ts: clock.now().toISOString(), id: callId, tool: call.tool, ...(input !== undefined ? { input } : {}) })
      return callId
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
      close()
      try {
        unlinkSync(path)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') report(error)
        // ENOENT: another process took this live stream for a crash leftover (possible only where
        // liveness falls back to the heartbeat) and may have stored its text: say so.
        else report(new Error(`journal ${id} was recovered by another process while this stream was still open; the conversation may hold its text twice`))
      }
    },

    abandon() {
      if (fd === undefined) return
      flush()
      close()
    },
  }
}

/** Makes a new file's name durable (power loss); best effort, not every platform can. */
function syncFolder(dir: string): void {
  let folder: number | undefined
  try {
    folder = openSync(dir, 'r')
    fsyncSync(folder)
  } catch {
    // Windows cannot open a folder; the file's own fsyncs still hold its content.
  } finally {
    try {
      if (folder !== undefined) closeSync(folder)
    } catch {
      // Nothing was written through it.
    }
  }
}
