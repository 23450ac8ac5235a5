/**
 * An agent's journal folder (docs/decisions/0018): one file per live stream, and the way a
 * stream whose writer died travels to recovery without being stored twice or lost.
 *
 *   journal/streams/<id>.jsonl      being written (or left by a writer that died)
 *   journal/recovering/<id>.jsonl   claimed by a process that is storing its text
 *   journal/recovered/<id>.jsonl    stored; kept, never deleted (lossless means lossless)
 *   journal/streaming.jsonl         the single journal of homes written before 0018
 *
 * Claiming is a rename from `streams/` into `recovering/`: atomic, so of several processes opening
 * the home at once exactly one wins each orphan. A claimed journal leaves `recovering/` only after
 * its text is stored, so a recoverer that dies half-way leaves it for the next open; whoever stores
 * it does so under a lock and checks the conversation first (`recover-orphans.ts`).
 */
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import { type JournalStartEvent, parseJournalLine } from './journal-events.ts'
import { type JournalRecovery, readJournal } from './journal-recovery.ts'
import { judgeWriter, type LivenessOptions, type WriterVerdict } from './journal-writer.ts'
import { type JournalOpenOptions, newStreamId, openStreamingJournal, type StreamingJournal } from './streaming-journal.ts'

export const STREAMS_DIR = 'streams'
export const RECOVERING_DIR = 'recovering'
export const RECOVERED_DIR = 'recovered'
/** The one journal file of homes written before streams had their own (still recovered). */
export const LEGACY_JOURNAL_FILE = 'streaming.jsonl'

/** The start line is read from at most this much of a file (it is the first line, and small). */
const START_LINE_LIMIT = 64 * 1024

export interface JournalsOptions {
  /** The agent's `journal/` folder (HomeLayout.journalDir). */
  dir: string
  clock: Clock
  flushIntervalMs?: number
  flushChars?: number
  heartbeatMs?: number
  /** How writers are judged (tests point `procRoot` elsewhere and shorten `staleMs`). */
  liveness?: LivenessOptions
  /** Receives write failures; the journal keeps going (the turn matters more than its log). */
  onError?: (error: unknown) => void
}

/** A journal claimed for recovery: `recovering/<id>.jsonl`. */
export interface ClaimedJournal {
  id: string
  path: string
}

/** A journal left on disk, with the verdict that made it an orphan. */
export interface OrphanJournal {
  id: string
  path: string
  verdict: WriterVerdict
}

export interface Journals {
  readonly dir: string
  /**
   * Starts the journal of one stream in its own file. A journal of the same session and turn still
   * open here is finalized first (the stream was restarted and supersedes it).
   */
  open(options: JournalOpenOptions): StreamingJournal
  /** The newest journal open in this process for a session (and turn, when given). */
  find(match: { sessionId: string; turn?: number }): StreamingJournal | undefined
  /** Journals on disk whose writer is dead. A live stream — of this process or another — is never one. */
  orphans(): OrphanJournal[]
  /**
   * Claims every orphan (rename into `recovering/`; a lost race is skipped) and returns every
   * claimed journal waiting to be stored, including those a recoverer that died left behind.
   */
  claimOrphans(): ClaimedJournal[]
  /** Reads a claimed journal; null when another process has settled it meanwhile. */
  readClaimed(claimed: ClaimedJournal): JournalRecovery | null
  /** Where `settle` will move a claimed journal, relative to the journal folder. */
  settledPath(claimed: ClaimedJournal): string
  /** Moves a stored journal from `recovering/` to `recovered/` (kept); returns its path relative to the folder. */
  settle(claimed: ClaimedJournal): string
  /** Writes and closes every journal this object opened and did not finalize; their files stay for recovery. */
  abandonAll(): void
}

/** The start line of a journal file, when it has a readable one. */
function readStartLine(path: string): JournalStartEvent | undefined {
  // Non-blocking: a named pipe swapped in after the caller's check must not block the open of a mind.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  try {
    const buffer = Buffer.alloc(START_LINE_LIMIT)
    const length = readSync(fd, buffer, 0, START_LINE_LIMIT, 0)
    const text = buffer.subarray(0, length).toString('utf8')
    const end = text.indexOf('\n')
    const event = end < 0 ? undefined : parseJournalLine(text.slice(0, end))
    return event?.type === 'start' ? event : undefined
  } finally {
    closeSync(fd)
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT'
}

function listJsonl(folder: string): string[] {
  try {
    return readdirSync(folder)
      .filter((name) => name.endsWith('.jsonl'))
      .sort()
  } catch (error) {
    if (isMissing(error)) return []
    throw error
  }
}

