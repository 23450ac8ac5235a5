/**
 * The agent's view of its own memory as one small file namespace, and the confinement that keeps
 * `read_memory_file`, `write_memory_file` and the MCP resources inside it.
 *
 * Namespace (forward slashes, relative, no leading `/`):
 *
 * | memory path                  | on disk                                   | read | write |
 * |------------------------------|-------------------------------------------|------|-------|
 * | `memory/…`                   | `agents/<a>/memory/` (profile, rules, lessons, topics/) | yes | `memory/topics/<slug>.md` only |
 * | `knowledge/<slug>.md`        | `agents/<a>/knowledge/`                   | yes  | yes (versioned) |
 * | `procedures/<slug>.md`       | `agents/<a>/procedures/`                  | yes  | yes (versioned) |
 * | `state/<slug>.md`            | `agents/<a>/state/`                       | yes  | yes (versioned) |
 * | `skills/…`                   | `agents/<a>/skills/`                      | yes  | no |
 * | `episodes/<date>.md`         | `agents/<a>/episodes/`                    | yes  | no |
 * | `activity/<date>.jsonl`      | `agents/<a>/activity/`                    | yes  | no |
 * | `archive/…`                  | `agents/<a>/archive/`                     | yes  | no |
 * | `SYSTEM.md`, `SOUL.md`       | `agents/<a>/`                             | yes  | no |
 * | `users/<key>.md`             | `shared/users/` (a user's one profile)    | yes  | no (the memory tool's profile_update) |
 * | `users/<key>/…`              | `agents/<a>/users/<key>/` (a user's tree) | yes  | as the agent's tree |
 * | `shared/…`                   | `shared/` (memory, knowledge, procedures, archive) | yes | as the agent's tree |
 * | `project/…`                  | `<project>/.engram/memory/`               | yes  | `project/topics/<slug>.md` only |
 *
 * Owners (decision 0017): `users/<key>.md` and `users/<key>/…` are a user's; a viewer with a user
 * reaches only its own, a viewer without one reaches none (`access_denied`). Everything else is the
 * agent's or shared and open to every viewer of the agent.
 *
 * Why these write rules: rules, lessons and the profile go through `memorize` (the encoding gate
 * and deduplication, DESIGN.md §1 principle 1); episodes and the activity log are written by the
 * session recorder and are the record of what happened, so the agent may not rewrite its past;
 * `archive/` is history; SYSTEM.md / SOUL.md are the user's instructions to the agent and must not
 * be rewritten by the agent they constrain; user profiles change through the memory tool.
 *
 * Paths other tools emit are accepted as aliases: home-relative `agents/<a>/…`, `shared/users/…`
 * (index sources, document paths) and `project:.engram/memory/…`, `project:.engram/users/<key>/memory/…`
 * (project index sources). Everything else — `..`, absolute paths, NUL bytes, backslashes, hidden
 * files, the journal, the database, symlinks that lead outside their folder — is refused with the
 * code `path_outside_memory`.
 */
import { realpath } from 'node:fs/promises'
import { isAbsolute, join, sep } from 'node:path'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { inListingOrder, memoryKinds } from '../../core/memory-kinds.ts'
import { textProblem } from '../../core/well-formed-text.ts'
import { type Owner, userFromKey, userKey, type Viewer } from '../../core/owner.ts'
import { type HomeLayout, ownerTree } from '../../storage/home-layout.ts'

/** What a memory path names, once checked. */
export interface MemoryLocation {
  /** The canonical memory path (`knowledge/tea.md`, `users/ada/knowledge/tea.md`); `''` for the namespace root. */
  path: string
  /** The first segment inside its tree (`knowledge`, `memory`, `project`), `users` for a profile, or `''` (the tree's own files and folder). */
  root: string
  /** The path inside the root (`tea.md`, `topics/x.md`); `''` for the root itself. */
  inner: string
  /** The path inside its owner's tree (`knowledge/tea.md`): what the write rules look at. */
  local: string
  /** The namespace prefix of the tree: `''`, `users/<key>/` or `shared/`. */
  tree: string
  /** Whose memory it is. */
  owner: Owner
  /** Absolute path on disk (not yet resolved through symlinks). */
  absolute: string
  /** The root folder on disk. */
  rootDir: string
}

