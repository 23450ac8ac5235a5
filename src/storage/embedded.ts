/**
 * The embedded backend: markdown and JSONL files for what a person reads, one SQLite file
 * (`engram.db`, WAL) for what a machine replays. No server, no API key.
 */
import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { EngramScope } from '../core/engram.ts'
import { requireSupportedNode } from '../core/node-version.ts'
import { userFromKey } from '../core/owner.ts'
import type { Backend, EngramStore, Locks } from './contracts.ts'
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
import { homeLayout, ownerTree } from './home-layout.ts'
import { ownerCounts, type OwnersStatus } from './owner-counts.ts'
import { type BackendCommonOptions, ownedStoresOf } from './owned-stores.ts'
import { migrateHomeToOwners, type OwnersMigrationReport, readOwnersMigration } from './owners-migration.ts'

export interface EmbeddedBackendOptions extends BackendCommonOptions {
  /** The home folder holding everything. */
  home: string
}

/** The embedded backend, with the work on its files that only it knows how to do (present, not optional). */
export interface EmbeddedBackend extends Backend {
  migrateToOwners(): Promise<OwnersMigrationReport & { ranNow: boolean }>
  owners(): Promise<OwnersStatus>
}

/**
 * Open (creating folders as needed) the embedded backend of one agent in one home.
 * Throws EngramError `unsupported`, before touching the home, on a Node without `node:sqlite` (decision 0068).
 */
export function openEmbeddedBackend(options: EmbeddedBackendOptions): EmbeddedBackend {
  requireSupportedNode()
  const layout = homeLayout(options.home, options.agent, options.project)
  for (const dir of layout.requiredDirs) mkdirSync(dir, { recursive: true })

  const locks = createFileLocks({ dir: layout.locksDir })
  const handle = openSqlite(layout.database)
  const projectLocks: Locks | undefined = layout.projectMemoryDir ? createFileLocks({ dir: join(layout.projectMemoryDir, '..', '.locks') }) : undefined
  const index = createSqliteSearchIndex(handle, { embedderId: options.embedderId, dimensions: options.dimensions })

  // One set of stores per owner's tree, opened on first use (nothing is created on disk until written).
  const storesOf = ownedStoresOf((owner) => {
    const tree = ownerTree(layout, owner)
    const engramStores = new Map<EngramScope, EngramStore>()
    const { maxFileBytes } = options
    // Forgotten entries and topics are kept in the owner's tree, a project's too (forget-memory.ts).
    const archive = { dir: tree.archiveDir, locks }
    engramStores.set('global', createFileEngramStore({ dir: tree.memoryDir, scope: 'global', locks, clock: options.clock, maxFileBytes, archive }))
    if (tree.projectMemoryDir && projectLocks) {
      engramStores.set('project', createFileEngramStore({ dir: tree.projectMemoryDir, scope: 'project', locks: projectLocks, clock: options.clock, maxFileBytes, archive }))
    }
    return {
      owner,
      engrams: (scope) => engramStores.get(scope),
      documents: createFileDocumentStore({ home: options.home, agent: options.agent, clock: options.clock, locks, owner, maxFileBytes }),
      activity: createFileActivityLog({ dir: tree.activityDir, clock: options.clock, onError: options.onActivityError, maxFileBytes }),
    }
  })
  const agentStores = storesOf('agent')
  const facts = sqliteFacts(handle)

  return {
    name: 'embedded',
    capabilities: {
      fullText: index.capabilities.fullText,
      vectors: index.capabilities.vectors,
      transactions: true,
      memory: 'files',
      describe: { storage: 'SQLite + markdown files', fullText: 'FTS5 with BM25' },
      facts,
      checks: [{ name: 'sqlite', status: 'ok', detail: Object.entries(facts).map(([key, value]) => `${key}: ${value}`).join('; ') }],
    },
    engrams: (scope) => agentStores.engrams(scope),
    documents: agentStores.documents,
    context: createSqliteContextStore(handle, { clock: options.clock }),
    index,
    activity: agentStores.activity,
    owned: storesOf,
    async users() {
      let names: string[]
      try {
        names = readdirSync(layout.usersDir, { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
      } catch {
        return []
      }
      return names
        .map((name) => userFromKey(name))
        .filter((user): user is string => user !== undefined)
        .sort()
    },
    locks,
    jobs: createSqliteJobs(handle),
    lifecycle: createSqliteLifecycle(handle, { clock: options.clock }),
    confirmations: createSqliteConfirmationQueue(handle, { agent: options.agent, ...(options.project ? { project: options.project } : {}), clock: options.clock }),
    migrateToOwners: () => migrateHomeToOwners({ handle, home: options.home, locks, clock: options.clock }),
    owners: async () => ownerCounts(handle, layout, readOwnersMigration(handle)),
    async scrub() {
      // Old copies of rows (a unit before its rewrite, a page before a split) stay in free pages
      // and in the unused space of live ones; only a rebuilt file leaves none (decision 0023).
      await index.flush?.()
      handle.db.exec('VACUUM')
      handle.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    },
    close: async () => {
      try {
        await index.flush?.()
      } finally {
        handle.close()
      }
    },
  }
}
