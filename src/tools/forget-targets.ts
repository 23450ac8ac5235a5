/**
 * What "forget this" names (decision 0023), turned into one memory of one owner: a file of the
 * memory namespace (`knowledge/x.md`, `procedures/x.md`, `memory/topics/x.md`, the same under
 * `users/<key>/` and `shared/`, `project/topics/x.md`), one entry of rules.md, lessons.md or
 * profile.md (`memory/rules.md#<key>`, the index unit id search_memory returns, or the entry's text
 * as search_memory shows it, polarity included), or an archived copy (`archive/forgotten/…`).
 *
 * Who may forget what: a session with a user forgets only that user's memories; the agent's own
 * view (a session without a user, the CLI without --user) forgets the agent's and shared memory.
 * One user must not be able to make the agent forget what it learned for everyone.
 */
import { existsSync } from 'node:fs'
import { dedupeKey, type EngramEntry, type EngramScope, isRuleKind, ruleWithPolarity } from '../core/engram.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { kindSpec, type MemoryKindSpec, treeKindOfFolder } from '../core/memory-kinds.ts'
import { type Owner, ownerOfUser, userKey, type Viewer, visibleOwners } from '../core/owner.ts'
import { entryKey, type ForgettableDocKind, type ForgettableMemory, forgottenEntries, isForgottenProfileFact, memoryPathOf, profileMemory } from '../memory/forgetting/forget-memory.ts'
import { profileFacts } from '../memory/engrams/user-profiles.ts'
import type { Backend, EngramFile } from '../storage/contracts.ts'
import type { HomeLayout } from '../storage/home-layout.ts'
import { memoryFileSource } from '../memory/tree/memory-file-source.ts'
import { locateMemoryPath, type MemoryLocation, ownCounterpart } from '../memory/tree/memory-paths.ts'

/** Where to look for the memory: as it is now, in the archive (restore), or either (purge). */
export type TargetState = 'live' | 'archived' | 'any'

export interface ForgetTargetDeps {
  layout: HomeLayout
  backend: Backend
  viewer: Viewer
}

const ENTRY_FILES: readonly EngramFile[] = ['rules', 'lessons', 'profile']
const PATH_PREFIXES = ['memory/', 'knowledge/', 'procedures/', 'project/', 'project:', 'users/', 'shared/', 'agents/', 'archive/', 'state/', 'episodes/', 'activity/', 'skills/']
const WHAT_FILES_CAN_BE_FORGOTTEN = 'a file: "knowledge/<name>.md", "procedures/<name>.md", "memory/topics/<name>.md", "project/topics/<name>.md", a user\'s whole profile "users/<id>.md"'
const WHAT_CAN_BE_FORGOTTEN = `a rule, lesson or profile fact (its text as search_memory shows it, "memory/rules.md#<id>", or the id search_memory gives it), or ${WHAT_FILES_CAN_BE_FORGOTTEN}`
/** The same for a person at the command line, whose search is `engram search` (decision 0074). */
const WHAT_CAN_BE_FORGOTTEN_CLI = `a rule, lesson or profile fact (its text as \`engram search\` shows it, or its source with the #<id> it shows, "memory/rules.md#<id>"), or ${WHAT_FILES_CAN_BE_FORGOTTEN}`

/** A fix as the agent's tools say it, and as the command line says it when that differs. */
type Fix = string | { fix: string; cliFix: string }

function invalid(message: string, fix: Fix, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, ...(typeof fix === 'string' ? { fix } : fix), details })
}

function notFound(message: string, fix: Fix, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.notFound, category: 'user', message, ...(typeof fix === 'string' ? { fix } : fix), details })
}

/** The owners whose memories `viewer` may forget, restore or purge. */
export function forgettableOwners(viewer: Viewer): Owner[] {
  return viewer.user === undefined ? ['agent', 'shared'] : [ownerOfUser(viewer.user)]
}

