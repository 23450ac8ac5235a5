/**
 * Resolution propagation (AnimaWorks, layers 1 and 2): every item a session resolved becomes an
 * `issue_resolved` event in the agent's own activity log (so its recent-activity priming sees it)
 * and a line in `shared/resolutions.jsonl` (so every agent of the home learns it is done).
 *
 * Each resolution has an id derived from the session, the last event covered and the text, so a
 * boundary that is run again (after a crash between steps) never records one twice.
 */
import { constants } from 'node:fs'
import { open, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import { contentHash } from '../../core/hash.ts'
import type { ActivityLog } from '../../storage/contracts.ts'
import { appendLine } from '../../storage/atomic-write.ts'
import { checkMemoryFile } from '../../storage/memory-file-read.ts'
import { ENCODER_ORIGIN } from './session-events.ts'

/** One line of `shared/resolutions.jsonl`. */
export interface ResolutionRecord {
  id: string
  ts: string
  agent: string
  issue: string
  session: string
  /** The user of the session that resolved it (absent: a session without a user, or a record from before users were recorded). */
  user?: string
  /** The episode section that recorded it: `episodes/<date>.md#<heading>`. */
  episode: string
}

export function resolutionId(session: string, until: string, issue: string): string {
  return contentHash(`${session}\u0000${until}\u0000${issue}`).slice(0, 16)
}

/** Non-blocking: a named pipe at the registry's path must never block a turn or a boundary (decision 0025). */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)

async function knownIds(file: string): Promise<Set<string>> {
  let text: string
  try {
    text = await readFile(file, { encoding: 'utf8', flag: READ_FLAGS })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set()
    throw error
  }
  const ids = new Set<string>()
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      const value = JSON.parse(line) as { id?: unknown }
      if (typeof value.id === 'string') ids.add(value.id)
    } catch {
      // A line cut by a crash, or written by hand: it is not ours to judge here.
    }
  }
  return ids
}

/**
 * Records each resolved item once in the activity log and in `resolutionsFile`. Returns the
 * records that were new. Throws when the shared file cannot be written (the caller reports it).
 */
export async function propagateResolutions(options: {
  activity: ActivityLog
  clock: Clock
  resolutionsFile: string
  agent: string
  session: string
  /** The session's user, recorded with each resolution so that it is read back per user. */
  user?: string
  until: string
  episode: string
  resolved: string[]
}): Promise<ResolutionRecord[]> {
  if (options.resolved.length === 0) return []
  const ts = options.clock.now().toISOString()
  const seen = await knownIds(options.resolutionsFile)
  const since = new Date(options.clock.now().getTime() - 86_400_000).toISOString()
  const logged = new Set(
    (await options.activity.read({ since, types: ['issue_resolved'] })).map((record) => record.meta?.resolutionId).filter((id): id is string => typeof id === 'string'),
  )
  const written: ResolutionRecord[] = []
  for (const issue of options.resolved) {
    const id = resolutionId(options.session, options.until, issue)
    const record: ResolutionRecord = { id, ts, agent: options.agent, issue, session: options.session, ...(options.user !== undefined ? { user: options.user } : {}), episode: options.episode }
    if (!logged.has(id)) {
      await options.activity.append({ ts, type: 'issue_resolved', content: issue, session: options.session, meta: { origin: ENCODER_ORIGIN, resolutionId: id, episode: options.episode } })
    }
    if (!seen.has(id)) {
      await appendLine(options.resolutionsFile, JSON.stringify(record))
      written.push(record)
    }
  }
  return written
}

/** What a prompt asks of the resolutions: the recent ones its user may see. */
export interface ResolutionQuery {
  /**
   * The viewer's user: records of that user and records without a user (sessions without one,
   * older records) are returned, never another user's. Without it only records without a user.
   */
  user?: string
  /** Only records at or after this instant (ISO-8601). */
  since?: string
  /** Most records returned, newest first (default 10). */
  limit?: number
}

/** Reads resolutions back (the seed's layer 2: "Resolved Issues" in every agent's prompt). */
export interface ResolutionReader {
  /** Where they are read from, for provenance (`shared/resolutions.jsonl`). */
  readonly source: string
  /** The newest resolutions the query allows, newest first. */
  recent(query?: ResolutionQuery): Promise<ResolutionRecord[]>
}

/**
 * Only the end of the file is read: the registry grows with every resolved issue of every agent,
 * and a prompt wants the last few (principle 7: a turn's cost does not grow with one file).
 * 64 KiB holds some 250 records.
 */
export const RESOLUTIONS_TAIL_BYTES = 64 * 1024

async function readTail(file: string, bytes: number): Promise<string> {
  // Confined as every memory file is: a link out of shared/ is never read into a prompt.
  const checked = checkMemoryFile(file, { root: dirname(file), maxBytes: Number.MAX_SAFE_INTEGER })
  if (checked.kind !== 'file') return ''
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(checked.path, READ_FLAGS)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw error
  }
  try {
    const info = await handle.stat()
    // A folder or a pipe where the registry should be holds no resolutions.
    if (!info.isFile()) return ''
    const { size } = info
    const start = Math.max(0, size - bytes)
    const buffer = Buffer.alloc(size - start)
    await handle.read(buffer, 0, buffer.length, start)
    const text = buffer.toString('utf8')
    // Cut in the middle of a line: drop the partial first line.
    return start === 0 ? text : text.slice(text.indexOf('\n') + 1)
  } finally {
    await handle.close()
  }
}

function asRecord(value: unknown): ResolutionRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const record = value as Record<string, unknown>
  const strings = ['id', 'ts', 'agent', 'issue', 'session', 'episode'] as const
  if (!strings.every((key) => typeof record[key] === 'string')) return undefined
  if (record.user !== undefined && typeof record.user !== 'string') return undefined
  return record as unknown as ResolutionRecord
}

/** A reader over a `resolutions.jsonl` file; `source` names it in provenance. */
export function createResolutionReader(file: string, source: string): ResolutionReader {
  return {
    source,
    async recent(query = {}) {
      const limit = query.limit ?? 10
      const since = query.since === undefined ? undefined : Date.parse(query.since)
      const out: ResolutionRecord[] = []
      const lines = (await readTail(file, RESOLUTIONS_TAIL_BYTES)).split('\n')
      for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
        const line = lines[i]?.trim() ?? ''
        if (line === '') continue
        let record: ResolutionRecord | undefined
        try {
          record = asRecord(JSON.parse(line))
        } catch {
          // A line cut by a crash, or written by hand: skipped here, kept in the file.
          continue
        }
        if (!record) continue
        if (record.user !== undefined && record.user !== query.user) continue
        if (since !== undefined && !(Date.parse(record.ts) >= since)) continue
        out.push(record)
      }
      // Appended in order, so the file's end is the newest; a hand-edited file may not be.
      return out.sort((a, b) => Date.parse(b.ts) - Date.parse(a.ts))
    },
  }
}
