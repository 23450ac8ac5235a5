/**
 * `engram import engram DIR` (decision 0036): a tree written by `engram export DIR` read back into
 * the current backend through the seams — engram files with `rewriteAll` (topics with
 * `encodeLesson`, the one write that files a lesson under its topic), documents with `write`,
 * skills with the skill store. What is already there is not written again, so importing twice
 * changes nothing. A file that cannot be read (not UTF-8 text, too large, a link, frontmatter that
 * does not parse, a place engram keeps nothing at) is reported and skipped; it never stops the rest.
 */
import { lstat, readdir, readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { dedupeKey, type EngramEntry, type EngramScope } from '../../core/engram.ts'
import { EngramError, ErrorCode, messageOf } from '../../core/errors.ts'
import { parseFrontmatter, serializeFrontmatter } from '../../core/frontmatter.ts'
import { type ProgressOptions, startPhase } from '../../core/progress.ts'
import { entriesOf, formatEntryLine, type MemoryFileKind, parseMemoryFile, problemsOf } from '../../core/markdown-entry.ts'
import type { DocKind } from '../../core/memory-doc.ts'
import type { Owner } from '../../core/owner.ts'
import type { Backend, EngramFile, EngramStore } from '../../storage/contracts.ts'
import { topicSlug } from '../../storage/engram-entries.ts'
import { DEFAULT_MAX_FILE_BYTES } from '../../storage/memory-file-read.ts'
import { isSafeLabel } from '../skills/labels.ts'
import type { SkillStats } from '../skills/skill.ts'
import type { SkillStore } from '../skills/skill-store.ts'
import { MEMORY_TREE_FORMAT } from './export-memory.ts'
import { type TreeFiles, type TreePlace, type TreeProblem, placeOf } from './memory-tree.ts'

export interface MemoryImportTarget {
  backend: Backend
  /** The agent the tree is imported into (its own name in the tree may differ). */
  agent: string
  /** Where skills go; skills in the tree are reported as not imported when omitted. */
  skills?: SkillStore
}

export interface MemoryImportReport {
  /** The folder read, when the tree came from one. */
  dir?: string
  /** The agent whose memory the tree holds. */
  sourceAgent: string
  counts: {
    /** Files of the tree that were read. */
    files: number
    /** Entries added to profile, rules and lessons files. */
    entries: number
    /** Lessons added to topic files. */
    topicEntries: number
    /** Documents written (new, or replacing a different one, whose old version the store keeps). */
    documents: number
    skills: number
    /** Files whose memory was all there already. */
    unchanged: number
  }
  /** Every file (or line) that was not imported, and why. */
  problems: TreeProblem[]
}

/** More counter bumps than this for one skill stage are not replayed (a hostile stats.json). */
const MAX_COUNTER_REPLAY = 10_000

const entryKey = (entry: EngramEntry): string => `${entry.kind}\u0000${dedupeKey(entry.text)}`
const sameLines = (a: EngramEntry[], b: EngramEntry[]): boolean => a.length === b.length && a.every((entry, i) => formatEntryLine(entry) === formatEntryLine(b[i] as EngramEntry))

function describe(error: unknown): string {
  return messageOf(error)
}

/** The agent whose tree `files` holds: the manifest's, else the only one under `agents/`. */
function treeAgent(files: TreeFiles, fallback: string): string {
  const agents = new Set([...files.keys()].filter((path) => path.startsWith('agents/')).map((path) => path.split('/')[1] as string))
  const manifest = files.get('manifest.json')
  if (manifest !== undefined) {
    try {
      const agent = (JSON.parse(manifest) as { agent?: unknown }).agent
      if (typeof agent === 'string' && (agents.has(agent) || agents.size === 0)) return agent
    } catch {
      // Reported by checkManifest.
    }
  }
  return agents.size === 1 ? ([...agents][0] as string) : agents.has(fallback) ? fallback : ([...agents].sort()[0] ?? fallback)
}

/** Refuses a tree of a newer format (its paths may mean something else); reports a manifest that cannot be read. */
function checkManifest(files: TreeFiles, problems: TreeProblem[]): void {
  const text = files.get('manifest.json')
  if (text === undefined) return
  let manifest: { format?: unknown; formatVersion?: unknown }
  try {
    manifest = JSON.parse(text) as typeof manifest
  } catch (error) {
    problems.push({ path: 'manifest.json', reason: `not JSON (${describe(error)}); the files are imported by their paths` })
    return
  }
  if (manifest.format === MEMORY_TREE_FORMAT.name && typeof manifest.formatVersion === 'number' && manifest.formatVersion > MEMORY_TREE_FORMAT.version) {
    throw new EngramError({
      code: ErrorCode.unsupported,
      category: 'user',
      message: `This tree is format ${manifest.formatVersion} of ${MEMORY_TREE_FORMAT.name}; this engram reads format ${MEMORY_TREE_FORMAT.version}.`,
      fix: 'Import it with the engram version that exported it (see engramVersion in manifest.json), or a newer one.',
    })
  }
}

/**
 * Imports a tree (path → text) into `target`. Entries already present (same kind and text) are
 * not added again; documents whose text is the same are not rewritten; skills the same are not saved.
 */
export async function importMemoryTree(target: MemoryImportTarget, files: TreeFiles, problems: TreeProblem[] = [], progress: ProgressOptions = {}): Promise<MemoryImportReport> {
  checkManifest(files, problems)
  const sourceAgent = treeAgent(files, target.agent)
  const counts: MemoryImportReport['counts'] = { files: files.size, entries: 0, topicEntries: 0, documents: 0, skills: 0, unchanged: 0 }
  const engramFiles: Array<{ path: string; place: Extract<TreePlace, { type: 'engram' }> }> = []
  const topics: Array<{ path: string; place: Extract<TreePlace, { type: 'topic' }> }> = []
  const docs: Array<{ path: string; place: Extract<TreePlace, { type: 'doc' }> }> = []
  const skills = new Map<string, Map<string, string>>()
  for (const path of [...files.keys()].sort()) {
    const place = placeOf(path, sourceAgent)
    if (place.type === 'engram') engramFiles.push({ path, place })
    else if (place.type === 'topic') topics.push({ path, place })
    else if (place.type === 'doc') docs.push({ path, place })
    else if (place.type === 'skill') {
      const parts = skills.get(place.label) ?? new Map<string, string>()
      parts.set(place.file, files.get(path) as string)
      skills.set(place.label, parts)
    } else if (place.type === 'unknown') problems.push({ path, reason: place.reason })
  }

  const storeOf = (owner: Owner, scope: EngramScope, path: string): EngramStore | undefined => {
    const store = target.backend.owned(owner).engrams(scope)
    if (!store) problems.push({ path, reason: scope === 'project' ? 'project-scope memory, and no project is open (pass --project DIR)' : 'this backend has no store for it' })
    return store
  }
  /** Parses a memory file of the tree; its unreadable lines are reported. */
  const parsed = (path: string, kind: MemoryFileKind): EngramEntry[] => {
    const doc = parseMemoryFile(files.get(path) as string, kind)
    problems.push(...problemsOf(doc).map((problem) => ({ path, line: problem.line, reason: `${problem.reason} (not imported): ${problem.text}` })))
    return entriesOf(doc)
  }

  // Lessons as they were before this import, per store: filing topic lessons below (encodeLesson)
  // also adds them to lessons.md, and the lessons file is then set to these plus the tree's own.
  const lessonsBefore = new Map<EngramStore, EngramEntry[]>()
  const before = async (store: EngramStore): Promise<EngramEntry[]> => {
    let known = lessonsBefore.get(store)
    if (!known) {
      known = (await store.read('lessons')).entries
      lessonsBefore.set(store, known)
    }
    return known
  }

  // One item a file (a skill's files are one item). Stopped between two, the next import skips what is there already.
  const importing = startPhase(progress, 'importing files', topics.length + engramFiles.length + docs.length + skills.size)
  for (const { path, place } of topics) {
    await importing.checkpoint()
    importing.step()
    const store = storeOf(place.owner, place.scope, path)
    if (!store) continue
    try {
      await before(store)
      const existing = new Set(entriesOf(parseMemoryFile((await store.recallTopic(place.slug)) ?? '', 'topic')).map(entryKey))
      let added = 0
      for (const [index, entry] of parsed(path, 'topic').entries()) {
        if (entry.topic === undefined || topicSlug(entry.topic) !== place.slug) {
          problems.push({ path, reason: `entry ${index + 1} is filed under ${entry.topic === undefined ? 'no topic' : `topic "${entry.topic}"`}, not "${place.slug}": a lesson is filed under its own topic only (not imported): ${entry.text}` })
          continue
        }
        if (existing.has(entryKey(entry))) continue
        await store.encodeLesson(entry)
        existing.add(entryKey(entry))
        added++
      }
      counts.topicEntries += added
      if (added === 0) counts.unchanged++
    } catch (error) {
      problems.push({ path, reason: `not imported: ${describe(error)}` })
    }
  }

  for (const { path, place } of engramFiles) {
    await importing.checkpoint()
    importing.step()
    const store = storeOf(place.owner, place.scope, path)
    if (!store) continue
    try {
      const incoming = parsed(path, place.file)
      const base = place.file === 'lessons' ? await before(store) : undefined
      let added = 0
      await store.rewriteAll(place.file as EngramFile, (current) => {
        const start = base ?? current
        const known = new Set(start.map(entryKey))
        const fresh = incoming.filter((entry) => {
          const key = entryKey(entry)
          if (known.has(key)) return false
          known.add(key)
          return true
        })
        added = fresh.length
        // A file holding only entries of the tree (an import killed after filing topic lessons,
        // which adds them here first) takes the tree's order, so the rerun ends as an unkilled
        // run does (decision 0052); a file with entries of its own keeps them first, as it always did.
        const incomingKeys = new Set(incoming.map(entryKey))
        const own = start.some((entry) => !incomingKeys.has(entryKey(entry)))
        const kept = new Map(start.map((entry) => [entryKey(entry), entry]))
        const seen = new Set<string>()
        const inTreeOrder = incoming.flatMap((entry) => {
          const key = entryKey(entry)
          if (seen.has(key)) return []
          seen.add(key)
          return [kept.get(key) ?? entry]
        })
        const next = own ? [...start, ...fresh] : inTreeOrder
        return sameLines(next, current) ? null : next
      })
      counts.entries += added
      if (added === 0) counts.unchanged++
    } catch (error) {
      problems.push({ path, reason: `not imported: ${describe(error)}` })
    }
  }

  for (const { path, place } of docs) {
    await importing.checkpoint()
    importing.step()
    const text = files.get(path) as string
    const doc = parseFrontmatter(text)
    if (doc.problem) {
      problems.push({ path, line: doc.problem.line, reason: `${doc.problem.reason} (not imported)` })
      continue
    }
    const store = place.kind === 'user' || place.kind === 'prompt' ? target.backend.documents : target.backend.owned(place.owner).documents
    try {
      const existing = await store.read(place.kind as DocKind, place.slug)
      if (existing && serializeFrontmatter(existing.frontmatter, existing.body) === serializeFrontmatter(doc.frontmatter, doc.body)) {
        counts.unchanged++
        continue
      }
      await store.write(place.kind as DocKind, place.slug, doc.frontmatter, doc.body, { reason: 'imported (engram import engram)' })
      counts.documents++
    } catch (error) {
      problems.push({ path, reason: `not imported: ${describe(error)}` })
    }
  }

  for (const [label, parts] of [...skills].sort(([a], [b]) => a.localeCompare(b))) {
    await importing.checkpoint()
    importing.step()
    const path = `agents/${sourceAgent}/skills/${label}`
    if (!target.skills) {
      problems.push({ path, reason: 'skills are not imported into this backend (no skill store)' })
      continue
    }
    try {
      const outcome = await importSkill(target.skills, label, parts)
      if (outcome === 'saved') counts.skills++
      else counts.unchanged++
    } catch (error) {
      problems.push({ path, reason: `not imported: ${describe(error)}` })
    }
  }
  return { sourceAgent, counts, problems }
}

function invalidSkill(message: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix: 'A skill folder holds meta.json (label, name, when_to_use) and declarative.md.' })
}

