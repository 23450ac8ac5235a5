/**
 * Procedures (AnimaWorks' procedural memory): `procedures/<slug>.md` documents with the seed's
 * frontmatter (description, confidence, success_count, failure_count, version, created_at,
 * updated_at, auto_distilled, protected). Repeated use reinforces or weakens them:
 *
 *   confidence = success_count / max(1, success_count + failure_count)
 *
 * Every rewrite goes through `DocumentStore.write`, which first versions the old file under
 * `archive/versions/`; a read-modify-write holds the procedure's outcome lock so concurrent reports
 * from several processes are all counted.
 */
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { MemoryDoc, ProcedureFrontmatter } from '../../core/memory-doc.ts'
import type { DocumentStore, Locks } from '../../storage/contracts.ts'
import { closestLabel } from '../skills/labels.ts'

/** A procedure as read from its document, with its counters normalised. */
export interface Procedure {
  slug: string
  description: string
  confidence: number
  successCount: number
  failureCount: number
  version: number
  body: string
  frontmatter: ProcedureFrontmatter
  path: string
}

export interface ProcedureOutcome {
  slug: string
  success: boolean
  successCount: number
  failureCount: number
  confidence: number
  /** The procedure's file, relative to the home (its previous version is under archive/versions/). */
  path: string
}

export interface NewProcedure {
  slug: string
  description: string
  body: string
  /** Default 0.5 for a hand-written procedure (the seed: 0.4 when auto-distilled). */
  confidence?: number
  autoDistilled?: boolean
  protected?: boolean
}

export interface ProcedureStore {
  list(): Promise<Procedure[]>
  get(slug: string): Promise<Procedure | null>
  /** Create a procedure; throws `invalid_argument` when the slug is taken. */
  create(input: NewProcedure): Promise<Procedure>
  /** Count one success or failure, recompute confidence, rewrite atomically (old version archived). */
  reportOutcome(slug: string, success: boolean, note?: string): Promise<ProcedureOutcome>
}

export interface ProcedureStoreOptions {
  documents: DocumentStore
  locks: Locks
  clock: Clock
}

/** Initial confidence of a procedure the agent or user wrote. */
export const DEFAULT_PROCEDURE_CONFIDENCE = 0.5
/** Initial confidence of an automatically distilled procedure (the seed's value). */
export const DISTILLED_PROCEDURE_CONFIDENCE = 0.4

/**
 * The seed's frontmatter of a new procedure (../shared/seeds/003: description, confidence,
 * success_count, failure_count, version, created_at, updated_at, auto_distilled, protected) —
 * what `create` writes, and what `write_memory_file` gives a procedure for the fields its writer left out.
 */
export function newProcedureFrontmatter(input: { description: string; now: string; confidence?: number; autoDistilled?: boolean; protected?: boolean }): ProcedureFrontmatter {
  return {
    description: input.description,
    confidence: input.confidence ?? (input.autoDistilled ? DISTILLED_PROCEDURE_CONFIDENCE : DEFAULT_PROCEDURE_CONFIDENCE),
    success_count: 0,
    failure_count: 0,
    version: 1,
    created_at: input.now,
    updated_at: input.now,
    auto_distilled: input.autoDistilled ?? false,
    protected: input.protected ?? false,
  }
}

/** A procedure's description when its frontmatter gives none: its first heading, else its slug. */
export function describedBy(body: string, slug: string): string {
  return firstHeading(body) ?? slug
}

/** The seed's formula. */
export function procedureConfidence(successCount: number, failureCount: number): number {
  return successCount / Math.max(1, successCount + failureCount)
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0
}

/** A document as a Procedure; hand-written files without frontmatter get the defaults. */
export function procedureOf(doc: MemoryDoc): Procedure {
  const fm = doc.frontmatter as ProcedureFrontmatter
  const successCount = count(fm.success_count)
  const failureCount = count(fm.failure_count)
  const description = typeof fm.description === 'string' && fm.description.trim() !== '' ? fm.description : describedBy(doc.body, doc.slug)
  return {
    slug: doc.slug,
    description,
    confidence: typeof fm.confidence === 'number' && Number.isFinite(fm.confidence) ? fm.confidence : DEFAULT_PROCEDURE_CONFIDENCE,
    successCount,
    failureCount,
    version: typeof fm.version === 'number' && fm.version >= 1 ? fm.version : 1,
    body: doc.body,
    frontmatter: fm,
    path: doc.path,
  }
}

function firstHeading(body: string): string | undefined {
  const match = /^#{1,6}\s+(.+)$/m.exec(body)
  return match?.[1]?.trim()
}

/** A frontmatter block that failed to parse leaves the whole file, `---` included, as the body. */
function hasUnreadableFrontmatter(doc: MemoryDoc): boolean {
  return Object.keys(doc.frontmatter).length === 0 && /^\uFEFF?---[ \t]*\r?\n/.test(doc.body)
}

