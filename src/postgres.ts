/**
 * `engram/postgres`: the PostgreSQL backend (decision 0037). A mind uses it when `storage.url` /
 * ENGRAM_DATABASE_URL is set (`createMind` opens it); these exports are for hosts that open the
 * backend or one of its seams themselves (tools, migrations, tests of their own). `pg` is an
 * optional peer dependency: install it beside engram to use any of this.
 */
export { openPostgresBackend, type PostgresBackend, type PostgresBackendOptions } from './storage/postgres/backend.ts'
export { type OpenPostgresOptions, openPostgres, type PostgresFeatures, type PostgresHandle } from './storage/postgres/connection.ts'
export { createPostgresActivityLog, type PostgresActivityLogOptions } from './storage/postgres/activity-log.ts'
export { createPostgresConfirmationQueue, type PostgresConfirmationQueueOptions } from './storage/postgres/confirmation-queue.ts'
export { createPostgresContextStore } from './storage/postgres/context-store.ts'
export { createPostgresDocumentStore, type PostgresDocumentStoreOptions } from './storage/postgres/document-store.ts'
export { createPostgresEngramStore } from './storage/postgres/engram-store.ts'
export { createPostgresJobs } from './storage/postgres/jobs.ts'
export { createPostgresLifecycle } from './storage/postgres/lifecycle.ts'
export { createPostgresLocks } from './storage/postgres/locks.ts'
export { createPostgresSearchIndex } from './storage/postgres/search-index.ts'
