/**
 * The agent's memory as the seeds' file tree (DESIGN §4: "On PostgreSQL everything is rows, and
 * markdown is an export"; decision 0036). One module says where each memory goes in the tree —
 * the same paths the embedded home uses (storage/home-layout.ts) — and how it is rendered, so that
 * export, import and migration never disagree:
 *
 *   agents/<a>/memory/profile.md rules.md lessons.md topics/<slug>.md     the agent's engrams
 *   agents/<a>/{knowledge,procedures,episodes,state}/<slug>.md             its documents
 *   agents/<a>/SYSTEM.md SOUL.md                                          prompt layers
 *   agents/<a>/skills/<label>/meta.json declarative.md chunks.md code/ requirements.txt stats.json
 *   agents/<a>/users/<key>/…                                              each user's own tree
 *   shared/memory/… shared/knowledge/… …                                  what every agent shares
 *   shared/users/<user>.md                                                user profiles
 *   project/.engram/memory/… project/.engram/users/<key>/memory/…         project-scope engrams
 *
 * Everything is read through the storage seams (`Backend`) and the skill store, never from files
 * or SQLite directly, so the same tree comes out of either backend. Engram files are rendered from
 * their entries with the codec the file store writes with; documents with the frontmatter
 * serializer the file document store writes with.
 */
import { join } from 'node:path'
import type { EngramEntry, EngramScope } from '../../core/engram.ts'
import { emptyMemoryFile, entriesOf, type MemoryFileKind, parseMemoryFile, problemsOf, replaceEntries, serializeMemoryFile } from '../../core/markdown-entry.ts'
import { serializeFrontmatter } from '../../core/frontmatter.ts'
import type { DocKind } from '../../core/memory-doc.ts'
import { type CountKey, memoryKinds } from '../../core/memory-kinds.ts'
import { type Owner, userFromKey, userKey, userOfOwner } from '../../core/owner.ts'
import type { PhaseCounter } from '../../core/progress.ts'
import { type ActivityLog, type Backend, ENGRAM_FILES, type EngramFile } from '../../storage/contracts.ts'
import { readMemoryFile } from '../../storage/memory-file-read.ts'
import type { SkillStore } from '../skills/skill-store.ts'

/**
 * Documents of an owner's tree, with the folder each kind has in it and the key it is counted
 * under: every kind the registry files in a tree (core/memory-kinds.ts), in its order.
 */
export const TREE_DOC_KINDS: ReadonlyArray<{ kind: DocKind; folder: string; count: CountKey<'export'> | undefined }> = memoryKinds().flatMap(([kind, spec]) =>
  spec.home === 'tree' ? [{ kind, folder: spec.folder, count: spec.count?.in.includes('export') ? (spec.count.key as CountKey<'export'>) : undefined }] : [],
)

/** What a tree holds, by kind of memory (documents under their kind's count key). */
export type TreeCounts = {
  owners: number
  engramFiles: number
  entries: number
  topics: number
  prompts: number
  userProfiles: number
  skills: number
} & Record<CountKey<'export'>, number>

export function emptyCounts(): TreeCounts {
  const documents = Object.fromEntries(TREE_DOC_KINDS.flatMap(({ count }) => (count === undefined ? [] : [[count, 0]]))) as Record<CountKey<'export'>, number>
  return { owners: 0, engramFiles: 0, entries: 0, topics: 0, ...documents, prompts: 0, userProfiles: 0, skills: 0 }
}

/** A file of a tree that was not taken (not read, not written), and why. */
export interface TreeProblem {
  /** Path in the tree (or the store's label for what could not be read from a backend). */
  path: string
  reason: string
  /** The line, for a line of a memory file that could not be read. */
  line?: number
}

/** The tree as files: path relative to the tree's root (with `/`) → text. */
export type TreeFiles = Map<string, string>

/** `agents/<a>`, `agents/<a>/users/<key>` or `shared`: where an owner's tree is (as in the home). */
export function treeRelOf(owner: Owner, agent: string): string {
  const user = userOfOwner(owner)
  return owner === 'shared' ? 'shared' : user === undefined ? `agents/${agent}` : `agents/${agent}/users/${userKey(user)}`
}

