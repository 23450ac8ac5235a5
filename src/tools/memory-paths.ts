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
 * | `users/<name>.md`            | `shared/users/`                           | yes  | no |
 * | `project/…`                  | `<project>/.engram/memory/`               | yes  | `project/topics/<slug>.md` only |
 *
 * Why these write rules: rules, lessons and the profile go through `memorize` (the encoding gate
 * and deduplication, DESIGN.md §1 principle 1); episodes and the activity log are written by the
 * session recorder and are the record of what happened, so the agent may not rewrite its past;
 * `archive/` is history; SYSTEM.md / SOUL.md are the user's instructions to the agent and must not
 * be rewritten by the agent they constrain; user profiles are shared by every agent.
 *
 * Paths other tools emit are accepted as aliases: home-relative `agents/<a>/…` and
 * `shared/users/…` (index sources, document paths) and `project:.engram/memory/…` (project index
 * sources). Everything else — `..`, absolute paths, NUL bytes, backslashes, hidden files, the
 * journal, the database, symlinks that lead outside their folder — is refused with the code
 * `path_outside_memory`.
 */
import { realpath } from 'node:fs/promises'
import { isAbsolute, join, sep } from 'node:path'
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { HomeLayout } from '../storage/home-layout.ts'

/** What a memory path names, once checked. */
export interface MemoryLocation {
  /** The canonical memory path (`knowledge/tea.md`); `''` for the namespace root. */
  path: string
  /** The first segment's root, e.g. `knowledge`, `memory`, `project`, `users`, or `''` (the agent folder files). */
  root: string
  /** The path inside the root (`tea.md`, `topics/x.md`); `''` for the root itself. */
  inner: string
  /** Absolute path on disk (not yet resolved through symlinks). */
  absolute: string
  /** The root folder on disk. */
  rootDir: string
}

interface RootSpec {
  name: string
  dir: string
}

const AGENT_ROOTS = ['memory', 'knowledge', 'procedures', 'skills', 'episodes', 'activity', 'state', 'archive'] as const
const AGENT_FILES = ['SYSTEM.md', 'SOUL.md'] as const

/** The writable places: `<root>/<file>.md` directly inside one of these folders. */
export const WRITABLE_FOLDERS = ['knowledge', 'procedures', 'state', 'memory/topics', 'project/topics'] as const

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

/** The roots of an agent's memory namespace, in listing order. */
export function memoryRoots(layout: HomeLayout): RootSpec[] {
  const roots: RootSpec[] = AGENT_ROOTS.map((name) => ({ name, dir: join(layout.agentDir, name) }))
  roots.push({ name: 'users', dir: layout.sharedUsersDir })
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
  return path
}

/**
 * Checks a memory path lexically and maps it to disk. Throws `path_outside_memory` for anything
 * that is not inside the namespace. Does not touch the disk; `confine()` checks symlinks.
 */
export function locateMemoryPath(rawPath: string, layout: HomeLayout): MemoryLocation {
  if (typeof rawPath !== 'string') throw outside(String(rawPath), 'a path must be a string')
  if (rawPath.includes('\u0000')) throw outside(rawPath.replace(/\u0000/g, '\\0'), 'it contains a NUL byte')
  if (/[\u0001-\u001f\u007f]/.test(rawPath)) throw outside(rawPath, 'it contains control characters')
  if (rawPath.includes('\\')) throw outside(rawPath, 'backslashes are not path separators here', 'write the path with forward slashes, e.g. "knowledge/tea.md"')
  if (isAbsolute(rawPath) || /^[A-Za-z]:/.test(rawPath) || rawPath.startsWith('~')) {
    throw outside(rawPath, 'absolute paths are not allowed; only your own memory folders can be read or written')
  }
  const trimmed = rawPath.trim().replace(/^\.\/+/, '').replace(/\/+$/, '')
  const path = unalias(trimmed, layout)
  if (path === '' || path === '.') return { path: '', root: '', inner: '', absolute: layout.agentDir, rootDir: layout.agentDir }
  const segments = path.split('/')
  for (const segment of segments) {
    if (segment === '..') throw outside(rawPath, '".." would leave your memory folders')
    if (segment === '' || segment === '.') throw outside(rawPath, 'it has an empty or "." segment', 'write the path without "//" or "/./", e.g. "knowledge/tea.md"')
    if (segment.startsWith('.')) throw outside(rawPath, 'hidden files (names starting with ".") are not memory')
  }
  const [first, ...rest] = segments as [string, ...string[]]
  if ((AGENT_FILES as readonly string[]).includes(first) && rest.length === 0) {
    return { path, root: '', inner: first, absolute: join(layout.agentDir, first), rootDir: layout.agentDir }
  }
  const root = memoryRoots(layout).find((candidate) => candidate.name === first)
  if (!root) {
    if (first === 'project') {
      throw outside(rawPath, 'no project is open, so there is no project memory', 'open the mind with a project folder (--project or ENGRAM_PROJECT) to use "project/…" paths')
    }
    throw outside(rawPath, `"${first}" is not one of your memory folders (${[...memoryRoots(layout).map((r) => `${r.name}/`), ...AGENT_FILES].join(', ')})`)
  }
  const inner = rest.join('/')
  return { path, root: root.name, inner, absolute: rest.length > 0 ? join(root.dir, ...rest) : root.dir, rootDir: root.dir }
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
export function memoryPathOfSource(source: string, layout: HomeLayout): string | undefined {
  const path = unalias(source, layout)
  if (path === source && !memoryRoots(layout).some((root) => path.startsWith(`${root.name}/`))) return undefined
  try {
    return locateMemoryPath(path, layout).path
  } catch {
    return undefined
  }
}

/**
 * Checks that a location may be written by the agent: a `.md` file directly inside one of
 * `WRITABLE_FOLDERS`. Throws `path_outside_memory` with the right way to change that memory.
 */
export function assertWritable(location: MemoryLocation): { folder: (typeof WRITABLE_FOLDERS)[number]; slug: string } {
  const path = location.path
  const slash = path.lastIndexOf('/')
  const folder = slash < 0 ? '' : path.slice(0, slash)
  const name = slash < 0 ? path : path.slice(slash + 1)
  const writable = (WRITABLE_FOLDERS as readonly string[]).includes(folder)
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
    throw outside(path, why, fix)
  }
  if (!name.endsWith('.md') || name.length <= 3) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `Refused path ${JSON.stringify(path)}: memory files are markdown.`,
      fix: `name the file "<name>.md", e.g. "${folder}/notes.md"`,
      details: { path },
    })
  }
  return { folder: folder as (typeof WRITABLE_FOLDERS)[number], slug: name.slice(0, -3) }
}
