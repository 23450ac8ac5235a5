/**
 * The memory namespace of `memory-paths.ts` answered through the storage seams, for a backend
 * whose memory is rows (PostgreSQL: DESIGN §4, "markdown is an export"). A path is mapped to the
 * export's tree path and placed with the export's own `placeOf` (memory-tree.ts), and what is
 * there is rendered as `engram export` renders it: engram files from their entries with the file
 * store's codec, topics as stored, documents with the file store's frontmatter serializer, a day
 * of the activity log as its JSONL lines (line n is the event whose ref is `#L<n>`, so an activity
 * pointer reads the same lines on both backends). Folders are listed from the seams
 * (`DocumentStore.slugs`, `EngramStore.listTopics`, `ActivityLog.days`).
 *
 * Skills stay folders of the home on every backend (backend.ts), so `skills/…` is read from the
 * files. An owner's `archive/` is what two seams keep there: the documents' archived copies and
 * saved versions (`DocumentStore.archivedPaths`, `readArchived`) and the forgotten entries and
 * topics of its engram files (`EngramStore.archive`), under the paths the embedded home has them.
 * A backend whose stores have neither refuses `archive/…` with `unsupported` rather than show it empty.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { serializeFrontmatter } from '../../core/frontmatter.ts'
import type { DocKind } from '../../core/memory-doc.ts'
import { type Owner, userFromKey, userKey, userOfOwner } from '../../core/owner.ts'
import { placeOf, renderActivityDay, renderEngramFile, TREE_DOC_KINDS, treeRelOf } from '../portability/memory-tree.ts'
import { type Backend, ENGRAM_FILES, type EngramStore } from '../../storage/contracts.ts'
import type { HomeLayout } from '../../storage/home-layout.ts'
import type { MemoryFileSource, OpenedMemory } from './memory-file-source.ts'
import { type MemoryLocation, SHARED_ROOTS, USER_ROOTS } from './memory-paths.ts'

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/
/** The agent's tree on a row backend. */
const AGENT_TREE_ROOTS = ['memory', 'knowledge', 'procedures', 'skills', 'episodes', 'activity', 'state', 'archive'] as const

function archiveUnsupported(path: string, backend: string): EngramError {
  return new EngramError({
    code: ErrorCode.unsupported,
    category: 'user',
    message: `${path} cannot be read: on the ${backend} backend the archive is rows that these storage seams do not read.`,
    fix: 'read the live file (e.g. "knowledge/<name>.md"); to browse the archive, run engram on the embedded backend (unset storage.url / ENGRAM_DATABASE_URL) after `engram migrate --to DIR`',
    details: { path },
  })
}

function text(value: string): OpenedMemory {
  const bytes = Buffer.from(value, 'utf8')
  return { kind: 'file', size: bytes.length, read: async () => bytes }
}

const MISSING: OpenedMemory = { kind: 'missing' }
const FOLDER: OpenedMemory = { kind: 'folder' }

/** The path of a location in the export's tree (the embedded home's paths; `project/.engram/…` for the project). */
function treePathOf(location: MemoryLocation, agent: string): string {
  if (location.root === 'project') {
    const user = userOfOwner(location.owner)
    const dir = user === undefined ? 'project/.engram/memory' : `project/.engram/users/${userKey(user)}/memory`
    return location.inner === '' ? dir : `${dir}/${location.inner}`
  }
  return location.local === '' ? treeRelOf(location.owner, agent) : `${treeRelOf(location.owner, agent)}/${location.local}`
}

/** The names of an engram scope's folder: the files that hold entries, and `topics/` when there are topics. */
async function engramFolder(store: EngramStore | undefined, inner: string): Promise<string[] | undefined> {
  if (inner === 'topics') return store ? (await store.listTopics()).map((slug) => `${slug}.md`).sort() : []
  if (inner !== '') return undefined
  if (!store) return []
  const names: string[] = []
  for (const file of ENGRAM_FILES) {
    const { entries, problems } = await store.read(file)
    if (entries.length > 0 || problems.length > 0) names.push(`${file}.md`)
  }
  if ((await store.listTopics()).length > 0) names.push('topics/')
  return names.sort((a, b) => a.localeCompare(b))
}

/**
 * The namespace over `backend`'s seams. `files` reads what stays in the home on every backend
 * (skills).
 */
