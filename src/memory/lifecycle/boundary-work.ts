/**
 * The work a session boundary queues, as job handlers: immediate encoding (the episode, the state
 * update, resolution propagation — one idempotent pass of the encoder), sleep replay (the
 * session's steps rebuilt from its `tool_use` events, replayed to the fast model for rules and
 * lessons) and the automatic outcomes of the procedures shown in the session (offline). All read
 * everything from their payload and the stores, never from the process that saw the session.
 */
import type { Engram } from '../../core/engram.ts'
import type { Llm } from '../../llm/contracts.ts'
import { invalidEngramReason } from '../engrams/encode.ts'
import type { EncodeReport } from '../engrams/encoder.ts'
import type { QueuedJob } from '../../storage/contracts.ts'
import type { ViewerScope } from '../view.ts'
import type { BoundaryReason, ImmediateEncoder, ImmediateEncodingOutcome } from '../episodes/immediate-encoding.ts'
import { replayAndExtract, replayDecision, stepsFromActivity } from '../learning/sleep-replay.ts'
import { type OutcomeTrackingDeps, trackProcedureOutcomes } from '../procedures/outcome-tracking.ts'
import { creditFollowedProcedures, type UseCreditingDeps } from '../procedures/use-crediting.ts'
import type { JobHandler, JobHandlerResult } from './job-runner.ts'
import { type GatherThreadsDeps, gatherThreads } from '../threads/gather-threads.ts'

/** What a boundary did for a session: the encoder's outcome, or why it failed. */
export type BoundaryOutcome = ImmediateEncodingOutcome | { kind: 'failed'; session: string; reason: BoundaryReason; error: string }

/** How far back replay and outcome tracking look when a session's open period is unknown (a session ended before it had a record). */
const REPLAY_LOOKBACK_MS = 24 * 60 * 60_000

const BOUNDARY_REASONS: readonly BoundaryReason[] = ['idle', 'heartbeat', 'end']

