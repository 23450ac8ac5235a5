/**
 * Forgetting one memory on request (decision 0023; DESIGN principle 3). Forgetting *moves*: a
 * knowledge or procedure document goes to `<tree>/archive/forgotten/<kind>/<slug>.md` (the
 * DocumentStore's archive), a topic file to `<tree>/archive/forgotten/topics/<slug>.md`, and one
 * entry of rules.md, lessons.md or profile.md is appended to `<tree>/archive/forgotten/<file>.md`
 * with a metadata comment saying when, from where and why — then it leaves the search index at
 * once. `restore` moves it back. Only `purge` deletes, and it deletes the archived copies too.
 * Every act is a `memory_write` event in the actor's activity log that names the memory by path
 * and key, never by its text (a purged memory must not live on in the log of its purge).
 *
 * Project-scope memory (`project/…`) is archived in the owner's tree in the home
 * (`archive/forgotten/project/…`): the archive is where the agent's history is kept and read.
 *
 * The operations take a memory already resolved to its owner (`tools/forget-targets.ts` turns what
 * a person or a model typed into one, and checks who may forget it).
 */
import { constants } from 'node:fs'
import { copyFile, mkdir, readdir, rename, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { createHash } from 'node:crypto'
import type { Clock } from '../../core/clock.ts'
import { dedupeKey, type EngramEntry, type EngramKind, type EngramScope, isEngramKind, isRuleKind } from '../../core/engram.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { decodeUtf8Lossless, encodeUtf8Lossless } from '../../core/lossless-utf8.ts'
import { formatEntryLine, parseMemoryFile, serializeMemoryFile } from '../../core/markdown-entry.ts'
import type { Owner } from '../../core/owner.ts'
import type { ActivityLog, Backend, EngramFile, EngramStore, Locks } from '../../storage/contracts.ts'
import { appendText, writeFileAtomic } from '../../storage/files/atomic-write.ts'
import { engramFileLockName, topicSlug } from '../../storage/files/engram-store.ts'
import { DEFAULT_MAX_FILE_BYTES, readMemoryFile } from '../../storage/files/memory-file-read.ts'
import { type HomeLayout, ownerNamespace, ownerTree } from '../../storage/home-layout.ts'
import { engramEntryKey, engramSource } from '../retrieval/indexer.ts'

/** Documents that can be forgotten (the others are records, history or a user's profile). */
export type ForgettableDocKind = 'knowledge' | 'procedure'

/** One memory, resolved to its owner's tree. */
export type ForgettableMemory =
  | { kind: 'document'; owner: Owner; docKind: ForgettableDocKind; slug: string }
  | { kind: 'topic'; owner: Owner; scope: EngramScope; slug: string }
  | { kind: 'entry'; owner: Owner; scope: EngramScope; file: EngramFile; entry: EngramEntry }

export interface ForgettingDeps {
  backend: Backend
  layout: HomeLayout
  /** The open project's locks (`<project>/.engram/.locks`): its topic files are written under them. */
  projectLocks?: Locks
  clock: Clock
  /** Where each act is recorded: the activity log of whoever asked (a user's, or the agent's). */
  log: ActivityLog
  /** Brings the index up to date after a restore (the memory is findable again). */
  reindex(): Promise<unknown>
}

export interface ForgetOutcome {
  action: 'forgotten' | 'restored' | 'purged'
  /** The memory's path in the agent's memory namespace: `knowledge/x.md`, `users/ada/memory/rules.md#<key>`. */
  path: string
  owner: Owner
  /** Forget and restore: the archived copy, as a memory path (`archive/forgotten/knowledge/x.md`). */
  archive?: string
  /** An entry's text and kind (for the caller's message; never written to the log). */
  text?: string
  entryKind?: EngramKind
  /** Units that left the search index. */
  unitsRemoved: number
  /** Purge: how many files or entries were deleted (live and archived). */
  deleted?: number
}

/** Metadata keys a forgotten entry carries in the archive, dropped again on restore. */
const FORGOTTEN_META = ['kind', 'forgotten_at', 'forgotten_from', 'reason'] as const

/** The folder of each forgettable document kind in an owner's tree. */
export const DOC_FOLDERS: Record<ForgettableDocKind, string> = { knowledge: 'knowledge', procedure: 'procedures' }

function notFound(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.notFound, category: 'user', message, fix, details })
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT'
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

