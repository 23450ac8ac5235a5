/**
 * `createMind()`: opens a home, resolves configuration once, wires a backend, the model
 * providers and the memory systems, and returns the API agents and interfaces use.
 */
import { readdirSync } from 'node:fs'
import { type Clock, systemClock } from './core/clock.ts'
import { type ResolvedConfig, resolveConfig } from './config/resolve.ts'
import type { Backend } from './storage/contracts.ts'
import { openEmbeddedBackend } from './storage/embedded.ts'
import { type HomeLayout, homeLayout } from './storage/home-layout.ts'
import type { Embedder, Llm } from './llm/contracts.ts'
import { createLlm } from './llm/create-llm.ts'
import { createEmbedder } from './llm/embedders/create-embedder.ts'
import { type ReindexReport, reindexFiles } from './memory/retrieval/indexer.ts'
import { collectStatus, type MindStatus } from './memory/status.ts'
import { createDeclarativeMemory, type DeclarativeMemory } from './memory/engrams/declarative-memory.ts'
import type { EncodeReport } from './memory/engrams/encoder.ts'
import type { Engram } from './core/engram.ts'
import type { ConfirmationSelection, PendingConfirmation } from './storage/contracts.ts'
import { type ActivityRecorder, createActivityRecorder } from './memory/episodes/recorder.ts'
import { createImmediateEncoder } from './memory/episodes/immediate-encoding.ts'
import type { BoundaryOutcome } from './memory/lifecycle/boundary-work.ts'
import { createSessionLifecycle, type HeartbeatReport, type LifecycleReport } from './memory/lifecycle/session-lifecycle.ts'
import type { SessionRecord } from './storage/contracts.ts'
import { createEpisodicRecall, type Recall } from './memory/episodes/recall.ts'
import { createStreamingJournal, type StreamingJournal } from './memory/journal/streaming-journal.ts'
import type { JournalRecovery } from './memory/journal/journal-recovery.ts'
import { createSkillStore, type SkillStore } from './memory/skills/skill-store.ts'
import { createProcedureStore, type ProcedureStore } from './memory/procedures/procedure-store.ts'
import { describeError } from './core/errors.ts'
import { join } from 'node:path'
import { createContextProvider, type ContextProviderKind } from './memory/context/create-provider.ts'
import type { ContextProvider } from './memory/context/provider.ts'
import { createRetriever, type Retriever } from './memory/retrieval/search.ts'
import { retrievalSettingsFromConfig } from './memory/retrieval/settings.ts'
import { createPrimer, type Primer } from './memory/priming/prime.ts'
import { primingSettingsFromConfig } from './memory/priming/settings.ts'
import { createSession, type Session, type SessionOptions } from './session/session.ts'
import type { StoredTurn } from './session/turn.ts'
import { buildAgentTools } from './tools/agent-tools.ts'
import type { EngramTool } from './tools/tool.ts'

export interface CreateMindOptions {
  /** Engram home (default: ENGRAM_HOME, then ~/.engram). */
  home?: string
  /** Agent name (default: ENGRAM_AGENT, then "default"). */
  agent?: string
  /** Project folder whose `.engram/` holds project-scope memory. */
  project?: string
  /** Any other setting by dotted key (`{ 'memory.mode': 'copilot' }`); wins over file and env. */
  settings?: Record<string, unknown>
  /** Environment to read `ENGRAM_*` from; defaults to `process.env`. Tests pass their own. */
  env?: Record<string, string | undefined>
  /** Read no `config.json`. */
  ignoreConfigFile?: boolean
  clock?: Clock
  /** Inject models directly (tests, custom providers); otherwise built from configuration. */
  llm?: Llm
  embedder?: Embedder | null
  /** Bring the index up to date with hand-edited files on open (default true). */
  reindexOnOpen?: boolean
}