export function seamMemorySource(layout: HomeLayout, backend: Backend, files: MemoryFileSource): MemoryFileSource {
  const agent = layout.agent

  /** The roots of an owner's tree that hold something. */
  async function treeRoots(location: MemoryLocation): Promise<string[]> {
    const owner = location.owner
    const roots: string[] = owner === 'shared' ? [...SHARED_ROOTS] : owner === 'agent' ? [...AGENT_TREE_ROOTS] : [...USER_ROOTS]
    if (owner !== 'shared' && layout.projectMemoryDir) roots.push('project')
    const names: string[] = []
    for (const root of roots.filter((name) => name !== 'archive' || archiveReadable(owner))) {
      const below: MemoryLocation = { ...location, root, inner: '', local: root, path: `${location.tree}${root}` }
      if ((await folder(below))?.length) names.push(`${root}/`)
    }
    return names.sort((a, b) => a.localeCompare(b))
  }

  /** Whether the seams of `owner` read its archive (both: an archive half shown would look whole). */
  function archiveReadable(owner: Owner): boolean {
    const documents = backend.owned(owner).documents
    return documents.readArchived !== undefined && documents.archivedPaths !== undefined && backend.owned(owner).engrams('global')?.archive !== undefined
  }

  /**
   * Everything in `owner`'s archive, by path inside `archive/`, with how to read it: forgotten
   * engram files as their store keeps them, documents' copies and versions as `readArchived` gives them.
   */
  async function archiveOf(location: MemoryLocation): Promise<Map<string, () => Promise<string | null>>> {
    const owned = backend.owned(location.owner)
    const { documents } = owned
    const engrams = owned.engrams('global')?.archive
    if (!documents.readArchived || !documents.archivedPaths || !engrams) throw archiveUnsupported(location.path, backend.name)
    const files = new Map<string, () => Promise<string | null>>()
    const prefix = `${treeRelOf(location.owner, agent)}/archive/`
    for (const path of await documents.archivedPaths()) {
      if (path.startsWith(prefix)) files.set(path.slice(prefix.length), () => documents.readArchived?.(path) ?? Promise.resolve(null))
    }
    for (const name of await engrams.list()) files.set(`${name}.md`, () => engrams.read(name))
    return files
  }

  /** The names in the archive folder `inner` (files, and folders with a trailing `/`), or undefined when it names no folder. */
  async function archiveFolder(location: MemoryLocation): Promise<string[] | undefined> {
    const below = location.inner === '' ? '' : `${location.inner}/`
    const names = new Set<string>()
    for (const path of (await archiveOf(location)).keys()) {
      if (!path.startsWith(below)) continue
      const rest = path.slice(below.length)
      const slash = rest.indexOf('/')
      names.add(slash < 0 ? rest : rest.slice(0, slash + 1))
    }
    if (names.size === 0 && below !== '') return undefined
    return [...names].sort((a, b) => a.localeCompare(b))
  }

  /** The names in the folder at `location`, or undefined when it names no folder. */
  async function folder(location: MemoryLocation): Promise<string[] | undefined> {
    const { owner, root, inner } = location
    if (root === '') return inner === '' ? treeRoots(location) : undefined
    if (root === 'skills') return (await files.open(location)).kind === 'folder' ? files.entries(location) : undefined
    if (root === 'archive') return archiveFolder(location)
    if (root === 'users' && location.tree === '') {
      if (inner !== '') return undefined
      return (await backend.documents.slugs('user')).map((slug) => `${slug}.md`)
    }
    if (root === 'memory') return engramFolder(backend.owned(owner).engrams('global'), inner)
    if (root === 'project') return engramFolder(backend.owned(owner).engrams('project'), inner)
    if (root === 'activity') return inner === '' ? (await backend.owned(owner).activity.days()).map((day) => `${day}.jsonl`) : undefined
    const docs = TREE_DOC_KINDS.find((item) => item.folder === root)
    if (docs && inner === '') return (await backend.owned(owner).documents.slugs(docs.kind)).map((slug) => `${slug}.md`)
    return undefined
  }

  async function document(owner: Owner, kind: DocKind, slug: string): Promise<OpenedMemory> {
    // User profiles and prompt layers are the home's and the agent's, read through the agent's store (as the export does).
    const store = kind === 'user' || kind === 'prompt' ? backend.documents : backend.owned(owner).documents
    const doc = await store.read(kind, slug)
    return doc ? text(serializeFrontmatter(doc.frontmatter, doc.body)) : MISSING
  }

  return {
    files: false,
    async open(location) {
      if (location.root === 'skills') return files.open(location)
      if (location.root === 'archive') {
        const read = (await archiveOf(location)).get(location.inner)
        if (read) {
          const found = await read()
          return found === null ? MISSING : text(found)
        }
        return (await archiveFolder(location)) === undefined ? MISSING : FOLDER
      }
      if (location.root === 'users' && location.tree === '') {
        if (location.inner === '') return FOLDER
        const key = location.inner.endsWith('.md') ? location.inner.slice(0, -3) : undefined
        return key !== undefined && userFromKey(key) !== undefined ? document('shared', 'user', key) : MISSING
      }
      if (location.root === 'activity') {
        const day = DAY_FILE.exec(location.inner)?.[1]
        if (day !== undefined) {
          const log = await renderActivityDay(backend.owned(location.owner).activity, day)
          return log === undefined ? MISSING : text(log)
        }
      }
      const place = placeOf(treePathOf(location, agent), agent)
      switch (place.type) {
        case 'engram': {
          const store = backend.owned(place.owner).engrams(place.scope)
          if (!store) return MISSING
          const { entries, problems } = await store.read(place.file)
          if (entries.length === 0 && problems.length === 0) return MISSING
          return text(renderEngramFile(place.file, entries))
        }
        case 'topic': {
          const topic = await backend.owned(place.owner).engrams(place.scope)?.recallTopic(place.slug)
          return topic === null || topic === undefined ? MISSING : text(topic)
        }
        case 'doc':
          return document(place.owner, place.kind, place.slug)
        default:
          return (await folder(location)) === undefined ? MISSING : FOLDER
      }
    },
    async entries(location) {
      return (await folder(location)) ?? []
    },
  }
}
