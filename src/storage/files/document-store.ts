/**
 * The file-backed DocumentStore (AnimaWorks' archive): markdown documents with YAML frontmatter.
 *
 * Layout under the engram home (`<t>` is the owner's tree, decision 0017: `agents/<a>` for the
 * agent, `agents/<a>/users/<key>` for a user, `shared` for shared memory):
 *   knowledge → <t>/knowledge/<slug>.md            procedure → <t>/procedures/<slug>.md
 *   episode   → <t>/episodes/<YYYY-MM-DD>.md       state     → <t>/state/<slug>.md
 *   prompt    → agents/<a>/<SYSTEM|SOUL>.md         user      → shared/users/<slug>.md
 * Every rewrite first copies the old file to `<t>/archive/versions/<kind>/<slug>.<time>.md` (a
 * profile: `shared/users/.history/<key>/archive/…`, out of every other user's reach)
 * (and records why in `archive/versions/versions.jsonl`); archiving moves a file to
 * `<t>/archive/<reason>/<kind>/<slug>.md`. Version retention moves saved versions beyond the newest
 * few to `<t>/archive/forgotten/versions/<kind>/` under the same names (decision 0034). Nothing is
 * ever deleted, except by `purge` (decision 0023). Prompt layers belong to the
 * agent and user profiles to their users whatever tree a store is opened on.
 */
