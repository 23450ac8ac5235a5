/**
 * The one list of backends the 9 storage contract suites run over, as Kysely loops its test
 * suite over `DIALECTS` (decision 0059). Each `*.contract.test.ts` beside this file loops over it,
 * so each suite runs once per backend; a new backend is one entry here.
 *
 * PostgreSQL is present when a server is given (`npm test` starts one and sets
 * ENGRAM_TEST_DATABASE_URL); without one its suites fail saying why, or are reported skipped
 * under ENGRAM_SKIP_POSTGRES=1 (`onPostgres`). Each fixture is a fresh store: a temp home, or a
 * schema of its own.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ManualClock } from '../../core/clock.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { createFileActivityLog } from '../files/activity-log.ts'
import { createFileDocumentStore } from '../files/document-store.ts'
import { createFileEngramStore } from '../files/engram-store.ts'
import { createFileLocks } from '../files/locks.ts'
import { createPostgresActivityLog } from '../postgres/activity-log.ts'
import { createPostgresConfirmationQueue } from '../postgres/confirmation-queue.ts'
import { createPostgresContextStore } from '../postgres/context-store.ts'
import { createPostgresDocumentStore } from '../postgres/document-store.ts'
import { createPostgresEngramStore } from '../postgres/engram-store.ts'
import { createPostgresJobs } from '../postgres/jobs.ts'
import { createPostgresLifecycle } from '../postgres/lifecycle.ts'
import { createPostgresLocks } from '../postgres/locks.ts'
import { createPostgresSearchIndex } from '../postgres/search-index.ts'
import { onPostgres, openTestHandle } from '../postgres/test-support/test-database.ts'
import { createSqliteConfirmationQueue } from '../sqlite/confirmation-queue.ts'
import { createSqliteContextStore } from '../sqlite/context-store.ts'
import { openSqlite, type SqliteHandle } from '../sqlite/database.ts'
import { createSqliteJobs } from '../sqlite/jobs.ts'
import { createSqliteLifecycle } from '../sqlite/lifecycle.ts'
import { createSqliteSearchIndex } from '../sqlite/search-index.ts'
import type { ActivityLogFixture } from './activity-log.contract.ts'
import type { ConfirmationQueueFixture } from './confirmation-queue.contract.ts'
import type { ContextStoreFixture } from './context-store.contract.ts'
import type { DocumentStoreFixture } from './document-store.contract.ts'
import type { EngramStoreFixture } from './engram-store.contract.ts'
import type { JobsFixture } from './jobs.contract.ts'
import type { LifecycleFixture } from './lifecycle.contract.ts'
import type { LocksFixture } from './locks.contract.ts'
import type { SearchIndexFixture } from './search-index.contract.ts'

/** A fresh store of each seam of one backend, for its contract suite. */
export interface SeamFixtures {
  engrams(): Promise<EngramStoreFixture>
  documents(): Promise<DocumentStoreFixture>
  context(): Promise<ContextStoreFixture>
  /** One entry per way the backend keeps vectors (the suite is gated on `capabilities`). */
  searchIndexes: Array<{ name: string; make(): Promise<SearchIndexFixture> }>
  activity(): Promise<ActivityLogFixture>
  locks(): Promise<LocksFixture>
  jobs(): Promise<JobsFixture>
  lifecycle(): Promise<LifecycleFixture>
  confirmations(): Promise<ConfirmationQueueFixture>
}

/** One backend: its name, and its seams when it can run here (else it registers why not). */
export interface BackendFixture {
  name: string
  /** Calls `register` with the seams when the backend is available; otherwise registers a test saying why not. */
  whenAvailable(suite: string, register: (seams: SeamFixtures) => void): void
}

const clockAt = (at: string) => new ManualClock(at)

/** A SQLite file in a temp home; cleanup closes it and removes the home. */
function tempSqlite(prefix: string): { handle: SqliteHandle; cleanup(): Promise<void> } {
  const temp = makeTempHome(prefix)
  mkdirSync(temp.home, { recursive: true })
  const handle = openSqlite(join(temp.home, 'engram.db'))
  return {
    handle,
    cleanup: async () => {
      handle.close()
      temp.cleanup()
    },
  }
}

const probe = openSqlite(':memory:')
const hasSqliteVec = probe.features.sqliteVec !== false
probe.close()

