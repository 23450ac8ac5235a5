/**
 * Forgetting one memory on request (decision 0023; DESIGN principle 3). Forgetting *moves*: a
 * knowledge or procedure document goes to `<tree>/archive/forgotten/<kind>/<slug>.md` (the
 * DocumentStore's archive), a topic file to `<tree>/archive/forgotten/topics/<slug>.md`, and one
 * entry of rules.md, lessons.md or profile.md is appended to `<tree>/archive/forgotten/<file>.md`
 * with a metadata comment saying when, from where and why — then it leaves the search index at
 * once. A user's profile (`shared/users/<key>.md`) is forgotten one fact at a time the same way
 * (archived in the user's tree, `archive/forgotten/profile.md`) or whole (decision 0046).
 * `restore` moves it back. Only `purge` deletes, and it deletes the archived copies too.
 * Every act is a `memory_write` event in the actor's activity log that names the memory by path
 * and key, never by its text (a purged memory must not live on in the log of its purge).
 *
 * Project-scope memory (`project/…`) is archived in the owner's tree in the home
 * (`archive/forgotten/project/…`): the archive is where the agent's history is kept and read.
 *
 * The archive of forgotten entries and topics and a topic's text are the engram store's
 * (`EngramStore.archive`, `writeTopic`): files of the owner's tree on the embedded backend, rows of
 * the same names on PostgreSQL, so every step below is the same on both.
 *
 * The operations take a memory already resolved to its owner (`tools/forget-targets.ts` turns what
 * a person or a model typed into one, and checks who may forget it).
 */
import type { ActivityEvent } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import { dedupeKey, type EngramEntry, type EngramKind, type EngramScope, isEngramKind, isRuleKind } from '../../core/engram.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { type ForgettableDocKind, memoryKinds } from '../../core/memory-kinds.ts'
import { formatEntryLine, parseMemoryFile, serializeMemoryFile } from '../../core/markdown-entry.ts'
import { type Owner, ownerOfUser, userKey } from '../../core/owner.ts'
import type { ActivityLog, Backend, EngramArchive, EngramFile, EngramStore } from '../../storage/contracts.ts'
import { topicSlug } from '../../storage/engram-entries.ts'
import { type HomeLayout, ownerNamespace, ownerTree } from '../../storage/home-layout.ts'
import { createUserProfiles, type UserProfiles } from '../engrams/user-profiles.ts'
import { engramEntryKey, engramSource } from '../retrieval/indexer.ts'

/**
 * Documents that can be forgotten: the kinds with a forgetting rule in the registry
 * (core/memory-kinds.ts; the others are records or history, and a user's profile is a memory kind
 * of its own); episodes by monthly forgetting once compressed.
 */
export type { ForgettableDocKind }

/**
 * One memory, resolved to its owner's tree. A user's profile (`shared/users/<key>.md`, decision
 * 0017) is forgotten whole (`profile`, archived by the document store in the profile's own
 * history) or one fact at a time (`profile-fact`, archived in the user's tree with the forgotten
 * profile facts, `users/<key>/archive/forgotten/profile.md`).
 */
export type ForgettableMemory =
  | { kind: 'document'; owner: Owner; docKind: ForgettableDocKind; slug: string }
  | { kind: 'topic'; owner: Owner; scope: EngramScope; slug: string }
  | { kind: 'entry'; owner: Owner; scope: EngramScope; file: EngramFile; entry: EngramEntry }
  | { kind: 'profile'; owner: Owner; user: string }
  | { kind: 'profile-fact'; owner: Owner; user: string; entry: EngramEntry }

/** A user's profile, or one fact of it, as a memory to forget. */
export function profileMemory(user: string, entry?: EngramEntry): ForgettableMemory {
  return entry === undefined ? { kind: 'profile', owner: ownerOfUser(user), user } : { kind: 'profile-fact', owner: ownerOfUser(user), user, entry: { ...entry, kind: 'profile' } }
}

/** The memory path of a user's profile (`users/<key>.md`). */
function profilePathOf(user: string): string {
  return `users/${userKey(user)}.md`
}

