/**
 * The PostgreSQL backend (decision 0037): every seam of a `Backend` as rows of one schema of one
 * database, shared by every engram process on every host that opens it (DESIGN §4: "On
 * PostgreSQL everything is rows, and markdown is an export"). Selected by `storage.url`
 * (ENGRAM_DATABASE_URL); `createMind` opens it instead of the embedded backend.
 *
 * What stays on the host: the home folder still holds what belongs to one process or one machine —
 * the write-ahead journals of replies being streamed, `config.json`, model caches — and, in this
 * version, skills (folders of files) and the resolutions list (decision 0037 says why and what that
 * means for several hosts).
 */
import type { EngramScope } from '../../core/engram.ts'
import { requireSupportedNode } from '../../core/node-version.ts'
import { type Owner, ownerOfUser, userOfOwner } from '../../core/owner.ts'
import type { Backend, BackendCheck, EngramStore } from '../contracts.ts'
import { createPostgresActivityLog } from './activity-log.ts'
import { createPostgresConfirmationQueue } from './confirmation-queue.ts'
import { type OpenPostgresOptions, openPostgres, type PostgresHandle } from './connection.ts'
import { createPostgresContextStore } from './context-store.ts'
import { createPostgresDocumentStore } from './document-store.ts'
import { createPostgresEngramStore } from './engram-store.ts'
import { createPostgresJobs } from './jobs.ts'
import { createPostgresLifecycle } from './lifecycle.ts'
import { createPostgresLocks } from './locks.ts'
import { type BackendCommonOptions, ownedStoresOf } from '../owned-stores.ts'
import { createPostgresSearchIndex } from './search-index.ts'

export interface PostgresBackendOptions extends BackendCommonOptions {
  /** `postgres://user:password@host:5432/database`. */
  url: string
  /** The schema holding engram's tables (default `engram`); deployments sharing a database use one each. */
  schema?: string
  /** Connection pool sizes (see `OpenPostgresOptions`). */
  maxConnections?: number
  maxSessionConnections?: number
}

/** The PostgreSQL backend and its handle (for `engram doctor` and the tools that speak SQL). */
export interface PostgresBackend extends Backend {
  readonly name: 'postgres'
  readonly handle: PostgresHandle
}

/** Tables whose rows belong to an owner: a user "has memory" of an agent when one of them holds a row of theirs. */
const OWNED_TABLES = ['engram_files', 'docs_live', 'activity_events'] as const

/** Every table holding memory an owner has as rows (what erasing a user deletes besides the seams' own purges). */
const USER_MEMORY_TABLES = ['engram_files', 'docs_live', 'docs_archived', 'docs_versions', 'activity_events', 'activity_days'] as const

/** What `engram doctor` says of the server and of pgvector (the fix says how to turn vectors on). */
function postgresChecks(handle: PostgresHandle, vectorsOff: string | undefined): BackendCheck[] {
  const { features } = handle
  const server: BackendCheck = { name: 'postgres', status: 'ok', detail: `PostgreSQL ${features.serverVersion} at ${handle.location}, schema version ${handle.schemaVersion}` }
  const vector: BackendCheck =
    features.pgvector === false
      ? {
          name: 'pgvector',
          status: 'warn',
          detail: `${vectorsOff ?? 'the vector extension is not installed in this database'}: memories are indexed and recalled by their words only`,
          fix: 'install pgvector on the server (e.g. the postgresql-NN-pgvector package) and run CREATE EXTENSION vector in the database as a superuser (engram creates it on open when its role may), then run engram reindex --full to embed what was indexed by words',
        }
      : { name: 'pgvector', status: 'ok', detail: `pgvector ${features.pgvector}${features.pgvectorCreated ? ' (created by engram on open)' : ''}` }
  return [server, vector]
}

/** Open (migrating as needed) the PostgreSQL backend of one agent. */
export async function openPostgresBackend(options: PostgresBackendOptions): Promise<PostgresBackend> {
  // engram is built and tested on Node 22.13+ only, whatever the backend (decision 0068).
  requireSupportedNode()
  const connection: OpenPostgresOptions = { url: options.url, clock: options.clock }
  if (options.schema !== undefined) connection.schema = options.schema
  if (options.maxConnections !== undefined) connection.maxConnections = options.maxConnections
  if (options.maxSessionConnections !== undefined) connection.maxSessionConnections = options.maxSessionConnections
  const handle = await openPostgres(connection)
  try {
    return await assemble(handle, options)
  } catch (error) {
    await handle.close()
    throw error
  }
}

