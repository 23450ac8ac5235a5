/**
 * Rows of the job runs, sessions and queued jobs, read the same way by the SQLite and PostgreSQL
 * backends. A row's JSON columns arrive as text from SQLite and as values from PostgreSQL: each
 * backend passes the decoder for its own, the rest of the mapping is one.
 */
import type { JobRun, JobStatus, QueuedJob, QueuedJobStatus, SessionRecord } from './contracts.ts'

/** Reads a JSON object column as the backend returns it. */
export type JsonObjectDecoder = (value: unknown) => Record<string, unknown>

export interface JobRunRow {
  id: number
  job: string
  agent: string
  started_at: string
  finished_at: string
  status: string
  details: unknown
}

export const JOB_RUN_STATUSES: readonly JobStatus[] = ['ok', 'skipped', 'failed']
export const JOB_RUN_COLUMNS = 'id, job, agent, started_at, finished_at, status, details'

export function toJobRun(row: JobRunRow, decode: JsonObjectDecoder): JobRun {
  return {
    id: row.id,
    job: row.job,
    agent: row.agent,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    status: row.status as JobStatus,
    details: decode(row.details),
  }
}

export interface SessionRow {
  agent: string
  session_id: string
  user_id: string | null
  status: string
  opened_at: string
  last_activity_at: string
  turns: number
  closed_at: string | null
  close_reason: string | null
}

export function toSession(row: SessionRow): SessionRecord {
  return {
    agent: row.agent,
    sessionId: row.session_id,
    user: row.user_id ?? undefined,
    status: row.status === 'closed' ? 'closed' : 'open',
    openedAt: row.opened_at,
    lastActivityAt: row.last_activity_at,
    turns: row.turns,
    closedAt: row.closed_at ?? undefined,
    closeReason: row.close_reason ?? undefined,
  }
}

export interface QueuedJobRow {
  id: number
  agent: string
  kind: string
  dedupe_key: string | null
  payload: unknown
  status: string
  run_after: string
  attempts: number
  max_attempts: number
  lease_owner: string | null
  lease_until: string | null
  created_at: string
  updated_at: string
  finished_at: string | null
  result: unknown
  error: string | null
}

export const QUEUED_JOB_STATUSES: readonly QueuedJobStatus[] = ['queued', 'running', 'done', 'skipped', 'failed']

export function toQueuedJob(row: QueuedJobRow, decode: JsonObjectDecoder): QueuedJob {
  return {
    id: row.id,
    agent: row.agent,
    kind: row.kind,
    key: row.dedupe_key ?? undefined,
    payload: decode(row.payload),
    status: row.status as QueuedJobStatus,
    runAfter: row.run_after,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    leaseOwner: row.lease_owner ?? undefined,
    leaseUntil: row.lease_until ?? undefined,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at ?? undefined,
    result: row.result === null ? undefined : decode(row.result),
    error: row.error ?? undefined,
  }
}
