/**
 * `createMind()`: opens a home, resolves configuration once, wires a backend, the model
 * providers and the memory systems, and returns the API agents and interfaces use.
 */
// The consolidations, the user's erasure and export load when they run, not when a mind opens: a
// first answer never needs them (decision 0082). Their types are erased.
import type { DailyConsolidationDeps, DailyConsolidationRun } from './memory/consolidation/daily-consolidation.ts'
import type { WeeklyIntegrationRun } from './memory/consolidation/weekly-integration.ts'
import type { ForgettingDeps, ForgettingRun } from './memory/consolidation/monthly-forgetting.ts'
import { DAILY_CONSOLIDATION_JOB, dailyConsolidationJob, MONTHLY_FORGETTING_JOB, monthlyForgettingJob, WEEKLY_INTEGRATION_JOB, weeklyIntegrationJob } from './memory/consolidation/schedule.ts'
import { readdirSync } from 'node:fs'
import { type FailureGroup, failureWarnings } from './memory/failures.ts'
import type { MindStatus } from './memory/status.ts'
import { type CreateMindOptions, openMindCore } from './mind-core.ts'
import { createSkippedFileReports } from './memory/skipped-files.ts'
import { createDeclarativeMemory } from './memory/engrams/declarative-memory.ts'
import type { ConfirmationSelection, PendingConfirmation } from './storage/contracts.ts'
import { createActivityRecorder } from './memory/episodes/recorder.ts'
import { createImmediateEncoder } from './memory/episodes/immediate-encoding.ts'
import { migrateLegacyOnOpen } from './memory/engrams/import/legacy-migration.ts'
import { createResolutionReader } from './memory/episodes/resolutions.ts'
import type { BoundaryOutcome } from './memory/lifecycle/boundary-work.ts'
import { createSessionLifecycle, type HeartbeatReport, type LifecycleReport } from './memory/lifecycle/session-lifecycle.ts'
import { recordHeartbeat } from './memory/lifecycle/heartbeat-log.ts'
import type { SessionRecord } from './storage/contracts.ts'
import { createEpisodicRecall } from './memory/episodes/recall.ts'
import { createJournals } from './memory/journal/journal-folder.ts'
import { recoverOrphanedJournals } from './memory/journal/recover-orphans.ts'
import { createProcedureStore, type ProcedureStore } from './memory/procedures/procedure-store.ts'
import { describeError, EngramError, ErrorCode } from './core/errors.ts'
import { createContextProvider, type ContextProviderKind } from './memory/context/create-provider.ts'
import { createRetriever, type Retriever } from './memory/retrieval/search.ts'
import { retrievalSettingsFromConfig } from './memory/retrieval/settings.ts'
import { createPrimer } from './memory/priming/prime.ts'
import { forgottenEntryTexts } from './memory/forgetting/forgotten-texts.ts'
import { primingSettingsFromConfig } from './memory/priming/settings.ts'
import { replayLoggedCalls } from './session/replay-calls.ts'
import { createSession, type Session, type SessionOptions } from './session/session.ts'
import { type Owner, validateUserId, type Viewer, visibleOwners } from './core/owner.ts'
import type { ProgressOptions } from './core/progress.ts'
import { encoderFor } from './memory/engrams/encode.ts'
import { createProcedureView } from './memory/procedures/procedure-store.ts'
import { createMemoryView, type ViewerScope } from './memory/view.ts'
import type { StoredTurn } from './session/turn.ts'
import { AGENT_TOOL_NAMES, buildAgentTools, memoryFileDeps } from './tools/agent-tools.ts'
import { applyMemoryFileWrite } from './tools/memory-files.ts'
import { locateMemoryPath } from './memory/tree/memory-paths.ts'
import type { ForgetOutcome } from './memory/forgetting/forget-memory.ts'
import type { UserErasureReport } from './memory/forgetting/forget-user.ts'
import type { UserExportReport } from './memory/forgetting/export-user.ts'
import { forgetTarget, forgettingContextOf, historyOfTarget, purgeTarget, restoreTarget } from './tools/forgetting.ts'
import type { DocumentHistory } from './memory/consolidation/history.ts'
import type { EngramTool } from './tools/tool.ts'
import { type MindInternals, withInternals } from './mind-internals.ts'
import { readThreads } from './memory/threads/gathering-question.ts'
import { createMemories, isMemoryId, type Memories, pathOfMemoryId } from './tools/memories.ts'