import { constants } from 'node:fs'
import { copyFile, link, mkdir, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { parseFrontmatter, serializeFrontmatter } from '../../core/frontmatter.ts'
import { contentHash } from '../../core/hash.ts'
import { DOC_KINDS, type DocKind, type Frontmatter, type MemoryDoc } from '../../core/memory-doc.ts'
import { type KindHome, kindFolderRel, kindSpec, type MemoryKindSpec } from '../../core/memory-kinds.ts'
import { type Owner, userKey, userOfOwner } from '../../core/owner.ts'
import type { ArchiveReason, DocRef, DocumentStore, Locks, ParseProblem } from '../contracts.ts'
import { ARCHIVE_REASONS, type ArchivedPathParts, archivedPathParts, assertSafeSlug, nothingArchived, stampOf, VERSION_STAMP } from '../document-paths.ts'
import { appendLine, isTempFileName, syncFolder, writeFileAtomic } from '../atomic-write.ts'
import { type FileStamp, fileStamp, unchanged } from './file-stamp.ts'
import { checkMemoryFile, DEFAULT_MAX_FILE_BYTES, type MemoryFileLimits, readMemoryFile, type Skipped } from '../memory-file-read.ts'

/** Documents up to this size keep their bytes between reads (document-store read cache), at most this many. */
const RECENT_MAX_BYTES = 64 * 1024
const RECENT_MAX_DOCUMENTS = 256
/** Files whose hash and parse are kept by stamp (a few hundred bytes each). */
const DESCRIBED_MAX_DOCUMENTS = 100_000

export interface FileDocumentStoreOptions {
  /** The engram home. */
  home: string
  agent: string
  clock: Clock
  locks: Locks
  /** Whose tree the store reads and writes (default the agent's). */
  owner?: Owner
  /** Files larger than this are skipped and reported, never read (`memory.maxFileBytes`). */
  maxFileBytes?: number
}

const PROMPT_SLUGS = ['SYSTEM', 'SOUL'] as const
const EPISODE_SLUG = /^\d{4}-\d{2}-\d{2}$/
function invalid(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT'
}

/** A folder that is not there, or a file where a folder should be: nothing to list. */
function noFolder(error: unknown): boolean {
  return isMissing(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR'
}

/** Creates the store for one agent. Nothing is touched on disk until the first write. */
export function createFileDocumentStore(options: FileDocumentStoreOptions): DocumentStore {
  const { home, agent, clock, locks } = options
  assertSafeSlug(agent, 'agent')
  const agentRel = `agents/${agent}`
  const owner = options.owner ?? 'agent'
  const user = userOfOwner(owner)
  const treeRel = owner === 'shared' ? 'shared' : user === undefined ? agentRel : `${agentRel}/users/${userKey(user)}`

  /** Where a kind lives (memory-kinds.ts): checkSlug has refused a kind the registry lacks before any path is made. */
  const homeOf = (kind: DocKind): KindHome => (kindSpec(kind) as MemoryKindSpec).home
  const folderOf = (kind: DocKind): string => kindFolderRel(kindSpec(kind) as MemoryKindSpec, treeRel, agentRel)

  function checkSlug(kind: DocKind, slug: string): void {
    if (!(DOC_KINDS as readonly string[]).includes(kind)) {
      throw invalid(`Unknown document kind "${kind}".`, `Use one of: ${DOC_KINDS.join(', ')}.`, { kind })
    }
    assertSafeSlug(slug)
    if (kind === 'episode' && !EPISODE_SLUG.test(slug)) {
      throw invalid(`Episode slug "${slug}" is not a date.`, 'Episodes are one file per day: use the date, YYYY-MM-DD.', { slug })
    }
    if (kind === 'prompt' && !(PROMPT_SLUGS as readonly string[]).includes(slug)) {
      throw invalid(`Prompt slug "${slug}" is not a prompt layer.`, `Use one of: ${PROMPT_SLUGS.join(', ')}.`, { slug })
    }
  }

  const relOf = (kind: DocKind, slug: string): string => `${folderOf(kind)}/${slug}.md`
  const abs = (rel: string): string => join(home, ...rel.split('/'))
  /*
   * Where a document's history goes: its own tree's archive/. A user's profile is shared by every
   * agent and belongs to one user, so its history is its own folder, `shared/users/.history/<key>/`:
   * out of every other user's reach (hidden names are not memory paths) and erased with the user.
   */
  const historyRel = (kind: DocKind, slug: string): string => (homeOf(kind) === 'shared-users' ? `shared/users/.history/${slug}` : homeOf(kind) === 'agent' ? agentRel : treeRel)
  const archiveRel = (reason: string, kind: DocKind, slug: string): string => `${historyRel(kind, slug)}/archive/${reason}/${kind}/${slug}.md`
  const versionsRel = (kind: DocKind, slug: string): string => `${historyRel(kind, slug)}/archive/versions/${kind}`
  /** Where version retention moves the versions it does not keep (same file names). */
  const retiredVersionsRel = (kind: DocKind, slug: string): string => `${historyRel(kind, slug)}/archive/forgotten/versions/${kind}`
  const versionsLogRel = (kind: DocKind, slug: string): string => `${historyRel(kind, slug)}/archive/versions/versions.jsonl`
  const lockName = (kind: DocKind, slug: string): string =>
    `docs:${homeOf(kind) === 'shared-users' ? 'shared' : homeOf(kind) === 'agent' || owner === 'agent' ? agent : treeRel}:${kind}:${slug}`

  async function locked<T>(kind: DocKind, slug: string, fn: () => Promise<T>): Promise<T> {
    const outcome = await locks.withLock(lockName(kind, slug), fn)
    if (outcome.kind === 'done') return outcome.value
    throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Document ${relOf(kind, slug)} is locked.` })
  }

  /** A document's folder is the root its file must stay inside (decision 0025). */
  const limitsOf = (rel: string): MemoryFileLimits => ({ root: dirname(abs(rel)), maxBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES })

  /*
   * A live document as readers see it. Never throws, never blocks: a folder, a pipe, a link that
   * loops or leads out of its folder, or a file over the size limit is skipped (`problems()` says
   * why), and reads as absent.
   */
  async function readLive(rel: string): Promise<{ bytes: Buffer; mtimeMs: number } | null | Skipped> {
    const read = await readMemoryFile(abs(rel), limitsOf(rel))
    if (read.kind === 'read') return { bytes: read.bytes, mtimeMs: Number(read.stat.mtimeMs) }
    return read.kind === 'missing' ? null : read
  }

  async function readBytes(rel: string): Promise<Buffer | null> {
    const read = await readLive(rel)
    return read === null || 'kind' in read ? null : read.bytes
  }

  /** A document a write replaces or extends; what readers skip is never written over (oversized files are: their copy is kept). */
  function assertWritableTarget(rel: string, allow: { oversizedOk: boolean }): void {
    const checked = checkMemoryFile(abs(rel), limitsOf(rel))
    if (checked.kind !== 'skipped' || (checked.oversized && allow.oversizedOk)) return
    throw new EngramError({
      code: ErrorCode.storageUnavailable,
      category: 'user',
      message: `Cannot write ${rel}: it is ${checked.reason}.`,
      fix: 'Move or remove what is at that path (engram keeps it as it is and writes nothing over it), then write again.',
      details: { path: rel, reason: checked.reason },
    })
  }

  /*
   * Priming reads the sender's profile before every turn; a file read costs several round trips
   * through the I/O thread pool, behind whatever else the turn is doing. Small documents keep their
   * bytes here, used again only while the file's stamp (inode, size, modification and change times)
   * is the one they were read with and settled (file-stamp.ts): a rewrite in place, even at the
   * same size within the same clock tick, is read again.
   */
  const recent = new Map<string, { stamp: FileStamp; bytes: Buffer }>()
  async function readBytesChecked(rel: string): Promise<Buffer | null> {
    const path = abs(rel)
    const readAt = Date.now()
    const checked = checkMemoryFile(path, limitsOf(rel))
    if (checked.kind !== 'file') {
      recent.delete(path)
      return null
    }
    const known = recent.get(path)
    if (known && unchanged(known.stamp, checked.stat)) return known.bytes
    const read = await readMemoryFile(path, limitsOf(rel))
    if (read.kind !== 'read') {
      recent.delete(path)
      return null
    }
    if (BigInt(read.bytes.length) === read.stat.size && read.bytes.length <= RECENT_MAX_BYTES) {
      if (recent.size >= RECENT_MAX_DOCUMENTS) recent.clear()
      recent.set(path, { stamp: fileStamp(read.stat, readAt), bytes: read.bytes })
    } else recent.delete(path)
    return read.bytes
  }

  /*
   * What `list` and `problems` need of a document — its hash, modification time and whether its
   * frontmatter parses — kept per file stamp as the bytes above are, so that listing a year of
   * episodes after every `maintain()` stats them instead of reading each one again. The same rule:
   * only a settled, identical stamp is trusted.
   */
  type Described = { hash: string; mtimeMs: number; problem: { line: number; text: string; reason: string } | undefined }
  const described = new Map<string, { stamp: FileStamp } & Described>()
  async function describeLive(rel: string): Promise<Described | null | Skipped> {
    const path = abs(rel)
    const readAt = Date.now()
    const checked = checkMemoryFile(path, limitsOf(rel))
    if (checked.kind === 'file') {
      const known = described.get(path)
      if (known && unchanged(known.stamp, checked.stat)) return known
    }
    const read = await readMemoryFile(path, limitsOf(rel))
    if (read.kind !== 'read') {
      described.delete(path)
      return read.kind === 'missing' ? null : read
    }
    const text = read.bytes.toString('utf8')
    const parsed = parseFrontmatter(text).problem
    const facts: Described = {
      hash: contentHash(read.bytes),
      mtimeMs: Number(read.stat.mtimeMs),
      problem: parsed ? { line: parsed.line, text: text.split('\n')[parsed.line - 1] ?? '', reason: parsed.reason } : undefined,
    }
    if (BigInt(read.bytes.length) === read.stat.size) {
      if (described.size >= DESCRIBED_MAX_DOCUMENTS) described.clear()
      described.set(path, { stamp: fileStamp(read.stat, readAt), ...facts })
    }
    return facts
  }

  function docOf(kind: DocKind, slug: string, rel: string, bytes: Buffer): MemoryDoc {
    const parsed = parseFrontmatter(bytes.toString('utf8'))
    return { kind, slug, frontmatter: parsed.frontmatter, body: parsed.body, path: rel, hash: contentHash(bytes) }
  }

  async function exists(path: string): Promise<boolean> {
    return stat(path).then(
      () => true,
      (error: unknown) => {
        if (isMissing(error)) return false
        throw error
      },
    )
  }

  /** Copies the live file into archive/versions under a fresh stamp; returns its relative path. */
  async function saveVersion(kind: DocKind, slug: string, sourceRel: string, reason: string | undefined, at?: string): Promise<string> {
    const folderRel = versionsRel(kind, slug)
    await mkdir(abs(folderRel), { recursive: true })
    const instant = at === undefined ? clock.now() : new Date(at)
    const stamp = stampOf(instant)
    if (at !== undefined) {
      const saved = await savedAt(kind, slug, folderRel, stamp, sourceRel, reason)
      if (saved) return saved
    }
    for (let n = 1; ; n++) {
      const rel = `${folderRel}/${slug}.${stamp}${n === 1 ? '' : `-${n}`}.md`
      try {
        await copyFile(abs(sourceRel), abs(rel), constants.COPYFILE_EXCL)
        await syncFolder(abs(folderRel))
        await appendLine(abs(versionsLogRel(kind, slug)), versionLine(kind, slug, rel, instant, reason))
        return rel
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
  }

  /** Whether `bytes` are live at `rel` and a version stamped with the instant `at` was saved: a write at `at` already done. */
  async function alreadyWritten(kind: DocKind, slug: string, rel: string, bytes: Buffer, at: string): Promise<boolean> {
    const live = await readBytes(rel)
    if (live === null || !live.equals(bytes)) return false
    const stamp = stampOf(new Date(at))
    return (await stampedVersions(versionsRel(kind, slug), slug)).some((version) => version.name.startsWith(`${slug}.${stamp}`))
  }

  const versionLine = (kind: DocKind, slug: string, rel: string, instant: Date, reason: string | undefined): string =>
    JSON.stringify({ at: instant.toISOString(), kind, slug, path: rel, ...(reason ? { reason } : {}) })

  /*
   * The version a write with the same instant already saved of the live file, when a crash came
   * between saving it and replacing the file (the last version with this stamp holds exactly the
   * live bytes): its log line is written if the crash came before that too, and its path returned.
   * A copy the crash cut short (unlogged, not the live bytes) is removed.
   */
  async function savedAt(kind: DocKind, slug: string, folderRel: string, stamp: string, sourceRel: string, reason: string | undefined): Promise<string | undefined> {
    const last = (await stampedVersions(folderRel, slug)).find((version) => version.name.startsWith(`${slug}.${stamp}`))
    if (!last) return undefined
    const [saved, live] = await Promise.all([readFile(abs(last.path)), readFile(abs(sourceRel))])
    const log = await readFile(abs(versionsLogRel(kind, slug)), 'utf8').catch((error: unknown) => {
      if (noFolder(error)) return ''
      throw error
    })
    const logged = log.split('\n').some((line) => {
      try {
        const record = JSON.parse(line) as { path?: unknown }
        return record.path === last.path
      } catch {
        return false
      }
    })
    if (!saved.equals(live)) {
      // A version is logged as soon as its copy is whole. One with this write's stamp, not logged, that
      // is not the live file, is this write's copy cut by the crash: it goes, and the copy is made again
      // under its name (so the recovered run ends where an unkilled one does, decision 0053).
      if (!logged) {
        await unlink(abs(last.path))
        await syncFolder(abs(folderRel))
      }
      return undefined
    }
    if (!logged) await appendLine(abs(versionsLogRel(kind, slug)), versionLine(kind, slug, last.path, new Date(last.archivedAt), reason))
    return last.path
  }

  /** Moves a file without ever replacing one at the destination (`link` fails when it exists). */
  async function moveNoClobber(fromRel: string, toRel: string): Promise<void> {
    await mkdir(dirname(abs(toRel)), { recursive: true })
    try {
      await link(abs(fromRel), abs(toRel))
      await unlink(abs(fromRel))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST' || code === 'ENOENT') throw error
      // Filesystems without hard links: the caller holds the document's lock and checked first.
      if (await exists(abs(toRel))) throw Object.assign(new Error(`${toRel} exists`), { code: 'EEXIST' })
      await rename(abs(fromRel), abs(toRel))
    }
    await syncFolder(dirname(abs(toRel)))
    await syncFolder(dirname(abs(fromRel)))
  }

  async function slugsIn(folderRel: string): Promise<string[]> {
    try {
      const names = await readdir(abs(folderRel))
      return names.filter((name) => name.endsWith('.md') && !isTempFileName(name)).map((name) => name.slice(0, -3))
    } catch (error) {
      if (noFolder(error)) return []
      throw error
    }
  }

  /** The saved versions of `slug` in a versions folder, newest first (a prefix of the slug is another document). */
  async function stampedVersions(folderRel: string, slug: string): Promise<Array<{ path: string; name: string; archivedAt: string }>> {
    let names: string[]
    try {
      names = await readdir(abs(folderRel))
    } catch (error) {
      if (noFolder(error)) return []
      throw error
    }
    const found: Array<{ path: string; name: string; archivedAt: string; n: number }> = []
    for (const name of names) {
      if (!name.startsWith(`${slug}.`)) continue
      const match = VERSION_STAMP.exec(name.slice(slug.length + 1))
      if (!match) continue
      const [, day, hh, mm, ss, ms, n] = match
      found.push({ path: `${folderRel}/${name}`, name, archivedAt: `${day}T${hh}:${mm}:${ss}.${ms}Z`, n: Number(n ?? 1) })
    }
    found.sort((a, b) => b.archivedAt.localeCompare(a.archivedAt) || b.n - a.n)
    return found.map(({ path, name, archivedAt }) => ({ path, name, archivedAt }))
  }

  /** The version paths the versions log names for `kind/slug` (where a version was saved or moved to). */
  async function loggedPaths(kind: DocKind, slug: string): Promise<Set<string>> {
    const text = await readFile(abs(versionsLogRel(kind, slug)), 'utf8').catch((error: unknown) => {
      if (noFolder(error)) return ''
      throw error
    })
    const paths = new Set<string>()
    for (const line of text.split('\n')) {
      try {
        const record = JSON.parse(line) as { kind?: unknown; slug?: unknown; path?: unknown }
        if (record.kind === kind && record.slug === slug && typeof record.path === 'string') paths.add(record.path)
      } catch {
        // Not a record (a blank or torn line).
      }
    }
    return paths
  }

  /** Reasons the versions log recorded for `kind/slug`, by version path. */
  async function loggedReasons(kind: DocKind, slug: string): Promise<Map<string, string>> {
    const text = await readFile(abs(versionsLogRel(kind, slug)), 'utf8').catch((error: unknown) => {
      if (noFolder(error)) return ''
      throw error
    })
    const reasons = new Map<string, string>()
    for (const line of text.split('\n')) {
      try {
        const record = JSON.parse(line) as { kind?: unknown; slug?: unknown; path?: unknown; reason?: unknown }
        if (record.kind === kind && record.slug === slug && typeof record.path === 'string' && typeof record.reason === 'string') reasons.set(record.path, record.reason)
      } catch {
        // Not a record (a blank or torn line): it names no version.
      }
    }
    return reasons
  }

  /** The parts of `path` when it is where this store keeps an archived copy or saved version (a path of another tree is not). */
  function ownArchived(path: string): ArchivedPathParts | undefined {
    const parts = archivedPathParts(path)
    if (!parts || (parts.type === 'copy' && !(ARCHIVE_REASONS as readonly string[]).includes(parts.reason))) return undefined
    const { kind, slug } = parts
    const rel = parts.type === 'copy' ? archiveRel(parts.reason, kind, slug) : `${parts.retired ? retiredVersionsRel(kind, slug) : versionsRel(kind, slug)}/${parts.name}`
    return rel === path ? parts : undefined
  }

  /** The names in a folder of the home ([] when there is none). */
  async function namesIn(folderRel: string): Promise<string[]> {
    try {
      return await readdir(abs(folderRel))
    } catch (error) {
      if (noFolder(error)) return []
      throw error
    }
  }

  function listableSlug(kind: DocKind, slug: string): boolean {
    try {
      checkSlug(kind, slug)
      return true
    } catch {
      return false
    }
  }

  const store: DocumentStore = {
    async list(kind) {
      const slugs = (await slugsIn(folderOf(kind))).filter((slug) => listableSlug(kind, slug)).sort()
      const refs: DocRef[] = []
      for (const slug of slugs) {
        const rel = relOf(kind, slug)
        const facts = await describeLive(rel)
        if (facts === null || 'kind' in facts) continue
        refs.push({ kind, slug, path: rel, hash: facts.hash, modifiedAt: new Date(facts.mtimeMs).toISOString() })
      }
      return refs
    },

    async slugs(kind) {
      return (await slugsIn(folderOf(kind))).filter((slug) => listableSlug(kind, slug)).sort()
    },

    async read(kind, slug) {
      checkSlug(kind, slug)
      const rel = relOf(kind, slug)
      const bytes = await readBytesChecked(rel)
      return bytes === null ? null : docOf(kind, slug, rel, bytes)
    },

    async write(kind, slug, frontmatter, body, writeOptions) {
      checkSlug(kind, slug)
      const rel = relOf(kind, slug)
      const text = serializeFrontmatter(frontmatter, body)
      return locked(kind, slug, async () => {
        assertWritableTarget(rel, { oversizedOk: true })
        const bytes = Buffer.from(text, 'utf8')
        // A write replayed at its instant (`at`: a consolidation unit run again after a crash) whose
        // bytes are already live, with a version saved at that instant, took effect before the
        // crash: saving the live file again would add a version the unkilled run never made.
        if (writeOptions?.at !== undefined && (await alreadyWritten(kind, slug, rel, bytes, writeOptions.at))) return docOf(kind, slug, rel, bytes)
        if (await exists(abs(rel))) await saveVersion(kind, slug, rel, writeOptions?.reason, writeOptions?.at)
        await writeFileAtomic(abs(rel), bytes)
        return docOf(kind, slug, rel, bytes)
      })
    },

    async append(kind, slug, text, frontmatter?: Frontmatter) {
      checkSlug(kind, slug)
      const rel = relOf(kind, slug)
      return locked(kind, slug, async () => {
        assertWritableTarget(rel, { oversizedOk: false })
        const old = await readBytes(rel)
        let bytes: Buffer
        if (old === null) {
          bytes = Buffer.from(serializeFrontmatter(frontmatter ?? {}, text), 'utf8')
        } else {
          // Appended to the bytes as they are: a file whose frontmatter does not parse, or that
          // holds bytes that are not UTF-8, keeps them.
          const separator = old.length === 0 || old[old.length - 1] === 0x0a ? '' : '\n'
          bytes = Buffer.concat([old, Buffer.from(separator + text, 'utf8')])
        }
        await writeFileAtomic(abs(rel), bytes)
        return docOf(kind, slug, rel, bytes)
      })
    },

    async archive(kind, slug, reason) {
      checkSlug(kind, slug)
      assertReason(reason)
      const rel = relOf(kind, slug)
      const target = archiveRel(reason, kind, slug)
      return locked(kind, slug, async () => {
        if (!(await exists(abs(rel)))) {
          throw new EngramError({
            code: ErrorCode.notFound,
            category: 'user',
            message: `Cannot archive ${rel}: there is no such document.`,
            fix: 'List the documents of that kind to find the right slug.',
            details: { kind, slug },
          })
        }
        // A move a crash cut between its link and its unlink: the archived copy is the live file; finish it.
        if (await exists(abs(target))) {
          const [live, archived] = await Promise.all([readFile(abs(rel)), readFile(abs(target))])
          if (live.equals(archived)) {
            await unlink(abs(rel))
            await syncFolder(dirname(abs(rel)))
            recent.delete(abs(rel))
            return target
          }
        }
        // A document archived earlier under the same slug becomes a version, never overwritten.
        if (await exists(abs(target))) {
          await saveVersion(kind, slug, target, `replaced in archive/${reason} by a newer archived copy`)
          await unlink(abs(target))
        }
        await moveNoClobber(rel, target)
        return target
      })
    },

    async restore(kind, slug, reason) {
      checkSlug(kind, slug)
      assertReason(reason)
      const rel = relOf(kind, slug)
      const source = archiveRel(reason, kind, slug)
      return locked(kind, slug, async () => {
        if (!(await exists(abs(source)))) {
          throw nothingArchived(kind, slug, reason, source)
        }
        const conflict = (): EngramError =>
          new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'user',
            message: `Cannot restore ${kind} "${slug}": a live document already exists at ${rel}.`,
            fix: `Archive or rename the live document ${rel} first, then restore; or merge the archived copy ${source} into it by hand.`,
            details: { kind, slug, reason, live: rel, archived: source },
          })
        if (await exists(abs(rel))) throw conflict()
        try {
          await moveNoClobber(source, rel)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw conflict()
          throw error
        }
        const bytes = await readBytes(rel)
        if (bytes === null) throw new EngramError({ code: ErrorCode.storageCorrupt, category: 'system', message: `Restored ${rel} cannot be read back.` })
        return docOf(kind, slug, rel, bytes)
      })
    },

    async versions(kind, slug) {
      checkSlug(kind, slug)
      return (await stampedVersions(versionsRel(kind, slug), slug)).map(({ path, archivedAt }) => ({ path, archivedAt }))
    },

    async purge(kind, slug) {
      checkSlug(kind, slug)
      return locked(kind, slug, async () => {
        const candidates = [
          relOf(kind, slug),
          ...ARCHIVE_REASONS.map((reason) => archiveRel(reason, kind, slug)),
          ...(await stampedVersions(versionsRel(kind, slug), slug)).map((version) => version.path),
          ...(await stampedVersions(retiredVersionsRel(kind, slug), slug)).map((version) => version.path),
        ]
        const removed: string[] = []
        for (const rel of candidates) {
          try {
            await unlink(abs(rel))
            removed.push(rel)
          } catch (error) {
            if (!isMissing(error)) throw error
          }
        }
        // The versions log names the versions it recorded (and where retention moved them): their lines go with them.
        const log = abs(versionsLogRel(kind, slug))
        const text = await readFile(log, 'utf8').catch((error: unknown) => {
          if (isMissing(error)) return ''
          throw error
        })
        const kept = text.split('\n').filter((line) => {
          try {
            const record = JSON.parse(line) as { kind?: unknown; slug?: unknown }
            return !(record.kind === kind && record.slug === slug)
          } catch {
            return true
          }
        })
        const next = kept.join('\n')
        if (next !== text) await writeFileAtomic(log, next)
        recent.delete(abs(relOf(kind, slug)))
        return removed
      })
    },

    async retainVersions(kind, slug, keep) {
      checkSlug(kind, slug)
      if (!Number.isInteger(keep) || keep < 0) {
        throw invalid(`Cannot keep ${JSON.stringify(keep)} versions: keep must be a whole number of versions, 0 or more.`, 'Pass e.g. 5 (the seed keeps the 5 most recent versions of a procedure).', { keep })
      }
      return locked(kind, slug, async () => {
        const reasons = await loggedReasons(kind, slug)
        const logLine = (version: { name: string; archivedAt: string }, target: string): string => {
          const movedFrom = `${versionsRel(kind, slug)}/${version.name}`
          const reason = reasons.get(movedFrom)
          return JSON.stringify({ at: clock.now().toISOString(), kind, slug, path: target, moved_from: movedFrom, archived_at: version.archivedAt, retention: `older than the ${keep} newest versions`, ...(reason ? { reason } : {}) })
        }
        // A process killed between a move and its line left a retired version the log does not
        // name; its line is written now, before the next move, so the log reads as if never cut.
        const logged = await loggedPaths(kind, slug)
        for (const retired of await stampedVersions(retiredVersionsRel(kind, slug), slug)) {
          if (logged.has(retired.path)) continue
          await appendLine(abs(versionsLogRel(kind, slug)), logLine(retired, retired.path))
          logged.add(retired.path)
        }
        const older = (await stampedVersions(versionsRel(kind, slug), slug)).slice(keep)
        if (older.length === 0) return []
        const moved: string[] = []
        for (const version of older) {
          const target = `${retiredVersionsRel(kind, slug)}/${version.name}`
          try {
            await moveNoClobber(version.path, target)
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
            // The same name is already there (a copy a person put back by hand): when it holds the
            // same bytes the retired copy stands for this one; otherwise both stay where they are.
            const [here, there] = await Promise.all([readFile(abs(version.path)), readFile(abs(target))])
            if (!here.equals(there)) continue
            await unlink(abs(version.path))
          }
          /*
           * Appended, never rewritten: other documents of the tree append to this log under their
           * own locks, and a rewrite here would race with them and could drop their lines. The line
           * of the version's old path stays (it was saved there); this one says where it is now and
           * keeps the reason it was replaced, so `purge` and history find it by kind and slug.
           */
          // A move a kill cut between its link and its unlink had its line written above.
          if (!logged.has(target)) await appendLine(abs(versionsLogRel(kind, slug)), logLine(version, target))
          moved.push(target)
        }
        return moved
      })
    },

    async readArchived(path) {
      // Only the archive this store keeps: a path of another tree names nothing here.
      if (ownArchived(path) === undefined) return null
      const bytes = await readBytes(path)
      return bytes === null ? null : bytes.toString('utf8')
    },

    async archivedPaths() {
      // This owner's documents only, as the rows backend lists them: profiles are the shared store's, prompt layers the agent's.
      const folders: string[] = []
      const under = (tree: string, kind: DocKind): string[] => [
        ...ARCHIVE_REASONS.map((reason) => `${tree}/archive/${reason}/${kind}`),
        `${tree}/archive/versions/${kind}`,
        `${tree}/archive/forgotten/versions/${kind}`,
      ]
      for (const kind of DOC_KINDS) {
        if (homeOf(kind) === 'shared-users') {
          if (owner === 'shared') for (const key of await namesIn('shared/users/.history')) folders.push(...under(`shared/users/.history/${key}`, kind))
        } else if (homeOf(kind) !== 'agent' || owner === 'agent') folders.push(...under(historyRel(kind, ''), kind))
      }
      const paths: string[] = []
      for (const folder of folders) {
        for (const name of await namesIn(folder)) if (!isTempFileName(name) && ownArchived(`${folder}/${name}`) !== undefined) paths.push(`${folder}/${name}`)
      }
      return paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    },

    async putArchived(path, text) {
      const parts = ownArchived(path)
      if (parts === undefined) {
        throw invalid(`Cannot put ${JSON.stringify(path)} into the archive: it is not a path of this store's archive.`, 'Pass a path archivedPaths() lists (…/archive/<reason>/<kind>/<slug>.md or …/archive/[forgotten/]versions/<kind>/<slug>.<stamp>.md).', { path })
      }
      return locked(parts.kind, parts.slug, async () => {
        const present = await readBytes(path)
        if (present !== null) return present.toString('utf8') === text ? 'there' : 'occupied'
        assertWritableTarget(path, { oversizedOk: false })
        await writeFileAtomic(abs(path), text)
        return 'written'
      })
    },

    async problems(kinds = DOC_KINDS) {
      const problems: ParseProblem[] = []
      for (const kind of kinds) {
        // Profiles and prompt layers are reported once, by the agent's own store.
        if (owner !== 'agent' && homeOf(kind) !== 'tree') continue
        for (const slug of (await slugsIn(folderOf(kind))).filter((s) => listableSlug(kind, s)).sort()) {
          const rel = relOf(kind, slug)
          const facts = await describeLive(rel)
          if (facts === null) continue
          if ('kind' in facts) {
            problems.push({ file: rel, line: 0, text: '', reason: facts.reason })
            continue
          }
          if (facts.problem) problems.push({ file: rel, ...facts.problem })
        }
      }
      return problems
    },
  }
  return store
}

function assertReason(reason: string): asserts reason is Exclude<ArchiveReason, 'versions'> {
  if (!(ARCHIVE_REASONS as readonly string[]).includes(reason)) {
    throw invalid(`Unknown archive reason "${reason}".`, `Use one of: ${ARCHIVE_REASONS.join(', ')}.`, { reason })
  }
}
