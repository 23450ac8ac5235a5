/**
 * The lifecycle of sessions, wired for one mind (DESIGN principle 9): turn numbers, boundaries,
 * heartbeats, the work after each turn and at each boundary, memory-file compaction and stored
 * turns — all kept in the Lifecycle seam, so a `Session` object holds nothing that matters beyond
 * one turn and any process's `maintain()` finishes what another one started.
 *
 * `createMind()` builds this once; sessions use its `SessionLifecycle` face, the mind the rest.
 */
import type { ActivityEvent } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import type { Owner } from '../../core/owner.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { ContextStore, JobInput, Lifecycle, Locks, SearchIndex, SessionRecord, TurnRecord } from '../../storage/contracts.ts'
import type { PatternMonitorMode } from '../learning/pattern-monitor.ts'
import { CALL_TURN_JOB, type CallTurnDeps, createCallTurns } from './call-turns.ts'
import type { ContextProvider } from '../context/provider.ts'
import type { DeclarativeMemory } from '../engrams/declarative-memory.ts'
import type { DroppedWork } from '../failures.ts'
import type { ViewerScope } from '../view.ts'
import type { BoundaryReason, ImmediateEncoder } from '../episodes/immediate-encoding.ts'
import type { ProcedureStore } from '../procedures/procedure-store.ts'
import { creditFollowedProcedures, creditShownInCallTurn, type UseCreditingDeps } from '../procedures/use-crediting.ts'
import { type BoundaryOutcome, encodingHandler, procedureOutcomesHandler, replayHandler, threadsHandler } from './boundary-work.ts'
import { createJobRunner, type JobHandler, type JobOutcome } from './job-runner.ts'
import { type CompactionSummary, MEMORY_COMPACTION_JOB, memoryCompactionDue, memoryCompactionHandler, memoryCompactionJob, settledCompactionStates } from './memory-compaction-work.ts'
import { type ClosedSession, createSessionBoundaries, ENCODING_JOB, PROCEDURE_OUTCOMES_JOB, REPLAY_JOB, THREADS_JOB } from './session-boundaries.ts'
import { IDENTITY_EVERY_TURNS } from '../engrams/identity.ts'
import type { ValueHistoryDeps } from '../extraction/value-history.ts'
import { IDENTITY_COUNTER, identityDue, type TurnWork, turnJobs, turnWorkHandlers } from './turn-work.ts'

export interface SessionLifecycleDeps {
  agent: string
  clock: Clock
  store: Lifecycle
  /**
   * What the sessions of a user read and write through (decision 0017): queued work runs as the
   * session it came from — its activity, its encoder (what it learns is the user's), its stores.
   */
  scope(user: string | undefined): ViewerScope
  /** Immediate encoding at boundaries (it takes its stores as parameters, so owners can route them). */
  encoder: ImmediateEncoder
  llm: Llm
  /**
   * The procedures of one owner's tree: the outcome of a procedure shown in a session is counted
   * in its own owner's store (procedures/outcome-tracking.ts).
   */
  procedures(owner: Owner): ProcedureStore
  /** Engram's own memory tools: calling them is no evidence that a procedure worked or failed. */
  memoryTools: readonly string[]
  /** The search index: a procedure the session followed is credited a use there (procedures/use-crediting.ts). */
  index: Pick<SearchIndex, 'hashes' | 'get' | 'recordAccess'>
  /** Cross-process locks (one session's procedure credits are counted by one process at a time). */
  locks?: Pick<Locks, 'withLock'>
  memory: DeclarativeMemory
  context: ContextProvider
  /** The stored conversations: a boundary gathers the session's threads from its owner's turns (decision 0080). */
  conversations: Pick<ContextStore, 'findConversation' | 'listConversations' | 'messages' | 'messagesById'>
  freshTail: number
  /** Stored messages by id (identity extraction reads the user's messages of their latest turns). */
  readMessages(ids: number[]): Promise<Array<{ role: string; content: string }>>
  /** Extract facts from each turn's user message at the end of the turn (`memory.extractFromTurns`, decision 0066). */
  extractFromTurns?: boolean
  /** Where an extracted fact that changes a value is recorded as superseding the earlier one (decision 0087). */
  values?: ValueHistoryDeps
  /** Run queued work at once in the background of this process (default true); false leaves it to `maintain()`. */
  eager?: boolean
  idleMs?: number
  onWarning(message: string): void
  patternMonitorMode: PatternMonitorMode
  /** Replays a turn's logged tool calls through a fresh error learner and pattern monitor (a turn whose process died). */
  replayCalls: CallTurnDeps['replay']
  /** Work given up after its last attempt, for the failure reports (failures.ts). */
  onDropped?(work: DroppedWork): Promise<void>
  /** Every job this process settled (the mind reindexes after work that wrote files). */
  onSettled?(outcome: JobOutcome): void
  /**
   * Work due on the calendar (monthly forgetting): at each `maintain()` its job for now is queued —
   * keyed by its period, so it runs once per period whichever process looks first.
   */
  scheduled?: ReadonlyArray<{ kind: string; job(now: Date): Omit<JobInput, 'agent'>; handler: JobHandler }>
}