/** Saves one skill of the tree unless the store holds the same, then brings its counters up to the tree's. */
async function importSkill(store: SkillStore, label: string, parts: Map<string, string>): Promise<'saved' | 'unchanged'> {
  if (!isSafeLabel(label)) throw invalidSkill(`"${label}" is not a skill label.`)
  const metaText = parts.get('meta.json')
  const declarative = parts.get('declarative.md')
  if (metaText === undefined || declarative === undefined) throw invalidSkill(`${metaText === undefined ? 'meta.json' : 'declarative.md'} is missing.`)
  let meta: Record<string, unknown>
  try {
    const value: unknown = JSON.parse(metaText)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object')
    meta = value as Record<string, unknown>
  } catch (error) {
    throw invalidSkill(`meta.json cannot be read: ${describe(error)}.`)
  }
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
  const whenToUse = text(meta.when_to_use) ?? text(meta.description) ?? ''
  const code: Record<string, string> = {}
  for (const [file, content] of parts) if (file.startsWith('code/')) code[file.slice('code/'.length)] = content
  const provenance = typeof meta.provenance === 'object' && meta.provenance !== null && !Array.isArray(meta.provenance) ? (meta.provenance as { source: string }) : undefined
  const input = {
    label,
    name: text(meta.name) ?? label,
    whenToUse,
    ...(text(meta.description) !== undefined ? { description: text(meta.description) as string } : {}),
    declarative,
    ...(parts.has('chunks.md') ? { chunks: parts.get('chunks.md') as string } : {}),
    ...(Object.keys(code).length > 0 ? { code } : {}),
    ...(parts.has('requirements.txt') ? { requirements: parts.get('requirements.txt') as string } : {}),
    ...(provenance ? { provenance } : {}),
  }
  const existing = await store.load(label)
  const same =
    existing !== null &&
    existing.meta.name === input.name &&
    existing.meta.when_to_use === input.whenToUse.trim() &&
    existing.meta.description === input.description &&
    JSON.stringify(existing.meta.provenance) === JSON.stringify(input.provenance ?? existing.meta.provenance) &&
    existing.declarative === (declarative.endsWith('\n') ? declarative : `${declarative}\n`) &&
    existing.chunks === input.chunks &&
    existing.requirements === input.requirements &&
    JSON.stringify(existing.codeFiles) === JSON.stringify(Object.keys(code).sort())
  let current: SkillStats | undefined = existing?.stats
  if (!same) current = (await store.save(input)).stats
  let bumped = false
  const statsText = parts.get('stats.json')
  if (statsText !== undefined && current) {
    let wanted: Record<string, { recommended?: unknown; used?: unknown } | undefined>
    try {
      wanted = JSON.parse(statsText) as typeof wanted
    } catch (error) {
      throw invalidSkill(`stats.json cannot be read (the skill itself was imported): ${describe(error)}.`)
    }
    for (const stage of [1, 2, 3] as const) {
      const key = `stage_${stage}` as const
      for (const field of ['recommended', 'used'] as const) {
        const target = wanted?.[key]?.[field]
        if (typeof target !== 'number' || !Number.isInteger(target)) continue
        const missing = Math.min(target - current[key][field], MAX_COUNTER_REPLAY)
        for (let i = 0; i < missing; i++) {
          current = field === 'used' ? await store.incrementUsed(label, stage) : await store.incrementRecommended(label, stage)
          bumped = true
        }
      }
    }
  }
  return same && !bumped ? 'unchanged' : 'saved'
}

