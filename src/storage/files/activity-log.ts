/**
 * The unified activity log as JSONL files (AnimaWorks): `activity/<YYYY-MM-DD>.jsonl`, one file per
 * UTC day, one event per line, field names as in the seed (`ts`, `type`, `content`, `summary`,
 * `from`, `to`, `channel`, `tool`, `via`) plus `session` and `meta`; empty fields are omitted.
 *
 * Tool events are cut so the log cannot bloat: for `tool_use`, `meta.input` (the call's
 * arguments; JSON-serialized when not a string) is cut to TOOL_INPUT_LIMIT characters, and
 * `meta.result` and `content` (what the tool returned) to TOOL_RESULT_LIMIT. When something was
 * cut, `meta.truncated` records the original lengths (`{ input?: n, result?: n, content?: n }`),
 * so a reader knows it is looking at a shortened record.
 *
 * Appends are one `O_APPEND` write per line (safe across processes) and never throw. Reading skips
 * lines that do not parse (a line cut off by a crash) and reports them; it opens only the day
 * files inside the requested range.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type ActivityEvent, isActivityType } from '../../core/activity.ts'
import { type Clock, isoDay } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { dayOf, instantOf, toLogRecord } from '../activity-records.ts'
import type { ActivityLog, ActivityQuery, ActivityRecord, ParseProblem } from '../contracts.ts'
import { appendLine } from '../atomic-write.ts'
import { type FileStamp, fileStamp, unchanged } from './file-stamp.ts'
import { checkMemoryFile, DEFAULT_MAX_FILE_BYTES, MEMORY_FILE_OPEN_FLAGS } from '../memory-file-read.ts'

export interface FileActivityLogOptions {
  /** The agent's `activity/` folder. */
  dir: string
  clock: Clock
  /** Receives append failures (appends never throw into the caller). */
  onError?: (error: unknown) => void
  /** Day files larger than this are skipped and reported, never read (`memory.maxFileBytes`). */
  maxFileBytes?: number
}

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/
const STRING_FIELDS = ['content', 'summary', 'from', 'to', 'channel', 'tool', 'via', 'session'] as const
type LineParse = { ok: true; event: ActivityEvent } | { ok: false; reason: string }

function parseLine(line: string): LineParse {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    return { ok: false, reason: `not valid JSON (${(error as Error).message}); probably cut off by a crash` }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'not a JSON object' }
  const record = value as Record<string, unknown>
  if (typeof record.ts !== 'string' || Number.isNaN(instantOf(record.ts))) return { ok: false, reason: 'missing or invalid "ts"' }
  if (!isActivityType(record.type)) return { ok: false, reason: `unknown event type ${JSON.stringify(record.type)}` }
  for (const field of STRING_FIELDS) {
    if (record[field] !== undefined && typeof record[field] !== 'string') return { ok: false, reason: `"${field}" is not a string` }
  }
  if (record.meta !== undefined && (typeof record.meta !== 'object' || record.meta === null || Array.isArray(record.meta))) {
    return { ok: false, reason: '"meta" is not an object' }
  }
  return { ok: true, event: record as unknown as ActivityEvent }
}