/** What a `Session` needs from the lifecycle. */
export interface SessionLifecycle {
  /** Counts a turn in the store and returns its number; every begin gets the memory-file compaction check (in the background). */
  beginTurn(sessionId: string, user: string | undefined): Promise<{ number: number; opened: boolean }>
  /** Stores what the turn was given (its provenance). */
  saveTurn(record: Omit<TurnRecord, 'agent' | 'replyIds'>): Promise<void>
  /** A heartbeat message arrived: sessions quiet since the previous one reach their boundary (work in the background). */
  heartbeatArrived(): Promise<void>
  /** Links the replies to the turn and queues the turn's work; returns the kinds queued. */
  endTurn(work: TurnWork, replyIds: number[]): Promise<string[]>
  /** The explicit end of a session: the episode is written now, sleep replay and procedure outcomes are queued. */
  endSession(sessionId: string): Promise<BoundaryOutcome>
  /** Opens a turn without a message (an MCP client's calls): counted, and watched in case this process dies (call-turns.ts). */
  beginCalls(sessionId: string, user: string | undefined): Promise<number>
  /** Ends it: its failures and pattern events are queued as `endTurn` queues them (not counted for identity), and its end is marked. */
  endCalls(work: TurnWork): Promise<string[]>
}

/** What `maintain()` (or a heartbeat) did. */
export interface LifecycleReport {
  /** Sessions this call closed. */
  closed: ClosedSession[]
  /** Immediate encoding of each boundary this call ran. */
  boundaries: BoundaryOutcome[]
  /** Memory-file compaction, when it ran. */
  compaction: CompactionSummary[]
  /** Every job this call ran: boundaries, sleep replay, procedure outcomes, work left by turns, compaction. */
  jobs: JobOutcome[]
}

export interface HeartbeatReport extends LifecycleReport {
  at: string
  /** The previous heartbeat; sessions quiet since then were closed. */
  previous: string | undefined
}

export interface MindLifecycle extends SessionLifecycle {
  /** Notes activity (wired to the activity recorder of `user`'s tree, the agent's without one). */
  observe(event: ActivityEvent, user?: string): Promise<void>
  /** Closes idle sessions, queues memory-file compaction when due, and runs every due job. */
  maintain(options?: { forceCompaction?: boolean }): Promise<LifecycleReport>
  /** A heartbeat: closes the sessions quiet since the previous one, then runs every due job. */
  heartbeat(): Promise<HeartbeatReport>
  /** Resolves when this process's background work is done. */
  idle(): Promise<void>
  /** Hands the jobs this process is running back to the queue, claimable at once by any process (it is stopping). */
  release(reason: string): Promise<number>
  session(sessionId: string): Promise<SessionRecord | null>
  openSessions(): Promise<SessionRecord[]>
  lastFinalizedTurn(sessionId: string): Promise<number>
  turn(ref: { sessionId: string; turn: number } | { messageId: number }): Promise<TurnRecord | null>
}

/**
 * Finished jobs are kept this long (what ran, and its result, for inspection), then deleted: their
 * keys name occasions that do not come back (a session period, a turn, a day, a month), and a queue
 * that only grows slows every claim. Longer than the longest month, so that a monthly job's key
 * outlives its month and the job is not queued a second time in it. Failed jobs stay until someone looks.
 */
const FINISHED_JOBS_KEPT_MS = 40 * 24 * 60 * 60_000

function boundaryOf(outcome: JobOutcome, reasons: ReadonlyMap<string, BoundaryReason>): BoundaryOutcome | undefined {
  if (outcome.kind !== ENCODING_JOB || outcome.status === 'lost') return undefined
  if ((outcome.status === 'done' || outcome.status === 'skipped') && outcome.result && typeof outcome.result.kind === 'string') {
    return outcome.result as unknown as BoundaryOutcome
  }
  const session = outcome.session ?? '?'
  return { kind: 'failed', session, reason: reasons.get(session) ?? 'idle', error: outcome.reason ?? outcome.status }
}