/**
 * Reads a tree from `dir`: every regular file that is UTF-8 text and not larger than `maxBytes`.
 * Links are never followed (one may lead out of the tree); anything else is reported and skipped.
 */
export async function readTreeFolder(dir: string, maxBytes = DEFAULT_MAX_FILE_BYTES, progress: ProgressOptions = {}): Promise<{ files: TreeFiles; problems: TreeProblem[] }> {
  const root = resolve(dir)
  const files: TreeFiles = new Map()
  const problems: TreeProblem[] = []
  const info = await lstat(root).catch(() => undefined)
  if (!info?.isDirectory()) {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `${root} is not a folder.`, fix: 'Pass the folder `engram export DIR` wrote.' })
  }
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const reading = startPhase(progress, 'reading files')
  const walk = async (rel: string): Promise<void> => {
    const names = (await readdir(join(root, ...rel.split('/').filter(Boolean)))).sort()
    for (const name of names) {
      await reading.checkpoint()
      const path = rel === '' ? name : `${rel}/${name}`
      const abs = join(root, ...path.split('/'))
      try {
        const stat = await lstat(abs)
        if (stat.isSymbolicLink()) problems.push({ path, reason: 'a symbolic link (not followed)' })
        else if (stat.isDirectory()) await walk(path)
        else if (!stat.isFile()) problems.push({ path, reason: 'not a regular file' })
        else if (stat.size > maxBytes) problems.push({ path, reason: `${stat.size} bytes, larger than memory.maxFileBytes (${maxBytes}); not read` })
        else {
          const bytes = await readFile(abs)
          if (bytes.includes(0)) problems.push({ path, reason: 'a binary file (it holds NUL bytes), not memory text' })
          else files.set(path, decoder.decode(bytes))
          reading.step()
        }
      } catch (error) {
        problems.push({ path, reason: error instanceof TypeError ? 'not UTF-8 text' : `cannot be read (${(error as NodeJS.ErrnoException).code ?? describe(error)})` })
      }
    }
  }
  await walk('')
  return { files, problems }
}

/** Reads the tree `engram export DIR` wrote in `dir` into `target`. */
export async function importMemory(target: MemoryImportTarget, dir: string, options: { maxFileBytes?: number } & ProgressOptions = {}): Promise<MemoryImportReport> {
  const { files, problems } = await readTreeFolder(dir, options.maxFileBytes, options)
  return { ...(await importMemoryTree(target, files, problems, options)), dir: resolve(dir) }
}
