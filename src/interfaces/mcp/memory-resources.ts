/**
 * The agent's memory files as MCP resources. A resource URI is `engram://memory/<memory path>`
 * (the namespace of `memory/tree/memory-paths.ts`, each segment percent-encoded), so a client that lists
 * resources sees the same paths the agent's tools use, and reading one goes through the same
 * confinement as `read_memory_file`.
 */
import type { Dirent } from 'node:fs'
import { readdir, realpath, stat } from 'node:fs/promises'
import { join, sep } from 'node:path'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { ownerOfUser, userKey, type Viewer } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import type { Mind } from '../../mind.ts'
import { internalsOf } from '../../mind-internals.ts'
import { type HomeLayout, ownerTree } from '../../storage/home-layout.ts'
import { type MemoryFileSource, memoryFileSource } from '../../memory/tree/memory-file-source.ts'
import { readMemoryText } from '../../tools/memory-files.ts'
import { locateMemoryPath, memoryRootFiles, memoryRoots, SHARED_ROOTS, userTreeLocation } from '../../memory/tree/memory-paths.ts'

export const MEMORY_URI_PREFIX = 'engram://memory/'
/** Listing stops here; the archive (old versions) is listed last, so live files come first. */
export const MAX_LISTED_RESOURCES = 2000

export interface MemoryResourceEntry {
  uri: string
  name: string
  mimeType: string
  size?: number
  description?: string
}

export interface MemoryResourceContent {
  uri: string
  mimeType: string
  text: string
}

export interface MemoryResourceTemplate {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
}

/** What the MCP server needs to offer resources. */
export interface ResourceProvider {
  /** The URI templates a client may fill in and read (`resources/templates/list`). */
  templates: MemoryResourceTemplate[]
  list(): Promise<MemoryResourceEntry[]>
  read(uri: string): Promise<MemoryResourceContent>
}

/**
 * Every memory file by its path (RFC 6570 reserved expansion: the path keeps its slashes), e.g.
 * engram://memory/memory/rules.md — read as read_memory_file reads it, within the viewer's own memory.
 */
const MEMORY_RESOURCE_TEMPLATES: MemoryResourceTemplate[] = [
  {
    uriTemplate: `${MEMORY_URI_PREFIX}{+path}`,
    name: 'memory-file',
    title: 'A memory file',
    description: 'A memory file by its path, e.g. memory/rules.md, memory/lessons.md, knowledge/<name>.md, procedures/<name>.md.',
    mimeType: 'text/markdown',
  },
]

/** The URI of a memory path. */
export function memoryUri(path: string): string {
  return MEMORY_URI_PREFIX + path.split('/').map(encodeURIComponent).join('/')
}

/** The memory path of a URI; throws `invalid_argument` for URIs that are not engram memory. */
export function memoryPathOfUri(uri: string): string {
  if (!uri.startsWith(MEMORY_URI_PREFIX)) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `"${uri}" is not an engram memory resource.`,
      fix: `use a URI from the resource list, such as ${MEMORY_URI_PREFIX}memory/rules.md`,
    })
  }
  try {
    return uri.slice(MEMORY_URI_PREFIX.length).split('/').map(decodeURIComponent).join('/')
  } catch {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `"${uri}" is not a valid URI.`, fix: 'percent-encode each path segment' })
  }
}

export function mimeTypeOf(path: string): string {
  if (path.endsWith('.md')) return 'text/markdown'
  if (path.endsWith('.jsonl')) return 'application/x-ndjson'
  if (path.endsWith('.json')) return 'application/json'
  return 'text/plain'
}

/**
 * The same listing from a backend whose memory is rows, through the seams (memory-seam-source.ts):
 * the paths of what the stores hold, in the same order (archives last); no sizes. An archive that
 * the backend's seams do not read (`unsupported`) is left out of the listing.
 */
async function listFromSeams(layout: HomeLayout, viewer: Viewer, source: MemoryFileSource): Promise<string[]> {
  const files: string[] = []
  const walk = async (path: string): Promise<void> => {
    for (const name of await source.entries(locateMemoryPath(path, layout, viewer))) {
      if (files.length >= MAX_LISTED_RESOURCES) return
      if (name.endsWith('/')) await walk(`${path}/${name.slice(0, -1)}`)
      else files.push(`${path}/${name}`)
    }
  }
  for (const name of memoryRootFiles()) if ((await source.open(locateMemoryPath(name, layout, viewer))).kind === 'file') files.push(name)
  const roots = memoryRoots(layout)
    .map((root) => root.name)
    .filter((name) => name !== 'users' && name !== 'shared')
  roots.push(...SHARED_ROOTS.map((name) => `shared/${name}`))
  if (viewer.user !== undefined) {
    const key = userKey(viewer.user)
    if ((await source.open(locateMemoryPath(`users/${key}.md`, layout, viewer))).kind === 'file') files.push(`users/${key}.md`)
    roots.push(...(await source.entries(userTreeLocation(layout, viewer.user))).map((name) => `users/${key}/${name.replace(/\/$/, '')}`))
  }
  const isArchive = (name: string): boolean => name === 'archive' || name.endsWith('/archive')
  for (const root of roots.filter((name) => !isArchive(name))) await walk(root)
  for (const root of roots.filter(isArchive)) {
    try {
      await walk(root)
    } catch (error) {
      if (!EngramError.is(error) || error.code !== ErrorCode.unsupported) throw error
    }
  }
  return files
}

