/**
 * Immediate encoding (AnimaWorks' `finalize_session`, the hippocampus' one-shot encoding): at a
 * session boundary, the events of the session not yet recorded are summarised into the day's
 * episode file, the state file is updated with what was resolved and what is left to do, and the
 * resolutions are propagated.
 *
 * Where encoding stopped is kept per session as a job run (`immediate-encoding:<session>`, status
 * ok, details `{ lastFinalizedTurn, untilTs, untilRef }`): the Jobs seam exists to make background
 * work idempotent, works on every backend, and costs one indexed read per boundary. The episode
 * section carries the same cursor in its closing comment, so a crash between writing the episode
 * and recording the run is repaired on the next boundary instead of summarising twice.
 *
 * One process at a time encodes a session (a lock); another boundary arriving meanwhile returns
 * `busy` — the running one covers its events or leaves them for the next boundary.
 */
import { type Clock, isoDay } from '../../core/clock.ts'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { ActivityLog, ActivityRecord, DocumentStore, Jobs, Locks } from '../../storage/contracts.ts'
import { dayOf, instantOf } from '../../storage/activity-records.ts'
import { type EpisodeMarker, type EpisodeMethod, episodeFileTitle, formatEpisodeSection, headingTitle, parseEpisodeSections } from './episode-format.ts'
import { summarizeEvents } from './episode-summary.ts'
import { propagateResolutions, type ResolutionRecord } from './resolutions.ts'
import { compareRefs, type EpisodeCursor, segmentAfter } from './session-events.ts'
import { type StateUpdateOutcome, updateCurrentTask } from './state-update.ts'

export type BoundaryReason = 'idle' | 'heartbeat' | 'end'

/** The stores a session's events and episodes live in: its owner's (decision 0017). */
export interface SessionStores {
  /** Whose they are, for lock names (`agent`, `user:<id>`). */
  owner: string
  activity: ActivityLog
  documents: DocumentStore
}

export interface ImmediateEncoderOptions {
  agent: string
  /** The agent's own stores: sessions without a user (and every session when `storesOf` is not given). */
  activity: ActivityLog
  documents: DocumentStore
  /** The stores of a session's owner (its user's tree for a session with a user). */
  storesOf?: (session: string) => Promise<SessionStores>
  jobs: Jobs
  locks: Locks
  llm: Llm
  clock: Clock
  /** `shared/resolutions.jsonl` of the home (HomeLayout.resolutionsFile). */
  resolutionsFile: string
  /** How far back to look for a session that was never encoded (default 7 days). */
  lookbackDays?: number
  llmTimeoutMs?: number
  /** Problems that did not stop the boundary (state or resolution writes that failed). */
  onWarning?: (message: string) => void
}

export type ImmediateEncodingOutcome =
  | {
      kind: 'recorded'
      session: string
      reason: BoundaryReason
      /** `episodes/<date>.md#<heading>` */
      episode: string
      day: string
      heading: string
      turns: [number, number]
      events: number
      method: EpisodeMethod
      /** Why the LLM summary was not used (extractive only). */
      fallback?: string
      state: StateUpdateOutcome
      resolutions: ResolutionRecord[]
      /** Problems that did not stop the boundary. */
      warnings: string[]
    }
  | { kind: 'nothing_new'; session: string; reason: BoundaryReason; repaired?: string }
  | { kind: 'busy'; session: string; reason: BoundaryReason }

export interface ImmediateEncoder {
  /** Encodes what `session` did since its last boundary. Idempotent: a second call records nothing. */
  finalizeSession(session: string, options?: { reason?: BoundaryReason; since?: string }): Promise<ImmediateEncodingOutcome>
  /** Where encoding of `session` stopped, or undefined when it never ran. */
  cursor(session: string): Promise<EpisodeCursor | undefined>
}

const DEFAULT_LOOKBACK_DAYS = 7

export function encodingJobName(session: string): string {
  return `immediate-encoding:${session}`
}

/**
 * The lock on one owner's episode file of `day`: held while a section is appended (so the title is
 * written once), and by whatever rewrites the file (episode compression), so no section is lost.
 */
