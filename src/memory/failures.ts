/**
 * Model failures, kept where every process can see them (decision 0021). Each failed LLM or
 * embedder call (described by `watchLlm` / `watchEmbedder`) becomes an `error` event in the
 * activity log — the seed's `ERR` — with the failure's kind, task and fix in its `meta`, and a
 * `warn` line on the log. Readers group them: six calls refused with one wrong key are one line,
 * "LLM authentication failed (HTTP 401) ×6 since …", with its fix.
 *
 * Three readers, three windows:
 * - the next turn (`session.begin`, then `TurnEnd`) gets what was recorded since a turn last
 *   reported — a cursor in the jobs table, so a host that runs each turn in a new process, or a
 *   cron job's `engram maintain`, continues where the previous one stopped;
 * - `maintain()` the same, with its own cursor;
 * - `engram doctor` everything of the last 24 hours.
 * Neither cursor reaches further back than FAILURE_LOOKBACK_MS.
 */
import { randomUUID } from 'node:crypto'
import type { ActivityEvent } from '../core/activity.ts'
import type { Clock } from '../core/clock.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { Logger } from '../core/logger.ts'
import type { ModelFailure, ModelFailureKind, ModelSource } from '../llm/model-failures.ts'
import type { ActivityLog, ActivityRecord, Jobs } from '../storage/contracts.ts'
import type { ActivityRecorder } from './episodes/recorder.ts'

/** `meta.origin` of the `error` events that record model failures. */
const FAILURE_ORIGIN = 'model_failure'
/** `meta.origin` of the `error` events that record work given up after the model failed on every attempt. */
const DROPPED_ORIGIN = 'dropped_work'
/** How far back a reader looks at most (and what `engram doctor` shows). */
export const FAILURE_LOOKBACK_MS = 24 * 60 * 60_000
/** One `warn` line per kind of failure per this long; the repeats in between are `debug` lines. */
export const FAILURE_WARN_INTERVAL_MS = 5 * 60_000
const CURSOR_JOB_PREFIX = 'failure-report:'

/**
 * Failures of one kind (same model, same kind, same HTTP status) in a window; or, with kind
 * `dropped`, the work of one task given up after the model failed on every attempt (the error
 * learner's lessons), which lost what it was to learn from.
 */
export interface FailureGroup {
  source: ModelSource
  kind: ModelFailureKind | 'dropped'
  status?: number
  title: string
  fix: string
  count: number
  firstAt: string
  lastAt: string
  /** What the failed calls were for (`episode`, `identity_facts`, `query embedding`), in order of first failure. */
  tasks: string[]
  /** What the provider said, from the newest call that reached it. */
  message: string
  /** Where the newest is recorded (`activity/<day>.jsonl#L<n>`). */
  ref: string
}

/** Whether an activity event records a model failure (or work dropped after one). */
export function isFailureRecord(event: ActivityEvent): boolean {
  return event.type === 'error' && (event.meta?.origin === FAILURE_ORIGIN || event.meta?.origin === DROPPED_ORIGIN)
}

/**
 * Work given up after the model failed on every attempt, described for people — and for every
 * session that reads the report, so without anything a user said: counts and tool names, not
 * the failed calls' text.
 */
export interface DroppedWork {
  /** One line, the same for every drop of its kind: `Lessons not learned from failed tool calls`. */
  title: string
  /** The model task it depended on (`lessons`). */
  task: string
  /** What was dropped and why: `3 failed calls of deploy; the model failed on all 3 attempts (llm_invalid_output)`. */
  message: string
  fix: string
}

/**
 * Model failures recorded in `logs` within `[since, until]`, chronological. Takes the logs to read
 * (the agent's, and later the owners' whose work it did) rather than opening any itself.
 */
export async function readFailures(logs: ActivityLog | readonly ActivityLog[], range: { since: string; until?: string }): Promise<ActivityRecord[]> {
  const all = Array.isArray(logs) ? (logs as readonly ActivityLog[]) : [logs as ActivityLog]
  const found: ActivityRecord[] = []
  for (const log of all) {
    const records = await log.read({ since: range.since, ...(range.until !== undefined ? { until: range.until } : {}), types: ['error'] })
    found.push(...records.filter(isFailureRecord))
  }
  return found.sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts))
}

