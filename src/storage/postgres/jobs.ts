/** Job runs on PostgreSQL (`jobs_runs`): what ran when, so scheduled jobs stay idempotent and catch up. */
import type { JobRun, Jobs, } from '../contracts.ts'
import { JOB_RUN_COLUMNS, JOB_RUN_STATUSES, type JobRunRow, toJobRun as toRun } from '../lifecycle-records.ts'
import type { PostgresHandle } from './connection.ts'
import { invalid } from '../input-checks.ts'
import { jsonObject } from './rows.ts'

const JOB_STATUSES = JOB_RUN_STATUSES
const COLUMNS = JOB_RUN_COLUMNS
const decode = jsonObject
const toJobRun = (row: JobRunRow): JobRun => toRun(row, decode)

/** Jobs over `handle`. "Last" and "newest" are by finishedAt, ties broken by insertion order. */
export function createPostgresJobs(handle: PostgresHandle): Jobs {
  const { pool } = handle
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
      const { rows } = await pool.query<JobRunRow>(
        `INSERT INTO jobs_runs (job, agent, started_at, finished_at, status, details) VALUES ($1, $2, $3, $4, $5, $6::json) RETURNING ${COLUMNS}`,
        [run.job, run.agent, new Date(run.startedAt).toISOString(), new Date(run.finishedAt).toISOString(), run.status, JSON.stringify(run.details ?? {})],
      )
      return toJobRun(rows[0] as JobRunRow)
    },

    async lastRun(job, agent, status) {
      const { rows } = await pool.query<JobRunRow>(
        `SELECT ${COLUMNS} FROM jobs_runs WHERE job = $1 AND agent = $2 AND ($3::text IS NULL OR status = $3)
         ORDER BY finished_at DESC, id DESC LIMIT 1`,
        [job, agent, status ?? null],
      )
      return rows[0] ? toJobRun(rows[0]) : null
    },

    async runs(options = {}) {
      const limit = options.limit ?? -1
      if (!Number.isInteger(limit) || limit < -1) throw invalid('limit must be a non-negative integer.', 'Pass a whole number.')
      const { rows } = await pool.query<JobRunRow>(
        `SELECT ${COLUMNS} FROM jobs_runs WHERE ($1::text IS NULL OR job = $1) AND ($2::text IS NULL OR agent = $2)
         ORDER BY finished_at DESC, id DESC LIMIT $3`,
        [options.job ?? null, options.agent ?? null, limit === -1 ? null : limit],
      )
      return rows.map(toJobRun)
    },

    async purgeRuns(jobs) {
      if (jobs.length === 0) return 0
      const result = await pool.query('DELETE FROM jobs_runs WHERE job = ANY($1::text[])', [jobs])
      return result.rowCount ?? 0
    },
  }
}
