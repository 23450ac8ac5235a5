/**
 * Procedure version retention (the seed's monthly "archive/procedure_versions/ cleanup: retain only
 * the 5 most recent versions per procedure file"; decision 0034). Every procedure of every owner's
 * tree keeps its newest saved versions in `archive/versions/procedure/`; the older ones move to
 * `archive/forgotten/versions/procedure/` under the same names (DocumentStore.retainVersions)
 * instead of being deleted, because nothing is deleted without an explicit command (decision
 * 0023): `engram forget … --purge` still removes them, and moving a file back brings it back.
 * Offline and idempotent: a second run moves nothing.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import { type DocKind, MEMORY_KINDS } from '../../core/memory-kinds.ts'
import { type Owner, ownerOfUser } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { assertSafeSlug, slugOfVersionFile } from '../../storage/document-paths.ts'
import { type HomeLayout, ownerTree } from '../../storage/home-layout.ts'
import { memoryPathOf } from '../forgetting/forget-memory.ts'

type BoundedKinds = { [K in DocKind]: (typeof MEMORY_KINDS)[K]['versionsKept'] extends null ? never : K }[DocKind]
/*
 * The kinds whose versions retention bounds, by their entry in core/memory-kinds.ts. It runs over
 * procedures: a kind given a bound in the registry fails to compile here until this run (and the
 * monthly unit that applies it) go over that kind too.
 */
const BOUNDED: { readonly [K in BoundedKinds]: number } = { procedure: MEMORY_KINDS.procedure.versionsKept }

/** The seed keeps the 5 most recent versions of each procedure. */
export const PROCEDURE_VERSIONS_KEPT = BOUNDED.procedure

export interface VersionRetentionOptions {
  /** Versions kept per procedure (default 5). */
  keep?: number
  /** Say what would move, move nothing. */
  dryRun?: boolean
  /** Only these owners' trees (default: the agent's, the shared and every user's). */
  owners?: Owner[]
}

export interface VersionRetentionRun {
  keep: number
  dryRun: boolean
  /** Each procedure that had more than `keep` saved versions. */
  procedures: Array<{
    /** Its memory path (`users/ada/procedures/deploy.md`); a forgotten procedure's versions count too. */
    path: string
    owner: Owner
    slug: string
    /** Versions left in `archive/versions/procedure/`. */
    kept: number
    /** The older versions, as their paths now: moved to `archive/forgotten/versions/procedure/` (a dry run: still where they were). */
    moved: string[]
  }>
  /** How many versions moved (or would). */
  moved: number
  /** Procedures that could not be done this time (a busy lock, a file that cannot be moved), and why; the next run tries again. */
  problems: Array<{ path: string; error: string }>
}

/**
 * Procedures with saved versions in an owner's tree, live or not: a forgotten procedure's versions
 * stay in `archive/versions/` (its history), and the store lists only live documents.
 */
async function versionedProcedures(layout: HomeLayout, owner: Owner): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(join(ownerTree(layout, owner).archiveDir, 'versions', 'procedure'))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return []
    throw error
  }
  const slugs = new Set<string>()
  for (const name of names) {
    const slug = slugOfVersionFile(name)
    if (slug === undefined) continue
    try {
      assertSafeSlug(slug)
      slugs.add(slug)
    } catch {
      // A stray file name no procedure could have: not a version, left alone.
    }
  }
  return [...slugs]
}

/**
 * Keeps each procedure's `keep` newest saved versions and moves the older ones out of the versions
 * folder, in the agent's, the shared and every user's tree. The procedures are the live ones and
 * those whose versions outlived them (a forgotten procedure keeps a history too).
 */
export async function retainProcedureVersions(deps: { backend: Backend; layout: HomeLayout }, options: VersionRetentionOptions = {}): Promise<VersionRetentionRun> {
  const keep = options.keep ?? PROCEDURE_VERSIONS_KEPT
  if (!Number.isInteger(keep) || keep < 0) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `Cannot keep ${JSON.stringify(options.keep)} versions of each procedure: keep must be a whole number, 0 or more.`,
      fix: 'Pass keep: 5 (the seed keeps the 5 most recent versions), or leave it out.',
      details: { keep: options.keep },
    })
  }
  const dryRun = options.dryRun === true
  const run: VersionRetentionRun = { keep, dryRun, procedures: [], moved: 0, problems: [] }
  const owners: Owner[] = options.owners ?? ['agent', 'shared', ...(await deps.backend.users()).map((user) => ownerOfUser(user))]
  for (const owner of owners) {
    const documents = deps.backend.owned(owner).documents
    const live = (await documents.list('procedure')).map((ref) => ref.slug)
    // On a backend whose memory is rows no seam lists the versions of a procedure that is no longer
    // live (decision 0036): only the live ones are kept in bounds there, through retainVersions.
    const outlived = deps.backend.capabilities.memory === 'files' ? await versionedProcedures(deps.layout, owner) : []
    const slugs = [...new Set([...live, ...outlived])].sort()
    for (const slug of slugs) {
      const path = memoryPathOf({ kind: 'document', owner, docKind: 'procedure', slug })
      try {
        const moved = dryRun ? (await documents.versions('procedure', slug)).slice(keep).map((version) => version.path) : await documents.retainVersions('procedure', slug, keep)
        if (moved.length === 0) continue
        const kept = (await documents.versions('procedure', slug)).length - (dryRun ? moved.length : 0)
        run.procedures.push({ path, owner, slug, kept, moved })
        run.moved += moved.length
      } catch (error) {
        // One procedure never stops the others' retention.
        run.problems.push({ path, error: describeError(error) })
      }
    }
  }
  return run
}