async function readOrEmpty(path: string): Promise<string> {
  // The safe reader (decision 0025): a pipe never blocks, a link never leads out of the folder,
  // bytes that are not UTF-8 are kept through the rewrite. A file readers skip is never written over.
  const read = await readMemoryFile(path, { root: dirname(path), maxBytes: DEFAULT_MAX_FILE_BYTES })
  if (read.kind === 'read') return decodeUtf8Lossless(read.bytes)
  if (read.kind === 'missing') return ''
  throw new EngramError({
    code: ErrorCode.storageUnavailable,
    category: 'user',
    message: `Cannot change memory file ${path}: it is ${read.reason}.`,
    fix: 'Move or remove what is at that path (engram keeps it as it is and writes nothing over it), then forget the memory again.',
    details: { path, reason: read.reason },
  })
}

/** Moves a file, across file systems too (a project's topics live outside the home). */
async function moveFile(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true })
  try {
    await rename(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    await copyFile(from, to, constants.COPYFILE_EXCL)
    await unlink(from)
  }
}

/** The tree-relative folder of a scope's engram files. */
function scopeFolder(scope: EngramScope): string {
  return scope === 'global' ? 'memory' : 'project'
}

/** The key of an entry as its unit id names it (`<source>#<key>`). */
export function entryKey(entry: Pick<EngramEntry, 'kind' | 'text'>): string {
  return engramEntryKey(entry)
}

/** The memory path of a memory (what search_memory and read_memory_file show). */
export function memoryPathOf(memory: ForgettableMemory): string {
  const ns = ownerNamespace(memory.owner)
  switch (memory.kind) {
    case 'document':
      return `${ns}${DOC_FOLDERS[memory.docKind]}/${memory.slug}.md`
    case 'topic':
      return `${ns}${scopeFolder(memory.scope)}/topics/${memory.slug}.md`
    case 'entry':
      return `${ns}${scopeFolder(memory.scope)}/${memory.file}.md#${entryKey(memory.entry)}`
  }
}

/** Where a memory's archived copy lives, inside its tree's `archive/`. */
function archiveLocal(memory: ForgettableMemory): string {
  const project = 'scope' in memory && memory.scope === 'project' ? 'project/' : ''
  switch (memory.kind) {
    case 'document':
      return `forgotten/${memory.docKind}/${memory.slug}.md`
    case 'topic':
      return `forgotten/${project}topics/${memory.slug}.md`
    case 'entry':
      return `forgotten/${project}${memory.file}.md`
  }
}

/** The archived copy of a memory: its absolute path and its memory path. */
function archiveOf(layout: HomeLayout, memory: ForgettableMemory): { absolute: string; path: string } {
  const local = archiveLocal(memory)
  return { absolute: join(ownerTree(layout, memory.owner).archiveDir, ...local.split('/')), path: `${ownerNamespace(memory.owner)}archive/${local}` }
}

/** The folder of a scope's engram files in an owner's tree; throws when a project scope has none. */
function engramDirOf(layout: HomeLayout, owner: Owner, scope: EngramScope): string {
  const tree = ownerTree(layout, owner)
  const dir = scope === 'global' ? tree.memoryDir : tree.projectMemoryDir
  if (dir === undefined) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: owner === 'shared' ? 'Shared memory has no project part.' : 'No project is open, so there is no project memory.',
      fix: 'open the mind with the project folder (--project or ENGRAM_PROJECT) to forget project memory',
    })
  }
  return dir
}

function storeOf(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, owner: Owner, scope: EngramScope): EngramStore {
  const store = deps.backend.owned(owner).engrams(scope)
  if (store) return store
  engramDirOf(deps.layout, owner, scope) // says why (no project open) with its fix
  throw new EngramError({ code: ErrorCode.unsupported, category: 'system', message: `There is no ${scope} memory store for ${owner}.`, fix: 'open the mind with that scope' })
}