function denied(viewer: Viewer, owner: Owner, path: string): EngramError {
  const whose = owner === 'agent' ? "the agent's own memory" : owner === 'shared' ? 'shared memory' : `${owner.slice(5)}'s memory`
  // A text target comes quoted already; a path is quoted here, once, as a shell argument.
  const argument = path.startsWith('"') ? path : JSON.stringify(path)
  return new EngramError({
    code: ErrorCode.accessDenied,
    category: 'user',
    message: `${path} is ${whose}; ${viewer.user === undefined ? 'the agent\'s own view' : `a session with ${viewer.user}`} cannot forget it.`,
    fix:
      viewer.user === undefined
        ? `forget a user's memory as that user: \`engram forget ${argument} --user <id>\``
        : `a session with a user forgets only that user's memories; an administrator forgets the agent's or shared memory with \`engram forget ${argument}\` (without --user)`,
    details: { path, owner },
  })
}

function looksLikePath(target: string): boolean {
  const file = target.split('#')[0] ?? ''
  return !/\s/.test(file) && (PATH_PREFIXES.some((prefix) => file.startsWith(prefix)) || file.endsWith('.md'))
}

/** Candidate texts for an entry as a person or a model may type it: as shown (`Never: …`, `- …`) or bare. */
function textForms(text: string): string[] {
  const bare = text.trim().replace(/^[-*]\s+/, '').replace(/^["“'](.*)["”']$/, '$1')
  const unlabelled = bare.replace(/^(always|never|when)\s*:\s*/i, '')
  return [...new Set([bare, unlabelled].map(dedupeKey))]
}

function entryMatches(entry: EngramEntry, forms: string[]): boolean {
  if (forms.includes(dedupeKey(entry.text))) return true
  return isRuleKind(entry.kind) && forms.includes(dedupeKey(ruleWithPolarity(entry.kind, entry.text)))
}

async function entriesOf(deps: ForgetTargetDeps, owner: Owner, scope: EngramScope, file: EngramFile, state: 'live' | 'archived'): Promise<EngramEntry[]> {
  // A user's forgotten profile facts share the archive file with their tree's profile.md: those are `profileFactsOf`'s.
  if (state === 'archived') return (await forgottenEntries(deps, owner, scope, file)).filter((found) => file !== 'profile' || !isForgottenProfileFact(owner, found)).map((found) => found.entry)
  const store = deps.backend.owned(owner).engrams(scope)
  return store ? (await store.read(file)).entries : []
}

/** The facts of `user`'s profile document (`users/<key>.md`), as it is or as forgotten. */
async function profileFactsOf(deps: ForgetTargetDeps, user: string, state: 'live' | 'archived'): Promise<EngramEntry[]> {
  const owner = ownerOfUser(user)
  if (state === 'archived') return (await forgottenEntries(deps, owner, 'global', 'profile')).filter((found) => isForgottenProfileFact(owner, found)).map((found) => found.entry)
  const doc = await deps.backend.documents.read('user', userKey(user))
  return doc ? profileFacts(doc.body) : []
}

/** One fact of `user`'s profile named by its key (`#<16 hex>`, as its index id ends) or its text. */
async function findProfileFact(deps: ForgetTargetDeps, user: string, anchor: string, state: TargetState): Promise<EngramEntry | undefined> {
  const byKey = /^[0-9a-f]{16}$/.test(anchor)
  const forms = byKey ? [] : textForms(anchor)
  for (const where of statesOf(state)) {
    const found = (await profileFactsOf(deps, user, where)).find((entry) => (byKey ? entryKey(entry) === anchor : forms.includes(dedupeKey(entry.text))))
    if (found) return found
  }
  return undefined
}

function statesOf(state: TargetState): Array<'live' | 'archived'> {
  return state === 'any' ? ['live', 'archived'] : [state]
}

/** An entry of one file named by its key (`#<16 hex>`) or its text. */
async function findEntry(deps: ForgetTargetDeps, owner: Owner, scope: EngramScope, file: EngramFile, anchor: string, state: TargetState): Promise<EngramEntry | undefined> {
  const byKey = /^[0-9a-f]{16}$/.test(anchor)
  const forms = byKey ? [] : textForms(anchor)
  for (const where of statesOf(state)) {
    const found = (await entriesOf(deps, owner, scope, file, where)).find((entry) => (byKey ? entryKey(entry) === anchor : entryMatches(entry, forms)))
    if (found) return found
  }
  return undefined
}

/** A path inside an owner's tree (`knowledge/x.md`, `memory/rules.md`) as what it holds, or undefined. */
function classify(local: string, state: TargetState): { kind: 'document'; docKind: ForgettableDocKind; slug: string } | { kind: 'topic'; scope: EngramScope; slug: string } | { kind: 'entries'; scope: EngramScope; file: EngramFile } | undefined {
  // A document of a kind forgetting judges (core/memory-kinds.ts). An episode is the record of what
  // happened: never forgotten on request, but one monthly forgetting archived is restored.
  let match = /^([^/]+)\/([^/]+)\.md$/.exec(local)
  const docKind = match ? treeKindOfFolder(match[1] as string) : undefined
  const rule = docKind === undefined ? null : (kindSpec(docKind)?.forgetting ?? null)
  if (match && rule !== null && (rule !== 'episode' || state === 'archived')) return { kind: 'document', docKind: docKind as ForgettableDocKind, slug: match[2] as string }
  match = /^(memory|project)\/topics\/([^/]+)\.md$/.exec(local)
  if (match) return { kind: 'topic', scope: match[1] === 'memory' ? 'global' : 'project', slug: match[2] as string }
  match = /^(memory|project)\/(rules|lessons|profile)\.md$/.exec(local)
  if (match) return { kind: 'entries', scope: match[1] === 'memory' ? 'global' : 'project', file: match[2] as EngramFile }
  return undefined
}

/** An archive path (`archive/forgotten/…` inside a tree) as the live path it was forgotten from. */
function liveLocalOfArchive(inner: string): string | undefined {
  // A document consolidation merged into another is restored as a forgotten one is.
  const merged = /^merged\/([a-z][a-z0-9-]*)\/([^/]+)\.md$/.exec(inner)
  const mergedRule = merged ? kindSpec(merged[1] as string)?.forgetting : undefined
  if (merged && (mergedRule === 'knowledge' || mergedRule === 'procedure')) return `${folderOfKind(merged[1] as string)}/${merged[2]}.md`
  const match = /^forgotten\/(?:(project)\/)?(.+)$/.exec(inner)
  if (!match) return undefined
  const rest = match[2] as string
  const scopeFolder = match[1] === 'project' ? 'project' : 'memory'
  if (/^(rules|lessons|profile)\.md$/.test(rest) || /^topics\/[^/]+\.md$/.test(rest)) return `${scopeFolder}/${rest}`
  if (match[1] === 'project') return undefined
  // Episodes are forgotten by monthly forgetting (archive/forgotten/episode/<day>.md).
  const doc = /^([a-z][a-z0-9-]*)\/([^/]+)\.md$/.exec(rest)
  return doc && (kindSpec(doc[1] as string)?.forgetting ?? null) !== null ? `${folderOfKind(doc[1] as string)}/${doc[2]}.md` : undefined
}

/** The folder in an owner's tree of a kind the registry holds (core/memory-kinds.ts). */
function folderOfKind(kind: string): string {
  return (kindSpec(kind) as MemoryKindSpec).folder
}

function refuseLocation(location: MemoryLocation): never {
  throw invalid(
    `${location.path} is not a memory that can be forgotten (episodes and the activity log are the record of what happened; state, skills and prompt layers are kept otherwise).`,
    { fix: `name ${WHAT_CAN_BE_FORGOTTEN}`, cliFix: `name ${WHAT_CAN_BE_FORGOTTEN_CLI}` },
    { path: location.path },
  )
}

async function fromPath(deps: ForgetTargetDeps, target: string, state: TargetState): Promise<ForgettableMemory> {
  if (/^(conv|msg|sum):/.test(target)) {
    throw invalid(`${target} is a conversation message or summary; conversations are kept whole.`, "a user's conversations are erased with the user: `engram forget --user <id> --purge`", { target })
  }
  const hash = target.indexOf('#')
  const file = hash < 0 ? target : target.slice(0, hash)
  const anchor = hash < 0 ? '' : target.slice(hash + 1).trim()
  let location = locateMemoryPath(file, deps.layout, deps.viewer)
  if (location.root === 'users' && location.inner !== '') return fromProfilePath(deps, location, anchor, state)
  let local = location.local
  if (location.root === 'archive') {
    const live = liveLocalOfArchive(location.inner)
    if (live === undefined) throw invalid(`${location.path} is not an archived copy of a forgotten memory.`, 'name a path under archive/forgotten/ (as forget reported it) or archive/merged/ (as consolidation did)', { path: location.path })
    local = live
    // A user's archive of forgotten profile facts also holds the facts of their profile document (forget-memory.ts).
    const user = location.owner.startsWith('user:') ? location.owner.slice('user:'.length) : undefined
    if (live === 'memory/profile.md' && user !== undefined && anchor !== '' && forgettableOwners(deps.viewer).includes(location.owner)) {
      const fact = await findProfileFact(deps, user, anchor, state)
      if (fact) return profileMemory(user, fact)
    }
  }
  const what = classify(local, state)
  if (!what) refuseLocation(location)
  // An unprefixed path in a session with a user means that user's file or entry when they have it
  // (it is what they read back), else the agent's — which such a session may not forget.
  const own = ownCounterpart(location, deps.layout, deps.viewer)
  const candidates = own ? [own, location] : [location]
  const holds = async (candidate: MemoryLocation): Promise<EngramEntry | boolean> => {
    if (what.kind === 'entries') return anchor !== '' && ((await findEntry(deps, candidate.owner, what.scope, what.file, anchor, state)) ?? false)
    if (state === 'archived') return candidate === candidates[0]
    // On a backend whose memory is rows the file is there when the seams hold it (memory-seam-source.ts).
    return deps.backend.capabilities.memory === 'files' ? existsSync(candidate.absolute) : (await memoryFileSource(deps.layout, deps.backend).open(candidate)).kind === 'file'
  }
  let found: EngramEntry | boolean = false
  for (const candidate of candidates) {
    found = await holds(candidate)
    if (found !== false) {
      location = candidate
      break
    }
  }
  if (found === false) location = candidates[0] as MemoryLocation
  const owner = location.owner
  const shown = `${location.tree}${local}${anchor !== '' && what.kind === 'entries' ? `#${anchor}` : ''}`
  if (!forgettableOwners(deps.viewer).includes(owner)) throw denied(deps.viewer, owner, shown)
  if (what.kind === 'document') return { kind: 'document', owner, docKind: what.docKind, slug: what.slug }
  if (what.kind === 'topic') return { kind: 'topic', owner, scope: what.scope, slug: what.slug }
  if (anchor === '') {
    throw invalid(
      `${shown} holds many entries; name one.`,
      {
        fix: `pass the entry's text as search_memory shows it, or "${shown}#<id>" with the id from search_memory's results`,
        cliFix: `pass the entry's text as \`engram search\` shows it, or "${shown}#<id>" with the #<id> its source shows (\`engram search "<words of the entry>"\`)`,
      },
      { path: shown },
    )
  }
  if (typeof found !== 'object') {
    throw notFound(
      `There is no such entry ${state === 'archived' ? 'archived from' : 'in'} ${location.tree}${local}.`,
      state === 'archived'
        ? `read ${location.tree}archive/forgotten/ to see what was forgotten`
        : { fix: 'search_memory for it and pass its text as shown', cliFix: 'find it with `engram search "<words of the entry>"` and pass its text, or its source with the #<id>, as shown' },
      { path: shown },
    )
  }
  return { kind: 'entry', owner, scope: what.scope, file: what.file, entry: found }
}

/**
 * A user's profile (`users/<key>.md`, `shared/users/<key>.md`): the whole document without an
 * anchor, one fact with one — its key as its index id ends (`shared/users/ada.md#<16 hex>`) or its text.
 */
async function fromProfilePath(deps: ForgetTargetDeps, location: MemoryLocation, anchor: string, state: TargetState): Promise<ForgettableMemory> {
  const owner = location.owner
  const user = owner.startsWith('user:') ? owner.slice('user:'.length) : undefined
  if (user === undefined || !location.inner.endsWith('.md')) refuseLocation(location)
  const shown = `users/${userKey(user)}.md${anchor !== '' ? `#${anchor}` : ''}`
  if (!forgettableOwners(deps.viewer).includes(owner)) throw denied(deps.viewer, owner, shown)
  if (anchor === '') return profileMemory(user)
  const entry = await findProfileFact(deps, user, anchor, state)
  if (!entry) {
    throw notFound(
      `There is no such fact ${state === 'archived' ? 'among the forgotten facts of' : 'in'} users/${userKey(user)}.md.`,
      state === 'archived'
        ? `read users/${userKey(user)}/archive/forgotten/profile.md to see what was forgotten`
        : { fix: "read the profile (memory tool profile_get) and pass the fact's text as it is written there", cliFix: `list the profile with \`engram memories list --kind profile --user ${user}\` and pass the fact's text as it is written there` },
      { path: shown },
    )
  }
  return profileMemory(user, entry)
}

async function fromText(deps: ForgetTargetDeps, text: string, state: TargetState): Promise<ForgettableMemory> {
  const forms = textForms(text)
  const allowed = forgettableOwners(deps.viewer)
  const mine: ForgettableMemory[] = []
  const others: Owner[] = []
  for (const owner of visibleOwners(deps.viewer)) {
    for (const scope of ['global', 'project'] as const) {
      if (!deps.backend.owned(owner).engrams(scope)) continue
      for (const file of ENTRY_FILES) {
        for (const where of statesOf(state)) {
          for (const entry of await entriesOf(deps, owner, scope, file, where)) {
            if (!entryMatches(entry, forms)) continue
            if (allowed.includes(owner)) mine.push({ kind: 'entry', owner, scope, file, entry })
            else others.push(owner)
          }
        }
      }
    }
  }
  // The viewer's own profile (a user's only: other users' are never searched, the agent's view has none).
  if (deps.viewer.user !== undefined) {
    const user = deps.viewer.user
    for (const where of statesOf(state)) for (const entry of await profileFactsOf(deps, user, where)) if (forms.includes(dedupeKey(entry.text))) mine.push(profileMemory(user, entry))
  }
  const distinct = [...new Map(mine.map((memory) => [memoryPathOf(memory), memory])).values()]
  if (distinct.length === 1) return distinct[0] as ForgettableMemory
  if (distinct.length > 1) {
    const paths = distinct.map(memoryPathOf)
    throw invalid(`${distinct.length} memories read "${text.trim()}": ${paths.join(', ')}.`, `name one of them by its path and id, e.g. "${paths[0]}"`, { candidates: paths })
  }
  if (others.length > 0) throw denied(deps.viewer, others[0] as Owner, JSON.stringify(text.trim()))
  const asUser = deps.viewer.user === undefined ? "; a user's profile fact is forgotten as that user (--user <id>)" : ''
  throw notFound(
    `No ${state === 'archived' ? 'forgotten ' : ''}rule, lesson or profile fact reads "${text.trim()}".`,
    state === 'archived'
      ? `read archive/forgotten/ (rules.md, lessons.md, profile.md) for the exact text, or pass the path of a forgotten file${asUser}`
      : {
          fix: `search_memory for it and pass its text as shown, or name ${WHAT_CAN_BE_FORGOTTEN}${asUser}`,
          cliFix: `find it with \`engram search ${JSON.stringify(text.trim())}\` and pass its text as shown, or name ${WHAT_CAN_BE_FORGOTTEN_CLI}${asUser}`,
        },
    { target: text },
  )
}

/**
 * Resolves what a caller asked to forget (or restore, or purge) for `deps.viewer`. Throws
 * `invalid_argument`, `not_found`, `path_outside_memory` or `access_denied`, each with its fix.
 */
export async function resolveForgetTarget(deps: ForgetTargetDeps, target: string, state: TargetState): Promise<ForgettableMemory> {
  const trimmed = typeof target === 'string' ? target.trim() : ''
  if (trimmed === '') throw invalid('Nothing to forget was named.', { fix: `name ${WHAT_CAN_BE_FORGOTTEN}`, cliFix: `name ${WHAT_CAN_BE_FORGOTTEN_CLI}` })
  return looksLikePath(trimmed) || /^(conv|msg|sum):/.test(trimmed) ? fromPath(deps, trimmed, state) : fromText(deps, trimmed, state)
}