/** The embedded backend: markdown and JSONL files in a home, one SQLite file. */
const embedded: SeamFixtures = {
  async engrams() {
    const temp = makeTempHome()
    const clock = clockAt('2026-03-04T10:00:00Z')
    const locks = createFileLocks({ dir: join(temp.home, 'locks') })
    const store = createFileEngramStore({ dir: join(temp.home, 'agents', 'default', 'memory'), scope: 'global', locks, clock, archive: { dir: join(temp.home, 'agents', 'default', 'archive'), locks } })
    return { store, clock, cleanup: async () => temp.cleanup() }
  },
  async documents() {
    const temp = makeTempHome()
    const clock = clockAt('2026-03-04T10:00:00Z')
    const store = createFileDocumentStore({ home: temp.home, agent: 'default', clock, locks: createFileLocks({ dir: join(temp.home, 'locks') }) })
    return { store, clock, cleanup: async () => temp.cleanup() }
  },
  async context() {
    const { handle, cleanup } = tempSqlite('engram-sqlite-ctx-')
    return { store: createSqliteContextStore(handle, { clock: new ManualClock() }), index: () => createSqliteSearchIndex(handle), cleanup }
  },
  searchIndexes: [
    ...(hasSqliteVec ? [{ name: 'sqlite + sqlite-vec', vectorBackend: 'sqlite-vec' as const }] : []),
    { name: 'sqlite + TypeScript vectors', vectorBackend: 'typescript' as const },
  ].map(({ name, vectorBackend }) => ({
    name,
    async make() {
      const { handle, cleanup } = tempSqlite('engram-sqlite-index-')
      return { index: createSqliteSearchIndex(handle, { vectorBackend }), cleanup }
    },
  })),
  async activity() {
    const temp = makeTempHome()
    const errors: unknown[] = []
    const log = createFileActivityLog({ dir: join(temp.home, 'agents', 'default', 'activity'), clock: clockAt('2026-03-04T10:00:00Z'), onError: (error) => errors.push(error) })
    return { log, errors, cleanup: async () => temp.cleanup() }
  },
  async locks() {
    const temp = makeTempHome()
    return { locks: createFileLocks({ dir: join(temp.home, 'locks') }), cleanup: async () => temp.cleanup() }
  },
  async jobs() {
    const { handle, cleanup } = tempSqlite('engram-sqlite-jobs-')
    return { jobs: createSqliteJobs(handle), cleanup }
  },
  async lifecycle() {
    const { handle, cleanup } = tempSqlite('engram-sqlite-lifecycle-')
    return { lifecycle: createSqliteLifecycle(handle, { clock: clockAt('2026-03-02T09:00:00Z') }), cleanup }
  },
  async confirmations() {
    const { handle, cleanup } = tempSqlite('engram-sqlite-confirmations-')
    const clock = clockAt('2026-03-01T10:00:00Z')
    return { queueOf: (agent) => createSqliteConfirmationQueue(handle, { agent, clock }), cleanup }
  },
}

/** The PostgreSQL backend on the server at `url`: each fixture in a fresh schema, dropped by its cleanup. */
function postgres(url: string): SeamFixtures {
  return {
    async engrams() {
      const { handle, cleanup } = await openTestHandle(url)
      const clock = clockAt('2026-03-04T10:00:00Z')
      return { store: createPostgresEngramStore(handle, { agent: 'default', scope: 'global', clock }), clock, cleanup }
    },
    async documents() {
      const { handle, cleanup } = await openTestHandle(url)
      const clock = clockAt('2026-03-04T10:00:00Z')
      return { store: createPostgresDocumentStore(handle, { agent: 'default', clock }), clock, cleanup }
    },
    async context() {
      const { handle, cleanup } = await openTestHandle(url)
      const index = await createPostgresSearchIndex(handle)
      return { store: createPostgresContextStore(handle, { clock: new ManualClock() }), index: () => index, cleanup }
    },
    searchIndexes: [
      {
        name: 'postgres + pgvector',
        async make() {
          const { handle, cleanup } = await openTestHandle(url)
          return { index: await createPostgresSearchIndex(handle), cleanup }
        },
      },
    ],
    async activity() {
      const { handle, cleanup } = await openTestHandle(url)
      const errors: unknown[] = []
      const log = createPostgresActivityLog(handle, { agent: 'agent', clock: clockAt('2026-03-04T10:00:00Z'), onError: (error) => errors.push(error) })
      return { log, errors, cleanup }
    },
    async locks() {
      const { handle, cleanup } = await openTestHandle(url)
      return { locks: createPostgresLocks(handle), cleanup }
    },
    async jobs() {
      const { handle, cleanup } = await openTestHandle(url)
      return { jobs: createPostgresJobs(handle), cleanup }
    },
    async lifecycle() {
      const { handle, cleanup } = await openTestHandle(url)
      return { lifecycle: createPostgresLifecycle(handle, { clock: clockAt('2026-03-02T09:00:00Z') }), cleanup }
    },
    async confirmations() {
      const { handle, cleanup } = await openTestHandle(url)
      const clock = clockAt('2026-03-01T10:00:00Z')
      return { queueOf: (agent) => createPostgresConfirmationQueue(handle, { agent, clock }), cleanup }
    },
  }
}

/** Every backend the contract suites run over. */
export const BACKEND_FIXTURES: readonly BackendFixture[] = [
  { name: 'embedded', whenAvailable: (_suite, register) => register(embedded) },
  { name: 'postgres', whenAvailable: (suite, register) => onPostgres(suite, (url) => register(postgres(url))) },
]
