/**
 * What every open of a mind does first, and all `engram status` needs: configuration resolved
 * once, the model providers as configured (watched for failures), the storage, the owners
 * migration and the reindex of hand-edited files. `createMind()` (mind.ts) builds the memory
 * systems on top; a module that imports only this one loads none of them, nor their schemas
 * (decision 0041).
 */
import { join } from 'node:path'
import { type Clock, systemClock } from './core/clock.ts'
import { describeError, EngramError, ErrorCode } from './core/errors.ts'
import { createLineLogger, type Logger, withLevel } from './core/logger.ts'
import { requireSupportedNode } from './core/node-version.ts'
import type { ProgressOptions } from './core/progress.ts'
import { type ResolvedConfig, resolveConfig } from './config/resolve.ts'
import type { Embedder, Llm } from './llm/contracts.ts'
import { createLlm } from './llm/create-llm.ts'
import { createEmbedder } from './llm/embedders/create-embedder.ts'
import { type ModelFailure, watchEmbedder, watchLlm } from './llm/model-failures.ts'
import { createActivityRecorder } from './memory/episodes/recorder.ts'
import { createFailureReports, type FailureReports } from './memory/failures.ts'
import { type ReindexReport, reindexFiles } from './memory/retrieval/indexer.ts'
import { createSkillStore, type SkillStore } from './memory/skills/skill-store.ts'
import { collectStatus, type MindStatus } from './memory/status.ts'
import { openBackend } from './storage/backends.ts'
import type { Backend } from './storage/contracts.ts'
import { type HomeLayout, homeLayout } from './storage/home-layout.ts'

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
  /** Where engram's log lines go (called as pino's are: fields, message), filtered by `log.level`. Default: stderr. */
  logger?: Logger
}


/** The home's lock of reindexing (decision 0097). */
const REINDEX_LOCK = 'engram:reindex'
/** How long a reindex waits for another that makes no progress before going ahead without the lock. */
const REINDEX_LOCK_WAIT_MS = 10 * 60_000

/** An opened home, before the memory systems: what a mind is built on. */
export interface MindCore {
  readonly config: ResolvedConfig
  readonly clock: Clock
  readonly logger: Logger
  readonly llm: Llm
  readonly embedder: Embedder | null
  readonly layout: HomeLayout
  readonly backend: Backend
  /** Failed model calls and dropped work, recorded in the activity log. */
  readonly failureReports: FailureReports
  readonly skills: SkillStore
  /** What the last reindex (on open or explicit) found. */
  readonly lastReindex: ReindexReport | undefined
  /** Re-read every memory file into the index (`full`: every unit again); progress and Ctrl-C as `ProgressOptions` say. */
  reindex(options?: { full?: boolean } & ProgressOptions): Promise<ReindexReport>
  /** Counts of every kind of memory, the capabilities, and any unreadable lines. */
  status(): Promise<MindStatus>
  /** Close the storage (a mind built on this core closes it itself, after its own work). */
  close(): Promise<void>
}

/**
 * Open a home: configuration, models, storage, the owners migration and (unless told not to) the reindex.
 * Throws EngramError `unsupported` on a Node older than engram supports, whatever the backend (decision 0068).
 */
