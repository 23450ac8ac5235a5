/**
 * The activity log on PostgreSQL (migration 2): one row per event of one owner's log, shared by
 * every process on every host that uses the database.
 *
 * The event is stored as the file backend writes its line (`toLogRecord`: seed field order, empty
 * fields dropped, tool data cut and marked) in a `json` column, with the event's instant and UTC day
 * beside it. Refs keep the file backend's form, `activity/<day>.jsonl#L<line>`, so anything that
 * cites an event (episodes, provenance, export) reads the same on both backends: `line` is the
 * event's number within its day, taken from a per-(agent, owner, day) counter in the same statement
 * as the insert, so numbers are dense from 1, unique, and never reused. An export writes each day's
 * rows in line order, and the refs stay true in the exported files.
 *
 * Appends never throw (failures go to `onError`); the counter row serializes appends of one day,
 * which is what the file's `O_APPEND` does too.
 */
import { type ActivityEvent, isActivityType } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Owner } from '../../core/owner.ts'
import type { ActivityLog, ActivityQuery, ActivityRecord, ParseProblem } from '../contracts.ts'
import { dayOf, instantOf, toLogRecord } from '../activity-records.ts'
import type { PostgresHandle } from './connection.ts'
import { ownerRows } from './owner-rows.ts'

export interface PostgresActivityLogOptions {
  agent: string
  /** Whose log (decision 0017); `agent` by default. */
  owner?: Owner
  clock: Clock
  /** Receives append failures (appends never throw into the caller). */
  onError?: (error: unknown) => void
}

interface EventRow {
  day: string
  line: number
  record: unknown
}

const STRING_FIELDS = ['content', 'summary', 'from', 'to', 'channel', 'tool', 'via', 'session'] as const

/** Why a stored record is not an event (a row edited by hand), or undefined when it is one. */
function recordProblem(record: unknown): string | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not a JSON object'
  const fields = record as Record<string, unknown>
  if (typeof fields.ts !== 'string' || Number.isNaN(instantOf(fields.ts))) return 'missing or invalid "ts"'
  if (!isActivityType(fields.type)) return `unknown event type ${JSON.stringify(fields.type)}`
  for (const field of STRING_FIELDS) {
    if (fields[field] !== undefined && typeof fields[field] !== 'string') return `"${field}" is not a string`
  }
  if (fields.meta !== undefined && (typeof fields.meta !== 'object' || fields.meta === null || Array.isArray(fields.meta))) return '"meta" is not an object'
  return undefined
}

function queryTime(query: ActivityQuery, name: 'since' | 'until'): string | null {
  const value = query[name]
  if (value === undefined) return null
  const ms = typeof value === 'string' ? instantOf(value) : Number.NaN
  if (Number.isNaN(ms)) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `Activity query "${name}" is not an ISO-8601 time: ${JSON.stringify(value)}.`,
      fix: 'Pass times like 2026-03-04T10:00:00Z.',
    })
  }
  return new Date(ms).toISOString()
}

/** The activity log of `options.owner` (the agent's by default) over `handle`. */
export function createPostgresActivityLog(handle: PostgresHandle, options: PostgresActivityLogOptions): ActivityLog {
  const { pool } = handle
  const { clock, onError } = options
  const { agent, owner } = ownerRows(options.agent, options.owner ?? 'agent')

  function report(error: unknown): void {
    try {
      onError?.(error)
    } catch {
      // The reporter failing must not turn a logging problem into a crash of the agent.
    }
  }

  const ref = (row: EventRow): string => `activity/${row.day}.jsonl#L${row.line}`

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
        const record = JSON.stringify(toLogRecord({ ...event, ts }))
        // One statement: the counter row's lock is held until the event row is in.
        await pool.query(
          `WITH numbered AS (
             INSERT INTO activity_days (agent, owner, day, lines) VALUES ($1, $2, $3, 1)
             ON CONFLICT (agent, owner, day) DO UPDATE SET lines = activity_days.lines + 1
             RETURNING lines
           )
           INSERT INTO activity_events (agent, owner, day, line, at, type, record)
           SELECT $1, $2, $3, lines, $4, $5, $6::json FROM numbered`,
          [agent, owner, dayOf(ts), new Date(instantOf(ts)).toISOString(), event.type, record],
        )
      } catch (error) {
        report(error)
      }
    },

    async read(query: ActivityQuery = {}) {
      const since = queryTime(query, 'since')
      const until = queryTime(query, 'until')
      const limit = query.limit === undefined ? null : Math.max(0, Math.floor(query.limit))
      if (limit === 0) return []
      const direction = limit === null ? 'ASC' : 'DESC'
      const { rows } = await pool.query<EventRow>(
        `SELECT day, line, record FROM activity_events
         WHERE agent = $1 AND owner = $2 AND ($3::timestamptz IS NULL OR at >= $3) AND ($4::timestamptz IS NULL OR at <= $4)
           AND ($5::text[] IS NULL OR type = ANY($5))
         ORDER BY at ${direction}, day ${direction}, line ${direction} LIMIT $6`,
        [agent, owner, since, until, query.types === undefined ? null : [...query.types], limit],
      )
      const records: ActivityRecord[] = []
      // A row edited into something that is not an event is skipped here and reported by problems().
      for (const row of rows) if (recordProblem(row.record) === undefined) records.push({ ...(row.record as ActivityEvent), ref: ref(row) })
      return records
    },

    async days() {
      const { rows } = await pool.query<{ day: string }>('SELECT DISTINCT day FROM activity_events WHERE agent = $1 AND owner = $2 ORDER BY day', [agent, owner])
      return rows.map((row) => row.day)
    },

    async problems() {
      const { rows } = await pool.query<EventRow>('SELECT day, line, record FROM activity_events WHERE agent = $1 AND owner = $2 ORDER BY day, line', [agent, owner])
      const problems: ParseProblem[] = []
      for (const row of rows) {
        const reason = recordProblem(row.record)
        if (reason === undefined) continue
        const text = JSON.stringify(row.record) ?? String(row.record)
        problems.push({ file: `activity/${row.day}.jsonl`, line: row.line, text: text.length > 300 ? `${text.slice(0, 300)}…` : text, reason })
      }
      return problems
    },
  }
}