interface RootSpec {
  name: string
  dir: string
}

/*
 * The roots of each tree: its engram files, activity and archive (and the agent's skills), and the
 * folder of every document kind filed there (core/memory-kinds.ts; the shared tree holds the kinds
 * marked `shared`). The lists keep the order a listing has always shown; a kind added since is
 * listed after the folders named here.
 */
const ROOT_ORDER = ['memory', 'knowledge', 'procedures', 'skills', 'episodes', 'activity', 'state', 'archive']
const kindFolders = (shared: boolean): string[] => memoryKinds().flatMap(([, spec]) => (spec.home === 'tree' && (spec.shared || !shared) ? [spec.folder] : []))
/** The agent's tree. */
export const AGENT_ROOTS: readonly string[] = inListingOrder(ROOT_ORDER, ['memory', 'skills', 'activity', 'archive', ...kindFolders(false)])
/** A user's tree has the agent's layout without skills (skills are the agent's). */
export const USER_ROOTS: readonly string[] = AGENT_ROOTS.filter((root) => root !== 'skills')
/** Shared memory is what agents and users hand to everyone: notes, procedures, their history. */
export const SHARED_ROOTS: readonly string[] = inListingOrder(ROOT_ORDER, ['memory', 'archive', ...kindFolders(true)])
const AGENT_FILES = ['SYSTEM.md', 'SOUL.md'] as const

/**
 * The writable places inside any owner's tree: `<root>/<file>.md` directly inside one of these
 * folders — the folder of every kind the agent may write (core/memory-kinds.ts), and topics.
 */
export const WRITABLE_FOLDERS: readonly string[] = [...memoryKinds().flatMap(([, spec]) => (spec.home === 'tree' && spec.agentWritable ? [spec.folder] : [])), 'memory/topics', 'project/topics']

function outside(path: string, why: string, fix?: string): EngramError {
  return new EngramError({
    code: ErrorCode.pathOutsideMemory,
    category: 'user',
    message: `Refused path ${JSON.stringify(path)}: ${why}.`,
    fix:
      fix ??
      `use a path relative to your memory, such as "knowledge/<name>.md", "memory/rules.md", "users/<name>.md" or "project/rules.md"; read "" to list the folders`,
    details: { path },
  })
}

function otherUsers(path: string): EngramError {
  return new EngramError({
    code: ErrorCode.accessDenied,
    category: 'user',
    message: `Refused path ${JSON.stringify(path)}: it is another user's memory.`,
    fix: 'read your own memory and the current user\'s (users/<their id>/…, users/<their id>.md); other users\' memories never reach this conversation',
    details: { path },
  })
}

/** The roots of an agent's memory namespace, in listing order. */
export function memoryRoots(layout: HomeLayout): RootSpec[] {
  const roots: RootSpec[] = AGENT_ROOTS.map((name) => ({ name, dir: join(layout.agentDir, name) }))
  roots.push({ name: 'users', dir: layout.sharedUsersDir })
  roots.push({ name: 'shared', dir: layout.sharedDir })
  if (layout.projectMemoryDir) roots.push({ name: 'project', dir: layout.projectMemoryDir })
  return roots
}

/** The top-level file names of the namespace (prompt layers in the agent folder). */
export function memoryRootFiles(): readonly string[] {
  return AGENT_FILES
}

/** Turns the aliases other tools emit into a namespace path; leaves other paths alone. */
function unalias(path: string, layout: HomeLayout): string {
  const agentPrefix = `agents/${layout.agent}/`
  if (path.startsWith(agentPrefix)) return path.slice(agentPrefix.length)
  if (path.startsWith('shared/users/')) return `users/${path.slice('shared/users/'.length)}`
  if (path === 'shared/users') return 'users'
  if (path.startsWith('project:.engram/memory/')) return `project/${path.slice('project:.engram/memory/'.length)}`
  const userProject = /^project:\.engram\/users\/([^/]+)\/memory\/(.*)$/.exec(path)
  if (userProject) return `users/${userProject[1]}/project/${userProject[2]}`
  return path
}

