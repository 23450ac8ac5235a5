/**
 * The embedded backend: markdown and JSONL files for what a person reads, one SQLite file
 * (`engram.db`, WAL) for what a machine replays. No server, no API key.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Clock } from '../core/clock.ts'
import type { EngramScope } from '../core/engram.ts'
import type { Backend, EngramStore } from './contracts.ts'
import { createFileActivityLog } from './files/activity-log.ts'
import { createFileDocumentStore } from './files/document-store.ts'
import { createFileEngramStore } from './files/engram-store.ts'
import { createFileLocks } from './files/locks.ts'
import { createSqliteConfirmationQueue } from './sqlite/confirmation-queue.ts'
import { createSqliteContextStore } from './sqlite/context-store.ts'
import { openSqlite } from './sqlite/database.ts'
import { createSqliteJobs } from './sqlite/jobs.ts'
import { createSqliteLifecycle } from './sqlite/lifecycle.ts'
import { createSqliteSearchIndex } from './sqlite/search-index.ts'
import { sqliteFacts } from './sqlite/search-index.ts'
import { homeLayout } from './home-layout.ts'

export interface EmbeddedBackendOptions {
  home: string
  agent: string
  /** Project folder; its `.engram/memory/` holds project-scope engrams. */
  project?: string
  clock: Clock
  /** The embedder's vector space id and size; vectors of another space are rebuilt. */
  embedderId?: string
  dimensions?: number
  /** Called when an activity append fails (appends never throw into the caller). */
  onActivityError?: (error: unknown) => void
}

/** Open (creating folders as needed) the embedded backend of one agent in one home. */
export function openEmbeddedBackend(options: EmbeddedBackendOptions): Backend {
  const layout = homeLayout(options.home, options.agent, options.project)
  for (const dir of layout.requiredDirs) mkdirSync(dir, { recursive: true })

  const locks = createFileLocks({ dir: layout.locksDir })
  const handle = openSqlite(layout.database)
  const stores = new Map<EngramScope, EngramStore>()
  stores.set('global', createFileEngramStore({ dir: layout.globalMemoryDir, scope: 'global', locks, clock: options.clock }))
  if (layout.projectMemoryDir) {
    const projectLocks = createFileLocks({ dir: join(layout.projectMemoryDir, '..', '.locks') })
    stores.set('project', createFileEngramStore({ dir: layout.projectMemoryDir, scope: 'project', locks: projectLocks, clock: options.clock }))
  }
  const index = createSqliteSearchIndex(handle, { embedderId: options.embedderId, dimensions: options.dimensions })

  return {
    name: 'embedded',
    capabilities: {
      fullText: index.capabilities.fullText,
      vectors: index.capabilities.vectors,
      transactions: true,
      facts: sqliteFacts(handle),
    },
    engrams: (scope) => stores.get(scope),
    documents: createFileDocumentStore({ home: options.home, agent: options.agent, clock: options.clock, locks }),
    context: createSqliteContextStore(handle, { clock: options.clock }),
    index,
    activity: createFileActivityLog({ dir: layout.activityDir, clock: options.clock, onError: options.onActivityError }),
    locks,
    jobs: createSqliteJobs(handle),
    lifecycle: createSqliteLifecycle(handle, { clock: options.clock }),
    confirmations: createSqliteConfirmationQueue(handle, { agent: options.agent, ...(options.project ? { project: options.project } : {}), clock: options.clock }),
    close: async () => {
      try {
        await index.flush?.()
      } finally {
        handle.close()
      }
    },
  }
}