export interface Mind {
  readonly config: ResolvedConfig
  readonly home: string
  readonly agent: string
  readonly project: string | undefined
  readonly layout: HomeLayout
  readonly clock: Clock
  readonly backend: Backend
  readonly llm: Llm
  readonly embedder: Embedder | null
  /** What the last reindex (on open or explicit) found. */
  readonly lastReindex: ReindexReport | undefined
  /** Declarative memory: the encoder behind the gate, identity, memory context, tool wisdom, compaction. */
  readonly memory: DeclarativeMemory
  /** Typed helpers that write the activity log (never throw). */
  readonly activity: ActivityRecorder
  /** Sessions as the store keeps them (activity, turns, open or closed), and their explicit end. */
  readonly sessions: MindSessions
  /** Ranked search over episodes and the activity log (`daysBack`). */
  readonly recall: Recall
  readonly skills: SkillStore
  readonly procedures: ProcedureStore
  /** The write-ahead log of the turn being streamed. */
  readonly journal: StreamingJournal
  /** What was recovered from an orphaned journal when this mind opened (a crash mid-stream). */
  readonly recoveredJournal: JournalRecovery | undefined
  /** Working memory: every message kept, older turns folded into summaries (LCM or sliding window). */
  readonly context: ContextProvider
  /** Hybrid search with spreading activation over every retrievable unit. */
  readonly retriever: Retriever
  /** Automatic recall before a turn. */
  readonly primer: Primer
  /** Open a conversation: `begin` before the model call, `end` after it. */
  session(sessionId: string, options?: SessionOptions): Session
  /** The agent tools (memorize, recall, search_memory, read/write_memory_file, recall_skill, report_procedure_outcome, memory). */
  agentTools(session?: { sessionId: string; user?: string }): EngramTool[]
  /** The agent tools as Vercel AI SDK tools (loads the AI SDK on first use). */
  tools(session?: { sessionId: string; user?: string }): Promise<import('ai').ToolSet>
  /** Resolves when the background work this process started (compaction, learning, identity, replay) is done. */
  idle(): Promise<void>
  /** The one write path for declarative memory: gate → store of the engram's scope → index. */
  encode(engrams: Engram[]): Promise<EncodeReport>
  /** Memories the gate holds for the user's yes/no; show them after an answer, before the next prompt. */
  pendingConfirmations(): Promise<PendingConfirmation[]>
  /** Accept (save) or reject pending confirmations: some ids, or `'all'`. */
  confirm(decision: { accept?: ConfirmationSelection; reject?: ConfirmationSelection }): Promise<{ saved: number; rejected: number }>
  /** Resolves when every write made so far is in the search index. */
  indexed(): Promise<void>
  /**
   * Run whatever work is due, whichever process queued it: idle session boundaries (episode, state
   * update, resolutions, sleep replay), the work of turns whose process stopped, memory-file
   * compaction (when a file is over its threshold, once a day). Each piece runs exactly once.
   */
  maintain(options?: { forceCompaction?: boolean }): Promise<MaintenanceReport>
  /**
   * A heartbeat (the agent's periodic patrol): the sessions quiet since the previous heartbeat, and
   * the idle ones, reach their boundary, and every due job runs. A live conversation is never cut.
   * A session message like `[heartbeat] …` does the same in the background.
   */
  heartbeat(): Promise<HeartbeatReport>
  /** What a past turn was given (its provenance), by session and turn number or by the id of one of its messages. */
  turnProvenance(ref: { sessionId: string; turn: number } | { messageId: number }): Promise<StoredTurn | null>
  /** Counts of every kind of memory, the capabilities, and any unreadable lines. */
  status(): Promise<MindStatus>
  /** Re-read every memory file and update the index (`full` re-embeds everything). */
  reindex(options?: { full?: boolean }): Promise<ReindexReport>
  close(): Promise<void>
}

export interface MaintenanceReport extends LifecycleReport {
  warnings: string[]
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
  const flags: Record<string, unknown> = { ...options.settings }
  if (options.home !== undefined) flags.home = options.home
  if (options.agent !== undefined) flags.agent = options.agent
  if (options.project !== undefined) flags.project = options.project
  const config = resolveConfig({ env: options.env ?? process.env, flags, ignoreFile: options.ignoreConfigFile })
  const values = config.values
  const clock = options.clock ?? systemClock
  const llm = options.llm ?? createLlm(values.llm)
  const embedder = options.embedder !== undefined ? options.embedder : createEmbedder(values.embed)
  const layout = homeLayout(values.home, values.agent, values.project)
  const backend = openEmbeddedBackend({
    home: values.home,
    agent: values.agent,
    project: values.project,
    clock,
    embedderId: embedder?.id,
    dimensions: embedder?.dimensions,
  })

  const skills = createSkillStore({ dir: layout.skillsDir, clock, locks: backend.locks, archiveDir: join(layout.archiveDir, 'skills') })
  let lastReindex: ReindexReport | undefined
  const reindex = async (reindexOptions: { full?: boolean } = {}): Promise<ReindexReport> => {
    lastReindex = await reindexFiles({ backend, embedder, clock, agent: values.agent, skills }, reindexOptions)
    return lastReindex
  }
  if (options.reindexOnOpen !== false) await reindex()