/** Where a tree-relative path of `owner` lives: its root folder and the absolute path. */
function inTree(layout: HomeLayout, owner: Owner, roots: readonly string[], rawPath: string, tree: string, segments: string[]): MemoryLocation {
  const dirs = ownerTree(layout, owner)
  const [first, ...rest] = segments
  if (first === undefined) return { path: tree.replace(/\/$/, ''), root: '', inner: '', local: '', tree, owner, absolute: dirs.dir, rootDir: dirs.dir }
  let rootDir: string | undefined
  if (first === 'project') rootDir = dirs.projectMemoryDir
  else if ((roots as readonly string[]).includes(first)) rootDir = join(dirs.dir, first)
  if (rootDir === undefined) {
    if (first === 'project') {
      throw outside(rawPath, owner === 'shared' ? 'shared memory has no project part' : 'no project is open, so there is no project memory', 'open the mind with a project folder (--project or ENGRAM_PROJECT) to use "project/…" paths')
    }
    const list = [...roots.map((r) => `${tree}${r}/`), ...(dirs.projectMemoryDir ? [`${tree}project/`] : [])]
    throw outside(rawPath, `"${tree}${first}" is not one of the memory folders here (${list.join(', ')})`)
  }
  const inner = rest.join('/')
  const local = segments.join('/')
  return { path: `${tree}${local}`, root: first, inner, local, tree, owner, absolute: rest.length > 0 ? join(rootDir, ...rest) : rootDir, rootDir }
}

/**
 * Checks a memory path lexically and maps it to disk. Throws `path_outside_memory` for anything
 * that is not inside the namespace, and `access_denied` for another user's memory when a viewer is
 * given (without one — an administrator, the CLI's own listing — every user's is reachable). Does
 * not touch the disk; `confine()` checks symlinks.
 */
export function locateMemoryPath(rawPath: string, layout: HomeLayout, viewer?: Viewer): MemoryLocation {
  if (typeof rawPath !== 'string') throw outside(String(rawPath), 'a path must be a string')
  if (rawPath.includes('\u0000')) throw outside(rawPath.replace(/\u0000/g, '\\0'), 'it contains a NUL byte')
  if (/[\u0001-\u001f\u007f]/.test(rawPath)) throw outside(rawPath, 'it contains control characters')
  // Half a character reaches the file system as U+FFFD: the file written would have another name (decision 0055).
  const halfCharacter = textProblem(rawPath)
  if (halfCharacter) throw outside(rawPath, `it holds ${halfCharacter}`, 'write the path with whole characters')
  // U+FFFD is what a decoder makes of bytes that are not UTF-8 (half a character sent as its own
  // three bytes, a Latin-1 name): the client meant another name, and no file is named by it.
  if (rawPath.includes('\uFFFD')) throw outside(rawPath, 'it holds U+FFFD, the replacement character a decoder puts where the bytes sent were not UTF-8', 'send the path as UTF-8 of whole characters')
  if (rawPath.includes('\\')) throw outside(rawPath, 'backslashes are not path separators here', 'write the path with forward slashes, e.g. "knowledge/tea.md"')
  if (isAbsolute(rawPath) || /^[A-Za-z]:/.test(rawPath) || rawPath.startsWith('~')) {
    throw outside(rawPath, 'absolute paths are not allowed; only your own memory folders can be read or written')
  }
  const trimmed = rawPath.trim().replace(/^\.\/+/, '').replace(/\/+$/, '')
  const path = unalias(trimmed, layout)
  if (path === '' || path === '.') return { path: '', root: '', inner: '', local: '', tree: '', owner: 'agent', absolute: layout.agentDir, rootDir: layout.agentDir }
  const segments = path.split('/')
  for (const segment of segments) {
    if (segment === '..') throw outside(rawPath, '".." would leave your memory folders')
    if (segment === '' || segment === '.') throw outside(rawPath, 'it has an empty or "." segment', 'write the path without "//" or "/./", e.g. "knowledge/tea.md"')
    if (segment.startsWith('.')) throw outside(rawPath, 'hidden files (names starting with ".") are not memory')
  }
  const [first, ...rest] = segments as [string, ...string[]]
  if ((AGENT_FILES as readonly string[]).includes(first) && rest.length === 0) {
    return { path, root: '', inner: first, local: first, tree: '', owner: 'agent', absolute: join(layout.agentDir, first), rootDir: layout.agentDir }
  }
  if (first === 'users') {
    const [name, ...below] = rest
    if (name === undefined) return { path: 'users', root: 'users', inner: '', local: 'users', tree: '', owner: 'agent', absolute: layout.sharedUsersDir, rootDir: layout.sharedUsersDir }
    const key = below.length === 0 && name.endsWith('.md') ? name.slice(0, -3) : name
    const user = userFromKey(key)
    if (user === undefined) throw outside(rawPath, `"${key}" is not a user id as it appears on disk`, 'use the paths search_memory and your primed memories show, e.g. "users/ada.md"')
    if (viewer !== undefined && viewer.user !== user) throw otherUsers(rawPath)
    const owner: Owner = `user:${user}`
    if (below.length === 0) {
      // The user's one profile.
      return { path: `users/${userKey(user)}${name.endsWith('.md') ? '.md' : ''}`, root: 'users', inner: name, local: `users/${name}`, tree: '', owner, absolute: join(layout.sharedUsersDir, name), rootDir: layout.sharedUsersDir }
    }
    return inTree(layout, owner, USER_ROOTS, rawPath, `users/${userKey(user)}/`, below)
  }
  if (first === 'shared') return inTree(layout, 'shared', SHARED_ROOTS, rawPath, 'shared/', rest)
  if (first === 'project' || (AGENT_ROOTS as readonly string[]).includes(first)) return inTree(layout, 'agent', AGENT_ROOTS, rawPath, '', segments)
  const names = [...memoryRoots(layout).map((r) => `${r.name}/`), ...AGENT_FILES]
  throw outside(rawPath, `"${first}" is not one of your memory folders (${names.join(', ')})`)
}