/** The journal folder of one agent. Nothing is written until a stream opens or an orphan is claimed. */
export function createJournals(options: JournalsOptions): Journals {
  const { dir, clock } = options
  const streamsDir = join(dir, STREAMS_DIR)
  const recoveringDir = join(dir, RECOVERING_DIR)
  const recoveredDir = join(dir, RECOVERED_DIR)
  const legacyPath = join(dir, LEGACY_JOURNAL_FILE)
  const opened: StreamingJournal[] = []

  function orphans(): OrphanJournal[] {
    const found: OrphanJournal[] = []
    try {
      // Written by a version that named no writer: recovered as it always was.
      const info = lstatSync(legacyPath)
      // A folder, a named pipe or a link under a journal's name is no journal of engram's: opening
      // a pipe would block the open of the mind, and a link could bring any file into a conversation.
      if (info.isFile()) {
        const start = readStartLine(legacyPath)
        const verdict: WriterVerdict = start?.writer
          ? judgeWriter(start.writer, { id: LEGACY_JOURNAL_FILE, mtimeMs: info.mtimeMs }, options.liveness)
          : { alive: false, by: 'legacy', reason: 'a journal from before streams had their own files (no writer recorded)' }
        if (!verdict.alive) found.push({ id: `streaming-${newStreamId(clock)}`, path: legacyPath, verdict })
      }
    } catch (error) {
      if (!isMissing(error)) throw error
    }
    for (const name of listJsonl(streamsDir)) {
      const path = join(streamsDir, name)
      try {
        const info = lstatSync(path)
        if (!info.isFile()) continue
        const verdict = judgeWriter(readStartLine(path)?.writer, { id: basename(name, '.jsonl'), mtimeMs: info.mtimeMs }, options.liveness)
        if (!verdict.alive) found.push({ id: basename(name, '.jsonl'), path, verdict })
      } catch (error) {
        // Finalized (or claimed) between the listing and the look: not an orphan.
        if (!isMissing(error)) throw error
      }
    }
    return found
  }

  function settledPath(claimed: ClaimedJournal): string {
    for (let n = 1; ; n++) {
      const name = `${claimed.id}${n === 1 ? '' : `-${n}`}.jsonl`
      if (!existsSync(join(recoveredDir, name))) return `${RECOVERED_DIR}/${name}`
    }
  }

  return {
    dir,

    open(openOptions) {
      if (openOptions.sessionId !== undefined && openOptions.turn !== undefined) {
        for (const journal of opened) if (journal.isOpen && journal.sessionId === openOptions.sessionId && journal.turn === openOptions.turn) journal.finalize()
      }
      for (let i = opened.length - 1; i >= 0; i--) if (!opened[i]!.isOpen) opened.splice(i, 1)
      const journal = openStreamingJournal(
        {
          dir: streamsDir,
          clock,
          ...(options.flushIntervalMs !== undefined ? { flushIntervalMs: options.flushIntervalMs } : {}),
          ...(options.flushChars !== undefined ? { flushChars: options.flushChars } : {}),
          ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
          ...(options.liveness?.procRoot !== undefined ? { procRoot: options.liveness.procRoot } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
        },
        openOptions,
      )
      opened.push(journal)
      return journal
    },

    find(match) {
      for (let i = opened.length - 1; i >= 0; i--) {
        const journal = opened[i]!
        if (journal.isOpen && journal.sessionId === match.sessionId && (match.turn === undefined || journal.turn === match.turn)) return journal
      }
      return undefined
    },

    orphans,

    claimOrphans() {
      const found = orphans()
      if (found.length > 0) mkdirSync(recoveringDir, { recursive: true })
      for (const orphan of found) {
        try {
          renameSync(orphan.path, join(recoveringDir, `${orphan.id}.jsonl`))
        } catch (error) {
          // Another process claimed it first.
          if (!isMissing(error)) throw error
        }
      }
      return listJsonl(recoveringDir).map((name) => ({ id: basename(name, '.jsonl'), path: join(recoveringDir, name) }))
    },

    readClaimed(claimed) {
      let text: string
      try {
        text = readFileSync(claimed.path, 'utf8')
      } catch (error) {
        if (isMissing(error)) return null
        throw error
      }
      return readJournal(text, `journal/${RECOVERING_DIR}/${claimed.id}.jsonl`)
    },

    settledPath,

    settle(claimed) {
      mkdirSync(recoveredDir, { recursive: true })
      const target = settledPath(claimed)
      renameSync(claimed.path, join(dir, target))
      return target
    },

    abandonAll() {
      for (const journal of opened) journal.abandon()
      opened.length = 0
    },
  }
}