export function episodeDayLock(agent: string, owner: string, day: string): string {
  return `episode-day:${agent}:${owner === 'agent' ? '' : `${owner}:`}${day}`
}

/** The user a session talked to: who its messages came from, or whom its replies went to. */
function userOf(records: readonly ActivityRecord[], session: string): string | undefined {
  for (const record of records) {
    if (record.session !== session) continue
    if (record.type === 'message_received' && record.from !== undefined) return record.from
    if (record.type === 'response_sent' && record.to !== undefined) return record.to
  }
  return undefined
}

/** Creates the encoder. */
export function createImmediateEncoder(options: ImmediateEncoderOptions): ImmediateEncoder {
  const { agent, jobs, locks, llm, clock } = options
  const storesOf = options.storesOf ?? (async (): Promise<SessionStores> => ({ owner: 'agent', activity: options.activity, documents: options.documents }))

  async function cursor(session: string): Promise<EpisodeCursor | undefined> {
    const run = await jobs.lastRun(encodingJobName(session), agent, 'ok')
    const details = run?.details
    if (!details || typeof details.untilRef !== 'string' || typeof details.untilTs !== 'string') return undefined
    return { lastFinalizedTurn: Number(details.lastFinalizedTurn) || 0, untilTs: details.untilTs, untilRef: details.untilRef }
  }

  async function saveCursor(session: string, marker: EpisodeMarker, reason: BoundaryReason, startedAt: string, episode: string): Promise<void> {
    await jobs.record({
      job: encodingJobName(session),
      agent,
      startedAt,
      finishedAt: clock.now().toISOString(),
      status: 'ok',
      details: { session, reason, lastFinalizedTurn: marker.turns[1], untilTs: marker.untilTs, untilRef: marker.until, episode, method: marker.method },
    })
  }

  /** Sections of `session` written after `after` but whose run was never recorded (a crash). */
  async function unfinishedSections(stores: SessionStores, session: string, days: string[], after: EpisodeCursor | undefined): Promise<Array<{ marker: EpisodeMarker; episode: string; day: string }>> {
    const found: Array<{ marker: EpisodeMarker; episode: string; day: string }> = []
    for (const day of days) {
      const doc = await stores.documents.read('episode', day)
      if (!doc) continue
      for (const section of parseEpisodeSections(doc.body)) {
        const marker = section.marker
        if (!marker || marker.session !== session) continue
        if (after && compareRefs(marker.until, after.untilRef) <= 0) continue
        found.push({ marker, episode: `episodes/${day}.md#${section.heading}`, day })
      }
    }
    return found.sort((a, b) => compareRefs(a.marker.until, b.marker.until))
  }

  async function followUp(
    stores: SessionStores,
    marker: EpisodeMarker,
    session: string,
    user: string | undefined,
    day: string,
    episode: string,
    warnings: string[],
  ): Promise<{ state: StateUpdateOutcome; resolutions: ResolutionRecord[] }> {
    const { activity, documents } = stores
    const resolved = marker.resolved ?? []
    const tasks = marker.tasks ?? []
    let state: StateUpdateOutcome
    if (marker.method === 'extractive' && resolved.length === 0 && tasks.length === 0) {
      state = { kind: 'skipped', reason: 'no LLM summary and no explicit "TODO:", "done:" or "resolved:" lines in the session' }
    } else {
      try {
        state = await updateCurrentTask(documents, locks, { agent, day, resolved, tasks, reason: `immediate encoding of session ${session}` })
      } catch (error) {
        const message = `state/current_task.md was not updated: ${describeError(error)}`
        warnings.push(message)
        state = { kind: 'skipped', reason: message }
      }
    }
    let resolutions: ResolutionRecord[] = []
    try {
      resolutions = await propagateResolutions({
        activity,
        clock,
        resolutionsFile: options.resolutionsFile,
        agent,
        session,
        ...(user !== undefined ? { user } : {}),
        until: marker.until,
        episode,
        resolved,
      })
    } catch (error) {
      warnings.push(`resolutions were not propagated: ${describeError(error)}`)
    }
    for (const warning of warnings) options.onWarning?.(warning)
    return { state, resolutions }
  }

  async function appendSection(stores: SessionStores, day: string, section: string): Promise<void> {
    const { documents } = stores
    // A day lock (not the document's own lock, which `append` takes) so the title is written once.
    const outcome = await locks.withLock(episodeDayLock(agent, stores.owner, day), async () => {
      const existing = await documents.read('episode', day)
      await documents.append('episode', day, existing ? section : `${episodeFileTitle(day)}${section}`)
    })
    if (outcome.kind !== 'done') throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `episode file of ${day} is locked` })
  }

  async function finalizeLocked(session: string, reason: BoundaryReason, sinceHint: string | undefined): Promise<ImmediateEncodingOutcome> {
    const startedAt = clock.now().toISOString()
    const stores = await storesOf(session)
    let current = await cursor(session)
    const lookback = new Date(clock.now().getTime() - (options.lookbackDays ?? DEFAULT_LOOKBACK_DAYS) * 86_400_000).toISOString()
    const since = current?.untilTs ?? sinceHint ?? lookback
    const records: ActivityRecord[] = await stores.activity.read({ since })
    let segment = segmentAfter(records, session, current)
    if (!segment) return { kind: 'nothing_new', session, reason }

    // Repair a crash between writing a section and recording its run.
    const days = [...new Set([dayOf(segment.from.ts), dayOf(segment.until.ts)].filter((day): day is string => day !== undefined))]
    let repaired: string | undefined
    const user = userOf(records, session)
    for (const left of await unfinishedSections(stores, session, days, current)) {
      await followUp(stores, left.marker, session, user, left.day, left.episode, [])
      await saveCursor(session, left.marker, reason, startedAt, left.episode)
      current = { lastFinalizedTurn: left.marker.turns[1], untilTs: left.marker.untilTs, untilRef: left.marker.until }
      repaired = left.episode
    }
    if (repaired) {
      segment = segmentAfter(records, session, current)
      if (!segment) return { kind: 'nothing_new', session, reason, repaired }
    }

    const summary = await summarizeEvents(segment.events, llm, { ...(options.llmTimeoutMs !== undefined ? { timeoutMs: options.llmTimeoutMs } : {}) })
    const day = dayOf(segment.from.ts) ?? isoDay(clock.now())
    const time = new Date(instantOf(segment.from.ts)).toISOString().slice(11, 16)
    const heading = `${time} — ${headingTitle(summary.title)}`
    const episode = `episodes/${day}.md#${heading}`
    const marker: EpisodeMarker = {
      session,
      turns: segment.turns,
      from: segment.from.ref,
      until: segment.until.ref,
      untilTs: segment.until.ts,
      method: summary.method,
      recorded: clock.now().toISOString(),
      ...(summary.resolved.length > 0 ? { resolved: summary.resolved } : {}),
      ...(summary.tasks.length > 0 ? { tasks: summary.tasks } : {}),
      ...(summary.fallback ? { fallback: summary.fallback } : {}),
    }
    await appendSection(stores, day, formatEpisodeSection({ time, title: summary.title, body: summary.body, resolved: summary.resolved, tasks: summary.tasks, marker }))
    const warnings: string[] = []
    const { state, resolutions } = await followUp(stores, marker, session, user, day, episode, warnings)
    await saveCursor(session, marker, reason, startedAt, episode)
    return {
      kind: 'recorded',
      session,
      reason,
      episode,
      day,
      heading,
      turns: segment.turns,
      events: segment.events.length,
      method: summary.method,
      ...(summary.fallback ? { fallback: summary.fallback } : {}),
      state,
      resolutions,
      warnings,
    }
  }

  return {
    cursor,
    async finalizeSession(session, finalizeOptions = {}) {
      const reason = finalizeOptions.reason ?? 'end'
      // Not waiting: the holder is encoding this very session and covers (or leaves for the next
      // boundary) whatever this call would have encoded.
      const outcome = await locks.withLock(`immediate-encoding:${agent}:${session}`, () => finalizeLocked(session, reason, finalizeOptions.since), { wait: false })
      return outcome.kind === 'done' ? outcome.value : { kind: 'busy', session, reason }
    },
  }
}