/** The index source of a memory's file. */
function sourceOf(layout: HomeLayout, memory: ForgettableMemory): string {
  if (memory.kind === 'document') return `${ownerTree(layout, memory.owner).rel}/${DOC_FOLDERS[memory.docKind]}/${memory.slug}.md`
  if (memory.kind === 'topic') return engramSource(memory.scope, layout.agent, `topics/${memory.slug}.md`, memory.owner)
  return engramSource(memory.scope, layout.agent, `${memory.file}.md`, memory.owner)
}

/** The lock of an archive file of forgotten entries (named by a hash: lock files must not name users). */
function archiveLockName(absolute: string): string {
  return `forgotten:${createHash('sha256').update(absolute).digest('hex').slice(0, 16)}`
}

async function withLock<T>(deps: Pick<ForgettingDeps, 'backend' | 'projectLocks'>, name: string, fn: () => Promise<T>, scope: EngramScope = 'global'): Promise<T> {
  // A project's engram files are locked in the project's own lock folder, as its store does.
  const locks = scope === 'project' ? deps.projectLocks : deps.backend.locks
  if (!locks) throw new EngramError({ code: ErrorCode.unsupported, category: 'system', message: 'Project memory cannot be changed here: its locks were not given.', fix: 'pass projectLocks (mind.forget does)' })
  const outcome = await locks.withLock(name, fn)
  if (outcome.kind === 'done') return outcome.value
  throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: 'Memory is being written by another process.', fix: 'retry in a moment' })
}

/** Runs `fn` holding the lock the engram store of `dir` takes to write topic `slug`. */
function withTopicLock<T>(deps: Pick<ForgettingDeps, 'backend' | 'projectLocks'>, dir: string, scope: EngramScope, slug: string, fn: () => Promise<T>): Promise<T> {
  return withLock(deps, engramFileLockName(dir, `topic:${slug}`), fn, scope)
}

/** An archived entry as it can be encoded again: its own kind and metadata, without the archive's. */
function liveEntryOf(archived: EngramEntry): EngramEntry {
  const kind = archived.meta.kind
  const meta = Object.fromEntries(Object.entries(archived.meta).filter(([key]) => !(FORGOTTEN_META as readonly string[]).includes(key)))
  return { ...archived, kind: isEngramKind(kind) ? kind : archived.kind, meta }
}

/** An entry of an archive of forgotten entries: the entry as it was, and when, from where and why it was forgotten. */
interface ForgottenEntry {
  entry: EngramEntry
  forgottenAt?: string
  from?: string
  reason?: string
}

/** The entries of a tree's archive of forgotten `file` entries (`archive/forgotten/<file>.md`). */
export async function forgottenEntries(layout: HomeLayout, owner: Owner, scope: EngramScope, file: EngramFile): Promise<ForgottenEntry[]> {
  const { absolute } = archiveOf(layout, { kind: 'entry', owner, scope, file, entry: { text: '-', kind: 'lesson', meta: {} } })
  const text = await readOrEmpty(absolute)
  return parseMemoryFile(text, 'lessons').lines.flatMap((line) => {
    if (line.type !== 'entry') return []
    const { forgotten_at: forgottenAt, forgotten_from: from, reason } = line.entry.meta
    return [{ entry: liveEntryOf(line.entry), ...(forgottenAt ? { forgottenAt } : {}), ...(from ? { from } : {}), ...(reason ? { reason } : {}) }]
  })
}

/** Removes the archived lines of an entry (same kind and text) from its archive file; returns how many. */
async function dropArchivedEntry(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, memory: Extract<ForgettableMemory, { kind: 'entry' }>): Promise<number> {
  const { absolute } = archiveOf(deps.layout, memory)
  const key = entryKey(memory.entry)
  return withLock(deps, archiveLockName(absolute), async () => {
    const text = await readOrEmpty(absolute)
    if (text === '') return 0
    const doc = parseMemoryFile(text, 'lessons')
    const lines = doc.lines.filter((line) => !(line.type === 'entry' && entryKey(liveEntryOf(line.entry)) === key))
    const dropped = doc.lines.length - lines.length
    if (dropped > 0) await writeFileAtomic(absolute, encodeUtf8Lossless(serializeMemoryFile({ ...doc, lines })))
    return dropped
  })
}

