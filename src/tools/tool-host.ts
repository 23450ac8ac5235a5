/**
 * What the agent tools and forgetting on request read of an open mind, and nothing more
 * (decision 0061). The tools sit below `mind.ts` — the mind builds its tools from itself
 * (`mind.agentTools()`, `mind.forget()`) — so they name this interface rather than `Mind`, which
 * would run an import up the layers and close a cycle. `Mind` satisfies it as it stands; a host
 * that is not a whole mind (a test, another wiring) gives just these members.
 */
import type { Clock } from '../core/clock.ts'
import type { MemoryDoc } from '../core/memory-doc.ts'
import type { Viewer } from '../core/owner.ts'
import type { ConfigValues } from '../config/resolve.ts'
import type { DeclarativeMemory } from '../memory/engrams/declarative-memory.ts'
import type { ContextProvider } from '../memory/context/provider.ts'
import type { Retriever } from '../memory/retrieval/search.ts'
import type { SkillStore } from '../memory/skills/skill-store.ts'
import type { ViewerScope } from '../memory/view.ts'
import type { Backend, SessionRecord } from '../storage/contracts.ts'
import type { HomeLayout } from '../storage/home-layout.ts'

export interface ToolHost {
  /** The limits every tool input is held to, and the memory mode and file size write_memory_file obeys. */
  readonly config: { readonly values: Readonly<Pick<ConfigValues, 'limits' | 'memory'>> }
  readonly agent: string
  readonly layout: HomeLayout
  readonly clock: Clock
  readonly backend: Backend
  /** memorize encodes through the gate; the `memory` tool reads users' profiles. */
  readonly memory: Pick<DeclarativeMemory, 'encoder' | 'profiles'>
  readonly sessions: { get(sessionId: string): Promise<SessionRecord | null> }
  readonly skills: SkillStore
  readonly context: ContextProvider
  readonly retriever: Pick<Retriever, 'search'>
  /** The threads a viewer's owners hold (decision 0080): search_memory lists a gathering query's thread turns first. */
  threads(viewer: Viewer): Promise<MemoryDoc[]>
  /** One user's view, recorder, procedures and episodes (the agent's own without one). */
  scope(user?: string): ViewerScope
  /** Resolves when every write made so far is in the search index. */
  indexed(): Promise<void>
  reindex(): Promise<unknown>
  /** The stored messages of a session's turn: search_memory leaves the turn in progress out. */
  turnProvenance(ref: { sessionId: string; turn: number }): Promise<{ messageId: number; replyIds: readonly number[] } | null>
}
