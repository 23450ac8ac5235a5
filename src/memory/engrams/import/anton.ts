/**
 * `engram import anton DIR`: brings an Anton memory folder (`~/.anton` or `<project>/.anton`)
 * over, reading only:
 *
 * - `memory/rules.md`, `lessons.md`, `profile.md` → encoded as they are (kind from the section,
 *   confidence, source, topic and the original `ts` kept), through `encode()` with the gate
 *   bypassed (the import is the user's explicit yes);
 * - `memory/topics/<slug>.md` → copied as they are when we have no topic of that name (keeping any
 *   prose), and every entry encoded as a lesson of that topic;
 * - `episodes/*.jsonl` (the raw conversation archive) → events of the unified activity log
 *   (user → message_received, assistant → response_sent, tool_call/tool_result/scratchpad →
 *   tool_use), session and turn kept; see docs/decisions/0010-project-instructions-file.md for why
 *   they are not turned into episode summaries at import;
 * - `skills/<label>/` → copied as is into the agent's `skills/` (the formats are the same);
 * - the legacy `context/*.md` and `learnings/*.md` folders, as Anton's reconsolidator does: each
 *   file a topic, each line (bullets stripped, headings and fragments under 6 characters skipped)
 *   a lesson; context lessons have source `user`, learnings `consolidation` with the topic from
 *   `learnings/index.json` when it names one.
 *
 * Idempotent: what is already there is counted as a duplicate and not written again.
 */
import { mkdir } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import type { ActivityEvent, ActivityType } from '../../../core/activity.ts'
import type { EngramScope } from '../../../core/engram.ts'
import { type MemoryFileKind, entriesOf, parseMemoryFile, problemsOf } from '../../../core/markdown-entry.ts'
import type { ActivityLog, EngramStore } from '../../../storage/contracts.ts'
import { topicSlug } from '../../../storage/engram-entries.ts'
import { writeFileAtomic } from '../../../storage/atomic-write.ts'
import type { DatedEngram, EngramEncoder } from '../encode.ts'
import { copyTree, filesIn, foldersIn, importActivityEvents, isDirectory, readTextIfExists } from './import-files.ts'
import { addEncodeOutcome, countOf, type ImportReport, newImportReport } from './import-report.ts'

export interface AntonImportOptions {
  /** The Anton folder (`.anton`), or a folder that contains one. */
  dir: string
  encoder: EngramEncoder
  /** The store engrams of `scope` land in (topic files are copied into its `topics/`). */
  store: EngramStore
  /** Where rules and lessons go (profile facts always go global). Default global. */
  scope?: EngramScope
  activity: ActivityLog
  /** The agent's `skills/` folder. */
  skillsDir: string
}

const MEMORY_FILES: Array<{ name: string; kind: MemoryFileKind; count: string }> = [
  { name: 'rules.md', kind: 'rules', count: 'rules' },
  { name: 'lessons.md', kind: 'lessons', count: 'lessons' },
  { name: 'profile.md', kind: 'profile', count: 'profile' },
]

/** The folder Anton's files are in: DIR itself, or DIR/.anton when DIR is a project or home. */
export async function antonRoot(dir: string): Promise<string> {
  const nested = join(dir, '.anton')
  const looksLikeAnton = async (path: string) =>
    (await Promise.all(['memory', 'skills', 'episodes', 'context', 'learnings'].map((name) => isDirectory(join(path, name))))).some(Boolean)
  if (!(await looksLikeAnton(dir)) && (await looksLikeAnton(nested))) return nested
  return dir
}