/** Removes the copies of a lesson from its topic file (lessons are cross-filed there); returns how many. */
async function dropTopicCopies(deps: Pick<ForgettingDeps, 'backend' | 'layout' | 'projectLocks'>, memory: Extract<ForgettableMemory, { kind: 'entry' }>): Promise<number> {
  const topic = memory.entry.kind === 'lesson' && memory.entry.topic !== undefined ? topicSlug(memory.entry.topic) : ''
  if (topic === '') return 0
  const dir = engramDirOf(deps.layout, memory.owner, memory.scope)
  const path = join(dir, 'topics', `${topic}.md`)
  const wanted = dedupeKey(memory.entry.text)
  return withTopicLock(deps, dir, memory.scope, topic, async () => {
    const text = await readOrEmpty(path)
    if (text === '') return 0
    const doc = parseMemoryFile(text, 'topic')
    const lines = doc.lines.filter((line) => !(line.type === 'entry' && dedupeKey(line.entry.text) === wanted))
    const dropped = doc.lines.length - lines.length
    if (dropped > 0) await writeFileAtomic(path, encodeUtf8Lossless(serializeMemoryFile({ ...doc, lines })))
    return dropped
  })
}

/** Removes an entry (same kind and text) from its live file; returns how many lines went. */
async function dropLiveEntry(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, memory: Extract<ForgettableMemory, { kind: 'entry' }>): Promise<number> {
  const key = entryKey(memory.entry)
  let dropped = 0
  await storeOf(deps, memory.owner, memory.scope).rewriteAll(memory.file, (current) => {
    const kept = current.filter((entry) => entryKey(entry) !== key)
    dropped = current.length - kept.length
    return dropped > 0 ? kept : null
  })
  return dropped
}

async function record(deps: ForgettingDeps, action: 'forget' | 'restore' | 'purge', outcome: ForgetOutcome, reason: string | undefined): Promise<void> {
  const verb = action === 'forget' ? 'forgot' : action === 'restore' ? 'restored' : 'purged'
  await deps.log.append({
    ts: deps.clock.now().toISOString(),
    type: 'memory_write',
    content: outcome.path,
    summary: `${verb} ${outcome.path}${outcome.archive && action !== 'purge' ? ` (${action === 'forget' ? 'to' : 'from'} ${outcome.archive})` : ''}`,
    meta: {
      action,
      path: outcome.path,
      owner: outcome.owner,
      ...(outcome.archive && action !== 'purge' ? { archive: outcome.archive } : {}),
      unitsRemoved: outcome.unitsRemoved,
      ...(outcome.deleted !== undefined ? { deleted: outcome.deleted } : {}),
      ...(reason ? { reason } : {}),
    },
  })
}

/**
 * Topic files and forgotten entries are kept as files of the home (`archive/forgotten/…`, the
 * topics a lesson is cross-filed into): on a backend whose memory is rows they would be written
 * where no other host reads them, and a lesson's topic copies could not be dropped (no seam writes
 * a topic's text). Only documents, which the DocumentStore archives, restores and purges, are
 * forgotten there; the rest is refused before anything changes.
 */
function assertForgettableOn(backend: Backend, memory: ForgettableMemory, action: 'forget' | 'restore' | 'purge'): void {
  if (backend.name === 'embedded' || memory.kind === 'document') return
  const what = memory.kind === 'topic' ? 'a topic file' : `an entry of ${memory.file}.md`
  throw new EngramError({
    code: ErrorCode.unsupported,
    category: 'user',
    message: `${memoryPathOf(memory)} cannot be ${action === 'forget' ? 'forgotten' : action === 'restore' ? 'restored' : 'purged'} on the ${backend.name} backend yet: ${what} is archived as a file of one host's home there, which no other process reads (issue 16). Nothing was changed.`,
    fix: 'forget knowledge and procedures (documents) as before; to forget a rule, lesson, profile fact or topic now, run engram on the embedded backend (unset storage.url / ENGRAM_DATABASE_URL)',
    details: { path: memoryPathOf(memory), backend: backend.name },
  })
}