export interface ForgettingDeps {
  backend: Backend
  layout: HomeLayout
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

/** The folder of each forgettable document kind in an owner's tree (core/memory-kinds.ts). */
export const DOC_FOLDERS = Object.fromEntries(memoryKinds().flatMap(([kind, spec]) => (spec.forgetting === null ? [] : [[kind, spec.folder]]))) as Record<ForgettableDocKind, string>

function notFound(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.notFound, category: 'user', message, fix, details })
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
    case 'profile':
      return profilePathOf(memory.user)
    case 'profile-fact':
      return `${profilePathOf(memory.user)}#${entryKey(memory.entry)}`
  }
}

/** Where a memory's archived copy lives, inside its tree's `archive/`. */
function archiveLocal(memory: Exclude<ForgettableMemory, { kind: 'profile' }>): string {
  const project = 'scope' in memory && memory.scope === 'project' ? 'project/' : ''
  switch (memory.kind) {
    case 'document':
      return `forgotten/${memory.docKind}/${memory.slug}.md`
    case 'topic':
      return `forgotten/${project}topics/${memory.slug}.md`
    case 'entry':
      return `forgotten/${project}${memory.file}.md`
    case 'profile-fact':
      return 'forgotten/profile.md'
  }
}

/**
 * The archived copy of a memory, as a memory path — but for a whole profile, which the document
 * store keeps in the profile's own history folder (home-relative: hidden, so no other user reaches it).
 */
function archiveOf(memory: ForgettableMemory): { path: string } {
  if (memory.kind === 'profile') return { path: `shared/users/.history/${userKey(memory.user)}/archive/forgotten/user/${userKey(memory.user)}.md` }
  return { path: `${ownerNamespace(memory.owner)}archive/${archiveLocal(memory)}` }
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
  if (memory.kind === 'profile' || memory.kind === 'profile-fact') return `shared/${profilePathOf(memory.user)}`
  if (memory.kind === 'document') return `${ownerTree(layout, memory.owner).rel}/${DOC_FOLDERS[memory.docKind]}/${memory.slug}.md`
  if (memory.kind === 'topic') return engramSource(memory.scope, layout.agent, `topics/${memory.slug}.md`, memory.owner)
  return engramSource(memory.scope, layout.agent, `${memory.file}.md`, memory.owner)
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
export async function forgottenEntries(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, owner: Owner, scope: EngramScope, file: EngramFile): Promise<ForgottenEntry[]> {
  const files = engramFilesOf(deps, owner, scope, { reading: true })
  const text = files ? ((await files.archive.read(entryArchiveName(scope, file))) ?? '') : ''
  return parseMemoryFile(text, 'lessons').lines.flatMap((line) => {
    if (line.type !== 'entry') return []
    const { forgotten_at: forgottenAt, forgotten_from: from, reason } = line.entry.meta
    return [{ entry: liveEntryOf(line.entry), ...(forgottenAt ? { forgottenAt } : {}), ...(from ? { from } : {}), ...(reason ? { reason } : {}) }]
  })
}

/**
 * Whether an entry of a user's archive of forgotten profile facts came from their profile document
 * (`users/<key>.md`) rather than from a `memory/profile.md` in their tree: the two share the file,
 * and only where it came from says where a restore puts it back.
 */
export function isForgottenProfileFact(owner: Owner, found: Pick<ForgottenEntry, 'from'>): boolean {
  return owner.startsWith('user:') && found.from === profilePathOf(owner.slice('user:'.length))
}

/** A forgotten entry of `owner`'s `file` archive as the memory a restore names. */
export function forgottenMemoryOf(owner: Owner, scope: EngramScope, file: EngramFile, found: ForgottenEntry): ForgettableMemory {
  if (file === 'profile' && isForgottenProfileFact(owner, found)) return profileMemory(owner.slice('user:'.length), found.entry)
  return { kind: 'entry', owner, scope, file, entry: found.entry }
}

/** The archive name of a scope's forgotten `file` entries (`EngramArchive`). */
function entryArchiveName(scope: EngramScope, file: EngramFile): string {
  return `forgotten/${scope === 'project' ? 'project/' : ''}${file}`
}

/** What forgetting changes of one scope's engram files besides their entries: the owner's archive, a topic's text. */
interface EngramFiles {
  archive: EngramArchive
  writeTopic: NonNullable<EngramStore['writeTopic']>
}

/**
 * The archive and topic writes of `owner`'s `scope` (`EngramStore.archive`, `writeTopic`): files of
 * the owner's tree on the embedded home, rows on PostgreSQL. Refuses a store without them before
 * anything changes; with `reading`, gives undefined where there is nothing to read instead.
 */
function engramFilesOf(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, owner: Owner, scope: EngramScope, options: { reading?: boolean } = {}): EngramFiles | undefined {
  const store = deps.backend.owned(owner).engrams(scope)
  if (store?.writeTopic && store.archive) return { archive: store.archive, writeTopic: store.writeTopic.bind(store) }
  if (options.reading) return undefined
  if (!store) storeOf(deps, owner, scope) // says why (no project open) with its fix
  throw new EngramError({
    code: ErrorCode.unsupported,
    category: 'system',
    message: `Rules, lessons, profile facts and topic files cannot be forgotten here: the ${deps.backend.name} backend's engram store keeps no archive of them. Nothing was changed.`,
    fix: 'use an engram store with archive and writeTopic (the embedded and PostgreSQL ones have them), or forget knowledge and procedures (documents)',
    details: { backend: deps.backend.name },
  })
}

/** Where a profile fact's archived copy is kept: the user's tree, with the other forgotten profile facts. */
function archivedFactOf(memory: Extract<ForgettableMemory, { kind: 'profile-fact' }>): Extract<ForgettableMemory, { kind: 'entry' }> {
  return { kind: 'entry', owner: memory.owner, scope: 'global', file: 'profile', entry: memory.entry }
}

function profilesOf(deps: Pick<ForgettingDeps, 'backend' | 'clock'>): UserProfiles {
  return createUserProfiles({ documents: deps.backend.documents, locks: deps.backend.locks, clock: deps.clock })
}

function purgeRefused(path: string, user: string): EngramError {
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `${path} is (part of) a user's profile, whose every earlier version is kept with it; one fact cannot be purged from that history. Nothing was changed.`,
    fix: `forget it instead (it can be restored), or erase the user's whole memory: \`engram forget --user ${user} --purge\``,
    details: { path },
  })
}

