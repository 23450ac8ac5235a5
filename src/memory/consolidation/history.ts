/**
 * How a knowledge or procedure document changed, and why (decision 0033): its
 * state now (live, forgotten or merged into the archive), what its frontmatter says of its
 * lineage (`version`, `supersedes`, `superseded_by`, dates), and every earlier version the one
 * write path kept in `archive/versions/`, newest first, with the reason recorded when it was
 * replaced (`versions.jsonl`: "legacy migration: added …", "profile replaced", a tool's write).
 * A fact that contradiction resolution replaced (decision 0033) also shows when it held and the
 * chain both ways: what it superseded and what superseded it, followed through `supersedes` and
 * `superseded_by` within its owner's folder only, so a user's chain is that user's alone.
 * Read only; the caller has resolved the document for its viewer (tools/forgetting.ts).
 */
import { join } from 'node:path'
import { parseFrontmatter } from '../../core/frontmatter.ts'
import type { Frontmatter } from '../../core/memory-doc.ts'
import type { Owner } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { DEFAULT_MAX_FILE_BYTES, readMemoryFile } from '../../storage/memory-file-read.ts'
import { type HomeLayout, ownerTree } from '../../storage/home-layout.ts'
import { type ForgettableDocKind, memoryPathOf } from '../forgetting/forget-memory.ts'
import { factValidityOf, siblingSlug } from '../retrieval/fact-history.ts'

/** Links followed each way: a chain longer than this is cut (a loop a person wrote is stopped earlier, by the slugs seen). */
const MAX_CHAIN = 100

/** A document of a fact's chain: where it is, whether it is still there, and when it held. */
export interface FactLink {
  path: string
  state: 'live' | 'forgotten' | 'merged' | 'missing'
  validFrom?: string
  validUntil?: string
}

/** Frontmatter fields that tell a document's lineage. */
const LINEAGE = ['version', 'created_at', 'updated_at', 'supersedes', 'superseded_by', 'valid_from', 'valid_until', 'confidence', 'validated', 'validation', 'auto_consolidated', 'auto_distilled'] as const

export interface DocumentHistory {
  /** Its memory path (`users/ada/knowledge/tea.md`). */
  path: string
  state: 'live' | 'forgotten' | 'merged' | 'missing'
  /** The lineage fields of its current (or archived) frontmatter. */
  lineage: Frontmatter
  /** Earlier versions, newest first. */
  versions: Array<{ at: string; path: string; reason?: string }>
  /** When the fact held (`valid_from`, `valid_until` as ISO instants); only when its frontmatter says. */
  validity?: { from?: string; until?: string }
  /** What it superseded, nearest first (following `supersedes`); only when there is something. */
  supersedes?: FactLink[]
  /** What superseded it, nearest first (following `superseded_by`); only when there is something. */
  supersededBy?: FactLink[]
  /** Older versions that version retention moved to `archive/forgotten/versions/` (decision 0034), newest first; only when there are some. */
  retired?: Array<{ at: string; path: string; reason?: string }>
}

/** Reasons recorded for each saved version of `kind/slug`, by version path; and the versions retention moved. */
async function versionReasons(layout: HomeLayout, owner: Owner, kind: ForgettableDocKind, slug: string): Promise<{ reasons: Map<string, string>; retired: NonNullable<DocumentHistory['retired']> }> {
  const tree = ownerTree(layout, owner)
  const log = await readMemoryFile(join(tree.dir, 'archive', 'versions', 'versions.jsonl'), { root: tree.dir, maxBytes: DEFAULT_MAX_FILE_BYTES })
  const reasons = new Map<string, string>()
  const retired: NonNullable<DocumentHistory['retired']> = []
  if (log.kind !== 'read') return { reasons, retired }
  for (const line of log.bytes.toString('utf8').split('\n')) {
    if (line.trim() === '') continue
    try {
      const record = JSON.parse(line) as { kind?: unknown; slug?: unknown; path?: unknown; reason?: unknown; moved_from?: unknown; archived_at?: unknown }
      if (record.kind === kind && record.slug === slug && typeof record.path === 'string' && typeof record.reason === 'string') reasons.set(record.path, record.reason)
      if (record.kind === kind && record.slug === slug && typeof record.path === 'string' && typeof record.moved_from === 'string' && typeof record.archived_at === 'string') {
        retired.push({ at: record.archived_at, path: record.path, ...(typeof record.reason === 'string' ? { reason: record.reason } : {}) })
      }
    } catch {
      // A line that is not JSON says nothing about any version; the others still do.
    }
  }
  return { reasons, retired: retired.sort((a, b) => b.at.localeCompare(a.at)) }
}