/**
 * Moves a memory to its tree's `archive/forgotten/` and drops it from the index. Throws
 * `not_found` when it is not (or no longer) there.
 */
export async function forgetMemory(deps: ForgettingDeps, memory: ForgettableMemory, options: { reason?: string } = {}): Promise<ForgetOutcome> {
  assertForgettableOn(deps.backend, memory, 'forget')
  const path = memoryPathOf(memory)
  const archive = archiveOf(deps.layout, memory)
  const source = sourceOf(deps.layout, memory)
  const index = deps.backend.index
  let unitsRemoved = 0
  if (memory.kind === 'document') {
    await deps.backend.owned(memory.owner).documents.archive(memory.docKind, memory.slug, 'forgotten')
    unitsRemoved = await index.removeSource(source)
  } else if (memory.kind === 'topic') {
    const dir = engramDirOf(deps.layout, memory.owner, memory.scope)
    const live = join(dir, 'topics', `${memory.slug}.md`)
    await withTopicLock(deps, dir, memory.scope, memory.slug, async () => {
      if (!(await exists(live))) throw notFound(`There is no topic file ${path}.`, 'list the topics with read_memory_file "memory/topics" and pass one of them', { path })
      // A topic forgotten before under the same name stays archived beside it, never overwritten.
      if (await exists(archive.absolute)) await moveFile(archive.absolute, archive.absolute.replace(/\.md$/, `.${deps.clock.now().toISOString().replace(/[:.]/g, '-')}.md`))
      await moveFile(live, archive.absolute)
    })
    unitsRemoved = await index.removeSource(source)
  } else {
    const at = deps.clock.now().toISOString()
    const meta: Record<string, string> = {
      ...memory.entry.meta,
      kind: memory.entry.kind,
      forgotten_at: at,
      forgotten_from: path.slice(0, path.indexOf('#')),
      ...(options.reason ? { reason: options.reason } : {}),
    }
    const line = formatEntryLine({ ...memory.entry, meta })
    // Archived first, removed after: a crash in between leaves the memory twice, never nowhere.
    await withLock(deps, archiveLockName(archive.absolute), async () => {
      const before = await readOrEmpty(archive.absolute)
      const title = `# Forgotten ${memory.file === 'profile' ? 'profile facts' : memory.file}\n\n`
      if (before === '') await writeFileAtomic(archive.absolute, `${title}${line}\n`)
      else await appendText(archive.absolute, `${before.endsWith('\n') ? '' : '\n'}${line}\n`)
    })
    if ((await dropLiveEntry(deps, memory)) === 0) {
      await dropArchivedEntry(deps, memory)
      throw notFound(`${path} is no longer in ${memory.file}.md.`, 'search_memory for it again; it may have been forgotten or rewritten meanwhile', { path })
    }
    await dropTopicCopies(deps, memory)
    await index.remove([`${source}#${entryKey(memory.entry)}`])
    unitsRemoved = 1
  }
  const outcome: ForgetOutcome = {
    action: 'forgotten',
    path,
    owner: memory.owner,
    archive: archive.path,
    unitsRemoved,
    ...(memory.kind === 'entry' ? { text: memory.entry.text, entryKind: memory.entry.kind } : {}),
  }
  await record(deps, 'forget', outcome, options.reason)
  return outcome
}