/** The engram files of a memory's scope (refused, before anything changes, where there are none). */
function filesOf(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, memory: Extract<ForgettableMemory, { kind: 'topic' | 'entry' }>): EngramFiles {
  return engramFilesOf(deps, memory.owner, memory.scope) as EngramFiles
}

/** Removes the archived lines of an entry (same kind and text) from its archive file; returns how many. */
async function dropArchivedEntry(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, memory: Extract<ForgettableMemory, { kind: 'entry' }>): Promise<number> {
  const key = entryKey(memory.entry)
  let dropped = 0
  await filesOf(deps, memory).archive.updateEntries(memory.file, (text) => {
    dropped = 0
    if (text === '') return null
    const doc = parseMemoryFile(text, 'lessons')
    const lines = doc.lines.filter((line) => !(line.type === 'entry' && entryKey(liveEntryOf(line.entry)) === key))
    dropped = doc.lines.length - lines.length
    return dropped > 0 ? serializeMemoryFile({ ...doc, lines }) : null
  })
  return dropped
}

/** Removes the copies of a lesson from its topic file (lessons are cross-filed there); returns how many. */
async function dropTopicCopies(deps: Pick<ForgettingDeps, 'backend' | 'layout'>, memory: Extract<ForgettableMemory, { kind: 'entry' }>): Promise<number> {
  const topic = memory.entry.kind === 'lesson' && memory.entry.topic !== undefined ? topicSlug(memory.entry.topic) : ''
  if (topic === '') return 0
  const wanted = dedupeKey(memory.entry.text)
  let dropped = 0
  await filesOf(deps, memory).writeTopic(topic, (text) => {
    dropped = 0
    if (text === null || text === '') return null
    const doc = parseMemoryFile(text, 'topic')
    const lines = doc.lines.filter((line) => !(line.type === 'entry' && dedupeKey(line.entry.text) === wanted))
    dropped = doc.lines.length - lines.length
    return dropped > 0 ? serializeMemoryFile({ ...doc, lines }) : null
  })
  return dropped
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
  await deps.log.append(eventOf(action, outcome, reason, deps.clock.now().toISOString()))
}

