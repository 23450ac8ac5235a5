/**
 * The PostgreSQL backend (issue 16), seam by seam. This is what `engram/postgres` will export once
 * every seam of a `Backend` exists here; until then `createMind` refuses `storage.url` (decision
 * 0035), and these are reached by the contract tests and by code that uses a seam on its own.
 */
export { createPostgresActivityLog, type PostgresActivityLogOptions } from './activity-log.ts'
export { createPostgresConfirmationQueue, type PostgresConfirmationQueueOptions } from './confirmation-queue.ts'
export { createPostgresDocumentStore, type PostgresDocumentStoreOptions } from './document-store.ts'
export { type OpenPostgresOptions, openPostgres, type PostgresFeatures, type PostgresHandle } from './connection.ts'
export { createPostgresJobs } from './jobs.ts'
export { createPostgresLifecycle } from './lifecycle.ts'
export { createPostgresLocks } from './locks.ts'