async function assemble(handle: PostgresHandle, options: PostgresBackendOptions): Promise<PostgresBackend> {
  const { agent, clock, maxFileBytes } = options
  const index = await createPostgresSearchIndex(handle, {
    ...(options.embedderId !== undefined ? { embedderId: options.embedderId } : {}),
    ...(options.dimensions !== undefined ? { dimensions: options.dimensions } : {}),
  })
  const locks = createPostgresLocks(handle)

  const storesOf = ownedStoresOf((owner) => {
    const engramStores = new Map<EngramScope, EngramStore>()
    const common = { agent, owner, clock, ...(maxFileBytes !== undefined ? { maxFileBytes } : {}) }
    engramStores.set('global', createPostgresEngramStore(handle, { ...common, scope: 'global' }))
    // As in the home: a project's memory is the agent's or a user's (`<project>/.engram/…`), never shared memory.
    if (options.project !== undefined && owner !== 'shared') engramStores.set('project', createPostgresEngramStore(handle, { ...common, scope: 'project', project: options.project }))
    return {
      owner,
      engrams: (scope) => engramStores.get(scope),
      documents: createPostgresDocumentStore(handle, { agent, owner, clock }),
      activity: createPostgresActivityLog(handle, { agent, owner, clock, ...(options.onActivityError ? { onError: options.onActivityError } : {}) }),
    }
  })
  const agentStores = storesOf('agent')
  const { features } = handle
  const vectorsOff = index.capabilities.vectors === false ? `pgvector is not installed in ${handle.location}: ${features.pgvectorMissing ?? 'the extension is missing'}` : undefined

  return {
    name: 'postgres',
    handle,
    capabilities: {
      fullText: index.capabilities.fullText,
      vectors: index.capabilities.vectors,
      ...(vectorsOff !== undefined ? { vectorsOff } : {}),
      transactions: true,
      memory: 'rows',
      describe: { storage: 'PostgreSQL: memory files as rows, tables, pgvector', fullText: 'BM25 over term rows, ranked as the embedded index ranks' },
      facts: {
        postgres: features.serverVersion,
        pgvector: features.pgvector === false ? 'not installed' : `${features.pgvector}${features.pgvectorCreated ? ' (created by engram on open)' : ''}`,
        database: handle.location,
        'schema version': String(handle.schemaVersion),
      },
      checks: postgresChecks(handle, vectorsOff),
    },
    engrams: (scope) => agentStores.engrams(scope),
    documents: agentStores.documents,
    context: createPostgresContextStore(handle, { clock }),
    index,
    activity: agentStores.activity,
    owned: storesOf,
    async users() {
      const union = OWNED_TABLES.map((table) => `SELECT DISTINCT owner FROM ${table} WHERE agent = $1 AND owner LIKE 'user:%'`).join(' UNION ')
      const { rows } = await handle.pool.query<{ owner: string }>(union, [agent])
      return rows
        .map((row) => userOfOwner(row.owner as Owner))
        .filter((user): user is string => user !== undefined)
        .sort()
    },
    async purgeUserMemory(user) {
      const owner = ownerOfUser(user)
      // One transaction: an erasure that stops half-way leaves nothing of it done, and running it again finishes it.
      return handle.transaction(async (client) => {
        const agents = new Set<string>()
        let rows = 0
        for (const table of USER_MEMORY_TABLES) {
          const { rows: deleted } = await client.query<{ agent: string }>(`DELETE FROM ${table} WHERE owner = $1 RETURNING agent`, [owner])
          rows += deleted.length
          for (const row of deleted) if (row.agent !== '') agents.add(row.agent)
        }
        return { agents: [...agents].sort(), rows }
      })
    },
    locks,
    jobs: createPostgresJobs(handle),
    lifecycle: createPostgresLifecycle(handle, { clock }),
    confirmations: createPostgresConfirmationQueue(handle, { agent, ...(options.project !== undefined ? { project: options.project } : {}), clock }),
    async scrub() {
      // Deleted rows stay in the table files until their space is reused; VACUUM FULL rewrites
      // each table of the schema without them (decision 0023). It takes an exclusive lock per table.
      await index.flush?.()
      const { rows } = await handle.pool.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY tablename', [handle.schema])
      for (const row of rows) await handle.pool.query(`VACUUM FULL "${handle.schema}"."${row.name}"`)
    },
    async close() {
      try {
        await index.flush?.()
      } finally {
        await handle.close()
      }
    },
  }
}
