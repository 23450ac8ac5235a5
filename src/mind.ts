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
  /** Counts of every kind of memory, the capabilities, and any unreadable lines. */
  status(): Promise<MindStatus>
  /** Re-read every memory file and update the index (`full` re-embeds everything). */
  reindex(options?: { full?: boolean }): Promise<ReindexReport>
  close(): Promise<void>
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

  let lastReindex: ReindexReport | undefined
  const reindex = async (reindexOptions: { full?: boolean } = {}): Promise<ReindexReport> => {
    lastReindex = await reindexFiles({ backend, embedder, clock, agent: values.agent }, reindexOptions)
    return lastReindex
  }
  if (options.reindexOnOpen !== false) await reindex()

  return {
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
    status: () => collectStatus({ backend, layout, llm, embedder, config, lastReindex }),
    reindex,
    close: () => backend.close(),
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
