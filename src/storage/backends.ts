/**
 * The list of storage backends, keyed by the scheme of `storage.url` (ENGRAM_DATABASE_URL) or of
 * `engram migrate --to` (decision 0059). No URL, or a folder, is the embedded home; a scheme
 * picks its entry. Each entry loads its module only when opened (a dynamic import): an embedded
 * mind never loads `pg` (an optional peer dependency) nor the PostgreSQL code.
 *
 * A new backend is one entry here, its module implementing `Backend`, and one line in the
 * contract suites' fixtures (docs/adding-a-backend.md).
 */
import type { Clock } from '../core/clock.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { Backend } from './contracts.ts'

/** What a backend is opened with; each entry takes what applies to it. */
export interface OpenBackendOptions {
  /** `storage.url`; undefined for the embedded home. */
  url?: string
  /** The home folder (the embedded backend keeps everything there; the others keep host files there). */
  home: string
  agent: string
  project?: string
  clock: Clock
  /** `storage.schema`: the schema of a database that holds the tables. */
  schema?: string
  /** The embedder's vector space id and size; vectors of another space are rebuilt. */
  embedderId?: string
  dimensions?: number
  /** `memory.maxFileBytes`: memory texts larger than this are reported, not read. */
  maxFileBytes?: number
}

/** One backend: the URL schemes that select it and how to open it. */
export interface BackendEntry {
  /** The `Backend.name` it opens (a label for people). */
  name: string
  /** URL schemes, lower case without the colon; empty for the backend chosen when there is no URL. */
  schemes: readonly string[]
  /** A URL (or what to give instead) as the error for an unknown scheme shows it. */
  example: string
  open(options: OpenBackendOptions): Promise<Backend>
}

/** Every backend engram can open. The first is the one without a URL. */
export const BACKENDS: readonly BackendEntry[] = [
  {
    name: 'embedded',
    schemes: [],
    example: 'no storage.url (the home folder; a folder path for engram migrate --to)',
    async open(options) {
      const { openEmbeddedBackend } = await import('./embedded.ts')
      return openEmbeddedBackend({
        home: options.home,
        agent: options.agent,
        ...(options.project !== undefined ? { project: options.project } : {}),
        clock: options.clock,
        ...(options.embedderId !== undefined ? { embedderId: options.embedderId, dimensions: options.dimensions } : {}),
        ...(options.maxFileBytes !== undefined ? { maxFileBytes: options.maxFileBytes } : {}),
      })
    },
  },
  {
    name: 'postgres',
    schemes: ['postgres', 'postgresql'],
    example: 'postgres://user:password@host:5432/database',
    async open(options) {
      const { openPostgresBackend } = await import('./postgres/backend.ts')
      return openPostgresBackend({
        url: options.url ?? '',
        ...(options.schema !== undefined ? { schema: options.schema } : {}),
        agent: options.agent,
        ...(options.project !== undefined ? { project: options.project } : {}),
        clock: options.clock,
        ...(options.embedderId !== undefined ? { embedderId: options.embedderId, dimensions: options.dimensions } : {}),
        ...(options.maxFileBytes !== undefined ? { maxFileBytes: options.maxFileBytes } : {}),
      })
    },
  },
]

/** The scheme of `url` in lower case (`postgresql://…` → `postgresql`); undefined for no URL or a path. */
export function schemeOf(url: string | undefined): string | undefined {
  return url === undefined ? undefined : /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase()
}

/**
 * The entry `url` selects: the one without schemes (embedded) when there is no URL, else the one
 * serving its scheme. A URL without a scheme, or with one no entry serves, is a clear error with
 * the fix (never a silent fall back to the home).
 */
export function backendEntryFor(url: string | undefined): BackendEntry {
  const scheme = schemeOf(url)
  const entry = url === undefined ? BACKENDS.find((candidate) => candidate.schemes.length === 0) : scheme === undefined ? undefined : BACKENDS.find((candidate) => candidate.schemes.includes(scheme))
  if (entry) return entry
  const known = BACKENDS.flatMap((candidate) => candidate.schemes.map((name) => `${name}://`))
  throw new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: scheme === undefined ? 'The storage URL has no scheme (scheme://…), so no backend can be chosen for it.' : `No storage backend serves ${scheme}:// URLs (known: ${known.join(', ')}).`,
    fix: `Give storage.url (ENGRAM_DATABASE_URL) as one of: ${BACKENDS.map((candidate) => `${candidate.name}: ${candidate.example}`).join('; ')}.`,
    details: { scheme: scheme ?? null },
  })
}

/** The entry named `name` (`engram eval --backend`), or undefined. */
export function backendEntryNamed(name: string): BackendEntry | undefined {
  return BACKENDS.find((entry) => entry.name === name)
}

/** Opens the backend `options.url` selects (creating or migrating what it holds as needed). */
export function openBackend(options: OpenBackendOptions): Promise<Backend> {
  return backendEntryFor(options.url).open(options)
}
