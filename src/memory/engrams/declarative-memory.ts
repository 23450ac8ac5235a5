/**
 * Declarative memory wired for one mind: the encoder (with its gate and confirmations), the
 * memory context, tool wisdom, compaction and identity extraction over a backend's engram stores.
 * `createMind()` and the interfaces build this once and hand its parts to whoever needs them.
 */
import type { Clock } from '../../core/clock.ts'
import { type Owner, ownerOfUser, type Viewer, visibleOwners } from '../../core/owner.ts'
import type { MemoryMode } from '../../config/schema.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { Backend, EngramStore } from '../../storage/contracts.ts'
import { type CompactionResult, compactAll } from './compaction.ts'
import type { ConfirmationQueue } from '../../storage/contracts.ts'
import { createEncoder, type EngramEncoder, type OwnerEngramStores, type SavedEngram } from './encode.ts'
import { createIdentityUpdater, type IdentityUpdater } from './identity.ts'
import { buildMemoryContext, type MemoryBudgets, type MemoryContext } from './memory-context.ts'
import { type DescribedTool, decorateTools, type ToolWisdomReport } from './tool-wisdom.ts'
import { createUserProfiles, type UserProfiles } from './user-profiles.ts'

export interface DeclarativeMemoryOptions {
  backend: Backend
  mode: MemoryMode
  confirmations: ConfirmationQueue
  clock: Clock
  /** For compaction and identity extraction; without one they skip or fall back (marked). */
  llm?: Llm
  /** The project folder (for its instructions file). */
  projectDir?: string
  /** The home (the activity log names saved files relative to it). */
  home?: string
  onSaved?: (saved: SavedEngram) => void | Promise<void>
  onError?: (error: unknown) => void
}

/** Declarative memory as one viewer sees it (decision 0017). */
export interface ViewerMemory {
  /** The memory context: the viewer's identity (a user's profile, or the agent's), and the rules and lessons of its owners. */
  buildContext(budgets?: Partial<MemoryBudgets>): Promise<MemoryContext>
  /**
   * Copies of `tools` whose descriptions end with the wisdom tagged for each, all of it within the
   * seed's ~500 tokens (see tool-wisdom.ts), and what each gained.
   */
  decorateTools<T extends DescribedTool>(tools: readonly T[]): Promise<{ tools: T[]; wisdom: ToolWisdomReport }>
}

export interface DeclarativeMemory {
  readonly encoder: EngramEncoder
  /** The agent's own global store. */
  readonly global: EngramStore
  /** The agent's own project store. */
  readonly project: EngramStore | undefined
  readonly identity: IdentityUpdater
  /** Users' profiles (one per user, shared by the agents of the home). */
  readonly profiles: UserProfiles
  /** The engram stores of an owner. */
  storesOf(owner: Owner): OwnerEngramStores
  /** The memory as one viewer sees it. */
  forViewer(viewer: Viewer): ViewerMemory
  /** The agent's own view (no user): `forViewer({ agent })`. */
  buildContext(budgets?: Partial<MemoryBudgets>): Promise<MemoryContext>
  decorateTools<T extends DescribedTool>(tools: readonly T[]): Promise<{ tools: T[]; wisdom: ToolWisdomReport }>
  /**
   * Compacts every file over the threshold in every owner's tree (skipped cleanly without a
   * model), except files still as a compaction left them (`settled`, fileState digests).
   */
  compact(settled?: ReadonlySet<string>): Promise<CompactionResult[]>
}

/** Wires declarative memory over `backend`. Throws when the backend has no global engram store. */
export function createDeclarativeMemory(options: DeclarativeMemoryOptions): DeclarativeMemory {
  const { backend } = options
  const global = backend.engrams('global')
  if (!global) throw new Error('The backend has no global engram store.')
  const project = backend.engrams('project')
  const storesOf = (owner: Owner): OwnerEngramStores => {
    const owned = backend.owned(owner)
    const ownerGlobal = owned.engrams('global')
    if (!ownerGlobal) throw new Error(`The backend has no global engram store for ${owner}.`)
    const ownerProject = owned.engrams('project')
    return { global: ownerGlobal, ...(ownerProject ? { project: ownerProject } : {}) }
  }
  const profiles = createUserProfiles({ documents: backend.documents, locks: backend.locks, clock: options.clock })
  const encoder = createEncoder({
    global,
    ...(project ? { project } : {}),
    storesOf,
    profiles,
    activityOf: (owner) => backend.owned(owner).activity,
    mode: options.mode,
    confirmations: options.confirmations,
    clock: options.clock,
    activity: backend.activity,
    locks: backend.locks,
    ...(options.home !== undefined ? { home: options.home } : {}),
    ...(options.onSaved ? { onSaved: options.onSaved } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  })
  const stores = { global, ...(project ? { project } : {}) }

  function forViewer(viewer: Viewer): ViewerMemory {
    // The agent's own stores are `stores`; the viewer's other owners join them, most specific first.
    const also = visibleOwners(viewer)
      .filter((owner) => owner !== 'agent')
      .map((owner) => storesOf(owner))
    const user = viewer.user
    return {
      async buildContext(budgets) {
        // In a session with a user, the identity is that user's one profile, never the agent's profile.md.
        const identity = user === undefined ? undefined : await profiles.facts(user)
        return buildMemoryContext({
          ...stores,
          also,
          ...(identity ? { identity } : {}),
          ...(options.projectDir ? { projectDir: options.projectDir } : {}),
          ...(budgets ? { budgets } : {}),
        })
      },
      decorateTools: (tools) => decorateTools(tools, { ...stores, also }),
    }
  }
  const agentView = forViewer({ agent: '' })

  return {
    encoder,
    global,
    project,
    identity: createIdentityUpdater({ encoder, global, profiles, ...(options.llm ? { llm: options.llm } : {}) }),
    profiles,
    storesOf,
    forViewer,
    buildContext: (budgets) => agentView.buildContext(budgets),
    decorateTools: (tools) => agentView.decorateTools(tools),
    async compact(settled) {
      const owners: Owner[] = ['agent', 'shared', ...(await backend.users()).map((user) => ownerOfUser(user))]
      if (!options.llm) {
        const own = [global, ...(project ? [project] : [])]
        return own.flatMap((store) => (['rules', 'lessons'] as const).map((file) => ({ kind: 'skipped' as const, file, location: store.location, reason: 'no LLM configured' })))
      }
      const all = owners.flatMap((owner) => {
        const owned = storesOf(owner)
        return [owned.global, ...(owned.project ? [owned.project] : [])]
      })
      return compactAll(all, { llm: options.llm, locks: backend.locks, ...(settled ? { settled } : {}) })
    },
  }
}
