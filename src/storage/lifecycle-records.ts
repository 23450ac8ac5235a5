/**
 * Rows of the job runs, sessions and queued jobs, read the same way by the SQLite and PostgreSQL
 * backends. A row's JSON columns arrive as text from SQLite and as values from PostgreSQL: each
 * backend passes the decoder for its own, the rest of the mapping is one.
 */
import type { JobInput, JobRun, JobStatus, Lifecycle, QueuedJob, QueuedJobStatus, SessionRecord, TurnRecord } from './contracts.ts'
import { instant, invalid, requireText } from './input-checks.ts'

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

/** A stored turn's row; the provenance column as the backend returns it. */
export interface TurnRow<Json> {
  agent: string
  session_id: string
  turn: number
  user_id: string | null
  message_id: number
  started_at: string
  type: string
  provenance: Json
}

/** A turn as the lifecycle gives it, with the ids of its replies (every message of the turn but the user's). */
export function toTurnRecord<Json>(row: TurnRow<Json>, replyIds: number[], decode: JsonObjectDecoder): TurnRecord {
  return {
    agent: row.agent,
    sessionId: row.session_id,
    turn: row.turn,
    user: row.user_id ?? undefined,
    messageId: row.message_id,
    replyIds,
    startedAt: row.started_at,
    type: row.type,
    provenance: decode(row.provenance),
  }
}

const DEFAULT_MAX_ATTEMPTS = 3

/** A job to queue, checked: when it may run (normalised) and how many attempts it has. */
export function checkedJobInput(job: JobInput): { runAfter: string; maxAttempts: number } {
  requireText(job.agent, 'job agent')
  requireText(job.kind, 'job kind')
  if (job.key !== undefined) requireText(job.key, 'job key')
  if (typeof job.payload !== 'object' || job.payload === null || Array.isArray(job.payload)) throw invalid('job.payload must be a JSON object.', 'Pass the payload as a plain object.')
  const maxAttempts = job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw invalid('job.maxAttempts must be a whole number ≥ 1.', 'Pass 1 or more, or leave it out (3).')
  return { runAfter: instant(job.runAfter, 'job.runAfter'), maxAttempts }
}

/** `Lifecycle.closeSession`'s arguments, checked: the instants normalised. */
export function checkedClose(agent: string, sessionId: string, close: Parameters<Lifecycle['closeSession']>[2]): { at: string; expected: string | undefined } {
  requireText(agent, 'agent')
  requireText(sessionId, 'session id')
  return { at: instant(close.at, 'at'), expected: close.ifLastActivityAt === undefined ? undefined : instant(close.ifLastActivityAt, 'ifLastActivityAt') }
}

/** `Lifecycle.claim`'s arguments, checked: its instant normalised and when its lease ends. */
export function checkedClaim(agent: string, claim: Parameters<Lifecycle['claim']>[1]): { now: string; leaseUntil: string } {
  requireText(agent, 'agent')
  requireText(claim.owner, 'owner')
  const now = instant(claim.now, 'now')
  if (!Number.isFinite(claim.leaseMs) || claim.leaseMs <= 0) throw invalid('leaseMs must be a positive number of milliseconds.', 'Pass how long the claim may run.')
  return { now, leaseUntil: new Date(Date.parse(now) + claim.leaseMs).toISOString() }
}