/** The folder of an owner's engram files of a scope, or undefined for a scope the owner has none of (shared has no project part). */
export function engramDirOf(owner: Owner, scope: EngramScope, agent: string): string | undefined {
  if (scope === 'global') return `${treeRelOf(owner, agent)}/memory`
  if (owner === 'shared') return undefined
  const user = userOfOwner(owner)
  return user === undefined ? 'project/.engram/memory' : `project/.engram/users/${userKey(user)}/memory`
}

/**
 * An engram file's text for `entries`: exactly what the file store writes when it replaces a new
 * file's entries (`rewriteAll` into an empty store), so a home's files and the export agree.
 */
export function renderEngramFile(kind: MemoryFileKind, entries: EngramEntry[], topic?: string): string {
  return serializeMemoryFile(replaceEntries(emptyMemoryFile(kind, topic), entries, topic))
}

/** A topic file's text from its entries; titled by its first entry's topic, as `encodeLesson` titles a new topic file. */
export function renderTopicFile(slug: string, entries: EngramEntry[]): string {
  const topic = entries[0]?.topic ?? slug
  return renderEngramFile('topic', entries, topic)
}

/** The counters of a skill's stage as the export writes them (unknown keys are the store's business). */
function stageCounters(value: { recommended: number; used: number }): { recommended: number; used: number } {
  return { recommended: value.recommended, used: value.used }
}

/**
 * Reads one owner's tree through the seams into `into`: their engram files and topics of every
 * scope, and their documents (knowledge, procedures, episodes, state). Returns whether they hold
 * anything. What cannot be read is added to `into.problems`.
 */
export async function collectOwnerTree(backend: Backend, owner: Owner, agent: string, into: { files: TreeFiles; counts: TreeCounts; problems: TreeProblem[] }, reading?: PhaseCounter): Promise<boolean> {
  const { files, counts, problems } = into
  const put = (path: string, text: string): void => {
    files.set(path, text)
  }
  const stores = backend.owned(owner)
  let held = false
  for (const scope of ['global', 'project'] as const) {
    const store = stores.engrams(scope)
    const dir = engramDirOf(owner, scope, agent)
    if (!store || dir === undefined) continue
    for (const file of ENGRAM_FILES) {
      const { entries, problems: lines } = await store.read(file)
      problems.push(...lines.map((problem) => ({ path: `${dir}/${file}.md`, line: problem.line, reason: `${problem.reason} (left out of the export): ${problem.text}` })))
      if (entries.length === 0) continue
      put(`${dir}/${file}.md`, renderEngramFile(file, entries))
      counts.engramFiles++
      counts.entries += entries.length
      held = true
    }
    for (const problem of await store.topicProblems()) problems.push({ path: `${dir}/topics`, reason: `${problem.file}: ${problem.reason}` })
    for (const slug of await store.listTopics()) {
      const text = await store.recallTopic(slug)
      if (text === null) continue
      const parsed = parseMemoryFile(text, 'topic')
      const path = `${dir}/topics/${slug}.md`
      problems.push(...problemsOf(parsed).map((problem) => ({ path, line: problem.line, reason: `${problem.reason} (left out of the export): ${problem.text}` })))
      const entries = entriesOf(parsed)
      if (entries.length === 0) continue
      put(path, renderTopicFile(slug, entries))
      counts.topics++
      held = true
    }
  }
  for (const { kind, count } of TREE_DOC_KINDS) {
    for (const ref of await stores.documents.list(kind)) {
      await reading?.checkpoint()
      const doc = await stores.documents.read(kind, ref.slug)
      reading?.step()
      if (!doc) continue
      put(doc.path, serializeFrontmatter(doc.frontmatter, doc.body))
      if (count !== undefined) counts[count]++
      held = true
    }
  }
  for (const problem of await stores.documents.problems(TREE_DOC_KINDS.map((item) => item.kind))) {
    problems.push({ path: problem.file, line: problem.line, reason: `${problem.reason} (exported with its whole text as the body)` })
  }
  return held
}

/**
 * A day of an activity log as its JSONL file, from the seam: each event at the line its ref
 * (`activity/<day>.jsonl#L<n>`) names, as the file backend writes it; undefined when the log has
 * no such day. On the file backend this is the file's text less the lines that cannot be read.
 */
