/**
 * Which events of a session are not yet in an episode, and which turns they belong to.
 *
 * A session's events are the activity records carrying its `session` id, in log order (time, then
 * file and line). A turn opens with something arriving from outside — a message, a DM, a heartbeat
 * or a cron run — and holds everything the agent did about it. The cursor remembers the last
 * event already encoded and how many turns that covered (`lastFinalizedTurn`), so the next
 * boundary summarises only what came after (the seed's diff summarisation).
 */
import type { ActivityType } from '../../core/activity.ts'
import type { ActivityRecord } from '../../storage/contracts.ts'
import { instantOf } from '../../storage/activity-records.ts'

/** Where immediate encoding stopped for a session. */
export interface EpisodeCursor {
  /** The last turn (1-based) whose events were encoded; the next segment continues or follows it. */
  lastFinalizedTurn: number
  /** Time and ref of the last encoded event. */
  untilTs: string
  untilRef: string
}

/** The unrecorded events of one session. */
export interface SessionSegment {
  sessionId: string
  events: ActivityRecord[]
  /** First and last turn the events belong to (the first may continue an encoded turn). */
  turns: [number, number]
  from: ActivityRecord
  until: ActivityRecord
}

const TURN_OPENERS: ReadonlySet<ActivityType> = new Set(['message_received', 'dm_received', 'heartbeat_start', 'cron_executed'])

/** `meta.origin` of the events immediate encoding writes itself; they are never summarised again. */
export const ENCODER_ORIGIN = 'immediate_encoding'

/** Orders records as the log does: by time, then day file, then line. */
export function compareRecords(a: Pick<ActivityRecord, 'ts' | 'ref'>, b: Pick<ActivityRecord, 'ts' | 'ref'>): number {
  return instantOf(a.ts) - instantOf(b.ts) || compareRefs(a.ref, b.ref)
}

/** Orders refs `activity/<day>.jsonl#L<n>` by day, then line number. */
export function compareRefs(a: string, b: string): number {
  const [fileA = '', lineA = '0'] = a.split('#L')
  const [fileB = '', lineB = '0'] = b.split('#L')
  return fileA.localeCompare(fileB) || Number(lineA) - Number(lineB)
}

function isEncoderEvent(record: ActivityRecord): boolean {
  return record.meta?.origin === ENCODER_ORIGIN
}

/**
 * The events of `sessionId` after `cursor` (all of them without one), numbered into turns.
 * Undefined when nothing new happened. `records` may hold other sessions' events and any order.
 */
export function segmentAfter(records: ActivityRecord[], sessionId: string, cursor: EpisodeCursor | undefined): SessionSegment | undefined {
  const mark = cursor ? { ts: cursor.untilTs, ref: cursor.untilRef } : undefined
  const events = records
    .filter((record) => record.session === sessionId && !isEncoderEvent(record) && (mark === undefined || compareRecords(record, mark) > 0))
    .sort(compareRecords)
  const first = events[0]
  const last = events[events.length - 1]
  if (first === undefined || last === undefined) return undefined
  let turn = cursor?.lastFinalizedTurn ?? 0
  let firstTurn: number | undefined
  for (const event of events) {
    if (TURN_OPENERS.has(event.type) || turn === 0) turn++
    firstTurn ??= turn
  }
  return { sessionId, events, turns: [firstTurn ?? turn, turn], from: first, until: last }
}