/**
 * The record of forgetting a document at `at`, as `forgetMemory` writes it, without forgetting it:
 * what monthly forgetting plans before it moves anything (decision 0053).
 */
export function forgottenDocumentEvent(memory: Extract<ForgettableMemory, { kind: 'document' }>, options: { unitsRemoved: number; reason: string; at: string }): { archive: string; event: ActivityEvent } {
  const archive = archiveOf(memory).path
  const outcome: ForgetOutcome = { action: 'forgotten', path: memoryPathOf(memory), owner: memory.owner, archive, unitsRemoved: options.unitsRemoved }
  return { archive, event: eventOf('forget', outcome, options.reason, options.at) }
}

function eventOf(action: 'forget' | 'restore' | 'purge', outcome: ForgetOutcome, reason: string | undefined, ts: string): ActivityEvent {
  const verb = action === 'forget' ? 'forgot' : action === 'restore' ? 'restored' : 'purged'
  return {
    ts,
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
  }
}

/**
 * One fact of a user's profile: archived with the user's forgotten profile facts, then taken out
 * of the profile document (a versioned rewrite) and out of the index.
 */
async function forgetProfileFact(deps: ForgettingDeps, memory: Extract<ForgettableMemory, { kind: 'profile-fact' }>, options: { reason?: string }): Promise<ForgetOutcome> {
  const path = memoryPathOf(memory)
  const archived = archivedFactOf(memory)
  const meta: Record<string, string> = {
    ...memory.entry.meta,
    kind: 'profile',
    forgotten_at: deps.clock.now().toISOString(),
    forgotten_from: profilePathOf(memory.user),
    ...(options.reason ? { reason: options.reason } : {}),
  }
  const line = formatEntryLine({ ...memory.entry, meta })
  // Archived first, removed after: a crash in between leaves the fact twice, never nowhere.
  await filesOf(deps, archived).archive.updateEntries('profile', (before) => (before === '' ? `# Forgotten profile facts\n\n${line}\n` : `${before}${before.endsWith('\n') ? '' : '\n'}${line}\n`))
  if ((await profilesOf(deps).removeFact(memory.user, memory.entry.text, `forgot ${path}`)) === 0) {
    await dropArchivedEntry(deps, archived)
    throw notFound(`${path} is no longer in ${profilePathOf(memory.user)}.`, 'read the profile again (memory tool profile_get); it may have been forgotten or rewritten meanwhile', { path })
  }
  await deps.backend.index.remove([`${sourceOf(deps.layout, memory)}#${entryKey(memory.entry)}`])
  const outcome: ForgetOutcome = { action: 'forgotten', path, owner: memory.owner, archive: archiveOf(memory).path, unitsRemoved: 1, text: memory.entry.text, entryKind: 'profile' }
  await record(deps, 'forget', outcome, options.reason)
  return outcome
}

/**
 * Moves a memory to its tree's `archive/forgotten/` and drops it from the index. Throws
 * `not_found` when it is not (or no longer) there.
 */
