/**
 * How a knowledge or procedure document changed, and why (issue 15 "Facts have a history"): its
 * state now (live, forgotten or merged into the archive), what its frontmatter says of its
 * lineage (`version`, `supersedes`, `superseded_by`, dates), and every earlier version the one
 * write path kept in `archive/versions/`, newest first, with the reason recorded when it was
 * replaced (`versions.jsonl`: "legacy migration: added …", "profile replaced", a tool's write).
 * Read only; the caller has resolved the document for its viewer (tools/forgetting.ts).
 */
import { join } from 'node:path'
import { parseFrontmatter } from '../../core/frontmatter.ts'
import type { Frontmatter } from '../../core/memory-doc.ts'
import type { Owner } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { DEFAULT_MAX_FILE_BYTES, readMemoryFile } from '../../storage/files/memory-file-read.ts'
import { type HomeLayout, ownerTree } from '../../storage/home-layout.ts'
import { type ForgettableDocKind, memoryPathOf } from '../forgetting/forget-memory.ts'

/** Frontmatter fields that tell a document's lineage. */
const LINEAGE = ['version', 'created_at', 'updated_at', 'supersedes', 'superseded_by', 'valid_from', 'valid_until', 'confidence', 'validated', 'auto_consolidated', 'auto_distilled'] as const

export interface DocumentHistory {
  /** Its memory path (`users/ada/knowledge/tea.md`). */
  path: string
  state: 'live' | 'forgotten' | 'merged' | 'missing'
  /** The lineage fields of its current (or archived) frontmatter. */
  lineage: Frontmatter
  /** Earlier versions, newest first. */
  versions: Array<{ at: string; path: string; reason?: string }>
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

export async function documentHistory(deps: { backend: Backend; layout: HomeLayout }, owner: Owner, kind: ForgettableDocKind, slug: string): Promise<DocumentHistory> {
  const documents = deps.backend.owned(owner).documents
  const path = memoryPathOf({ kind: 'document', owner, docKind: kind, slug })
  const live = await documents.read(kind, slug)
  let state: DocumentHistory['state'] = live ? 'live' : 'missing'
  let frontmatter = live?.frontmatter ?? {}
  if (!live) {
    // Archived copies are read straight from the archive (they are not in the live set).
    const tree = ownerTree(deps.layout, owner)
    for (const reason of ['forgotten', 'merged'] as const) {
      const read = await readMemoryFile(join(tree.dir, 'archive', reason, kind, `${slug}.md`), { root: tree.dir, maxBytes: DEFAULT_MAX_FILE_BYTES })
      if (read.kind !== 'read') continue
      state = reason
      frontmatter = parseFrontmatter(read.bytes.toString('utf8')).frontmatter
      break
    }
  }
  const lineage: Frontmatter = {}
  for (const key of LINEAGE) if (frontmatter[key] !== undefined) lineage[key] = frontmatter[key]
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
  return { path, state, lineage, versions, ...(away.length > 0 ? { retired: away } : {}) }
}