/** Groups chronological failure records by model, kind and status; groups ordered by first failure. */
export function groupFailures(records: readonly ActivityRecord[]): FailureGroup[] {
  const groups = new Map<string, FailureGroup & { fromProvider: boolean }>()
  for (const record of records) {
    const meta = record.meta ?? {}
    const source: ModelSource = meta.source === 'embedder' ? 'embedder' : 'llm'
    const kind = meta.origin === DROPPED_ORIGIN ? 'dropped' : ((typeof meta.kind === 'string' ? meta.kind : 'other') as ModelFailureKind)
    const status = typeof meta.status === 'number' ? meta.status : undefined
    const key = kind === 'dropped' ? `dropped|${String(meta.task)}` : `${source}|${kind}|${status ?? ''}`
    // The message and the fix are fields of their own in meta (decision 0062). A record written
    // before that holds only the line a person reads ("message\nFix: fix"), whose first part is the message.
    const message = typeof meta.message === 'string' ? meta.message : ((record.content ?? '').split('\nFix: ')[0] ?? '')
    const fromProvider = meta.paused !== true
    const task = typeof meta.task === 'string' ? meta.task : undefined
    const group = groups.get(key)
    if (!group) {
      groups.set(key, {
        source,
        kind,
        ...(status !== undefined ? { status } : {}),
        title: typeof meta.title === 'string' ? meta.title : `${source} failure`,
        fix: typeof meta.fix === 'string' ? meta.fix : '',
        count: 1,
        firstAt: record.ts,
        lastAt: record.ts,
        tasks: task ? [task] : [],
        message,
        ref: record.ref,
        fromProvider,
      })
      continue
    }
    group.count++
    group.lastAt = record.ts
    group.ref = record.ref
    if (typeof meta.fix === 'string') group.fix = meta.fix
    if (task && !group.tasks.includes(task)) group.tasks.push(task)
    // A call skipped during an authentication pause says less than the refusal that caused it.
    if (fromProvider || !group.fromProvider) {
      group.message = message
      group.fromProvider = fromProvider
    }
  }
  return [...groups.values()].map(({ fromProvider: _, ...group }) => group)
}

/**
 * One line for people: `LLM authentication failed (HTTP 401) ×6 since 2026-03-02 09:02 UTC
 * (episode, identity_facts): … Fix: …` (`fix: false` leaves the fix out, for a caller that shows it apart).
 */
export function formatFailureGroup(group: FailureGroup, options: { fix?: boolean } = {}): string {
  const when = group.count === 1 ? `at ${minute(group.firstAt)}` : `×${group.count} since ${minute(group.firstAt)}`
  const tasks = group.tasks.length > 0 ? ` (${group.tasks.join(', ')})` : ''
  const fix = options.fix !== false && group.fix ? ` Fix: ${group.fix}` : ''
  return `${group.title} ${when}${tasks}: ${group.message}${fix}`
}

/** The groups as warning lines, fix included. */
export function failureWarnings(groups: readonly FailureGroup[]): string[] {
  return groups.map((group) => formatFailureGroup(group))
}

