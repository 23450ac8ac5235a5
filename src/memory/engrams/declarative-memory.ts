/**
 * Declarative memory wired for one mind: the encoder (with its gate and confirmations), the
 * memory context, tool wisdom, compaction and identity extraction over a backend's engram stores.
 * `createMind()` and the interfaces build this once and hand its parts to whoever needs them.
 */
import type { Clock } from '../../core/clock.ts'
import type { MemoryMode } from '../../config/schema.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { Backend, EngramStore } from '../../storage/contracts.ts'
import { type CompactionResult, compactAll } from './compaction.ts'
import type { ConfirmationQueue } from '../../storage/contracts.ts'
import { createEncoder, type EngramEncoder, type SavedEngram } from './encode.ts'
import { createIdentityUpdater, type IdentityUpdater } from './identity.ts'
import { buildMemoryContext, type MemoryBudgets, type MemoryContext } from './memory-context.ts'
import { type DescribedTool, decorateTools, type ToolWisdomReport } from './tool-wisdom.ts'

export interface DeclarativeMemoryOptions {
  backend: Backend
  mode: MemoryMode
  confirmations: ConfirmationQueue
  clock: Clock
  /** For compaction and identity extraction; without one they skip or fall back (marked). */
  llm?: Llm
  /** The project folder (for its instructions file). */
  projectDir?: string
  onSaved?: (saved: SavedEngram) => void | Promise<void>
  onError?: (error: unknown) => void
}

export interface DeclarativeMemory {
  readonly encoder: EngramEncoder
  readonly global: EngramStore
  readonly project: EngramStore | undefined
  readonly identity: IdentityUpdater
  buildContext(budgets?: Partial<MemoryBudgets>): Promise<MemoryContext>
  /**
   * Copies of `tools` whose descriptions end with the wisdom tagged for each, all of it within the
   * seed's ~500 tokens (see tool-wisdom.ts), and what each gained.
   */
  decorateTools<T extends DescribedTool>(tools: readonly T[]): Promise<{ tools: T[]; wisdom: ToolWisdomReport }>
  /** Compacts every file over the threshold (skipped cleanly without a model). */
  compact(): Promise<CompactionResult[]>
}

/** Wires declarative memory over `backend`. Throws when the backend has no global engram store. */
export function createDeclarativeMemory(options: DeclarativeMemoryOptions): DeclarativeMemory {
  const { backend } = options
  const global = backend.engrams('global')
  if (!global) throw new Error('The backend has no global engram store.')
  const project = backend.engrams('project')
  const encoder = createEncoder({
    global,
    ...(project ? { project } : {}),
    mode: options.mode,
    confirmations: options.confirmations,
    clock: options.clock,
    activity: backend.activity,
    locks: backend.locks,
    ...(options.onSaved ? { onSaved: options.onSaved } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  })
  const stores = { global, ...(project ? { project } : {}) }
  return {
    encoder,
    global,
    project,
    identity: createIdentityUpdater({ encoder, global, ...(options.llm ? { llm: options.llm } : {}) }),
    buildContext: (budgets) => buildMemoryContext({ ...stores, ...(options.projectDir ? { projectDir: options.projectDir } : {}), ...(budgets ? { budgets } : {}) }),
    decorateTools: (tools) => decorateTools(tools, stores),
    async compact() {
      const all = [global, ...(project ? [project] : [])]
      if (!options.llm) return all.flatMap((store) => (['rules', 'lessons'] as const).map((file) => ({ kind: 'skipped' as const, file, location: store.location, reason: 'no LLM configured' })))
      return compactAll(all, { llm: options.llm, locks: backend.locks })
    },
  }
}