function stringField(job: QueuedJob, name: string): string | undefined {
  const value = job.payload[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

function missing(job: QueuedJob, field: string): JobHandlerResult {
  return { status: 'failed', error: `job ${job.id} (${job.kind}) has no ${field} in its payload` }
}

/** Immediate encoding of the session in the payload. A busy encoder (another process holds the session) is retried. */
export function encodingHandler(encoder: ImmediateEncoder): JobHandler {
  return async (job) => {
    const session = stringField(job, 'session')
    if (!session) return missing(job, 'session')
    const reasonField = stringField(job, 'reason')
    const reason: BoundaryReason = BOUNDARY_REASONS.find((known) => known === reasonField) ?? 'end'
    const since = stringField(job, 'since')
    const outcome = await encoder.finalizeSession(session, { reason, ...(since ? { since } : {}) })
    if (outcome.kind === 'busy') return { status: 'retry', error: `session ${session} is being encoded by another process` }
    const result = outcome as unknown as Record<string, unknown>
    return outcome.kind === 'recorded' ? { status: 'done', result } : { status: 'skipped', reason: 'nothing new since the last boundary', result }
  }
}

export interface ReplayHandlerOptions {
  /** The session's user's scope: its activity is replayed, and what it teaches is theirs (decision 0017). */
  scope(user: string | undefined): ViewerScope
  llm: Llm
}

/**
 * Sleep replay of the session's open period in the payload (`from`–`until`). Skipped, with the
 * reason, when the session is not worth replaying or no model is configured; a failed model call
 * is retried.
 */
export function replayHandler(options: ReplayHandlerOptions): JobHandler {
  return async (job) => {
    const session = stringField(job, 'session')
    const until = stringField(job, 'until')
    if (!session) return missing(job, 'session')
    if (!until) return missing(job, 'until')
    const from = stringField(job, 'from') ?? new Date(Date.parse(until) - REPLAY_LOOKBACK_MS).toISOString()
    const scope = options.scope(stringField(job, 'user'))
    const records = await scope.view.own.activity.read({ since: from, until, types: ['tool_use'] })
    const steps = stepsFromActivity(records.filter((record) => record.session === session))
    const decision = replayDecision(steps)
    if (!decision.replay) return { status: 'skipped', reason: `not worth replaying: ${decision.reason} (${steps.length} steps)`, result: { steps: steps.length } }
    if (!options.llm.available) return { status: 'skipped', reason: 'no LLM configured', result: { steps: steps.length, decision: decision.reason } }
    const replayed = await replayAndExtract(steps, options.llm)
    if (replayed.kind === 'failed') return { status: 'retry', error: `sleep replay: ${replayed.reason}` }
    if (replayed.kind === 'skipped') return { status: 'skipped', reason: replayed.reason }
    const report = replayed.engrams.length > 0 ? await scope.encoder.encode(replayed.engrams) : undefined
    const stored = await storeWithoutProject(scope, report)
    const saved = (report?.saved.length ?? 0) + stored.saved
    const pending = (report?.pending.length ?? 0) + stored.pending
    return {
      status: 'done',
      result: {
        steps: steps.length,
        decision: decision.reason,
        extracted: replayed.engrams.map((engram) => `${engram.kind}: ${engram.text}`),
        saved,
        pending,
        ...(stored.rescoped.length > 0 ? { rescoped: stored.rescoped } : {}),
        ...(stored.rejected.length > 0 ? { rejected: stored.rejected } : {}),
        ...(stored.warnings.length > 0 ? { warnings: stored.warnings } : {}),
      },
    }
  }
}

/** What became of the engrams the encoder refused as they were. */
interface RefusedEngrams {
  saved: number
  pending: number
  /** Project-scoped engrams saved as global because no project was open. */
  rescoped: string[]
  /** Engrams not saved, with the reason. */
  rejected: Array<{ engram: string; reason: string }>
  warnings: string[]
}

/**
 * A rule or lesson the model scoped to the project, replayed with no project open, has no project
 * store to live in. It is kept, not dropped: saved as global at medium confidence (so copilot mode
 * asks the user first; decision 0049), and the job's result says so. Whatever the encoder still
 * refuses is listed with its reason and a warning: replay never reports `done` over lost lessons.
 */
async function storeWithoutProject(scope: ViewerScope, report: EncodeReport | undefined): Promise<RefusedEngrams> {
  const outcome: RefusedEngrams = { saved: 0, pending: 0, rescoped: [], rejected: [], warnings: [] }
  if (!report || report.rejected.length === 0) return outcome
  // Refused for its scope alone: the same engram scoped global is valid.
  const homeless = report.rejected.filter(({ engram }) => engram.scope === 'project' && invalidEngramReason({ ...engram, scope: 'global' }, false) === undefined)
  const rest = report.rejected.filter((item) => !homeless.includes(item))
  if (homeless.length > 0) {
    const global = homeless.map(({ engram }): Engram => ({ ...engram, scope: 'global', confidence: engram.confidence === 'high' ? 'medium' : engram.confidence }))
    const again = await scope.encoder.encode(global)
    outcome.saved += again.saved.length
    outcome.pending += again.pending.length
    outcome.rescoped.push(...homeless.map(({ engram }) => `${engram.kind}: ${engram.text}`))
    outcome.warnings.push(`${homeless.length} project-scoped ${homeless.length === 1 ? 'memory' : 'memories'} from sleep replay saved as global at medium confidence: no project was open (open one with --project or ENGRAM_PROJECT to keep project memories apart).`)
    rest.push(...again.rejected)
  }
  for (const { engram, reason } of rest) outcome.rejected.push({ engram: `${engram.kind}: ${engram.text}`, reason })
  if (rest.length > 0) outcome.warnings.push(`${rest.length} ${rest.length === 1 ? 'memory' : 'memories'} from sleep replay not saved: ${rest.map((item) => item.reason).join('; ')}.`)
  return outcome
}

/**
 * Success or failure of each procedure shown in the session's open period (`from`–`until`) and not
 * reported by the agent, judged offline from the log (procedures/outcome-tracking.ts). Done when
 * something was counted, skipped with the counts otherwise; a busy procedure is retried, and a
 * retry counts nothing twice. First, the uses of the period that the ends of its turns did not
 * credit (a turn never ended, a process died): procedures/use-crediting.ts, once per showing.
 */
export function procedureOutcomesHandler(deps: OutcomeTrackingDeps, crediting: UseCreditingDeps): JobHandler {
  return async (job) => {
    const session = stringField(job, 'session')
    const until = stringField(job, 'until')
    if (!session) return missing(job, 'session')
    if (!until) return missing(job, 'until')
    const from = stringField(job, 'from') ?? new Date(Date.parse(until) - REPLAY_LOOKBACK_MS).toISOString()
    const user = stringField(job, 'user')
    const uses = await creditFollowedProcedures(crediting, { session, user, log: deps.scope(user).view.own.activity, from: { since: from } })
    const run = await trackProcedureOutcomes(deps, { session, user, from, until })
    const result = { ...run, used: uses.credited.length }
    if (run.shown === 0) return { status: 'skipped', reason: 'no procedure was shown in the session', result }
    if (run.success + run.failure === 0) return { status: 'skipped', reason: 'no outcome to count: reported by the agent, undecided, or counted before', result }
    return { status: 'done', result }
  }
}

/**
 * The threads of the session in the payload, gathered into its owner's tree (decision 0080): done
 * when one was written (the mind then reindexes), skipped when the session added to none.
 */
export function threadsHandler(deps: Omit<GatherThreadsDeps, 'documents'> & { scope(user: string | undefined): ViewerScope }): JobHandler {
  return async (job) => {
    const session = stringField(job, 'session')
    if (!session) return missing(job, 'session')
    const { scope, ...gathering } = deps
    const report = await gatherThreads({ ...gathering, documents: scope(stringField(job, 'user')).view.own.documents }, session)
    const result = { written: report.written, started: report.started }
    return report.written.length > 0 ? { status: 'done', result } : { status: 'skipped', reason: 'the session added to no thread', result }
  }
}