export type { CreateMindOptions } from './mind-core.ts'

/** What each consolidation returns (`mind.consolidate`). */
export interface ConsolidationRuns {
  daily: DailyConsolidationRun
  weekly: WeeklyIntegrationRun
  monthly: ForgettingRun
}

/**
 * What a host holds (decision 0062): conversations, the work that is due, forgetting and a user's
 * data, status and shutdown. The subsystems behind it (storage, layout, retriever, primer, …) are
 * internal: the CLI, the MCP and HTTP servers and the tests reach them through
 * `mind-internals.ts`. The plain memory API by id is `memories` (decision 0065).
 */
export interface Mind {
  readonly home: string
  readonly agent: string
  /**
   * The plain memory API (decision 0065): add, search, get, getAll, update, delete and history of
   * single memories by stable id, each call for a user (`{ user }`) or the agent's own view.
   */
  readonly memories: Memories
  /** Open a conversation: `begin` before the model call, `end` after it. */
  session(sessionId: string, options?: SessionOptions): Session
  /** Sessions as the store keeps them (activity, turns, open or closed), and their explicit end. */
  readonly sessions: MindSessions
  /** What a past turn was given (its provenance), by session and turn number or by the id of one of its messages. */
  turnProvenance(ref: { sessionId: string; turn: number } | { messageId: number }): Promise<StoredTurn | null>
  /** The agent tools (memorize, recall, search_memory, read/write_memory_file, forget_memory, recall_skill, report_procedure_outcome, memory). */
  agentTools(session?: { sessionId: string; user?: string }): EngramTool[]
  /** The agent tools as Vercel AI SDK tools (loads the AI SDK on first use). */
  tools(session?: { sessionId: string; user?: string }): Promise<import('ai').ToolSet>
  /** Resolves when the background work this process started (compaction, learning, identity, replay) is done. */
  idle(): Promise<void>
  /** Memories the gate holds for `user`'s yes/no (the agent's own queue without one); show them after an answer, before the next prompt. */
  pendingConfirmations(options?: { user?: string }): Promise<PendingConfirmation[]>
  /**
   * Accept (save) or reject pending confirmations of `user` (the agent's own without one): some
   * ids, or `'all'`. Memories are encoded; promoted memory files are written.
   */
  confirm(decision: { accept?: ConfirmationSelection; reject?: ConfirmationSelection; user?: string }): Promise<ConfirmOutcome>
  /** Resolves when every write made so far is in the search index. */
  indexed(): Promise<void>
  /**
   * Run whatever work is due, whichever process queued it: idle session boundaries (episode, state
   * update, resolutions, sleep replay), the work of turns whose process stopped, memory-file
   * compaction (when a file is over its threshold and changed since it was last compacted). Each
   * piece runs exactly once.
   */
  maintain(options?: { forceCompaction?: boolean }): Promise<MaintenanceReport>
  /**
   * Consolidation now rather than when due. `daily`: legacy migration of frontmatter and today's
   * low-activity marks (offline). `monthly`: active forgetting (knowledge and procedures
   * that stayed low-activity through the grace period move to `archive/forgotten/`, restorable
   * with `restore`); `dryRun` only says what it would do. Runs as the scheduled job does.
   */
  consolidate<P extends keyof ConsolidationRuns>(period: P, options?: { dryRun?: boolean } & ProgressOptions): Promise<ConsolidationRuns[P]>
  /**
   * A heartbeat (the agent's periodic patrol): the sessions quiet since the previous heartbeat, and
   * the idle ones, reach their boundary, and every due job runs. A live conversation is never cut.
   * A session message like `[heartbeat] …` does the same in the background.
   */
  heartbeat(): Promise<HeartbeatReport>
  /**
   * Forget one memory (decision 0023): a rule, lesson or profile fact (by text or id) or a
   * knowledge, procedure or topic file moves to its tree's `archive/forgotten/` and out of the
   * index; `purge: true` deletes it for real, archived copies included. As `user` (their own
   * memories only), or the agent's own view (agent and shared memory).
   */
  forget(target: string, options?: { user?: string; reason?: string; purge?: boolean }): Promise<ForgetOutcome>
  /** Bring a forgotten memory back from `archive/forgotten/` (as `user`, or the agent's own view). */
  restore(target: string, options?: { user?: string }): Promise<ForgetOutcome>
  /** How a knowledge or procedure document changed and why: its state, lineage and earlier versions with their reasons. `target` is a path, or an id of `mind.memories`. */
  history(target: string, options?: { user?: string }): Promise<DocumentHistory>
  /** Erase everything `user` owns in the home, of every agent (decision 0023). There is no archive: anything but `{ purge: true }` is refused. */
  forgetUser(user: string, options: { purge: boolean } & ProgressOptions): Promise<UserErasureReport>
  /** Write everything `user` owns into `dir` as files a person can read (refuses a non-empty folder unless `force`). */
  exportUser(user: string, dir: string, options?: { force?: boolean }): Promise<UserExportReport>
  /** Counts of every kind of memory, the capabilities, and any unreadable lines. */
  status(): Promise<MindStatus>
  /**
   * Waits for this process's background work, then closes. With `graceMs`, waits at most that long,
   * and with `signal`, until it aborts (a process asked to stop): work still running then is handed
   * back to the queue, claimable at once by the next `maintain()` in any process, instead of
   * waiting out its lease.
   */
  close(options?: { graceMs?: number; signal?: AbortSignal }): Promise<void>
}