export function createProcedureStore(options: ProcedureStoreOptions): ProcedureStore {
  const { documents, locks, clock } = options

  async function slugs(): Promise<string[]> {
    return (await documents.list('procedure')).map((ref) => ref.slug).sort()
  }

  async function notFound(slug: string): Promise<EngramError> {
    const available = await slugs()
    const close = closestLabel(slug, available)
    return new EngramError({
      code: ErrorCode.notFound,
      category: 'user',
      message: `No procedure is named "${slug}".`,
      fix: close
        ? `Did you mean "${close.label}"? Saved procedures: ${available.join(', ')}.`
        : available.length > 0
          ? `Use one of the saved procedures: ${available.join(', ')}.`
          : 'No procedures are saved yet.',
      details: { slug, available },
    })
  }

  return {
    async list() {
      const out: Procedure[] = []
      for (const slug of await slugs()) {
        const doc = await documents.read('procedure', slug)
        if (doc) out.push(procedureOf(doc))
      }
      return out
    },

    async get(slug) {
      const doc = await documents.read('procedure', slug)
      return doc ? procedureOf(doc) : null
    },

    async create(input) {
      const outcome = await locks.withLock(`procedure-outcome:${input.slug}`, async () => {
        if (await documents.read('procedure', input.slug)) {
          throw new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'user',
            message: `A procedure named "${input.slug}" already exists.`,
            fix: 'Pick another slug, or report outcomes on the existing procedure.',
            details: { slug: input.slug },
          })
        }
        const frontmatter = newProcedureFrontmatter({ ...input, now: clock.now().toISOString() })
        return procedureOf(await documents.write('procedure', input.slug, frontmatter, input.body.endsWith('\n') ? input.body : `${input.body}\n`, { reason: 'created' }))
      })
      if (outcome.kind !== 'done') throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Procedure "${input.slug}" is locked.` })
      return outcome.value
    },

    async reportOutcome(slug, success, note) {
      const outcome = await locks.withLock(`procedure-outcome:${slug}`, async () => {
        const doc = await documents.read('procedure', slug)
        if (!doc) throw await notFound(slug)
        if (hasUnreadableFrontmatter(doc)) {
          throw new EngramError({
            code: ErrorCode.storageCorrupt,
            category: 'user',
            message: `The frontmatter of ${doc.path} cannot be read, so its counters cannot be updated.`,
            fix: 'Repair the YAML between the --- lines by hand (engram status lists the problem); the file was left as it is.',
            details: { path: doc.path },
          })
        }
        const current = procedureOf(doc)
        const successCount = current.successCount + (success ? 1 : 0)
        const failureCount = current.failureCount + (success ? 0 : 1)
        const confidence = procedureConfidence(successCount, failureCount)
        const now = clock.now().toISOString()
        const cleanNote = note?.replace(/\s+/g, ' ').trim()
        const frontmatter: ProcedureFrontmatter = {
          ...doc.frontmatter,
          description: current.description,
          confidence,
          success_count: successCount,
          failure_count: failureCount,
          version: current.version,
          created_at: typeof doc.frontmatter.created_at === 'string' ? doc.frontmatter.created_at : now,
          updated_at: now,
          last_outcome: { success, at: now, ...(cleanNote ? { note: cleanNote.slice(0, 500) } : {}) },
        }
        const written = await documents.write('procedure', slug, frontmatter, doc.body, {
          reason: `outcome: ${success ? 'success' : 'failure'}${cleanNote ? ` — ${cleanNote.slice(0, 200)}` : ''}`,
        })
        return { slug, success, successCount, failureCount, confidence, path: written.path }
      })
      if (outcome.kind !== 'done') throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Procedure "${slug}" is locked.` })
      return outcome.value
    },
  }
}

/**
 * Several owners' procedures as one store (decision 0017), most specific first: a slug found in an
 * earlier store hides the same slug in a later one; new procedures go into the first store.
 */
export function createProcedureView(stores: readonly ProcedureStore[]): ProcedureStore {
  const [own] = stores
  if (!own) throw new Error('a procedure view needs at least one store')
  if (stores.length === 1) return own
  async function holder(slug: string): Promise<ProcedureStore | undefined> {
    for (const store of stores) if (await store.get(slug)) return store
    return undefined
  }
  return {
    async list() {
      const seen = new Set<string>()
      const out: Procedure[] = []
      for (const store of stores) {
        for (const procedure of await store.list()) {
          if (seen.has(procedure.slug)) continue
          seen.add(procedure.slug)
          out.push(procedure)
        }
      }
      return out.sort((a, b) => a.slug.localeCompare(b.slug))
    },
    async get(slug) {
      const store = await holder(slug)
      return store ? store.get(slug) : own.get(slug)
    },
    create: (input) => own.create(input),
    async reportOutcome(slug, success, note) {
      return ((await holder(slug)) ?? own).reportOutcome(slug, success, note)
    },
  }
}