/** A document of `owner` as it is now: live, or its archived copy, with its frontmatter. */
async function readState(deps: { backend: Backend; layout: HomeLayout }, owner: Owner, kind: ForgettableDocKind, slug: string): Promise<{ state: DocumentHistory['state']; frontmatter: Frontmatter }> {
  const live = await deps.backend.owned(owner).documents.read(kind, slug)
  if (live) return { state: 'live', frontmatter: live.frontmatter }
  // Archived copies are read straight from the archive (they are not in the live set).
  const tree = ownerTree(deps.layout, owner)
  for (const reason of ['forgotten', 'merged'] as const) {
    const read = await readMemoryFile(join(tree.dir, 'archive', reason, kind, `${slug}.md`), { root: tree.dir, maxBytes: DEFAULT_MAX_FILE_BYTES })
    if (read.kind === 'read') return { state: reason, frontmatter: parseFrontmatter(read.bytes.toString('utf8')).frontmatter }
  }
  return { state: 'missing', frontmatter: {} }
}

/** The documents reached from `frontmatter` by following `field` in the same folder, nearest first. */
async function followChain(
  deps: { backend: Backend; layout: HomeLayout },
  owner: Owner,
  kind: ForgettableDocKind,
  slug: string,
  frontmatter: Frontmatter,
  field: 'supersedes' | 'superseded_by',
): Promise<FactLink[]> {
  const links: FactLink[] = []
  const seen = new Set([slug])
  let next = siblingSlug(frontmatter[field])
  while (next !== undefined && !seen.has(next) && links.length < MAX_CHAIN) {
    seen.add(next)
    const { state, frontmatter: linked } = await readState(deps, owner, kind, next)
    const validity = factValidityOf(linked)
    links.push({ path: memoryPathOf({ kind: 'document', owner, docKind: kind, slug: next }), state, ...(validity?.validFrom ? { validFrom: validity.validFrom } : {}), ...(validity?.validUntil ? { validUntil: validity.validUntil } : {}) })
    next = siblingSlug(linked[field])
  }
  return links
}

export async function documentHistory(deps: { backend: Backend; layout: HomeLayout }, owner: Owner, kind: ForgettableDocKind, slug: string): Promise<DocumentHistory> {
  const documents = deps.backend.owned(owner).documents
  const path = memoryPathOf({ kind: 'document', owner, docKind: kind, slug })
  const { state, frontmatter } = await readState(deps, owner, kind, slug)
  const lineage: Frontmatter = {}
  for (const key of LINEAGE) if (frontmatter[key] !== undefined) lineage[key] = frontmatter[key]
  const fact = factValidityOf(frontmatter)
  const validity = fact?.validFrom !== undefined || fact?.validUntil !== undefined ? { ...(fact.validFrom ? { from: fact.validFrom } : {}), ...(fact.validUntil ? { until: fact.validUntil } : {}) } : undefined
  const supersedes = await followChain(deps, owner, kind, slug, frontmatter, 'supersedes')
  const supersededBy = await followChain(deps, owner, kind, slug, frontmatter, 'superseded_by')
  const chain = { ...(validity ? { validity } : {}), ...(supersedes.length > 0 ? { supersedes } : {}), ...(supersededBy.length > 0 ? { supersededBy } : {}) }
  const { reasons, retired } = await versionReasons(deps.layout, owner, kind, slug)
  const versions = (await documents.versions(kind, slug)).map((version) => {
    const reason = reasons.get(version.path)
    return { at: version.archivedAt, path: version.path, ...(reason ? { reason } : {}) }
  })
  // Each retired version once, and one a person moved back home only with the versions.
  const seen = new Set(versions.map((version) => version.path.split('/').pop()))
  const away = retired.filter((version) => {
    const name = version.path.split('/').pop()
    if (seen.has(name)) return false
    seen.add(name)
    return true
  })
  return { path, state, lineage, versions, ...(away.length > 0 ? { retired: away } : {}), ...chain }
}
