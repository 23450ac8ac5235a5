/**
 * engram's internal entry (decision 0062): the subsystems of a mind that its own interfaces (the
 * CLI, the MCP and HTTP servers, the dashboard) and its tests work with beyond the public `Mind`
 * a host holds. Not exported from the package root: what is here may change with any release.
 *
 * One object at run time: `createMind()` registers every mind it opens, and `internalsOf` hands
 * back the same object with its internal members, so a host passes its `Mind` to
 * `createMcpServer(mind)` and the server reaches the storage without the host's type showing it.
 */
import type { ResolvedConfig } from './config/resolve.ts'
import type { Clock } from './core/clock.ts'
import { EngramError, ErrorCode } from './core/errors.ts'
import type { Engram } from './core/engram.ts'
import type { Logger } from './core/logger.ts'
import type { MemoryDoc } from './core/memory-doc.ts'
import type { Viewer } from './core/owner.ts'
import type { ProgressOptions } from './core/progress.ts'
import type { Embedder, Llm } from './llm/contracts.ts'
import type { ContextProvider } from './memory/context/provider.ts'
import type { DeclarativeMemory } from './memory/engrams/declarative-memory.ts'
import type { EncodeReport } from './memory/engrams/encoder.ts'
import type { ActivityRecorder } from './memory/episodes/recorder.ts'
import type { Recall } from './memory/episodes/recall.ts'
import type { Journals } from './memory/journal/journal-folder.ts'
import type { RecoveredJournal } from './memory/journal/recover-orphans.ts'
import type { Primer } from './memory/priming/prime.ts'
import type { ProcedureStore } from './memory/procedures/procedure-store.ts'
import type { ReindexReport } from './memory/retrieval/indexer.ts'
import type { Retriever } from './memory/retrieval/search.ts'
import type { SkillStore } from './memory/skills/skill-store.ts'
import type { ViewerScope } from './memory/view.ts'
import type { CreateMindOptions } from './mind-core.ts'
import type { Mind } from './mind.ts'
import type { Backend } from './storage/contracts.ts'
import type { HomeLayout } from './storage/home-layout.ts'

/** A mind with the subsystems behind its public API. */
export interface MindInternals extends Mind {
  readonly config: ResolvedConfig
  readonly project: string | undefined
  readonly layout: HomeLayout
  readonly clock: Clock
  readonly backend: Backend
  readonly llm: Llm
  readonly embedder: Embedder | null
  /** engram's log (stderr unless `createMind({ logger })`), at `log.level`. */
  readonly logger: Logger
  /** What the last reindex (on open or explicit) found. */
  readonly lastReindex: ReindexReport | undefined
  /** Declarative memory: the encoder behind the gate, identity, memory context, tool wisdom, compaction. */
  readonly memory: DeclarativeMemory
  /** Typed helpers that write the activity log (never throw). */
  readonly activity: ActivityRecorder
  /** Ranked search over the agent's own episodes and activity log (`daysBack`); a user's are `scope(user).recall`. */
  readonly recall: Recall
  readonly skills: SkillStore
  readonly procedures: ProcedureStore
  /** The write-ahead logs of the replies being streamed, one file per stream. */
  readonly journals: Journals
  /** What this mind recovered, when it opened, from the journals of writers that died mid-stream. */
  readonly recoveredJournals: readonly RecoveredJournal[]
  /** Working memory: every message kept, older turns folded into summaries (LCM or sliding window). */
  readonly context: ContextProvider
  /** Hybrid search with spreading activation over every retrievable unit. */
  readonly retriever: Retriever
  /** The threads a viewer's owners hold (decision 0080: its user's and the agent's, never shared), read whole; the agent's own view without a viewer. */
  threads(viewer?: Viewer): Promise<MemoryDoc[]>
  /** Automatic recall before a turn. */
  readonly primer: Primer
  /**
   * What one user's sessions read and write through (decision 0017): their view of the memory,
   * the recorder of their activity, their procedures and episodes. No user: the agent's own.
   */
  scope(user?: string): ViewerScope
  /** The one write path for declarative memory: gate → store of the engram's scope → index. */
  encode(engrams: Engram[]): Promise<EncodeReport>
  /** Re-read every memory file and update the index (`full` re-embeds everything); progress and Ctrl-C as `ProgressOptions` say. */
  reindex(options?: { full?: boolean } & ProgressOptions): Promise<ReindexReport>
}

const opened = new WeakSet<Mind>()

/** Registers a mind `createMind()` built, so that `internalsOf` knows it; returns it as a host sees it. */
export function withInternals(mind: MindInternals): Mind {
  opened.add(mind)
  return mind
}

/** The internals of a mind `createMind()` opened (the same object). Refuses any other object. */
export function internalsOf(mind: Mind): MindInternals {
  if (!opened.has(mind)) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: 'This mind was not opened by createMind() of this copy of engram.',
      fix: "pass the mind createMind() returned (import it from the same 'engram' package as the server or middleware).",
    })
  }
  return mind as MindInternals
}

/** `createMind()` for engram's own interfaces and tests: the mind with its internals. */
export async function openMindInternals(options: CreateMindOptions = {}): Promise<MindInternals> {
  // Loaded when called: a module that imports this entry for its types loads no memory system.
  const { createMind } = await import('./mind.ts')
  return internalsOf(await createMind(options))
}
