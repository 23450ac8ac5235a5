/** Job runs on SQLite (`jobs_runs`): what ran when, so scheduled jobs stay idempotent and catch up. */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { JobRun, Jobs, } from '../contracts.ts'
import { JOB_RUN_COLUMNS, JOB_RUN_STATUSES, type JobRunRow, toJobRun as toRun } from '../lifecycle-records.ts'
import type { SqliteHandle } from './database.ts'
import { changesOf, eraseInTransaction } from './erase.ts'
import { parseJsonObject } from './json.ts'

const JOB_STATUSES = JOB_RUN_STATUSES
const COLUMNS = JOB_RUN_COLUMNS
const decode = (value: unknown): Record<string, unknown> => parseJsonObject(value as string)
const toJobRun = (row: JobRunRow): JobRun => toRun(row, decode)

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/** Jobs over `handle`. "Last" and "newest" are by finishedAt, ties broken by insertion order. */
export function createSqliteJobs(handle: SqliteHandle): Jobs {
  const { db } = handle
  return {
    async record(run) {
      if (typeof run.job !== 'string' || run.job === '') throw invalid('run.job must be a non-empty string.', 'Pass the job name.')
      if (typeof run.agent !== 'string' || run.agent === '') throw invalid('run.agent must be a non-empty string.', 'Pass the agent id.')
      if (!JOB_STATUSES.includes(run.status)) {
        throw invalid(`run.status ${JSON.stringify(run.status)} is not a job status.`, `Use one of ${JOB_STATUSES.join(', ')}.`)
      }
      for (const key of ['startedAt', 'finishedAt'] as const) {
        if (typeof run[key] !== 'string' || Number.isNaN(Date.parse(run[key]))) {
          throw invalid(`run.${key} must be an ISO-8601 instant.`, `Pass run.${key} as new Date(...).toISOString().`)
        }
      }
      const row = handle.transaction(
        () =>
          db
            .prepare(
              `INSERT INTO jobs_runs (job, agent, started_at, finished_at, status, details) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
            )
            .get(run.job, run.agent, run.startedAt, run.finishedAt, run.status, JSON.stringify(run.details ?? {})) as unknown as JobRunRow,
      )
      return toJobRun(row)
    },

    async lastRun(job, agent, status) {
      const row = (
        status === undefined
          ? db
              .prepare(`SELECT ${COLUMNS} FROM jobs_runs WHERE job = ? AND agent = ? ORDER BY finished_at DESC, id DESC LIMIT 1`)
              .get(job, agent)
          : db
              .prepare(
                `SELECT ${COLUMNS} FROM jobs_runs WHERE job = ? AND agent = ? AND status = ? ORDER BY finished_at DESC, id DESC LIMIT 1`,
              )
              .get(job, agent, status)
      ) as JobRunRow | undefined
      return row ? toJobRun(row) : null
    },

    async runs(options = {}) {
      const where: string[] = []
      const params: Array<string | number> = []
      if (options.job !== undefined) {
        where.push('job = ?')
        params.push(options.job)
      }
      if (options.agent !== undefined) {
        where.push('agent = ?')
        params.push(options.agent)
      }
      const limit = options.limit ?? -1
      if (!Number.isInteger(limit) || limit < -1) throw invalid('limit must be a non-negative integer.', 'Pass a whole number.')
      const rows = db
        .prepare(
          `SELECT ${COLUMNS} FROM jobs_runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
           ORDER BY finished_at DESC, id DESC LIMIT ?`,
        )
        .all(...params, limit) as unknown as JobRunRow[]
      return rows.map(toJobRun)
    },

    async purgeRuns(jobs) {
      if (jobs.length === 0) return 0
      return eraseInTransaction(handle, () => changesOf(db.prepare('DELETE FROM jobs_runs WHERE job IN (SELECT value FROM json_each(?))').run(JSON.stringify(jobs))))
    },
  }
}