export async function renderActivityDay(log: ActivityLog, day: string): Promise<string | undefined> {
  if (!(await log.days()).includes(day)) return undefined
  // A day's events are those of its UTC day (the log files each event by the UTC day of its time).
  const records = await log.read({ since: `${day}T00:00:00.000Z`, until: `${day}T23:59:59.999Z` })
  const prefix = `activity/${day}.jsonl#L`
  const lines: string[] = []
  for (const record of records) {
    if (!record.ref.startsWith(prefix)) continue
    const line = Number(record.ref.slice(prefix.length))
    const { ref: _ref, ...event } = record
    if (Number.isInteger(line) && line >= 1) lines[line - 1] = JSON.stringify(event)
  }
  return lines.length === 0 ? '' : `${Array.from(lines, (line) => line ?? '').join('\n')}\n`
}

export interface CollectSource {
  backend: Backend
  agent: string
  /** The agent's skills; none are exported when omitted. */
  skills?: SkillStore
  /** Counts each document read, and stops the reading where it is told to (nothing is written while reading). */
  reading?: PhaseCounter
}

export interface CollectedTree {
  files: TreeFiles
  counts: TreeCounts
  owners: Owner[]
  /** What could not be read from the stores (kept where it is, and reported). */
  problems: TreeProblem[]
}

/**
 * Reads the agent's whole memory through the seams into a tree of files: every owner (the agent,
 * each user of `backend.users()`, shared), their engram files and topics, documents, the user
 * profiles, prompt layers and skills. Deterministic: the same memory gives the same files.
 */
export async function collectMemoryTree(source: CollectSource): Promise<CollectedTree> {
  const { backend, agent } = source
  const files: TreeFiles = new Map()
  const counts = emptyCounts()
  const problems: TreeProblem[] = []
  const owners: Owner[] = ['agent', ...(await backend.users()).map((user): Owner => `user:${user}`), 'shared']
  const put = (path: string, text: string): void => {
    files.set(path, text)
  }

  for (const owner of owners) if (await collectOwnerTree(backend, owner, agent, { files, counts, problems }, source.reading)) counts.owners++

  // Home-wide documents, read once through the agent's store: user profiles and prompt layers.
  for (const kind of ['user', 'prompt'] as const) {
    for (const ref of await backend.documents.list(kind)) {
      const doc = await backend.documents.read(kind, ref.slug)
      if (!doc) continue
      put(doc.path, serializeFrontmatter(doc.frontmatter, doc.body))
      if (kind === 'user') counts.userProfiles++
      else counts.prompts++
    }
  }

  if (source.skills) {
    const listing = await source.skills.list()
    for (const problem of listing.problems) problems.push({ path: `agents/${agent}/skills/${problem.label}`, reason: problem.reason })
    for (const skill of listing.skills) {
      const base = `agents/${agent}/skills/${skill.label}`
      const { meta } = skill
      /*
       * Only what `SkillStore.save` can bring back: its times (created_at, updated_at) are set by
       * the store itself on every save, so an export holding them could never be read back into
       * the same files (decision 0036 lists this loss).
       */
      const portable = {
        label: skill.label,
        name: meta.name,
        ...(meta.description !== undefined ? { description: meta.description } : {}),
        when_to_use: meta.when_to_use,
        provenance: meta.provenance,
        has_declarative: true,
        has_chunks: skill.chunks !== undefined,
        has_code: skill.codeFiles.length > 0,
        has_requirements: skill.requirements !== undefined,
      }
      put(`${base}/meta.json`, `${JSON.stringify(portable, null, 2)}\n`)
      put(`${base}/declarative.md`, skill.declarative)
      if (skill.chunks !== undefined) put(`${base}/chunks.md`, skill.chunks)
      if (skill.requirements !== undefined) put(`${base}/requirements.txt`, skill.requirements)
      for (const file of skill.codeFiles) {
        // The store lists code files but does not read them: they are read here, inside the skill's code/ folder only.
        const codeDir = join(skill.dir, 'code')
        const read = await readMemoryFile(join(codeDir, ...file.split('/')), { root: codeDir, maxBytes: 8 * 1024 * 1024 })
        if (read.kind === 'read') put(`${base}/code/${file}`, read.bytes.toString('utf8'))
        else problems.push({ path: `${base}/code/${file}`, reason: read.kind === 'missing' ? 'listed but missing' : read.reason })
      }
      const stats = { stage_1: stageCounters(skill.stats.stage_1), stage_2: stageCounters(skill.stats.stage_2), stage_3: stageCounters(skill.stats.stage_3) }
      put(`${base}/stats.json`, `${JSON.stringify(stats, null, 2)}\n`)
      counts.skills++
    }
  }
  return { files, counts, owners, problems }
}