/**
 * The same path in the viewer's own tree (`knowledge/x.md` → `users/<key>/knowledge/x.md`) for a
 * path of the agent's tree that a user's tree also has; undefined otherwise. Reads look there
 * first, so what a session with a user wrote as `knowledge/x.md` is what it reads back.
 */
export function ownCounterpart(location: MemoryLocation, layout: HomeLayout, viewer: Viewer | undefined): MemoryLocation | undefined {
  if (viewer?.user === undefined || location.owner !== 'agent' || location.tree !== '' || location.root === '' || location.root === 'users') return undefined
  if (!(USER_ROOTS as readonly string[]).includes(location.root) && !(location.root === 'project' && layout.projectMemoryDir)) return undefined
  return inTree(layout, `user:${viewer.user}`, USER_ROOTS, location.path, `users/${userKey(viewer.user)}/`, location.local.split('/'))
}

/** The root of a user's own tree (`users/<key>/`), as a folder location. */
export function userTreeLocation(layout: HomeLayout, user: string): MemoryLocation {
  return inTree(layout, `user:${user}`, USER_ROOTS, `users/${userKey(user)}`, `users/${userKey(user)}/`, [])
}

/**
 * The location a write of `location` goes to for `owner`: an unprefixed path (`knowledge/x.md`)
 * lands in that owner's tree; a prefixed one must agree with the owner when one is given.
 */
export function writeTarget(location: MemoryLocation, layout: HomeLayout, owner: Owner): MemoryLocation {
  if (location.tree !== '' || location.root === 'users') {
    if (location.owner !== owner) {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: `${location.path} is ${location.owner === 'shared' ? 'shared memory' : `${location.owner.slice(5)}'s memory`}, but the write asked for owner ${owner}.`,
        fix: 'leave owner out when the path already says whose it is, or write to the unprefixed path (e.g. "knowledge/x.md") with the owner you want',
        details: { path: location.path, owner },
      })
    }
    return location
  }
  if (owner === 'agent') return location
  if (owner === 'shared') return inTree(layout, 'shared', SHARED_ROOTS, location.path, 'shared/', location.local.split('/'))
  return inTree(layout, owner, USER_ROOTS, location.path, `users/${userKey(owner.slice(5))}/`, location.local.split('/'))
}