function report(closed: ClosedSession[], jobs: JobOutcome[]): LifecycleReport {
  const reasons = new Map(closed.map((entry) => [entry.session, entry.reason]))
  const compaction = jobs.find((job) => job.kind === MEMORY_COMPACTION_JOB)?.result?.results
  return {
    closed,
    boundaries: jobs.map((job) => boundaryOf(job, reasons)).filter((outcome): outcome is BoundaryOutcome => outcome !== undefined),
    compaction: Array.isArray(compaction) ? (compaction as CompactionSummary[]) : [],
    jobs,
  }
}

export function createSessionLifecycle(deps: SessionLifecycleDeps): MindLifecycle {
  const { agent, clock, store, memory } = deps
  const crediting: UseCreditingDeps = { agent, lifecycle: store, index: deps.index, clock, ignoredTools: deps.memoryTools, ...(deps.locks ? { locks: deps.locks } : {}) }
  const callTurns = createCallTurns({ agent, clock, store, scope: deps.scope, patternMonitorMode: deps.patternMonitorMode, replay: deps.replayCalls })
  const boundaries = createSessionBoundaries({ agent, lifecycle: store, clock, ...(deps.idleMs !== undefined ? { idleMs: deps.idleMs } : {}) })
  const runner = createJobRunner({
    lifecycle: store,
    agent,
    clock,
    eager: deps.eager ?? true,
    handlers: {
      [ENCODING_JOB]: encodingHandler(deps.encoder),
      [REPLAY_JOB]: replayHandler({ scope: deps.scope, llm: deps.llm }),
      [PROCEDURE_OUTCOMES_JOB]: procedureOutcomesHandler({ agent, lifecycle: store, scope: deps.scope, procedures: deps.procedures, clock, ignoredTools: deps.memoryTools }, crediting),
      [THREADS_JOB]: threadsHandler({ context: deps.conversations, agent, clock, scope: deps.scope }),
      [MEMORY_COMPACTION_JOB]: memoryCompactionHandler(memory, store, agent),
      [CALL_TURN_JOB]: callTurns.handler,
      ...Object.fromEntries((deps.scheduled ?? []).map((work) => [work.kind, work.handler])),
      ...turnWorkHandlers({ agent, llm: deps.llm, memory, scope: deps.scope, context: deps.context, freshTail: deps.freshTail, ...(deps.onDropped ? { onDropped: deps.onDropped } : {}), ...(deps.values ? { values: deps.values } : {}) }),
    },
    onSettled(outcome) {
      if (outcome.status === 'failed' || outcome.status === 'retrying') {
        deps.onWarning(`${outcome.kind}${outcome.session ? ` (session ${outcome.session})` : ''} ${outcome.status === 'retrying' ? 'failed and will be tried again' : 'failed'}: ${outcome.reason}`)
      }
      deps.onSettled?.(outcome)
    },
    onError: (error) => deps.onWarning(`background work: ${describeError(error)}`),
  })

  // Offline the compaction is a skipped run: reported once a day, not once per change of a file.
  const compactionState = (state: string): string | undefined => (deps.llm.available ? state : undefined)

  // Checks that run off the turn's path (memory-file compaction at session start).
  let checks: Promise<unknown> = Promise.resolve()
  const check = (label: string, task: () => Promise<void>): void => {
    checks = checks.then(task).catch((error) => deps.onWarning(`${label}: ${describeError(error)}`))
  }

  async function idle(): Promise<void> {
    await checks
    await runner.idle()
  }

  async function queueTurnJobs(jobs: ReadonlyArray<Omit<JobInput, 'agent'>>): Promise<string[]> {
    for (const job of jobs) await store.enqueue({ agent, ...job })
    if (jobs.length > 0) runner.kick()
    return jobs.map((job) => job.kind)
  }

  const lifecycle: MindLifecycle = {
    observe: (event, user) => boundaries.observe(event, user),

    async beginTurn(sessionId, user) {
      const { session, opened } = await store.beginTurn(agent, sessionId, { at: clock.now().toISOString(), ...(user !== undefined ? { user } : {}) })
      // The seed compacts memory files at session start, in the background: the check reads the
      // files and the job rows, the compaction calls the planning model — neither may delay the
      // prompt. Checked at every begin, not only a session's first: a host that keeps one session
      // id open all day (or makes a Session per turn) still gets a file that crossed the threshold
      // compacted at its next begin; a file as its compaction left it queues nothing.
      check('memory-file compaction check', async () => {
        const state = await memoryCompactionDue(memory, () => settledCompactionStates(store, agent), user)
        if (state === undefined) return
        await store.enqueue({ agent, ...memoryCompactionJob('session-start', clock.now(), compactionState(state)) })
        runner.kick()
      })
      return { number: session.turns, opened }
    },

    async saveTurn(record) {
      await store.saveTurn({ agent, ...record })
    },

    async heartbeatArrived() {
      await boundaries.heartbeat()
      runner.kick()
    },

    async beginCalls(sessionId, user) {
      const { number } = await lifecycle.beginTurn(sessionId, user)
      await callTurns.opened(sessionId, user, number)
      return number
    },

    async endCalls(work) {
      // Not counted for identity extraction: a turn without a stored message says little about the user.
      const facts = deps.extractFromTurns && work.said !== undefined ? [work.said] : undefined
      const queued = await queueTurnJobs(turnJobs(work, undefined, clock.now().toISOString(), facts))
      await callTurns.ended(work.sessionId, work.user, work.turn)
      // What the client was shown for this turn and opened or bore out in it is credited a use, as a library turn's end does.
      if (work.shown !== undefined && work.shown.length > 0) {
        try {
          await creditShownInCallTurn(crediting, { session: work.sessionId, user: work.user, log: deps.scope(work.user).view.own.activity, turn: work.turn, shown: work.shown })
        } catch (error) {
          deps.onWarning(`procedure use: ${describeError(error)}`)
        }
      }
      return queued
    },

    async endTurn(work, replyIds) {
      const at = clock.now().toISOString()
      if (replyIds.length > 0) await store.addTurnReplies(agent, work.sessionId, work.turn, replyIds)
      const count = await store.increment(agent, work.user, IDENTITY_COUNTER, at)
      let identity: { count: number; messages: string[] } | undefined
      if (identityDue(count)) {
        // What the user said in their latest turns, over all their sessions: the count is theirs, not the session's.
        const turns = await store.recentTurns(agent, work.user, IDENTITY_EVERY_TURNS)
        const messages = await deps.readMessages(turns.map((turn) => turn.messageId).reverse())
        identity = { count, messages: messages.filter((message) => message.role === 'user').map((message) => message.content) }
      }
      // The turn's own user message, read back from the store (only what the user said is extracted).
      const facts =
        deps.extractFromTurns && work.messageId !== undefined
          ? (await deps.readMessages([work.messageId])).filter((message) => message.role === 'user').map((message) => message.content)
          : undefined
      const queued = await queueTurnJobs(turnJobs(work, identity, at, facts))
      // The procedures shown in this turn and the one before that the session followed are credited
      // a use now (a few reads, no model); what fails here is caught up at the session's boundary.
      try {
        await creditFollowedProcedures(crediting, { session: work.sessionId, user: work.user, log: deps.scope(work.user).view.own.activity, from: { turn: work.turn - 1 } })
      } catch (error) {
        deps.onWarning(`procedure use: ${describeError(error)}`)
      }
      return queued
    },

    async endSession(sessionId) {
      const { encodingJob } = await boundaries.end(sessionId)
      const ran = await runner.run(encodingJob.id)
      // Sleep replay (and anything else due) goes on in the background.
      runner.kick()
      const outcome = ran ? boundaryOf(ran, new Map([[sessionId, 'end']])) : undefined
      if (outcome) return outcome
      // A boundary before this one already encoded everything up to the session's last activity.
      if (encodingJob.status === 'done' || encodingJob.status === 'skipped') return { kind: 'nothing_new', session: sessionId, reason: 'end' }
      return { kind: 'busy', session: sessionId, reason: 'end' }
    },

    async maintain(options = {}) {
      await idle()
      await store.pruneJobs(agent, new Date(clock.now().getTime() - FINISHED_JOBS_KEPT_MS).toISOString())
      const closed = await boundaries.closeIdle()
      // Turns without a message whose process died: their watches run in this drain.
      await callTurns.orphans()
      if (options.forceCompaction) {
        await store.enqueue({ agent, ...memoryCompactionJob('forced', clock.now()) })
      } else {
        const state = await memoryCompactionDue(memory, () => settledCompactionStates(store, agent))
        if (state !== undefined) await store.enqueue({ agent, ...memoryCompactionJob('maintenance', clock.now(), compactionState(state)) })
      }
      for (const work of deps.scheduled ?? []) await store.enqueue({ agent, ...work.job(clock.now()) })
      return report(closed, await runner.drain())
    },

    async heartbeat() {
      await idle()
      const beat = await boundaries.heartbeat()
      return { at: beat.at, previous: beat.previous, ...report(beat.closed, await runner.drain()) }
    },

    idle,
    release: (reason) => runner.release(reason),
    session: (sessionId) => store.session(agent, sessionId),
    openSessions: () => store.openSessions(agent),
    async lastFinalizedTurn(sessionId) {
      return (await deps.encoder.cursor(sessionId))?.lastFinalizedTurn ?? 0
    },
    turn: (ref) => store.turn(agent, ref),
  }
  return lifecycle
}