export async function openMindCore(options: CreateMindOptions = {}): Promise<MindCore> {
  requireSupportedNode()
  const flags: Record<string, unknown> = { ...options.settings }
  if (options.home !== undefined) flags.home = options.home
  if (options.agent !== undefined) flags.agent = options.agent
  if (options.project !== undefined) flags.project = options.project
  const config = resolveConfig({ env: options.env ?? process.env, flags, ignoreFile: options.ignoreConfigFile })
  const values = config.values
  const clock = options.clock ?? systemClock
  const logger = options.logger
    ? withLevel(options.logger, values.log.level)
    : createLineLogger({ level: values.log.level, write: (line) => process.stderr.write(line), format: process.stderr.isTTY ? 'text' : 'json' })
  // Every failed model call is recorded (decision 0021), in the activity log opened below (no model is called before).
  const watching = { clock, onFailure: (failure: ModelFailure) => failureReports.record(failure) }
  const llm = watchLlm(options.llm ?? createLlm(values.llm), watching)
  const configuredEmbedder = options.embedder !== undefined ? options.embedder : createEmbedder(values.embed)
  const embedder = configuredEmbedder && watchEmbedder(configuredEmbedder, watching)
  const layout = homeLayout(values.home, values.agent, values.project)
  // storage.url (ENGRAM_DATABASE_URL) picks the backend by its scheme (storage/backends.ts); none is the home.
  // postgres:// puts every seam in PostgreSQL, shared by every process that opens it (decision 0037).
  const backend = await openBackend({
    ...(values.storage.url !== undefined ? { url: values.storage.url } : {}),
    schema: values.storage.schema,
    home: values.home,
    agent: values.agent,
    ...(values.project !== undefined ? { project: values.project } : {}),
    clock,
    ...(embedder ? { embedderId: embedder.id, dimensions: embedder.dimensions } : {}),
    maxFileBytes: values.memory.maxFileBytes,
  })
  const failureReports = createFailureReports({
    recorder: createActivityRecorder({ log: backend.activity, clock, onError: (error) => logger.warn({}, `activity log: ${describeError(error)}`) }),
    logs: [backend.activity],
    jobs: backend.jobs,
    agent: values.agent,
    clock,
    logger,
  })

  await migrateToOwners(backend, logger)
  // Said once per open, not once per memory: every unit would otherwise be reported as refused.
  const { vectorsOff } = backend.capabilities
  if (embedder && vectorsOff !== undefined) logger.warn({ vectorsOff }, `vector search is off: ${vectorsOff}. Memories are indexed and searched by their words (engram doctor says how to turn vectors on).`)

  const skills = createSkillStore({ dir: layout.skillsDir, clock, locks: backend.locks, archiveDir: join(layout.archiveDir, 'skills'), maxFileBytes: values.memory.maxFileBytes })
  let lastReindex: ReindexReport | undefined
  // One reindex at a time across the home (decision 0097): a reindex removes from the index what it
  // no longer finds in a file, so one that read a file before another process saved to it, and
  // wrote after that process had indexed the save, removed the new memory until the file changed
  // again. Waited for (a reindex takes what the files take); a holder that makes no progress for
  // REINDEX_LOCK_WAIT_MS is passed by, with a warning, rather than stop the caller.
  const reindex = async (reindexOptions: { full?: boolean } & ProgressOptions = {}): Promise<ReindexReport> => {
    const run = () => reindexFiles({ backend, embedder, clock, agent: values.agent, skills }, reindexOptions)
    try {
      const outcome = await backend.locks.withLock(REINDEX_LOCK, run, { timeoutMs: REINDEX_LOCK_WAIT_MS })
      lastReindex = outcome.kind === 'done' ? outcome.value : await run()
    } catch (error) {
      if (!EngramError.is(error) || error.code !== ErrorCode.lockBusy || error.details?.name !== REINDEX_LOCK) throw error
      logger.warn({ lock: REINDEX_LOCK }, `reindexing without waiting longer: ${describeError(error)}`)
      lastReindex = await run()
    }
    return lastReindex
  }
  if (options.reindexOnOpen !== false) await reindex()

  return {
    config,
    clock,
    logger,
    llm,
    embedder,
    layout,
    backend,
    failureReports,
    skills,
    get lastReindex() {
      return lastReindex
    },
    reindex,
    status: () => collectStatus({ backend, layout, llm, embedder, config, lastReindex, ...(backend.owners ? { owners: backend.owners.bind(backend) } : {}) }),
    close: () => backend.close(),
  }
}

/**
 * A home written before owners is migrated once, before anything reads it (decision 0024), on a
 * backend that keeps such homes (`Backend.migrateToOwners`). A
 * failure is logged and leaves the home as it was: the next open tries again.
 */
async function migrateToOwners(backend: Backend, logger: Logger): Promise<void> {
  if (!backend.migrateToOwners) return
  try {
    const report = await backend.migrateToOwners()
    if (!report.ranNow) return
    const moved = report.notes.moved + report.activity.moved + report.episodes.moved + report.resolutions.assigned
    if (moved === 0 && report.notes.kept.length === 0) return
    logger.info(
      { notes: report.notes.moved, activity: report.activity.moved, episodes: report.episodes.moved, resolutions: report.resolutions.assigned },
      `home migrated to owners: ${report.notes.moved} notes into profiles, ${report.activity.moved} activity events and ${report.episodes.moved} episode sections into their users' trees, ${report.resolutions.assigned} resolutions given their user (engram status shows it)`,
    )
    for (const kept of report.notes.kept) logger.warn({ user: kept.user, agent: kept.agent }, `notes of ${JSON.stringify(kept.user)} left in ctx_agent_memory: ${kept.reason}`)
  } catch (error) {
    logger.warn({}, `the home could not be migrated to owners (it is tried again on the next open): ${describeError(error)}`)
  }
}