export async function forgetMemory(deps: ForgettingDeps, memory: ForgettableMemory, options: { reason?: string } = {}): Promise<ForgetOutcome> {
  if (memory.kind === 'profile-fact') return forgetProfileFact(deps, memory, options)
  const files = memory.kind === 'entry' || memory.kind === 'topic' ? filesOf(deps, memory) : undefined
  const path = memoryPathOf(memory)
  let archive = archiveOf(memory)
  const source = sourceOf(deps.layout, memory)
  const index = deps.backend.index
  let unitsRemoved = 0
  if (memory.kind === 'profile') {
    // The whole profile goes where the document store keeps its history (shared/users/.history/<key>/).
    archive = { path: await deps.backend.documents.archive('user', userKey(memory.user), 'forgotten') }
    unitsRemoved = await index.removeSource(source)
  } else if (memory.kind === 'document') {
    await deps.backend.owned(memory.owner).documents.archive(memory.docKind, memory.slug, 'forgotten')
    unitsRemoved = await index.removeSource(source)
  } else if (memory.kind === 'topic') {
    if (!(await files?.archive.forgetTopic(memory.slug, deps.clock.now().toISOString().replace(/[:.]/g, '-')))) {
      throw notFound(`There is no topic file ${path}.`, 'list the topics with read_memory_file "memory/topics" and pass one of them', { path })
    }
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
    await files?.archive.updateEntries(memory.file, (before) => {
      const title = `# Forgotten ${memory.file === 'profile' ? 'profile facts' : memory.file}\n\n`
      return before === '' ? `${title}${line}\n` : `${before}${before.endsWith('\n') ? '' : '\n'}${line}\n`
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
  const files = memory.kind === 'entry' || memory.kind === 'topic' ? filesOf(deps, memory) : undefined
  const path = memoryPathOf(memory)
  let archive = archiveOf(memory)
  if (memory.kind === 'profile') {
    await deps.backend.documents.restore('user', userKey(memory.user), 'forgotten')
  } else if (memory.kind === 'profile-fact') {
    // Put back as a fact is merged: a fact with the same key that holds now gives way to it.
    await profilesOf(deps).mergeFact(memory.user, memory.entry.text, `restored ${path}`)
    if ((await dropArchivedEntry(deps, archivedFactOf(memory))) === 0) {
      throw notFound(`${path} is not in ${archive.path}.`, 'read the archive file to see what was forgotten', { path })
    }
  } else if (memory.kind === 'document') {
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
    const restored = await files?.archive.restoreTopic(memory.slug)
    if (restored === 'missing') throw notFound(`Nothing is archived at ${archive.path}.`, 'check the name; forgotten topics are under archive/forgotten/topics/', { path })
    if (restored === 'occupied') {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: `Cannot restore ${path}: a live topic file already exists there.`,
        fix: `merge the archived copy ${archive.path} into it by hand, or forget the live one first`,
        details: { path, archive: archive.path },
      })
    }
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
  const entry = memory.kind === 'entry' ? liveEntryOf(memory.entry) : memory.kind === 'profile-fact' ? memory.entry : undefined
  const outcome: ForgetOutcome = { action: 'restored', path, owner: memory.owner, archive: archive.path, unitsRemoved: 0, ...(entry ? { text: entry.text, entryKind: entry.kind } : {}) }
  await record(deps, 'restore', outcome, undefined)
  return outcome
}

/**
 * Deletes a memory for real: the live file or entry and every archived copy of it (versions
 * included). Only an explicit `--purge` calls it; the act is logged without the memory's text.
 */
export async function purgeMemory(deps: ForgettingDeps, memory: ForgettableMemory, options: { reason?: string } = {}): Promise<ForgetOutcome> {
  if (memory.kind === 'profile' || memory.kind === 'profile-fact') throw purgeRefused(memoryPathOf(memory), memory.user)
  const files = memory.kind === 'document' ? undefined : filesOf(deps, memory)
  const path = memoryPathOf(memory)
  const source = sourceOf(deps.layout, memory)
  const index = deps.backend.index
  let deleted = 0
  let unitsRemoved = 0
  if (memory.kind === 'document') {
    deleted = (await deps.backend.owned(memory.owner).documents.purge(memory.docKind, memory.slug)).length
    unitsRemoved = await index.removeSource(source)
  } else if (memory.kind === 'topic') {
    deleted = (await files?.archive.purgeTopic(memory.slug)) ?? 0
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