export interface MaintenanceReport extends LifecycleReport {
  /** Everything that degraded, model failures included (one line per kind, with its fix). */
  warnings: string[]
  /** LLM and embedder failures recorded since the previous `maintain()` (of any process), grouped. */
  failures: FailureGroup[]
}

/** What `mind.confirm` did. */
export interface ConfirmOutcome {
  /** Memories and files written (memories already known count as accepted, not saved). */
  saved: number
  rejected: number
  accepted: PendingConfirmation[]
  /** What could not be saved; it stays pending. */
  problems: Array<{ id: string; reason: string }>
}

export interface MindSessions {
  /** A session's record: user, first and last activity of its open period, turns, open or closed. */
  get(sessionId: string): Promise<SessionRecord | null>
  /** Sessions not yet past a boundary, least recently active first. */
  open(): Promise<SessionRecord[]>
  /** Ends a session now (one never seen too): its episode is written and returned; sleep replay is queued. */
  end(sessionId: string): Promise<BoundaryOutcome>
  /** The last turn already encoded into an episode (0 when none). */
  lastFinalizedTurn(sessionId: string): Promise<number>
}

/** Open a mind: one agent's memory in one home. */
export async function createMind(options: CreateMindOptions = {}): Promise<Mind> {
  // The open every mind shares with `engram status` (mind-core.ts); the memory systems are built on it.
  const core = await openMindCore(options)
  const { config, clock, logger, llm, embedder, layout, backend, failureReports, skills, reindex } = core
  const values = config.values
  // What the reindex skipped reaches the next turn of each viewer once (decision 0025).
  const skippedFiles = createSkippedFileReports()

  const warnings: string[] = []
  const warn = (message: string): void => {
    logger.warn({}, message)
    warnings.push(message)
    if (warnings.length > 100) warnings.shift()
  }
  // Saved memories reach the index at once, so the next recall can find them. Writes that arrive
  // while a reindex is still waiting to start share it (ten memorized entries: one reindex).
  let indexing: Promise<unknown> = Promise.resolve()
  let reindexWaiting = false
  const reindexSoon = (): void => {
    if (reindexWaiting) return
    reindexWaiting = true
    indexing = indexing
      .then(() => {
        reindexWaiting = false
        return reindex()
      })
      .catch((error) => warn(`reindex after a write failed: ${describeError(error)}`))
  }
  const memory = createDeclarativeMemory({
    backend,
    mode: values.memory.mode,
    confirmations: backend.confirmations,
    clock,
    llm,
    ...(values.project ? { projectDir: values.project } : {}),
    home: values.home,
    onSaved: reindexSoon,
    onError: (error) => warn(`memory: ${describeError(error)}`),
  })

  // The seed's reconsolidation: a home in the old layout (context/, learnings/) is migrated as it opens.
  await migrateLegacyOnOpen({ layout, locks: backend.locks, clock, encoder: memory.encoder, activity: backend.activity }, logger, warn)

  const resolutions = createResolutionReader(layout.resolutionsFile, 'shared/resolutions.jsonl')
  const immediate = createImmediateEncoder({
    agent: values.agent,
    activity: backend.activity,
    documents: backend.documents,
    // A session's events and episode live in its owner's tree: its user's, or the agent's (decision 0017).
    async storesOf(session) {
      // A session without stored messages (an MCP client's tool calls) names its user in its record.
      const user = (await backend.context.findConversation(session, values.agent))?.user ?? (await backend.lifecycle.session(values.agent, session))?.user
      const owner: Owner = user === undefined ? 'agent' : `user:${user}`
      const owned = backend.owned(owner)
      return { owner, activity: owned.activity, documents: owned.documents }
    },
    jobs: backend.jobs,
    locks: backend.locks,
    llm,
    clock,
    resolutionsFile: layout.resolutionsFile,
    onWarning: warn,
  })
  const journals = createJournals({ dir: layout.journalDir, clock, onError: (error) => warn(`journal: ${describeError(error)}`) })
  const recoveredJournals = await recoverOrphanedJournals({ journals, context: backend.context, locks: backend.locks, agent: values.agent, clock, warn })

  const procedures = createProcedureStore({ documents: backend.documents, locks: backend.locks, clock })

  const context = createContextProvider(values.context.provider as ContextProviderKind, {
    store: backend.context,
    locks: backend.locks,
    clock,
    llm,
    index: backend.index,
    documents: backend.documents,
    settings: { freshTail: values.context.freshTail, threshold: values.context.threshold, leafChunk: values.context.leafChunk, maxMessageChars: values.limits.messageChars },
  })
  // What the daily and monthly consolidations work with (consolidation/).
  let lastForgetting: ForgettingRun | undefined
  /** Whether this mind has finished what a killed consolidation left planned (its first `maintain()` does). */
  let unitsChecked = false
  const consolidationDeps: ForgettingDeps & DailyConsolidationDeps = {
    backend,
    layout,
    clock,
    indexed: () => indexing.then(() => undefined),
    reindex: () => reindex(),
    agent: values.agent,
    llm,
    settings: { calls: values.consolidation.llmCalls, tokens: values.consolidation.llmTokens, backlogDays: values.consolidation.backlogDays },
  }
  const lifecycle = createSessionLifecycle({
    agent: values.agent,
    clock,
    store: backend.lifecycle,
    // Late-bound: the scopes' recorders report to the lifecycle.
    scope: (user) => scopeOf(user),
    encoder: immediate,
    llm,
    // The outcome of a procedure shown in a session is counted in its owner's store (late-bound, as scope is).
    procedures: (owner) => proceduresOf(owner),
    memoryTools: AGENT_TOOL_NAMES,
    index: backend.index,
    locks: backend.locks,
    memory,
    context,
    conversations: backend.context,
    freshTail: values.context.freshTail,
    patternMonitorMode: values.learning.patternMonitorMode,
    // Only the learner's buffer is read: its encoder and model are never called here.
    replayCalls: (calls, mode) => replayLoggedCalls(calls, { mode, encoder: memory.encoder, llm }),
    readMessages: async (ids) => {
      const byId = new Map((await backend.context.messagesById(ids)).map((message) => [message.id, message]))
      return ids.flatMap((id) => {
        const message = byId.get(id)
        return message ? [{ role: message.role, content: message.content }] : []
      })
    },
    eager: values.jobs.eager,
    extractFromTurns: values.memory.extractFromTurns,
    // A fact a turn gives that changes a value is recorded as superseding the earlier one (decision 0087).
    values: { backend, agent: values.agent, clock },
    onWarning: warn,
    onDropped: (work) => failureReports.dropped(work),
    scheduled: [
      {
        kind: DAILY_CONSOLIDATION_JOB,
        job: (now) => dailyConsolidationJob(now),
        handler: async (job) => (await import('./memory/consolidation/daily-consolidation.ts')).dailyConsolidationHandler(consolidationDeps)(job),
      },
      {
        kind: WEEKLY_INTEGRATION_JOB,
        job: (now) => weeklyIntegrationJob(now),
        handler: async (job) => (await import('./memory/consolidation/weekly-integration.ts')).weeklyIntegrationHandler(consolidationDeps)(job),
      },
      {
        kind: MONTHLY_FORGETTING_JOB,
        job: (now) => monthlyForgettingJob(now),
        handler: async (job) => (await import('./memory/consolidation/monthly-forgetting.ts')).monthlyForgettingHandler(consolidationDeps, (run) => (lastForgetting = run))(job),
      },
    ],
    // Work that wrote files (episodes, memories) reaches the index.
    onSettled: (outcome) => {
      if (outcome.status === 'done') reindexSoon()
    },
  })
  const activity = createActivityRecorder({
    log: backend.activity,
    clock,
    episodic: values.memory.episodic,
    onError: (error) => warn(`activity log: ${describeError(error)}`),
    onRecorded: (event) => lifecycle.observe(event),
  })
  const searchAllOwners = createRetriever({ index: backend.index, embedder, clock, settings: retrievalSettingsFromConfig(values.retrieval) })
  // Nothing global by default (issue 29): a search without a viewer reads the agent's own view
  // (the agent's and shared memory), every user's only when the caller says `allOwners`.
  const retriever: Retriever = {
    settings: searchAllOwners.settings,
    search: (query, options = {}) => searchAllOwners.search(query, options.viewer !== undefined || options.allOwners === true ? options : { ...options, viewer: { agent: values.agent } }),
  }
  // Threads are not shared: a viewer's are its user's and the agent's (decision 0080).
  const threads = (viewer?: Viewer) => readThreads(visibleOwners(viewer ?? { agent: values.agent }).flatMap((owner) => (owner === 'shared' ? [] : [backend.owned(owner).documents])))
  const primer = createPrimer({
    documents: backend.documents,
    activity: backend.activity,
    index: backend.index,
    retriever,
    clock,
    agent: values.agent,
    procedures,
    skills,
    // What a viewer's owners forgot stays out of the recent activity primed for them.
    forgotten: (viewer) => forgottenEntryTexts(visibleOwners(viewer ?? { agent: values.agent }).flatMap((owner) => memory.storesOf(owner).global.archive ?? [])),
    threads,
    settings: { ...primingSettingsFromConfig(values.priming), queryChars: values.limits.queryChars },
  })

  // One scope per viewer (decision 0017), kept for the most recent users of a long-lived process.
  const procedureStores = new Map<Owner, ProcedureStore>()
  const proceduresOf = (owner: Owner): ProcedureStore => {
    if (owner === 'agent') return procedures
    let store = procedureStores.get(owner)
    if (!store) {
      store = createProcedureStore({ documents: backend.owned(owner).documents, locks: backend.locks, clock })
      if (procedureStores.size >= 1000) procedureStores.clear()
      procedureStores.set(owner, store)
    }
    return store
  }
  const scopes = new Map<string, ViewerScope>()
  const scopeOf = (user?: string): ViewerScope => {
    const key = user === undefined ? '' : `user:${validateUserId(user)}`
    const known = scopes.get(key)
    if (known) return known
    const viewer: Viewer = user === undefined ? { agent: values.agent } : { agent: values.agent, user }
    const view = createMemoryView(backend, viewer)
    const scope: ViewerScope = {
      viewer,
      view,
      memory: memory.forViewer(viewer),
      activity:
        user === undefined
          ? activity
          : createActivityRecorder({
              log: view.own.activity,
              clock,
              episodic: values.memory.episodic,
              onError: (error) => warn(`activity log: ${describeError(error)}`),
              // The session record carries the user whose tree holds its events (replay and the episode read it there).
              onRecorded: (event) => lifecycle.observe(event, user),
            }),
      procedures: createProcedureView(view.trees.map((tree) => proceduresOf(tree.owner))),
      recall: createEpisodicRecall({ trees: view.trees.map((tree) => ({ activity: tree.stores.activity, documents: tree.stores.documents, namespace: tree.namespace })), clock }),
      encoder: encoderFor(memory.encoder, viewer),
    }
    if (scopes.size >= 1000) scopes.delete(scopes.keys().next().value as string)
    scopes.set(key, scope)
    return scope
  }

  let memories: Memories | undefined
  const mind: MindInternals = {
    config,
    home: values.home,
    agent: values.agent,
    project: values.project,
    layout,
    clock,
    backend,
    llm,
    embedder,
    logger,
    get lastReindex() {
      return core.lastReindex
    },
    memory,
    context,
    retriever,
    threads,
    primer,
    session: (sessionId, sessionOptions) =>
      createSession(
        {
          agent: values.agent,
          clock,
          llm,
          context,
          primer,
          memory,
          documents: backend.documents,
          scope: scopeOf,
          resolutions,
          lifecycle,
          journals,
          skills,
          contextBudget: values.context.budget,
          freshTail: values.context.freshTail,
          maxMessageChars: values.limits.messageChars,
          patternMonitorMode: values.learning.patternMonitorMode,
          agentTools: (session, offered) => buildAgentTools(mind, session, offered),
          warn,
          reportFailures: async () => [
            ...skippedFiles.unreported(core.lastReindex?.problems ?? [], { agent: values.agent, ...(sessionOptions?.user !== undefined ? { user: sessionOptions.user } : {}) }),
            ...failureWarnings(await failureReports.unreported('turn')),
          ],
          pendingConfirmations: (user) => memory.encoder.pendingConfirmations(user),
        },
        sessionId,
        sessionOptions,
      ),
    agentTools: (session) => buildAgentTools(mind, session),
    async tools(session) {
      const { toAiSdkTools } = await import('./tools/ai-sdk-tools.ts')
      return toAiSdkTools(buildAgentTools(mind, session))
    },
    async idle() {
      await lifecycle.idle()
      await indexing
    },
    scope: scopeOf,
    activity,
    sessions: {
      get: (sessionId) => lifecycle.session(sessionId),
      open: () => lifecycle.openSessions(),
      end: (sessionId) => lifecycle.endSession(sessionId),
      lastFinalizedTurn: (sessionId) => lifecycle.lastFinalizedTurn(sessionId),
    },
    recall: createEpisodicRecall({ activity: backend.activity, documents: backend.documents, clock }),
    skills,
    procedures,
    journals,
    recoveredJournals,
    encode: (engrams) => memory.encoder.encode(engrams),
    pendingConfirmations: (options = {}) => memory.encoder.pendingConfirmations(options.user),
    async confirm(decision) {
      const user = decision.user
      const outcome: ConfirmOutcome = { saved: 0, rejected: 0, accepted: [], problems: [] }
      if (decision.accept) {
        const pending = await backend.confirmations.pending(user)
        const chosen = decision.accept === 'all' ? pending : pending.filter((item) => (decision.accept as string[]).map(String).includes(item.id))
        const unknown = decision.accept === 'all' ? [] : decision.accept.filter((id) => !pending.some((item) => item.id === String(id)))
        if (unknown.length > 0) {
          throw new EngramError({ code: ErrorCode.notFound, category: 'user', message: `No pending confirmation has the id ${unknown.join(', ')}.`, fix: 'Run `engram confirm` to list the pending ones and their ids.' })
        }
        // Promoted memory files (decision 0017) are written as the user who asked for them.
        const viewer: Viewer = user === undefined ? { agent: values.agent } : { agent: values.agent, user }
        for (const item of chosen.filter((entry) => entry.document !== undefined)) {
          const document = item.document as NonNullable<typeof item.document>
          try {
            await applyMemoryFileWrite(memoryFileDeps(mind, viewer), locateMemoryPath(document.path, layout, viewer), document.content, document.mode)
            outcome.accepted.push(...(await backend.confirmations.accept([item.id], user)))
            outcome.saved++
          } catch (error) {
            outcome.problems.push({ id: item.id, reason: describeError(error) })
          }
        }
        const memories = chosen.filter((entry) => entry.engram !== undefined).map((entry) => entry.id)
        if (memories.length > 0) {
          const accepted = await memory.encoder.acceptConfirmations(memories, user)
          outcome.accepted.push(...accepted.accepted)
          outcome.saved += accepted.report.saved.length
          outcome.problems.push(...accepted.report.rejected.map((entry) => ({ id: accepted.accepted.find((item) => item.engram === entry.engram)?.id ?? '?', reason: `${entry.reason}: ${entry.engram.text}` })))
        }
      }
      if (decision.reject) outcome.rejected = (await memory.encoder.rejectConfirmations(decision.reject, user)).rejected.length
      return outcome
    },
    async indexed() {
      await indexing
    },
    async consolidate<P extends keyof ConsolidationRuns>(period: P, options: { dryRun?: boolean } & ProgressOptions = {}): Promise<ConsolidationRuns[P]> {
      if (period === 'daily') {
        const { runDailyConsolidation } = await import('./memory/consolidation/daily-consolidation.ts')
        const run = await runDailyConsolidation(consolidationDeps, { ...options, includeToday: true })
        if (!options.dryRun) {
          reindexSoon()
          await indexing
        }
        return run as ConsolidationRuns[P]
      }
      if (period === 'weekly') {
        const { runWeeklyIntegration } = await import('./memory/consolidation/weekly-integration.ts')
        const run = await runWeeklyIntegration(consolidationDeps, options)
        if (!options.dryRun) {
          reindexSoon()
          await indexing
        }
        return run as ConsolidationRuns[P]
      }
      if (period !== 'monthly') throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `There is no ${JSON.stringify(period)} consolidation.`, fix: 'Pass daily, weekly or monthly.' })
      if (options.dryRun) return (await (await import('./memory/consolidation/monthly-forgetting.ts')).runForgetting(consolidationDeps, { dryRun: true })) as ConsolidationRuns[P]
      lastForgetting = undefined
      await backend.lifecycle.enqueue({ agent: values.agent, ...monthlyForgettingJob(clock.now(), true) })
      await lifecycle.maintain()
      reindexSoon()
      await indexing
      // The forced job ran in this process's drain (its key is its own): its whole run.
      const empty: ForgettingRun = { forgotten: [], lowActivity: [], protected: 0, active: 0, failed: [], versions: { moved: 0, procedures: [], problems: [] } }
      return (lastForgetting ?? empty) as ConsolidationRuns[P]
    },
    async maintain(options = {}) {
      // Once per mind: consolidation units a killed process left half written are finished first (decision 0053).
      if (!unitsChecked) {
        unitsChecked = true
        try {
          const { finishUnfinishedUnitsIfIdle, stuckStep } = await import('./memory/consolidation/unit-plan.ts')
          for (const unit of await finishUnfinishedUnitsIfIdle(backend, values.agent)) warn(`consolidation: ${stuckStep(unit).reason}`)
        } catch (error) {
          warn(`consolidation: could not finish what a killed run left planned: ${describeError(error)}`)
        }
      }
      const done = await lifecycle.maintain(options)
      // Files written outside the write path (by hand, by another process, a saved skill) reach the index.
      reindexSoon()
      await indexing
      const failed = await failureReports.unreported('maintain')
      return { ...done, warnings: [...warnings.splice(0), ...failureWarnings(failed)], failures: failed }
    },
    async heartbeat() {
      await activity.heartbeatStart()
      const beat = await lifecycle.heartbeat()
      // Each owner's log names only that owner's sessions (heartbeat-log.ts).
      await recordHeartbeat(
        {
          // The session's record, else its conversation (whose user owns the session's events and episode).
          userOfSession: async (sessionId) => (await lifecycle.session(sessionId))?.user ?? (await backend.context.findConversation(sessionId, values.agent))?.user,
          async write(user, summary) {
            if (user === undefined) return activity.heartbeatEnd(summary)
            const recorder = scopeOf(user).activity
            await recorder.heartbeatStart()
            await recorder.heartbeatEnd(summary)
          },
        },
        beat,
      )
      return beat
    },
    async turnProvenance(ref) {
      const record = await lifecycle.turn(ref)
      if (!record) return null
      return {
        sessionId: record.sessionId,
        number: record.turn,
        user: record.user,
        messageId: record.messageId,
        replyIds: record.replyIds,
        startedAt: record.startedAt,
        type: record.type as StoredTurn['type'],
        provenance: record.provenance as unknown as StoredTurn['provenance'],
      }
    },
    forget: (target, options = {}) => (options.purge ? purgeTarget : forgetTarget)(forgettingContextOf(mind, options.user), target, options.reason ? { reason: options.reason } : {}),
    restore: (target, options = {}) => restoreTarget(forgettingContextOf(mind, options.user), target),
    history: (target, options = {}) => historyOfTarget(forgettingContextOf(mind, options.user), isMemoryId(target) ? pathOfMemoryId(target) : target),
    get memories() {
      memories ??= createMemories(mind, { llm: mind.llm })
      return memories
    },
    async forgetUser(user, options) {
      // Background work of the user's turns would write into the trees being removed.
      await mind.idle()
      const { eraseUser } = await import('./memory/forgetting/forget-user.ts')
      return eraseUser({ backend, layout, clock, log: backend.activity }, user, options)
    },
    exportUser: async (user, dir, options = {}) => {
      await mind.idle()
      const { exportUser } = await import('./memory/forgetting/export-user.ts')
      return exportUser({ backend, layout, clock }, user, dir, options)
    },
    status: core.status,
    reindex,
    async close(options = {}) {
      // A reply still streaming will not be stored by this mind: its journal stays for recovery.
      journals.abandonAll()
      if (options.graceMs === undefined && options.signal === undefined) await lifecycle.idle()
      else if (!(await settlesInTime(lifecycle.idle(), options))) await lifecycle.release('the process stopped before this job finished; it runs again on the next maintain')
      await indexing
      await context.close()
      await backend.close()
    },
  }
  // One object: what a host sees is `Mind`; the internal entry hands the rest to engram's own interfaces.
  return withInternals(mind)
}

/** Whether `work` settles before `graceMs` pass and `signal` aborts (whichever is given). */
async function settlesInTime(work: Promise<unknown>, options: { graceMs?: number; signal?: AbortSignal }): Promise<boolean> {
  const { graceMs, signal } = options
  if (signal?.aborted) return false
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const cut = new Promise<false>((resolveCut) => {
    if (graceMs !== undefined) timer = setTimeout(() => resolveCut(false), graceMs)
    onAbort = () => resolveCut(false)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([work.then(() => true), cut])
  } finally {
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
  }
}

/** Agents that have a folder in a home. */
export function listAgents(home: string): string[] {
  try {
    return readdirSync(`${home}/agents`, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort()
  } catch {
    return []
  }
}
