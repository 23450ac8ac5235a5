/**
 * Resolution propagation (AnimaWorks, layers 1 and 2): every item a session resolved becomes an
 * `issue_resolved` event in the agent's own activity log (so its recent-activity priming sees it)
 * and a line in `shared/resolutions.jsonl` (so every agent of the home learns it is done).
 *
 * Each resolution has an id derived from the session, the last event covered and the text, so a
 * boundary that is run again (after a crash between steps) never records one twice.
 */
import { readFile } from 'node:fs/promises'
import type { Clock } from '../../core/clock.ts'
import { contentHash } from '../../core/hash.ts'
import type { ActivityLog } from '../../storage/contracts.ts'
import { appendLine } from '../../storage/files/atomic-write.ts'
import { ENCODER_ORIGIN } from './session-events.ts'

/** One line of `shared/resolutions.jsonl`. */
export interface ResolutionRecord {
  id: string
  ts: string
  agent: string
  issue: string
  session: string
  /** The episode section that recorded it: `episodes/<date>.md#<heading>`. */
  episode: string
}

export function resolutionId(session: string, until: string, issue: string): string {
  return contentHash(`${session}\u0000${until}\u0000${issue}`).slice(0, 16)
}

async function knownIds(file: string): Promise<Set<string>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
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
    const record: ResolutionRecord = { id, ts, agent: options.agent, issue, session: options.session, episode: options.episode }
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