/** Where a file of a tree belongs, or why it belongs nowhere. */
export type TreePlace =
  | { type: 'engram'; owner: Owner; scope: EngramScope; file: EngramFile }
  | { type: 'topic'; owner: Owner; scope: EngramScope; slug: string }
  | { type: 'doc'; owner: Owner; kind: DocKind; slug: string }
  | { type: 'skill'; label: string; file: string }
  | { type: 'about' }
  | { type: 'unknown'; reason: string }

const MD = /^([^/]+)\.md$/

/** The owner whose tree `parts` starts with (as the tree's agent `agent` lays it out), and the rest of the path. */
function ownerOfPath(parts: string[], agent: string): { owner: Owner; rest: string[] } | { reason: string } {
  if (parts[0] === 'shared') return { owner: 'shared', rest: parts.slice(1) }
  if (parts[0] !== 'agents') return { reason: 'not part of an engram memory tree' }
  if (parts[1] !== agent) return { reason: `memory of another agent ("${parts[1]}"), not of "${agent}"` }
  if (parts[2] === 'users') {
    const user = userFromKey(parts[3] ?? '')
    if (user === undefined) return { reason: `"${parts[3]}" is not a user's folder name` }
    return { owner: `user:${user}`, rest: parts.slice(4) }
  }
  return { owner: 'agent', rest: parts.slice(2) }
}

/** Engram files under a `memory/` folder: `profile.md`, `rules.md`, `lessons.md`, `topics/<slug>.md`. */
function engramPlace(owner: Owner, scope: EngramScope, rest: string[]): TreePlace {
  const name = MD.exec(rest[0] ?? '')?.[1]
  if (rest.length === 1 && name !== undefined && (ENGRAM_FILES as readonly string[]).includes(name)) return { type: 'engram', owner, scope, file: name as EngramFile }
  const slug = MD.exec(rest[1] ?? '')?.[1]
  if (rest.length === 2 && rest[0] === 'topics' && slug !== undefined) return { type: 'topic', owner, scope, slug }
  return { type: 'unknown', reason: 'not a memory file (profile.md, rules.md, lessons.md or topics/<slug>.md)' }
}

/**
 * Where the file at `path` of a tree exported for agent `agent` goes. The paths are the embedded
 * home's; anything else is `unknown` (reported by the importer, never guessed at).
 */
export function placeOf(path: string, agent: string): TreePlace {
  if (path === 'manifest.json' || path === 'README.md') return { type: 'about' }
  const parts = path.split('/')
  if (parts[0] === 'project' && parts[1] === '.engram') {
    if (parts[2] === 'memory') return engramPlace('agent', 'project', parts.slice(3))
    const user = parts[2] === 'users' ? userFromKey(parts[3] ?? '') : undefined
    if (user !== undefined && parts[4] === 'memory') return engramPlace(`user:${user}`, 'project', parts.slice(5))
    return { type: 'unknown', reason: 'not a project memory file' }
  }
  if (parts[0] === 'shared' && parts[1] === 'users') {
    const slug = MD.exec(parts[2] ?? '')?.[1]
    if (parts.length === 3 && slug !== undefined) return { type: 'doc', owner: 'shared', kind: 'user', slug }
    return { type: 'unknown', reason: 'not a user profile (shared/users/<user>.md)' }
  }
  const found = ownerOfPath(parts, agent)
  if ('reason' in found) return { type: 'unknown', reason: found.reason }
  const { owner, rest } = found
  if (owner === 'agent' && rest.length === 1 && (rest[0] === 'SYSTEM.md' || rest[0] === 'SOUL.md')) return { type: 'doc', owner, kind: 'prompt', slug: rest[0].slice(0, -3) }
  if (owner === 'agent' && rest[0] === 'skills' && rest.length >= 3) return { type: 'skill', label: rest[1] as string, file: rest.slice(2).join('/') }
  if (rest[0] === 'memory') return engramPlace(owner, 'global', rest.slice(1))
  const folder = TREE_DOC_KINDS.find((item) => item.folder === rest[0])
  const slug = MD.exec(rest[1] ?? '')?.[1]
  if (folder && rest.length === 2 && slug !== undefined) return { type: 'doc', owner, kind: folder.kind, slug }
  return { type: 'unknown', reason: 'not a file engram keeps at this place of the tree' }
}