/** Creates the log. The folder is created on the first append. */
export function createFileActivityLog(options: FileActivityLogOptions): ActivityLog {
  const { dir, clock, onError } = options

  function report(error: unknown): void {
    try {
      onError?.(error)
    } catch {
      // The reporter failing must not turn a logging problem into a crash of the agent.
    }
  }

  /*
   * Priming reads the last hours of activity before every turn. Re-parsing whole day files each
   * time cost about 1.5 ms per turn on a busy day; the log only grows by appends, so each day keeps
   * what was parsed and a read parses only the lines appended since. Whether it did only grow is
   * decided by the bytes, never by the size alone (a file rewritten in place, same inode and
   * larger, once returned its old records): an unchanged settled stamp (file-stamp.ts) reads
   * nothing; otherwise the file is read and the bytes parsed before must be the start of it —
   * compared exactly, which costs a fraction of parsing them — or the day is parsed again from
   * its start.
   */
  interface ParsedDay {
    stamp: FileStamp
    /** The bytes parsed (complete lines, up to just after a line break), in the pieces they were read in. */
    chunks: Buffer[]
    parsed: number
    lines: number
    records: ActivityRecord[]
    problems: ParseProblem[]
    /** What the bytes after the parsed ones (a line still being written) parsed to. */
    partial: { records: ActivityRecord[]; problems: ParseProblem[] }
  }
  const parsedDays = new Map<string, ParsedDay>()
  let listing: { stamp: FileStamp; days: string[] } | undefined

  function unreadable(path: string, error: unknown): EngramError {
    return new EngramError({
      code: ErrorCode.storageUnavailable,
      category: 'system',
      message: `Cannot read activity log ${path}: ${(error as Error).message}`,
      fix: 'Check the file permissions of the activity folder under the engram home (ENGRAM_HOME).',
      cause: error,
    })
  }

  async function days(): Promise<string[]> {
    try {
      // The folder changes when a day's file is created: list it again only then.
      const readAt = Date.now()
      const stat = statSync(dir, { bigint: true })
      if (listing && unchanged(listing.stamp, stat)) return [...listing.days]
      const found = readdirSync(dir)
        .map((name) => DAY_FILE.exec(name)?.[1])
        .filter((day): day is string => day !== undefined)
        .sort()
      listing = { stamp: fileStamp(stat, readAt), days: found }
      return [...found]
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return []
      throw error
    }
  }

  // One buffer the day files are read into, reused (a busy day is megabytes, read at every turn).
  let scratch = Buffer.alloc(0)
  function readWhole(path: string, size: number): Buffer {
    // Non-blocking, not following links: `path` is the checked real path (decision 0025).
    const fd = openSync(path, MEMORY_FILE_OPEN_FLAGS)
    try {
      // What the stat said, or more if the file grew meanwhile (read up to the end); the slack
      // lets the read that finds the end happen without growing the buffer.
      if (scratch.length < size + 16_384) scratch = Buffer.allocUnsafe(size + 65_536)
      let at = 0
      for (;;) {
        if (at === scratch.length) scratch = Buffer.concat([scratch, Buffer.allocUnsafe(scratch.length)])
        const n = readSync(fd, scratch, at, scratch.length - at, at)
        if (n === 0) break
        at += n
      }
      return scratch.subarray(0, at)
    } finally {
      closeSync(fd)
    }
  }

  /** Whether `bytes` starts with `chunks`, byte for byte. */
  function startsWith(bytes: Buffer, chunks: readonly Buffer[]): boolean {
    let at = 0
    for (const chunk of chunks) {
      if (at + chunk.length > bytes.length || bytes.compare(chunk, 0, chunk.length, at, at + chunk.length) !== 0) return false
      at += chunk.length
    }
    return true
  }

  /*
   * Where each parsed record sits, read once when its line is parsed: a read filters and orders
   * the day's records by time and line at every turn, and reading the time out of `ts` (a regular
   * expression and Date.parse) in every comparison was most of priming's activity channel.
   */
  const positions = new WeakMap<ActivityRecord, { at: number; day: string; line: number }>()
  const positionOf = (record: ActivityRecord): { at: number; day: string; line: number } => {
    const known = positions.get(record)
    if (known) return known
    const [day = '', line = '0'] = record.ref.split('#L')
    return { at: instantOf(record.ts), day, line: Number(line) }
  }

  function parseLines(file: string, text: string, firstLine: number, into: { records: ActivityRecord[]; problems: ParseProblem[] }): number {
    const lines = text.split('\n')
    const day = `activity/${file}`
    lines.forEach((line, index) => {
      if (line.trim().length === 0) return
      const ref = `${day}#L${firstLine + index}`
      const parsed = parseLine(line)
      if (parsed.ok) {
        const record = { ...parsed.event, ref }
        positions.set(record, { at: instantOf(record.ts), day, line: firstLine + index })
        into.records.push(record)
      }
      else into.problems.push({ file: `activity/${file}`, line: firstLine + index, text: line.length > 300 ? `${line.slice(0, 300)}…` : line, reason: parsed.reason })
    })
    return lines.length
  }

  async function readDay(day: string): Promise<{ records: readonly ActivityRecord[]; problems: ParseProblem[] }> {
    const file = `${day}.jsonl`
    const path = join(dir, file)
    const readAt = Date.now()
    // A folder, a pipe, a link leading out of activity/ or a file over the size limit is skipped
    // and reported, never opened (decision 0025).
    const checked = checkMemoryFile(path, { root: dir, maxBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES })
    if (checked.kind !== 'file') {
      parsedDays.delete(day)
      return { records: [], problems: checked.kind === 'missing' ? [] : [{ file: `activity/${file}`, line: 0, text: '', reason: checked.reason }] }
    }
    const stat = checked.stat
    let known = parsedDays.get(day)
    if (!known || !unchanged(known.stamp, stat)) {
      let bytes: Buffer
      try {
        bytes = readWhole(checked.path, Number(stat.size))
      } catch (error) {
        parsedDays.delete(day)
        throw unreadable(path, error)
      }
      // Only an append keeps what was parsed: the old bytes must start the file, byte for byte.
      const grown = known !== undefined && startsWith(bytes, known.chunks)
      const from = grown && known ? known : { chunks: [], parsed: 0, lines: 0, records: [], problems: [] }
      const start = from.parsed
      const end = bytes.lastIndexOf(0x0a) + 1
      const next: ParsedDay = { ...from, stamp: fileStamp(stat, readAt), partial: { records: [], problems: [] } }
      if (end > start) {
        next.lines += parseLines(file, bytes.subarray(start, end - 1).toString('utf8'), next.lines + 1, next)
        // Copied out of the reused buffer; a day read at every turn is joined into one piece now and then.
        next.chunks = [...from.chunks, Buffer.from(bytes.subarray(start, end))]
        if (next.chunks.length > 64) next.chunks = [Buffer.concat(next.chunks)]
        next.parsed = end
      }
      // A line still being written (no line break yet) is parsed again on every read until it is complete.
      if (bytes.length > next.parsed) parseLines(file, bytes.subarray(next.parsed).toString('utf8'), next.lines + 1, next.partial)
      known = next
      parsedDays.set(day, known)
    }
    // The log's own records: read() copies the ones it returns.
    return { records: known.partial.records.length > 0 ? [...known.records, ...known.partial.records] : known.records, problems: [...known.problems, ...known.partial.problems] }
  }

  /** Copies: the parsed records stay this log's, whatever a caller does with what it gets. */
  const copies = (records: readonly ActivityRecord[]): ActivityRecord[] => records.map((record) => ({ ...record }))

  return {
    async append(event) {
      try {
        const ts = typeof event.ts === 'string' && dayOf(event.ts) !== undefined ? event.ts : clock.now().toISOString()
        if (!isActivityType(event.type)) {
          throw new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'user',
            message: `Unknown activity type ${JSON.stringify(event.type)}; the event was not logged.`,
            fix: 'Use one of the ACTIVITY_TYPES from src/core/activity.ts.',
          })
        }
        const line = JSON.stringify(toLogRecord({ ...event, ts }))
        await appendLine(join(dir, `${dayOf(ts)}.jsonl`), line)
      } catch (error) {
        report(error)
      }
    },

    async read(query: ActivityQuery = {}) {
      const since = query.since === undefined ? undefined : instantOf(query.since)
      const until = query.until === undefined ? undefined : instantOf(query.until)
      for (const [name, value] of [
        ['since', since],
        ['until', until],
      ] as const) {
        if (value !== undefined && Number.isNaN(value)) {
          throw new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'user',
            message: `Activity query "${name}" is not an ISO-8601 time: ${JSON.stringify(query[name])}.`,
            fix: 'Pass times like 2026-03-04T10:00:00Z.',
          })
        }
      }
      const sinceDay = since === undefined ? undefined : isoDay(new Date(since))
      const untilDay = until === undefined ? undefined : isoDay(new Date(until))
      const inRange = (await days()).filter((day) => (sinceDay === undefined || day >= sinceDay) && (untilDay === undefined || day <= untilDay))
      const types = query.types === undefined ? undefined : new Set<string>(query.types)
      const keep = (record: ActivityRecord): boolean => {
        const at = positionOf(record).at
        return (since === undefined || at >= since) && (until === undefined || at <= until) && (types === undefined || types.has(record.type))
      }
      // By time, then by day file and line.
      const order = (a: ActivityRecord, b: ActivityRecord): number => {
        const x = positionOf(a)
        const y = positionOf(b)
        return x.at - y.at || (x.day === y.day ? 0 : x.day < y.day ? -1 : 1) || x.line - y.line
      }

      if (query.limit === undefined) {
        const all: ActivityRecord[] = []
        for (const day of inRange) all.push(...(await readDay(day)).records.filter(keep))
        return copies(all.sort(order))
      }
      // Newest first: walk days backwards and stop once a whole day has filled the limit.
      const limit = Math.max(0, Math.floor(query.limit))
      const found: ActivityRecord[] = []
      for (const day of [...inRange].reverse()) {
        if (found.length >= limit) break
        found.push(...(await readDay(day)).records.filter(keep))
      }
      return copies(found.sort((a, b) => order(b, a)).slice(0, limit))
    },

    days,

    async problems() {
      const problems: ParseProblem[] = []
      for (const day of await days()) problems.push(...(await readDay(day)).problems)
      return problems
    },
  }
}