/** Brings a forgotten memory back from `archive/forgotten/` and into the index. */
export async function restoreMemory(deps: ForgettingDeps, memory: ForgettableMemory): Promise<ForgetOutcome> {
  assertForgettableOn(deps.backend, memory, 'restore')
  const path = memoryPathOf(memory)
  let archive = archiveOf(deps.layout, memory)
  if (memory.kind === 'document') {
    const documents = deps.backend.owned(memory.owner).documents
    try {
      await documents.restore(memory.docKind, memory.slug, 'forgotten')
    } catch (error) {
      // Not forgotten: merged into another document by consolidation (archive/merged/), restored the same way.
      if (!EngramError.is(error) || error.code !== ErrorCode.notFound) throw error
      await documents.restore(memory.docKind, memory.slug, 'merged')
      archive = { ...archive, path: archive.path.replace(/archive\/forgotten\//, 'archive/merged/') }
    }
  } else if (memory.kind === 'topic') {
    const dir = engramDirOf(deps.layout, memory.owner, memory.scope)
    const live = join(dir, 'topics', `${memory.slug}.md`)
    await withTopicLock(deps, dir, memory.scope, memory.slug, async () => {
      if (!(await exists(archive.absolute))) throw notFound(`Nothing is archived at ${archive.path}.`, 'check the name; forgotten topics are under archive/forgotten/topics/', { path })
      if (await exists(live)) {
        throw new EngramError({
          code: ErrorCode.invalidArgument,
          category: 'user',
          message: `Cannot restore ${path}: a live topic file already exists there.`,
          fix: `merge the archived copy ${archive.path} into it by hand, or forget the live one first`,
          details: { path, archive: archive.path },
        })
      }
      await moveFile(archive.absolute, live)
    })
  } else {
    const entry = liveEntryOf(memory.entry)
    const store = storeOf(deps, memory.owner, memory.scope)
    // Put back first, taken out of the archive after: a crash in between leaves it twice, never nowhere.
    if (isRuleKind(entry.kind)) await store.encodeRule(entry)
    else if (entry.kind === 'lesson') await store.encodeLesson(entry)
    else await store.rewriteAll('profile', (current) => (current.some((other) => entryKey(other) === entryKey(entry)) ? null : [...current, entry]))
    if ((await dropArchivedEntry(deps, memory)) === 0) {
      throw notFound(`${path} is not in ${archive.path}.`, 'read the archive file to see what was forgotten', { path })
    }
  }
  await deps.reindex()
  const outcome: ForgetOutcome = { action: 'restored', path, owner: memory.owner, archive: archive.path, unitsRemoved: 0, ...(memory.kind === 'entry' ? { text: memory.entry.text, entryKind: liveEntryOf(memory.entry).kind } : {}) }
  await record(deps, 'restore', outcome, undefined)
  return outcome
}

/**
 * Deletes a memory for real: the live file or entry and every archived copy of it (versions
 * included). Only an explicit `--purge` calls it; the act is logged without the memory's text.
 */
export async function purgeMemory(deps: ForgettingDeps, memory: ForgettableMemory, options: { reason?: string } = {}): Promise<ForgetOutcome> {
  assertForgettableOn(deps.backend, memory, 'purge')
  const path = memoryPathOf(memory)
  const source = sourceOf(deps.layout, memory)
  const index = deps.backend.index
  let deleted = 0
  let unitsRemoved = 0
  if (memory.kind === 'document') {
    deleted = (await deps.backend.owned(memory.owner).documents.purge(memory.docKind, memory.slug)).length
    unitsRemoved = await index.removeSource(source)
  } else if (memory.kind === 'topic') {
    const dir = engramDirOf(deps.layout, memory.owner, memory.scope)
    const archive = archiveOf(deps.layout, memory)
    await withTopicLock(deps, dir, memory.scope, memory.slug, async () => {
      const folder = dirname(archive.absolute)
      const aside = (await readdir(folder).catch(() => [] as string[])).filter((name) => name.startsWith(`${memory.slug}.`) && name.endsWith('.md')).map((name) => join(folder, name))
      for (const file of [join(dir, 'topics', `${memory.slug}.md`), ...aside]) {
        try {
          await unlink(file)
          deleted++
        } catch (error) {
          if (!isMissing(error)) throw error
        }
      }
    })
    unitsRemoved = await index.removeSource(source)
  } else {
    deleted += await dropLiveEntry(deps, memory)
    deleted += await dropArchivedEntry(deps, memory)
    await dropTopicCopies(deps, memory)
    const id = `${source}#${entryKey(memory.entry)}`
    unitsRemoved = (await index.get([id])).length
    await index.remove([id])
  }
  if (deleted === 0) throw notFound(`There is nothing at ${path} to purge, live or archived.`, 'check the path or text; `engram search` finds live memories, archive/forgotten/ holds forgotten ones', { path })
  const outcome: ForgetOutcome = { action: 'purged', path, owner: memory.owner, unitsRemoved, deleted }
  await record(deps, 'purge', outcome, options.reason)
  return outcome
}