/**
 * Resources over the memory files one viewer may read (decision 0017) — `user`'s, or the agent's own
 * view without one: the agent's (and its open
 * project's), the shared ones, and the viewer's own user's profile and tree — never another user's.
 * Given a backend that is not embedded, the files are its rows, listed and read through the seams.
 */
export function createMemoryResources(host: Mind, options: { user?: string } = {}): ResourceProvider {
  const mind = internalsOf(host)
  return memoryResourcesOf(mind.layout, mind.scope(options.user).viewer, mind.backend)
}

/** The resources of `viewer` over a home's layout (and a backend's rows where memory is rows). */
export function memoryResourcesOf(layout: HomeLayout, viewer: Viewer = { agent: layout.agent }, backend?: Backend): ResourceProvider {
  const source = memoryFileSource(layout, backend)
  async function walk(dir: string, prefix: string, rootReal: string, out: Array<{ path: string; size: number }>): Promise<void> {
    let entries: Dirent[]
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch {
      return
    }
    entries.sort((a, b) => a.name.localeCompare(b.name))
    for (const entry of entries) {
      if (out.length >= MAX_LISTED_RESOURCES) return
      if (entry.name.startsWith('.')) continue
      const absolute = join(dir, entry.name)
      const path = `${prefix}/${entry.name}`
      // Links are followed only while they stay inside the root, as read_memory_file would.
      const real = await realpath(absolute).catch(() => null)
      if (real === null || !(real === rootReal || real.startsWith(rootReal + sep))) continue
      const info = await stat(real).catch(() => null)
      if (info?.isDirectory()) await walk(absolute, path, rootReal, out)
      else if (info?.isFile()) out.push({ path, size: info.size })
    }
  }

  return {
    templates: MEMORY_RESOURCE_TEMPLATES,
    async list() {
      if (!source.files) return (await listFromSeams(layout, viewer, source)).map((path) => ({ uri: memoryUri(path), name: path, mimeType: mimeTypeOf(path) }))
      const files: Array<{ path: string; size: number }> = []
      for (const name of memoryRootFiles()) {
        const info = await stat(join(layout.agentDir, name)).catch(() => null)
        if (info?.isFile()) files.push({ path: name, size: info.size })
      }
      // The agent's folders, the shared memory folders, and the viewer's own user's tree; archives last.
      const roots: Array<{ name: string; dir: string }> = memoryRoots(layout).filter((root) => root.name !== 'users' && root.name !== 'shared')
      roots.push(...SHARED_ROOTS.map((name) => ({ name: `shared/${name}`, dir: join(layout.sharedDir, name) })))
      if (viewer.user !== undefined) {
        const key = userKey(viewer.user)
        const profile = await stat(join(layout.sharedUsersDir, `${key}.md`)).catch(() => null)
        if (profile?.isFile()) files.push({ path: `users/${key}.md`, size: profile.size })
        const tree = ownerTree(layout, ownerOfUser(viewer.user))
        const names = await readdir(tree.dir).catch(() => [] as string[])
        roots.push(...names.filter((name) => !name.startsWith('.')).map((name) => ({ name: `users/${key}/${name}`, dir: join(tree.dir, name) })))
        if (tree.projectMemoryDir) roots.push({ name: `users/${key}/project`, dir: tree.projectMemoryDir })
      }
      const isArchive = (name: string): boolean => name === 'archive' || name.endsWith('/archive')
      const ordered = [...roots.filter((root) => !isArchive(root.name)), ...roots.filter((root) => isArchive(root.name))]
      for (const root of ordered) {
        const rootReal = await realpath(root.dir).catch(() => null)
        if (rootReal !== null) await walk(root.dir, root.name, rootReal, files)
      }
      return files.map((file) => ({ uri: memoryUri(file.path), name: file.path, mimeType: mimeTypeOf(file.path), size: file.size }))
    },
    async read(uri) {
      const { path, text } = await readMemoryText(memoryPathOfUri(uri), layout, viewer, backend)
      return { uri: memoryUri(path), mimeType: mimeTypeOf(path), text }
    },
  }
}
