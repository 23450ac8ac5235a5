/**
 * Runs the durable queue of the Lifecycle seam: claims a due job (atomically, with a lease), hands
 * it to the handler of its kind, and settles it. Whichever process claims a job runs it; a process
 * that dies holding one leaves it to the next claimer once the lease expires. A job is settled by
 * its claimer only, so each one counts as done once.
 *
 * The runner is also how a process works "eagerly in the background": `kick()` starts a drain off
 * the caller's path (when the runner is eager), `idle()` waits for it. A non-eager runner only
 * drains when asked (`maintain()`): the serverless model, where nothing may outlive a request.
 */
import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import type { Lifecycle, QueuedJob } from '../../storage/contracts.ts'

/** What a handler made of a job. */
export type JobHandlerResult =
  | { status: 'done'; result?: Record<string, unknown> }
  /** Nothing to do, or it cannot be done here (no LLM): recorded with the reason, never retried. */
  | { status: 'skipped'; reason: string; result?: Record<string, unknown> }
  /** A failure that may pass (a model that timed out): tried again later while attempts remain. */
  | { status: 'retry'; error: string }
  /** A failure that will not pass (an unreadable payload). */
  | { status: 'failed'; error: string }

export type JobHandler = (job: QueuedJob) => Promise<JobHandlerResult>

/** One job as a drain ran it. */
export interface JobOutcome {
  id: number
  kind: string
  /** `retrying`: it failed and is queued again; `lost`: another process took it over (our lease had expired). */
  status: 'done' | 'skipped' | 'failed' | 'retrying' | 'lost'
  /** The session the job is about, when it is about one. */
  session?: string
  reason?: string
  result?: Record<string, unknown>
}

export interface JobRunnerOptions {
  lifecycle: Lifecycle
  agent: string
  clock: Clock
  handlers: Readonly<Record<string, JobHandler>>
  /** Drain in the background after `kick()` (default true); false leaves the queue to explicit drains. */
  eager?: boolean
  /** How long a claim holds a job (default 15 minutes: far above one LLM call with its retries). */
  leaseMs?: number
  /** Identifies this process in leases (default host:pid:random). */
  owner?: string
  /** Called with every job this runner settled, foreground or background. */
  onSettled?: (outcome: JobOutcome) => void
  /** A background drain that failed as a whole (the store could not be read or written). */
  onError?: (error: unknown) => void
}

export interface JobRunner {
  readonly owner: string
  /** Claim and run due jobs until none is claimable; returns what it ran. */
  drain(): Promise<JobOutcome[]>
  /** Claim and run job `id` now, if it is claimable; undefined when it is not (done, or held elsewhere). */
  run(id: number): Promise<JobOutcome | undefined>
  /** Start a background drain (eager runners only); jobs queued during a drain are picked up by it. */
  kick(): void
  /** Resolves when no background drain is running. */
  idle(): Promise<void>
  /**
   * Hands the jobs this runner is running back to the queue, claimable at once (the process is
   * about to stop without waiting for them; otherwise they would wait out their lease). Each counts
   * as an attempt; one still running here settles as `lost`.
   */
  release(reason: string): Promise<number>
}

const DEFAULT_LEASE_MS = 15 * 60_000
/** Waits before the 2nd and 3rd attempts: a model that is down for a minute, then for longer. */
const RETRY_DELAYS_MS = [60_000, 10 * 60_000, 60 * 60_000]
/** A drain stops after this many jobs even if more are due (the next drain takes them). */
const MAX_JOBS_PER_DRAIN = 500

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { lifecycle, agent, clock } = options
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  const eager = options.eager ?? true

  /** The jobs this runner is running now (for `release`). */
  const executing = new Set<number>()

  async function execute(job: QueuedJob): Promise<JobOutcome> {
    const handler = options.handlers[job.kind]
    let result: JobHandlerResult
    if (!handler) {
      result = { status: 'failed', error: `no handler for jobs of kind "${job.kind}" (written by another engram version?)` }
    } else {
      executing.add(job.id)
      try {
        result = await handler(job)
      } catch (error) {
        result = { status: 'retry', error: describeError(error) }
      } finally {
        executing.delete(job.id)
      }
    }
    const at = clock.now().toISOString()
    const base = { id: job.id, kind: job.kind, ...(typeof job.payload.session === 'string' ? { session: job.payload.session } : {}) }
    let outcome: JobOutcome
    let settled: boolean
    if (result.status === 'done' || result.status === 'skipped') {
      const stored = result.status === 'skipped' ? { reason: result.reason, ...result.result } : (result.result ?? {})
      settled = await lifecycle.settle(job.id, owner, { status: result.status, at, result: stored })
      outcome = { ...base, status: result.status, ...(result.status === 'skipped' ? { reason: result.reason } : {}), ...(result.result ? { result: result.result } : {}) }
    } else {
      const delay = RETRY_DELAYS_MS[Math.min(job.attempts, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[0] ?? 60_000
      const retry = result.status === 'retry' && job.attempts < job.maxAttempts
      settled = await lifecycle.settle(job.id, owner, {
        status: 'failed',
        at,
        error: result.error,
        ...(retry ? { retryAt: new Date(clock.now().getTime() + delay).toISOString() } : {}),
      })
      outcome = { ...base, status: retry ? 'retrying' : 'failed', reason: result.error }
    }
    if (!settled) outcome = { ...base, status: 'lost', reason: 'the lease expired while it ran and another process took the job over' }
    try {
      options.onSettled?.(outcome)
    } catch {
      // A listener must not turn a settled job into a failed drain.
    }
    return outcome
  }

  async function claim(id?: number): Promise<QueuedJob | null> {
    return lifecycle.claim(agent, { owner, now: clock.now().toISOString(), leaseMs, ...(id !== undefined ? { id } : {}) })
  }

  async function drain(): Promise<JobOutcome[]> {
    const outcomes: JobOutcome[] = []
    while (outcomes.length < MAX_JOBS_PER_DRAIN) {
      const job = await claim()
      if (!job) break
      outcomes.push(await execute(job))
    }
    return outcomes
  }

  let running: Promise<void> | undefined
  let again = false

  return {
    owner,
    drain,
    async run(id) {
      const job = await claim(id)
      return job ? execute(job) : undefined
    },
    kick() {
      if (!eager) return
      again = true
      if (running) return
      running = (async () => {
        // A job queued while the last claim was coming back empty sets `again`: drain once more.
        while (again) {
          again = false
          try {
            await drain()
          } catch (error) {
            // The store itself failed (a locked or broken database): the jobs stay for the next drain.
            options.onError?.(error)
          }
        }
      })().finally(() => {
        running = undefined
      })
    },
    async idle() {
      while (running) await running
    },
    async release(reason) {
      let released = 0
      for (const id of [...executing]) {
        const at = clock.now().toISOString()
        if (await lifecycle.settle(id, owner, { status: 'failed', at, error: reason, retryAt: at })) released++
      }
      return released
    },
  }
}