/** Anton's legacy line splitting: bullets stripped, headings and fragments under 6 characters skipped. */
export function legacyFacts(text: string): string[] {
  const facts: string[] = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw
      .trim()
      .replace(/^(?:[-*+]|\d+[.)])\s+/, '')
      .trim()
    if (line.length < 6 || line.startsWith('#') || /^(?:-{3,}|\*{3,}|```)/.test(line)) continue
    facts.push(line)
  }
  return facts
}

const ROLE_TYPES: Record<string, ActivityType> = {
  user: 'message_received',
  assistant: 'response_sent',
  tool_call: 'tool_use',
  tool_result: 'tool_use',
  scratchpad: 'tool_use',
}

/** One line of an Anton episode file as an activity event, or a reason it is not one. */
export function antonEpisodeEvent(value: unknown): ActivityEvent | string {
  if (value === null || typeof value !== 'object') return 'not a JSON object'
  const line = value as Record<string, unknown>
  if (typeof line.ts !== 'string') return 'no ts'
  const role = typeof line.role === 'string' ? line.role : ''
  const type = ROLE_TYPES[role]
  if (!type) return `unknown role "${role}"`
  const content = typeof line.content === 'string' ? line.content : JSON.stringify(line.content ?? '')
  const meta = line.meta !== null && typeof line.meta === 'object' ? (line.meta as Record<string, unknown>) : {}
  const event: ActivityEvent = { ts: line.ts, type, meta: { importedFrom: 'anton', role, ...(typeof line.turn === 'number' ? { turn: line.turn } : {}) } }
  if (typeof line.session === 'string') event.session = line.session
  if (role === 'user') {
    event.content = content
    event.from = 'user'
  } else if (role === 'assistant') {
    event.content = content
    event.to = 'user'
  } else {
    event.tool = typeof meta.tool === 'string' ? meta.tool : 'scratchpad'
    if (role === 'tool_call') (event.meta as Record<string, unknown>).input = content
    else event.content = content
    if (typeof meta.description === 'string') event.summary = meta.description
  }
  return event
}

async function importMemoryFiles(root: string, options: AntonImportOptions, scope: EngramScope, report: ImportReport): Promise<void> {
  for (const { name, kind, count } of MEMORY_FILES) {
    const file = `memory/${name}`
    const text = await readTextIfExists(join(root, file))
    if (text === undefined) continue
    const doc = parseMemoryFile(text, kind)
    for (const problem of problemsOf(doc)) report.problems.push({ file, line: problem.line, reason: `${problem.reason}; not imported` })
    const engrams: DatedEngram[] = entriesOf(doc).map((entry) => ({
      text: entry.text,
      kind: entry.kind,
      scope: kind === 'profile' ? 'global' : scope,
      confidence: entry.confidence ?? 'medium',
      source: entry.source ?? 'user',
      ...(entry.topic ? { topic: entry.topic } : {}),
      ...(entry.tool ? { tool: entry.tool } : {}),
      ...(entry.ts ? { ts: entry.ts } : {}),
      meta: { ...entry.meta },
      verbatimMeta: true,
    }))
    addEncodeOutcome(report, count, await options.encoder.encodeConfirmed(engrams), file)
  }
}

/** Topic files of the source, as slug → text (files without a usable slug are reported). */
async function readTopics(root: string, report: ImportReport): Promise<Array<{ file: string; slug: string; text: string }>> {
  const folder = join(root, 'memory', 'topics')
  const topics: Array<{ file: string; slug: string; text: string }> = []
  for (const name of await filesIn(folder, '.md')) {
    const file = `memory/topics/${name}`
    const slug = topicSlug(name.slice(0, -3))
    if (slug === '') report.problems.push({ file, reason: 'the file name gives no usable topic slug; not imported' })
    else topics.push({ file, slug, text: (await readTextIfExists(join(folder, name))) ?? '' })
  }
  return topics
}

/** Copies topic files we do not have yet, as they are: a topic file may hold prose besides its entries. */
async function copyTopicFiles(topics: Array<{ slug: string; text: string }>, options: AntonImportOptions, report: ImportReport): Promise<void> {
  const count = countOf(report, 'topic files')
  for (const { slug, text } of topics) {
    const destination = join(options.store.location, 'topics', `${slug}.md`)
    if ((await readTextIfExists(destination)) !== undefined) {
      count.duplicates++
      continue
    }
    await mkdir(dirname(destination), { recursive: true })
    await writeFileAtomic(destination, text)
    count.imported++
  }
}

/** Every entry of a topic file becomes a lesson of that topic (most are in lessons.md already). */
async function encodeTopicLessons(topics: Array<{ file: string; slug: string; text: string }>, options: AntonImportOptions, scope: EngramScope, report: ImportReport): Promise<void> {
  for (const { file, slug, text } of topics) {
    const engrams: DatedEngram[] = entriesOf(parseMemoryFile(text, 'topic')).map((entry) => ({
      text: entry.text,
      kind: 'lesson',
      scope,
      confidence: entry.confidence ?? 'medium',
      source: entry.source ?? 'user',
      topic: entry.topic ?? slug,
      ...(entry.ts ? { ts: entry.ts } : {}),
      meta: { ...entry.meta },
      verbatimMeta: true,
    }))
    addEncodeOutcome(report, 'topic lessons', await options.encoder.encodeConfirmed(engrams), file)
  }
}

async function importEpisodes(root: string, options: AntonImportOptions, report: ImportReport): Promise<void> {
  const events: ActivityEvent[] = []
  for (const name of await filesIn(join(root, 'episodes'), '.jsonl')) {
    const file = `episodes/${name}`
    const text = (await readTextIfExists(join(root, file))) ?? ''
    text.split('\n').forEach((line, index) => {
      if (line.trim() === '') return
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        report.problems.push({ file, line: index + 1, reason: 'not JSON; not imported' })
        return
      }
      const event = antonEpisodeEvent(value)
      if (typeof event === 'string') report.problems.push({ file, line: index + 1, reason: `${event}; not imported` })
      else events.push(event)
    })
  }
  await importActivityEvents(options.activity, events, report, 'episode events')
}

async function importSkills(root: string, options: AntonImportOptions, report: ImportReport): Promise<void> {
  for (const label of await foldersIn(join(root, 'skills'))) {
    await copyTree(join(root, 'skills', label), join(options.skillsDir, label), report, 'skill files', root)
  }
}

/** Topic names from `learnings/index.json`, by file name or stem; tolerant of its shapes. */
function learningTopics(indexText: string | undefined): Map<string, string> {
  const topics = new Map<string, string>()
  if (!indexText) return topics
  let value: unknown
  try {
    value = JSON.parse(indexText)
  } catch {
    return topics
  }
  const add = (key: unknown, item: unknown) => {
    if (item === null || typeof item !== 'object') {
      if (typeof key === 'string' && typeof item === 'string') topics.set(key.replace(/\.md$/, ''), item)
      return
    }
    const record = item as Record<string, unknown>
    const name = [record.file, record.filename, record.path, record.id, record.slug, key].find((candidate) => typeof candidate === 'string') as string | undefined
    const topic = [record.topic, record.title, record.name].find((candidate) => typeof candidate === 'string') as string | undefined
    if (name && topic) topics.set(name.replace(/^.*\//, '').replace(/\.md$/, ''), topic)
  }
  if (Array.isArray(value)) for (const item of value) add(undefined, item)
  else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>
    const inner = record.learnings ?? record.entries ?? record.topics
    if (Array.isArray(inner)) for (const item of inner) add(undefined, item)
    else for (const [key, item] of Object.entries(inner && typeof inner === 'object' ? (inner as Record<string, unknown>) : record)) add(key, item)
  }
  return topics
}

/**
 * Anton's reconsolidator (`reconsolidate()`): the legacy `context/*.md` and `learnings/*.md` of
 * `root` become lessons of `scope`, each file a topic (see the file comment). Only reads `root`;
 * what is already there is counted as a duplicate, so a second run writes nothing.
 */
export async function importLegacyFolders(root: string, options: Pick<AntonImportOptions, 'encoder'>, scope: EngramScope, report: ImportReport): Promise<void> {
  for (const name of await filesIn(join(root, 'context'), '.md')) {
    const file = `context/${name}`
    const topic = topicSlug(name.slice(0, -3)) || 'context'
    const facts = legacyFacts((await readTextIfExists(join(root, file))) ?? '')
    const engrams: DatedEngram[] = facts.map((text) => ({ text, kind: 'lesson', scope, confidence: 'medium', source: 'user', topic }))
    addEncodeOutcome(report, 'legacy context lessons', await options.encoder.encodeConfirmed(engrams), file)
  }
  const topics = learningTopics(await readTextIfExists(join(root, 'learnings', 'index.json')))
  for (const name of await filesIn(join(root, 'learnings'), '.md')) {
    const file = `learnings/${name}`
    const stem = name.slice(0, -3)
    const topic = topicSlug(topics.get(stem) ?? stem) || 'learnings'
    const facts = legacyFacts((await readTextIfExists(join(root, file))) ?? '')
    const engrams: DatedEngram[] = facts.map((text) => ({ text, kind: 'lesson', scope, confidence: 'medium', source: 'consolidation', topic }))
    addEncodeOutcome(report, 'legacy learnings lessons', await options.encoder.encodeConfirmed(engrams), file)
  }
}

/** Imports an Anton folder; see the file comment. The source is only read. */
export async function importAnton(options: AntonImportOptions): Promise<ImportReport> {
  const root = await antonRoot(options.dir)
  const scope = options.scope ?? 'global'
  const report = newImportReport('anton', root)
  // Topic files are copied before lessons.md is encoded (cross-filing would create them first);
  // their entries are encoded after it, so lessons.md keeps the source's order.
  const topics = await readTopics(root, report)
  await copyTopicFiles(topics, options, report)
  await importMemoryFiles(root, options, scope, report)
  await encodeTopicLessons(topics, options, scope, report)
  await importEpisodes(root, options, report)
  await importSkills(root, options, report)
  await importLegacyFolders(root, options, scope, report)
  if (Object.keys(report.counts).length === 0) {
    report.problems.push({ file: relative(options.dir, root) || '.', reason: 'no memory/, episodes/, skills/, context/ or learnings/ folder found: is this an Anton folder (~/.anton or <project>/.anton)?' })
  }
  return report
}