  const warnings: string[] = []
  const warn = (message: string): void => {
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
    onSaved: reindexSoon,
    onError: (error) => warn(`memory: ${describeError(error)}`),
  })

  const immediate = createImmediateEncoder({
    agent: values.agent,
    activity: backend.activity,
    documents: backend.documents,
    jobs: backend.jobs,
    locks: backend.locks,
    llm,
    clock,
    resolutionsFile: layout.resolutionsFile,
    onWarning: warn,
  })
  const context = createContextProvider(values.context.provider as ContextProviderKind, {
    store: backend.context,
    locks: backend.locks,
    clock,
    llm,
    index: backend.index,
    documents: backend.documents,
    settings: { freshTail: values.context.freshTail, threshold: values.context.threshold, leafChunk: values.context.leafChunk },
  })
  const lifecycle = createSessionLifecycle({
    agent: values.agent,
    clock,
    store: backend.lifecycle,
    activity: backend.activity,
    encoder: immediate,
    llm,
    memory,
    context,
    freshTail: values.context.freshTail,
    readMessages: async (ids) => {
      const byId = new Map((await backend.context.messagesById(ids)).map((message) => [message.id, message]))
      return ids.flatMap((id) => {
        const message = byId.get(id)
        return message ? [{ role: message.role, content: message.content }] : []
      })
    },
    eager: values.jobs.eager,
    onWarning: warn,
    // Work that wrote files (episodes, memories) reaches the index.
    onSettled: (outcome) => {
      if (outcome.status === 'done') reindexSoon()
    },
  })
  const activity = createActivityRecorder({
    log: backend.activity,
    clock,
    onError: (error) => warn(`activity log: ${describeError(error)}`),
    onRecorded: (event) => lifecycle.observe(event),
  })
  const journal = createStreamingJournal({ dir: layout.journalDir, clock, onError: (error) => warn(`journal: ${describeError(error)}`) })
  const recoveredJournal = await recoverJournal(journal, backend, values.agent, clock, warn)

  const procedures = createProcedureStore({ documents: backend.documents, locks: backend.locks, clock })

  const retriever = createRetriever({ index: backend.index, embedder, clock, settings: retrievalSettingsFromConfig(values.retrieval) })
  const primer = createPrimer({
    documents: backend.documents,
    activity: backend.activity,
    index: backend.index,
    retriever,
    clock,
    agent: values.agent,
    procedures,
    skills,
    settings: primingSettingsFromConfig(values.priming),
  })

  const mind: Mind = {
    config,
    home: values.home,
    agent: values.agent,
    project: values.project,
    layout,
    clock,
    backend,
    llm,
    embedder,
    get lastReindex() {
      return lastReindex
    },
    memory,
    context,
    retriever,
    primer,
    session: (sessionId, sessionOptions) =>
      createSession(
        {
          agent: values.agent,
          project: values.project,
          clock,
          llm,
          context,
          primer,
          memory,
          documents: backend.documents,
          activity,
          lifecycle,
          journal,
          skills,
          contextBudget: values.context.budget,
          freshTail: values.context.freshTail,
          patternMonitorMode: values.learning.patternMonitorMode,
          agentTools: (session) => buildAgentTools(mind, session),
          warn,
        },
        sessionId,
        sessionOptions,
      ),
    agentTools: (session) => buildAgentTools(mind, session),
    async tools(session) {
      const { toAiSdkTools } = await import('./interfaces/ai-sdk/tools.ts')
      return toAiSdkTools(buildAgentTools(mind, session))
    },
    async idle() {
      await lifecycle.idle()
      await indexing
    },
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
    journal,
    recoveredJournal,
    encode: (engrams) => memory.encoder.encode(engrams),
    pendingConfirmations: () => memory.encoder.pendingConfirmations(),
    async confirm(decision) {
      const accepted = decision.accept ? await memory.encoder.acceptConfirmations(decision.accept) : undefined
      const rejected = decision.reject ? await memory.encoder.rejectConfirmations(decision.reject) : undefined
      return { saved: accepted?.report.saved.length ?? 0, rejected: rejected?.rejected.length ?? 0 }
    },
    async indexed() {
      await indexing
    },
    async maintain(options = {}) {
      const done = await lifecycle.maintain(options)
      // Files written outside the write path (by hand, by another process, a saved skill) reach the index.
      reindexSoon()
      await indexing
      return { ...done, warnings: warnings.splice(0) }
    },
    async heartbeat() {
      await activity.heartbeatStart()
      const beat = await lifecycle.heartbeat()
      await activity.heartbeatEnd(`closed ${beat.closed.length} session(s)${beat.closed.length > 0 ? `: ${beat.closed.map((entry) => entry.session).join(', ')}` : ''}; ran ${beat.jobs.length} job(s)`)
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
    status: () => collectStatus({ backend, layout, llm, embedder, config, lastReindex }),
    reindex,
    async close() {
      await lifecycle.idle()
      await indexing
      await context.close()
      await backend.close()
    },
  }
  return mind
}

/**
 * A journal left by a crash mid-stream: its text goes back into the conversation it belonged to
 * (marked as recovered, and whether the turn had finished), so nothing the agent said is lost.
 */
async function recoverJournal(journal: StreamingJournal, backend: Backend, agent: string, clock: Clock, warn: (message: string) => void): Promise<JournalRecovery | undefined> {
  if (!journal.hasOrphan()) return undefined
  try {
    const recovery = journal.recover()
    if (!recovery) return undefined
    const sessionId = recovery.session?.sessionId
    if (sessionId && recovery.text.trim() !== '') {
      const conversation = await backend.context.conversation(sessionId, { agent })
      const { countTokens } = await import('./core/tokens.ts')
      await backend.context.appendMessages(conversation.id, [
        {
          role: 'assistant',
          content: recovery.text,
          at: recovery.lastEventAt ?? clock.now().toISOString(),
          tokenCount: countTokens(recovery.text),
          meta: { recovered: true, finished: recovery.finished, toolCalls: recovery.toolCalls.length, journal: recovery.archivedTo },
        },
      ])
    }
    return recovery
  } catch (error) {
    warn(`journal recovery: ${describeError(error)}`)
    return undefined
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
