/**
 * How saved versions and archived copies of documents are named, and which slugs are safe, on
 * every backend: the embedded one names files so (`files/document-store.ts`), PostgreSQL names its
 * rows the same (`postgres/document-store.ts`), so an archived path means one thing everywhere.
 */
import { isAbsolute } from 'node:path'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { DOC_KINDS, type DocKind } from '../core/memory-doc.ts'
import type { ArchiveReason } from './contracts.ts'

/** Why a document's copy is in the archive (`archive/<reason>/<kind>/<slug>.md`); saved versions are apart. */
export const ARCHIVE_REASONS: ReadonlyArray<Exclude<ArchiveReason, 'versions'>> = ['forgotten', 'merged', 'procedure_versions']

/** What restoring a document that is not in the archive (`source`) throws. */
export function nothingArchived(kind: DocKind, slug: string, reason: string, source: string): EngramError {
  return new EngramError({
    code: ErrorCode.notFound,
    category: 'user',
    message: `Cannot restore ${kind} "${slug}": nothing is archived at ${source}.`,
    fix: `Check the slug and the reason it was archived with (${ARCHIVE_REASONS.join(', ')}).`,
    details: { kind, slug, reason },
  })
}

// `2026-01-01T09-00-00-000Z`, optionally `-2`, `-3`… when one instant archives twice.
/** The stamp (and `-n`) a saved version's file name carries after `<slug>.`: its time and its number within that instant. */
export const VERSION_STAMP = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z(?:-(\d+))?\.md$/

/**
 * The slug a saved version's file name belongs to (`deploy.2026-01-01T09-00-00-000Z-2.md` →
 * `deploy`), or undefined for a name no version has.
 */
export function slugOfVersionFile(name: string): string | undefined {
  const dot = name.search(/\.\d{4}-\d{2}-\d{2}T[^.]*\.md$/)
  if (dot <= 0 || !VERSION_STAMP.test(name.slice(dot + 1))) return undefined
  return name.slice(0, dot)
}

/** What an archived path names (`…/archive/<reason>/<kind>/<slug>.md`, `…/archive/[forgotten/]versions/<kind>/<name>`), or undefined. */
export type ArchivedPathParts =
  | { type: 'copy'; reason: string; kind: DocKind; slug: string }
  | { type: 'version'; retired: boolean; kind: DocKind; slug: string; name: string }

/**
 * Reads an archived copy's or saved version's path as its parts. The caller still checks that the
 * path is where its own store puts that document's archive (the tree before `archive/`).
 */
export function archivedPathParts(path: string): ArchivedPathParts | undefined {
  if (typeof path !== 'string') return undefined
  const kinds = DOC_KINDS as readonly string[]
  const version = /\/archive\/(versions|forgotten\/versions)\/([a-z]+)\/([^/]+)$/.exec(path)
  if (version) {
    const [, folder, kind, name] = version as unknown as [string, string, DocKind, string]
    const slug = slugOfVersionFile(name)
    return kinds.includes(kind) && slug !== undefined && isSafeSlug(slug) ? { type: 'version', retired: folder !== 'versions', kind, slug, name } : undefined
  }
  const copy = /\/archive\/(forgotten|merged|procedure_versions)\/([a-z]+)\/([^/]+)\.md$/.exec(path)
  if (!copy) return undefined
  const [, reason, kind, slug] = copy as unknown as [string, string, DocKind, string]
  return kinds.includes(kind) && isSafeSlug(slug) ? { type: 'copy', reason, kind, slug } : undefined
}

function isSafeSlug(slug: string): boolean {
  try {
    assertSafeSlug(slug)
    return true
  } catch {
    return false
  }
}

function invalid(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

/**
 * Throws `invalid_argument` unless `slug` names one file inside its folder: not empty, no `/` or
 * `\`, no `..`, not absolute, no NUL or other control characters, no leading dot (temp files).
 */
export function assertSafeSlug(slug: string, what = 'slug'): void {
  const bad =
    typeof slug !== 'string' ||
    slug.length === 0 ||
    slug.length > 200 ||
    slug.includes('/') ||
    slug.includes('\\') ||
    slug.includes('..') ||
    slug.startsWith('.') ||
    isAbsolute(slug) ||
    /[\u0000-\u001f\u007f]/.test(slug)
  if (bad) {
    throw invalid(
      `Invalid ${what} ${JSON.stringify(slug)}: it must name one file inside its folder.`,
      `Use a ${what} without "/", "\\", "..", a leading dot or control characters, such as "green-tea".`,
      { [what]: slug },
    )
  }
}

/** A file-name-safe stamp of an instant: `2026-01-01T09-00-00-000Z`, as saved versions are named. */
export function stampOf(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-')
}