function minute(ts: string): string {
  const date = new Date(ts)
  return Number.isNaN(date.getTime()) ? ts : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

export interface FailureReportsDeps {
  /** Writes the `error` events (the agent's activity log). */
  recorder: ActivityRecorder
  /** The logs whose failures the reports read. */
  logs: readonly ActivityLog[]
  /** Where each reader's cursor is kept (one job run per report that found something). */
  jobs: Jobs
  agent: string
  clock: Clock
  logger: Logger
}

export interface FailureReports {
  /** Record a model failure: an `error` event any process can read, and a log line. Never throws. */
  record(failure: ModelFailure): Promise<void>
  /** Record work given up after the model failed on every attempt, reported like a failure. Never throws. */
  dropped(work: DroppedWork): Promise<void>
  /**
   * The failures recorded since `reader` last asked (at most FAILURE_LOOKBACK_MS back), grouped;
   * asking moves the reader's cursor past them, in whatever process asks next. Never throws.
   */
  unreported(reader: 'turn' | 'maintain'): Promise<FailureGroup[]>
}

interface Cursor {
  through: string
  /** Ids of the failures recorded at exactly `through` (a manual clock records many at one instant). */
  ids: string[]
}

export function createFailureReports(deps: FailureReportsDeps): FailureReports {
  const lastWarned = new Map<string, { at: number; repeats: number }>()
  const queues = new Map<string, Promise<unknown>>()

  function logLine(failure: ModelFailure): void {
    const key = `${failure.source}|${failure.kind}|${failure.status ?? ''}`
    const now = deps.clock.now().getTime()
    const last = lastWarned.get(key)
    const fields = { source: failure.source, kind: failure.kind, code: failure.code, ...(failure.status !== undefined ? { status: failure.status } : {}), ...(failure.task ? { task: failure.task } : {}) }
    const text = `${failure.title}${failure.task ? ` (${failure.task})` : ''}: ${failure.message} Fix: ${failure.fix}`
    if (last && now - last.at < FAILURE_WARN_INTERVAL_MS) {
      last.repeats++
      deps.logger.debug(fields, text)
      return
    }
    deps.logger.warn(last && last.repeats > 0 ? { ...fields, repeatsSinceLastWarning: last.repeats } : fields, text)
    lastWarned.set(key, { at: now, repeats: 0 })
  }

  async function readCursor(job: string): Promise<Cursor | undefined> {
    const run = await deps.jobs.lastRun(job, deps.agent)
    const details = run?.details as Partial<Cursor> | undefined
    if (!details || typeof details.through !== 'string') return undefined
    return { through: details.through, ids: Array.isArray(details.ids) ? details.ids.filter((id): id is string => typeof id === 'string') : [] }
  }

  async function unreported(reader: 'turn' | 'maintain'): Promise<FailureGroup[]> {
    const job = `${CURSOR_JOB_PREFIX}${reader}`
    const now = deps.clock.now()
    const cursor = await readCursor(job)
    const floor = now.getTime() - FAILURE_LOOKBACK_MS
    const since = new Date(Math.max(floor, cursor ? Date.parse(cursor.through) : floor)).toISOString()
    const records = (await readFailures(deps.logs, { since, until: now.toISOString() })).filter((record) => {
      if (!cursor) return true
      const at = Date.parse(record.ts)
      const through = Date.parse(cursor.through)
      return at > through || (at === through && !cursor.ids.includes(String(record.meta?.id)))
    })
    const newest = records.at(-1)
    if (!newest) return []
    const through = newest.ts
    const atThrough = records.filter((record) => record.ts === through).map((record) => String(record.meta?.id))
    const ids = cursor && Date.parse(cursor.through) === Date.parse(through) ? [...cursor.ids, ...atThrough] : atThrough
    await deps.jobs.record({ job, agent: deps.agent, startedAt: now.toISOString(), finishedAt: deps.clock.now().toISOString(), status: 'ok', details: { through, ids, failures: records.length } })
    return groupFailures(records)
  }

  return {
    async record(failure) {
      try {
        logLine(failure)
        const error = new EngramError({ code: failure.code, category: 'provider', message: failure.message, fix: failure.fix })
        await deps.recorder.error(error, {
          where: failure.task ?? failure.source,
          meta: {
            origin: FAILURE_ORIGIN,
            id: randomUUID(),
            source: failure.source,
            kind: failure.kind,
            ...(failure.status !== undefined ? { status: failure.status } : {}),
            ...(failure.task ? { task: failure.task } : {}),
            title: failure.title,
            message: failure.message,
            fix: failure.fix,
            ...(failure.paused ? { paused: true } : {}),
          },
        })
      } catch {
        // Neither the recorder nor the logger throws; should one start to, the caller still gets the model's own error.
      }
    },
    async dropped(work) {
      try {
        deps.logger.warn({ task: work.task, dropped: true }, `${work.title} (${work.task}): ${work.message} Fix: ${work.fix}`)
        const error = new EngramError({ code: ErrorCode.llmCallFailed, category: 'provider', message: work.message, fix: work.fix })
        await deps.recorder.error(error, { where: work.task, meta: { origin: DROPPED_ORIGIN, id: randomUUID(), source: 'llm', task: work.task, title: work.title, message: work.message, fix: work.fix } })
      } catch {
        // As record(): a report that cannot be written must not fail the work that reports it.
      }
    },
    unreported(reader) {
      // Reports of one reader run one after another in a process, so two turns beginning at once
      // do not both take the same failures.
      const previous = queues.get(reader) ?? Promise.resolve()
      const next = previous.then(() => unreported(reader)).catch((error: unknown) => {
        // A log that cannot be read must not fail the turn that asked (principle 10).
        deps.logger.warn({ reader }, `model failures could not be read: ${error instanceof Error ? error.message : String(error)}`)
        return []
      })
      queues.set(reader, next)
      return next
    },
  }
}