function within(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep)
}

async function realOrNull(path: string): Promise<string | null> {
  try {
    return await realpath(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null
    throw error
  }
}

/**
 * Resolves symlinks and checks that the file (or, when it does not exist yet, its nearest existing
 * folder) stays inside its root folder. Returns the real path of what exists, or null when
 * nothing exists at the path yet. Throws `path_outside_memory` when a link leads outside.
 */
export async function confine(location: MemoryLocation): Promise<string | null> {
  const rootReal = (await realOrNull(location.rootDir)) ?? location.rootDir
  const real = await realOrNull(location.absolute)
  if (real !== null) {
    if (!within(real, rootReal)) throw outside(location.path, 'it is a symbolic link that leads outside your memory folders')
    return real
  }
  // Not there yet: the deepest folder that exists must still be inside the root.
  let probe = location.absolute
  while (within(probe, location.rootDir) && probe !== location.rootDir) {
    probe = join(probe, '..')
    const parentReal = await realOrNull(probe)
    if (parentReal !== null) {
      if (!within(parentReal, rootReal)) throw outside(location.path, 'a folder on the way is a symbolic link that leads outside your memory folders')
      return null
    }
  }
  return null
}

/**
 * Maps an index source or a home-relative path (`agents/<a>/knowledge/tea.md`,
 * `project:.engram/memory/rules.md`, `shared/users/ada.md`) to its memory path, or undefined when
 * the source is not a file of this agent's memory (a conversation `conv:<id>`, another agent).
 */
export function memoryPathOfSource(source: string, layout: HomeLayout, viewer?: Viewer): string | undefined {
  const path = unalias(source, layout)
  if (path === source && !memoryRoots(layout).some((root) => path.startsWith(`${root.name}/`))) return undefined
  try {
    return locateMemoryPath(path, layout, viewer).path
  } catch {
    return undefined
  }
}

/**
 * Checks that a location may be written by the agent: a `.md` file directly inside one of
 * `WRITABLE_FOLDERS`. Throws `path_outside_memory` with the right way to change that memory.
 */
export function assertWritable(location: MemoryLocation): { folder: string; slug: string } {
  const path = location.root === 'users' ? location.path : location.local
  if (location.root === 'users') {
    // memorize is in every set of tools a caller has (the memory tool is not in MCP's essential set).
    throw outside(location.path, "a user's profile is kept through memorize, not as a file", 'memorize the fact about the user as a profile fact ({"kind": "profile", "text": "…"})')
  }
  const slash = path.lastIndexOf('/')
  const folder = slash < 0 ? '' : path.slice(0, slash)
  const name = slash < 0 ? path : path.slice(slash + 1)
  const writable = WRITABLE_FOLDERS.includes(folder)
  if (!writable) {
    const list = WRITABLE_FOLDERS.map((f) => `${f}/<name>.md`).join(', ')
    let why = `"${folder || path}" is not a folder you can write to`
    let fix = `write to one of: ${list}`
    if (/^(project\/|memory\/)?(rules|lessons|profile)\.md$/.test(path)) {
      why = 'rules, lessons and the profile are written through memorize, which checks and deduplicates them'
      fix = 'call memorize with the rule, lesson or profile fact instead'
    } else if (folder === 'activity' || folder === 'episodes') {
      why = 'episodes and the activity log are the record of what happened and cannot be rewritten'
      fix = `keep notes in ${list}`
    } else if (path === 'SYSTEM.md' || path === 'SOUL.md') {
      why = 'your prompt layers are written by the user, not by you'
      fix = `keep your own notes in ${list}`
    }
    throw outside(location.path, why, fix)
  }
  if (!name.endsWith('.md') || name.length <= 3) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `Refused path ${JSON.stringify(location.path)}: memory files are markdown.`,
      fix: `name the file "<name>.md", e.g. "${location.tree}${folder}/notes.md"`,
      details: { path: location.path },
    })
  }
  return { folder, slug: name.slice(0, -3) }
}
