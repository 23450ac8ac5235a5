/**
 * `read_memory_file` and `write_memory_file`: the agent opens its own memory files (the sources
 * that recall, search_memory and priming point at) and keeps notes in the few folders that are
 * its to write — AnimaWorks' direct file access, confined to the namespace of
 * `memory/tree/memory-paths.ts`. Writes of knowledge, procedures and state go through the `DocumentStore`, so
 * a rewrite first saves the old version under `archive/versions/`; topic files are written
 * atomically under the same lock the engram store takes. Every write is logged as a
 * `memory_write` activity event and then reported to `onWritten` (the index update).
 *
 * Neither tool throws: every failure is a readable `isError` result whose text ends with the fix,
 * and whose `data.code` is the stable error code (`path_outside_memory`, `not_found`, …).
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import type { Clock } from '../core/clock.ts'
import { describeError, EngramError, ErrorCode } from '../core/errors.ts'
import { parseFrontmatter } from '../core/frontmatter.ts'
import type { DocKind, Frontmatter } from '../core/memory-doc.ts'
import { kindSpec, treeKindOfFolder } from '../core/memory-kinds.ts'
import { OWNER_CHOICES, type Owner, ownerOfUser, resolveOwnerChoice, userKey, userOfOwner, type Viewer } from '../core/owner.ts'
import type { MemoryMode } from '../config/schema.ts'
import type { ActivityLog, Backend, DocumentStore, EngramStore, Locks, PendingConfirmation, PendingDocument } from '../storage/contracts.ts'
import { writeFileAtomic } from '../storage/atomic-write.ts'
import { type HomeLayout, ownerTree } from '../storage/home-layout.ts'
import { DEFAULT_MAX_FILE_BYTES } from '../storage/memory-file-read.ts'
import { assertReadableMemoryWrite, controlsAsSpaces } from './memory-file-content.ts'
import { type MemoryFileSource, memoryFileSource, type OpenedMemory } from '../memory/tree/memory-file-source.ts'
import { describedBy, newProcedureFrontmatter } from '../memory/procedures/procedure-store.ts'
import { agentFrontmatter, OWNED_FRONTMATTER_FIELDS } from './owned-frontmatter.ts'
import {
  assertWritable,
  locateMemoryPath,
  type MemoryLocation,
  memoryRootFiles,
  memoryRoots,
  ownCounterpart,
  SHARED_ROOTS,
  userTreeLocation,
  WRITABLE_FOLDERS,
  writeTarget,
} from '../memory/tree/memory-paths.ts'
import { type EngramTool, engramErrorResult, invalidArgumentsResult, toolErrorResult, toolJsonSchema, type ToolResult } from './tool.ts'

export const READ_MEMORY_FILE_TOOL_NAME = 'read_memory_file'
export const WRITE_MEMORY_FILE_TOOL_NAME = 'write_memory_file'

/** Lines returned when no `limit` is given. */
export const READ_DEFAULT_LIMIT = 200
export const READ_MAX_LIMIT = 2000
/** A window never carries more than this many characters, whatever the line count. */
export const READ_MAX_CHARS = 16_000
/** Largest file read at all (activity logs of a busy day stay well below). */
const READ_MAX_BYTES = 32 * 1024 * 1024
export const WRITE_MAX_CHARS = 100_000

export interface MemoryFileToolsDeps {
  layout: HomeLayout
  /**
   * The mind's backend: on one that is not embedded (PostgreSQL) memory is rows, and these tools
   * read and write it through the seams instead of the home's files. Files of the home when omitted.
   */
  backend?: Backend
  /** The agent's document store. */
  documents: DocumentStore
  /** The document store of any owner (decision 0017); without it only the agent's tree can be written. */
  documentsOf?: (owner: Owner) => DocumentStore
  /**
   * Whose files these tools reach: a session's (agent, user). Default: the agent's own view (no
   * user), which reaches no user's memory.
   */
  viewer?: Viewer
  /** The log a write is recorded in (the session's own). */
  activity: ActivityLog
  /** The home's locks (global topic files are written under the engram store's lock). */
  locks: Locks
  /** Locks of the project scope (`<project>/.engram/.locks`), for `project/topics/…`. */
  projectLocks?: Locks
  clock: Clock
  /** Called after a successful write with the memory path and the index source of the file. */
  onWritten?: (relativePath: string, info: { source: string; absolutePath: string }) => void | Promise<void>
  /**
   * The encoding gate, for promotions (decision 0017): in copilot mode a note a user's session
   * writes for the agent or for everyone waits for that user's yes instead of being written.
   */
  gate?: { mode: MemoryMode; enqueue(document: PendingDocument, reason: string): Promise<PendingConfirmation> }
  /** Largest file a write may leave (`memory.maxFileBytes`): engram skips larger ones (decision 0025). */
  maxFileBytes?: number
  /**
   * Whether the caller has a tool, so an error's fix names only tools it can call (an MCP
   * connection with the essential tools has no report_procedure_outcome). Default: every tool.
   */
  offers?: (tool: string) => boolean
}

/** What a write did. */
export interface MemoryFileWrite {
  location: MemoryLocation
  mode: 'overwrite' | 'append'
  versioned: boolean
  source: string
  /** Set when the index was not updated (the file is safe; the next reindex catches up). */
  indexNote?: string
}

export const readMemoryFileInputSchema = z.object({
  path: z
    .string()
    .max(1000)
    .describe(
      'The memory path, e.g. "knowledge/tea.md", "memory/rules.md", "episodes/2026-01-05.md", "users/ada.md", "project/lessons.md"; a pointer such as "activity/2026-01-05.jsonl#L12-20" reads those lines. A folder path lists its files; "" lists your memory folders.',
    ),
  offset: z.number().int().min(1).optional().describe('First line to read, 1-based (default 1).'),
  limit: z.number().int().min(1).max(READ_MAX_LIMIT).optional().describe(`How many lines to read (default ${READ_DEFAULT_LIMIT}).`),
})
export type ReadMemoryFileInput = z.infer<typeof readMemoryFileInputSchema>

export const writeMemoryFileInputSchema = z.object({
  path: z.string().min(1).max(1000).describe(`Where to write: ${WRITABLE_FOLDERS.map((f) => `"${f}/<name>.md"`).join(', ')}.`),
  content: z.string().max(WRITE_MAX_CHARS).describe('The markdown to write. For knowledge and procedures, optional YAML frontmatter first.'),
  mode: z.enum(['overwrite', 'append']).optional().describe('overwrite (default) replaces the file, keeping the old version in the archive; append adds to its end.'),
  owner: z
    .enum(OWNER_CHOICES)
    .optional()
    .describe(
      'Whose note it is. Default: the user you are talking to (only their sessions see it; written under users/<their id>/). "agent": yours, seen with every user; "shared": every agent of this home.',
    ),
})
export type WriteMemoryFileInput = z.infer<typeof writeMemoryFileInputSchema>

function errorResult(error: unknown, tool: string): ToolResult {
  if (EngramError.is(error)) return engramErrorResult(error, { withCode: true })
  return toolErrorResult({ code: ErrorCode.internal, message: `${tool} failed: ${describeError(error)}`, fix: 'retry; if it fails again, run `engram doctor`.' }, { data: { code: ErrorCode.internal } })
}

function invalidInput(tool: string, issues: z.core.$ZodIssue[], example: string): ToolResult {
  return invalidArgumentsResult(tool, issues, `pass ${example}.`)
}

function notFound(path: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.notFound, category: 'user', message: `There is no memory file at ${JSON.stringify(path)}.`, fix, details: { path } })
}

/** Splits `activity/2026-01-05.jsonl#L12-20` or `episodes/2026-01-05.md#Heading` into path and anchor. */
function splitAnchor(raw: string): { path: string; lines?: { from: number; to: number }; heading?: string } {
  const hash = raw.indexOf('#')
  if (hash < 0) return { path: raw }
  const path = raw.slice(0, hash)
  const anchor = raw.slice(hash + 1)
  const range = /^L(\d+)(?:-L?(\d+))?$/.exec(anchor)
  if (range) {
    const from = Number(range[1])
    const to = range[2] === undefined ? from : Number(range[2])
    return { path, lines: { from: Math.max(1, Math.min(from, to)), to: Math.max(from, to) } }
  }
  return { path, heading: anchor.trim() }
}

function decodeText(bytes: Buffer, path: string): string {
  const notText = (): EngramError =>
    new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${path} is not a text file.`,
      fix: 'read markdown (.md), JSON or JSONL memory files; binary files cannot be shown',
      details: { path },
    })
  if (bytes.subarray(0, 8192).includes(0)) throw notText()
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw notText()
  }
}

/** The 0-based [start, end) line span of the section under a markdown heading, or undefined. */
function sectionSpan(lines: string[], heading: string): { start: number; end: number } | undefined {
  const wanted = heading.toLowerCase()
  for (let i = 0; i < lines.length; i++) {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(lines[i] ?? '')
    if (!match || match[2]?.toLowerCase() !== wanted) continue
    const level = match[1]?.length ?? 1
    let end = i + 1
    while (end < lines.length) {
      const next = /^(#{1,6})\s/.exec(lines[end] ?? '')
      if (next && (next[1]?.length ?? 7) <= level) break
      end++
    }
    return { start: i, end }
  }
  return undefined
}

async function listFolder(location: MemoryLocation, layout: HomeLayout, viewer: Viewer, source: MemoryFileSource): Promise<ToolResult> {
  const user = viewer.user
  if (location.path === '') {
    const folders = memoryRoots(layout).map((root) => `${root.name}/`)
    const own = user === undefined ? [] : [`users/${userKey(user)}/`, `users/${userKey(user)}.md`]
    const text = [
      'Your memory folders (read any file with read_memory_file; write with write_memory_file):',
      ...folders.map((folder) => `- ${folder}`),
      ...memoryRootFiles().map((file) => `- ${file}`),
      ...(user === undefined ? [] : [`What is only ${user}'s: ${own.join(' and ')} (what you write in this conversation goes there unless you choose owner "agent" or "shared").`]),
      `Writable: ${WRITABLE_FOLDERS.map((f) => `${f}/<name>.md`).join(', ')} (also under users/<id>/ and shared/).`,
    ].join('\n')
    return { text, data: { path: '', entries: [...folders, ...memoryRootFiles(), ...own] } }
  }
  let paths: string[]
  if (location.root === 'users' && location.inner === '') {
    // Only the viewer's own profile and folder: other users are not listed (decision 0017).
    const key = user === undefined ? undefined : userKey(user)
    paths = (await source.entries(location)).filter((name) => key !== undefined && name === `${key}.md`).map((name) => `users/${name}`)
    if (user !== undefined && key !== undefined && (await source.entries(userTreeLocation(layout, user))).length > 0) paths.push(`users/${key}/`)
  } else if (location.owner === 'shared' && location.local === '') {
    // shared/ holds the profiles and the resolutions too: only its memory folders are listed here.
    paths = (await source.entries(location)).filter((name) => (SHARED_ROOTS as readonly string[]).includes(name.replace(/\/$/, ''))).map((name) => `shared/${name}`)
  } else {
    paths = (await source.entries(location)).map((name) => `${location.path}/${name}`)
    // A folder of the agent's tree also shows what the viewer's own tree holds there.
    const own = ownCounterpart(location, layout, viewer)
    if (own) paths.push(...(await source.entries(own)).map((name) => `${own.path}/${name}`))
  }
  const text =
    paths.length === 0
      ? `${location.path}/ is empty.`
      : [`${location.path}/ holds ${paths.length} entr${paths.length === 1 ? 'y' : 'ies'}:`, ...paths.map((path) => `- ${path}`)].join('\n')
  return { text, data: { path: location.path, entries: paths.map((path) => path.slice(path.lastIndexOf('/', path.length - 2) + 1)), paths } }
}

/**
 * Where a read of `rawPath` goes for `viewer`: the path as named, except that a path of the
 * agent's tree (`knowledge/x.md`) is the viewer's own file when it has one there.
 */
async function locateForRead(rawPath: string, layout: HomeLayout, viewer: Viewer, source: MemoryFileSource): Promise<{ location: MemoryLocation; opened: OpenedMemory }> {
  const location = locateMemoryPath(rawPath, layout, viewer)
  const own = ownCounterpart(location, layout, viewer)
  if (own) {
    const opened = await source.open(own)
    if (opened.kind !== 'missing' && location.inner !== '') return { location: own, opened }
  }
  return { location, opened: await source.open(location) }
}

/** Reads a window of a memory file (or lists a folder). Throws EngramError on refusal. */
async function readWindow(input: ReadMemoryFileInput, layout: HomeLayout, viewer: Viewer, source: MemoryFileSource): Promise<ToolResult> {
  const anchor = splitAnchor(input.path)
  const { location, opened } = await locateForRead(anchor.path, layout, viewer, source)
  if (opened.kind === 'missing') {
    if (location.root === '' || location.inner === '') return listFolder(location, layout, viewer, source)
    const parent = location.path.includes('/') ? location.path.slice(0, location.path.lastIndexOf('/')) : ''
    throw notFound(location.path, `read "${parent}" to list what is there${parent === '' ? ' (your memory folders)' : ''}`)
  }
  if (opened.kind === 'folder') return listFolder(location, layout, viewer, source)
  if (opened.kind !== 'file') throw notFound(location.path, 'only regular files can be read')
  if (opened.size > READ_MAX_BYTES) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${location.path} is ${opened.size} bytes, more than the ${READ_MAX_BYTES} this tool reads.`,
      fix: 'search it with search_memory instead',
      details: { path: location.path },
    })
  }
  const text = decodeText(await opened.read(), location.path)
  const lines = text.split('\n')
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
  const total = lines.length

  let start = 0
  let end = total
  let what = ''
  if (anchor.heading !== undefined && anchor.heading !== '') {
    const span = sectionSpan(lines, anchor.heading)
    if (!span) throw notFound(`${location.path}#${anchor.heading}`, `read "${location.path}" without "#${anchor.heading}" to see its headings`)
    start = span.start
    end = span.end
    what = ` section "${anchor.heading}"`
  } else if (anchor.lines) {
    start = anchor.lines.from - 1
    end = Math.min(total, anchor.lines.to)
  }
  if (input.offset !== undefined) start = Math.max(start, input.offset - 1)
  const limit = input.limit ?? (anchor.lines ? end - start : READ_DEFAULT_LIMIT)
  end = Math.min(end, start + Math.max(1, limit))
  if (start >= total && total > 0) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${location.path} has ${total} lines; line ${start + 1} is past its end.`,
      fix: `use an offset between 1 and ${total}`,
      details: { path: location.path, lines: total },
    })
  }

  const shown: string[] = []
  let chars = 0
  for (let i = start; i < end; i++) {
    const line = lines[i] ?? ''
    if (chars + line.length + 1 > READ_MAX_CHARS) {
      // A single line longer than the window is cut rather than shown as nothing.
      if (shown.length === 0) shown.push(`${line.slice(0, READ_MAX_CHARS)} […line cut at ${READ_MAX_CHARS} characters]`)
      break
    }
    shown.push(line)
    chars += line.length + 1
  }
  const last = start + shown.length
  const header = total === 0 ? `${location.path} is empty.` : `${location.path}${what} — lines ${start + 1}-${last} of ${total}`
  const parts = [header]
  if (shown.length > 0) parts.push(shown.join('\n'))
  const rangeEnd = anchor.heading !== undefined || anchor.lines ? end : total
  if (last < rangeEnd) {
    parts.push(`[${rangeEnd - last} more line${rangeEnd - last === 1 ? '' : 's'}; read on with {"path": "${location.path}", "offset": ${last + 1}, "limit": ${READ_DEFAULT_LIMIT}}]`)
  }
  return { text: parts.join('\n'), data: { path: location.path, from: start + 1, to: last, totalLines: total } }
}

/**
 * The whole text of one memory file (MCP resources, the dashboard). Throws `path_outside_memory`
 * for a path that escapes the namespace, `not_found`, or `invalid_argument` for a folder, a
 * binary file or one over the size limit.
 */
export async function readMemoryText(
  rawPath: string,
  layout: HomeLayout,
  viewer: Viewer = { agent: layout.agent },
  backend?: Backend,
): Promise<{ path: string; text: string }> {
  const { location, opened } = await locateForRead(rawPath, layout, viewer, memoryFileSource(layout, backend))
  if (opened.kind === 'missing') throw notFound(location.path, 'list the memory files to find the right path')
  if (opened.kind !== 'file' || opened.size > READ_MAX_BYTES) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${location.path} is ${opened.kind === 'file' ? `larger than ${READ_MAX_BYTES} bytes` : 'not a file'}.`,
      fix: 'read a single memory file; search large logs with search_memory',
      details: { path: location.path },
    })
  }
  return { path: location.path, text: decodeText(await opened.read(), location.path) }
}

/** The `read_memory_file` tool. */
export function buildReadMemoryFileTool(deps: Pick<MemoryFileToolsDeps, 'layout' | 'viewer' | 'backend'>): EngramTool<ReadMemoryFileInput> {
  const viewer = deps.viewer ?? { agent: deps.layout.agent }
  const source = memoryFileSource(deps.layout, deps.backend)
  return {
    name: READ_MEMORY_FILE_TOOL_NAME,
    description: [
      'Read one of your own memory files: the sources that search_memory, recall and your primed memories point at.',
      'Paths are relative to your memory (knowledge/, procedures/, memory/ for rules, lessons, profile and topics, episodes/, activity/, state/, skills/, archive/, users/, shared/, project/).',
      'What is only the current user\'s lives under users/<their id>/; "knowledge/x.md" reads their own file first, then yours.',
      'A pointer like "activity/2026-01-05.jsonl#L12-20" reads those lines; long files come back in windows with the offset to read on.',
    ].join(' '),
    inputSchema: readMemoryFileInputSchema,
    jsonSchema: toolJsonSchema(readMemoryFileInputSchema),
    async execute(input) {
      const parsed = readMemoryFileInputSchema.safeParse(input)
      if (!parsed.success) return invalidInput(READ_MEMORY_FILE_TOOL_NAME, parsed.error.issues, '{"path": "knowledge/<name>.md", "offset": 1 (optional), "limit": 200 (optional)}')
      try {
        return await readWindow(parsed.data, deps.layout, viewer, source)
      } catch (error) {
        return errorResult(error, READ_MEMORY_FILE_TOOL_NAME)
      }
    },
  }
}

/** The document kind a writable folder holds (core/memory-kinds.ts), or undefined for topics. */
function docKindOf(folder: string): DocKind | undefined {
  const kind = treeKindOfFolder(folder)
  return kind !== undefined && kindSpec(kind)?.agentWritable === true ? kind : undefined
}

/**
 * A topic file on a backend whose memory is rows, through an engram store without `writeTopic`:
 * refused rather than put in a file of the home nobody reads.
 */
function topicsAreRows(path: string, backend: string): EngramError {
  return new EngramError({
    code: ErrorCode.unsupported,
    category: 'user',
    message: `${path} was not written: on the ${backend} backend topic files are rows, and this engram store cannot write a topic as free text.`,
    fix: 'memorize the lesson with a topic instead ({"kind": "lesson", "topic": "<name>"}), or keep the note in knowledge/<name>.md',
    details: { path, backend },
  })
}

/** The text a topic write leaves: `content`, or `content` after what was there (append); always ending in a newline. */
function topicText(old: string | null, content: string, mode: 'overwrite' | 'append'): string {
  let next = content
  if (mode === 'append' && old !== null) next = old === '' || old.endsWith('\n') ? old + content : `${old}\n${content}`
  return next.endsWith('\n') ? next : `${next}\n`
}

/** The engram store that writes a topic's text on a backend whose memory is rows, or undefined when its store cannot. */
function topicWriterOf(deps: MemoryFileToolsDeps, location: MemoryLocation): EngramStore | undefined {
  const store = deps.backend?.owned(location.owner).engrams(location.root === 'project' ? 'project' : 'global')
  return store?.writeTopic ? store : undefined
}

/** The name the file engram store locks a topic under; the two must agree (engram-store.ts). */
function topicLockName(memoryDir: string, slug: string): string {
  const dirKey = createHash('sha256').update(resolve(memoryDir)).digest('hex').slice(0, 12)
  return `engrams:${dirKey}:topic:${slug}`
}

/** The index source (home-relative path) of a written file. */
function indexSourceOf(location: MemoryLocation, agent: string): string {
  const user = userOfOwner(location.owner)
  if (location.root === 'project') {
    return user === undefined ? `project:.engram/memory/${location.inner}` : `project:.engram/users/${userKey(user)}/memory/${location.inner}`
  }
  if (location.owner === 'shared') return `shared/${location.local}`
  return user === undefined ? `agents/${agent}/${location.local}` : `agents/${agent}/users/${userKey(user)}/${location.local}`
}

function documentsFor(deps: MemoryFileToolsDeps, owner: Owner): DocumentStore {
  if (owner === 'agent') return deps.documents
  if (!deps.documentsOf) {
    throw new EngramError({ code: ErrorCode.unsupported, category: 'system', message: `This file tool writes only the agent's own memory, not ${owner}'s.`, fix: 'build the tool with documentsOf (mind.agentTools does)' })
  }
  return deps.documentsOf(owner)
}

async function writeDocument(
  deps: MemoryFileToolsDeps,
  owner: Owner,
  kind: DocKind,
  slug: string,
  path: string,
  content: string,
  mode: 'overwrite' | 'append',
): Promise<{ versioned: boolean }> {
  const now = deps.clock.now().toISOString()
  const documents = documentsFor(deps, owner)
  const existing = await documents.read(kind, slug)
  if (mode === 'append') {
    // A procedure begun by an append gets the seed's frontmatter too (the file's first line is its title).
    const frontmatter: Frontmatter =
      kind === 'state' ? {} : kind === 'procedure' ? { ...newProcedureFrontmatter({ description: describedBy(content, slug), now }) } : { created_at: now, updated_at: now }
    await documents.append(kind, slug, content.endsWith('\n') ? content : `${content}\n`, frontmatter)
    return { versioned: false }
  }
  const given = parseFrontmatter(content)
  // A procedure carries the seed's bookkeeping from its first write: what a new one starts with is
  // what the writer may restate (confidence 0.5, zero counts), never a track record it claims.
  const seed = kind === 'procedure' ? newProcedureFrontmatter({ description: describedBy(given.body, slug), now }) : undefined
  // The fields engram keeps (counters, version, protected, …) are refused before anything is written.
  const agentFields = agentFrontmatter(given.frontmatter, existing?.frontmatter ?? seed, path, WRITE_MEMORY_FILE_TOOL_NAME, deps.offers)
  // The agent rewrites the body; the bookkeeping it did not restate (created_at, success counts,
  // version) is kept, so a rewrite never resets a procedure's track record. A procedure written
  // without some of the seed's fields (by hand, or before they were given) gets the missing ones.
  const frontmatter: Frontmatter = { ...(seed ?? {}), ...(existing?.frontmatter ?? {}), ...agentFields }
  if (kind !== 'state') {
    if (frontmatter.created_at === undefined) frontmatter.created_at = now
    frontmatter.updated_at = now
    if (existing) {
      const version = existing.frontmatter.version
      if (typeof version === 'number') frontmatter.version = version + 1
      // A procedure that had no version was at its first: this rewrite is its second.
      else if (kind === 'procedure') frontmatter.version = 2
    }
  }
  await documents.write(kind, slug, frontmatter, given.body, { reason: 'write_memory_file' })
  return { versioned: existing !== null }
}

async function writeTopic(deps: MemoryFileToolsDeps, location: MemoryLocation, slug: string, content: string, mode: 'overwrite' | 'append'): Promise<void> {
  const rows = deps.backend && deps.backend.capabilities.memory === 'rows' ? topicWriterOf(deps, location) : undefined
  // Rows: written by the engram store under the row lock lessons are filed under.
  if (rows?.writeTopic) return rows.writeTopic(slug, (old) => topicText(old, content, mode))
  const project = location.root === 'project'
  const tree = ownerTree(deps.layout, location.owner)
  const memoryDir = project ? tree.projectMemoryDir : tree.memoryDir
  const locks = project ? deps.projectLocks : deps.locks
  if (!memoryDir || !locks) {
    throw new EngramError({ code: ErrorCode.unsupported, category: 'system', message: 'Project topic files cannot be written: the project scope has no locks.', fix: 'pass projectLocks to the memory file tools' })
  }
  const outcome = await locks.withLock(topicLockName(memoryDir, slug), async () => {
    const old =
      mode === 'append'
        ? await readFile(location.absolute, 'utf8').catch((error: NodeJS.ErrnoException) => {
            if (error.code === 'ENOENT') return ''
            throw error
          })
        : null
    await writeFileAtomic(location.absolute, topicText(old, content, mode))
  })
  if (outcome.kind !== 'done') throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Topic ${location.path} is locked.`, fix: 'retry in a moment' })
}

/**
 * Writes one memory file at a checked location (the tool's work, and what an accepted promotion
 * does): the document store for knowledge, procedures and state (versioned), the topic file under
 * its lock, then the activity log and the index.
 */
export async function applyMemoryFileWrite(deps: MemoryFileToolsDeps, location: MemoryLocation, content: string, mode: 'overwrite' | 'append'): Promise<MemoryFileWrite> {
  const { folder, slug } = assertWritable(location)
  const kind = docKindOf(folder)
  const source = memoryFileSource(deps.layout, deps.backend)
  if (!kind && !source.files && !topicWriterOf(deps, location)) throw topicsAreRows(location.path, deps.backend?.name ?? 'this')
  const opened = await source.open(location)
  if (opened.kind === 'folder' || opened.kind === 'special') throw notFound(location.path, 'write to a file name ending in .md, not a folder')
  // Validated before anything is written: never a file that engram would then skip.
  await assertReadableMemoryWrite({
    path: location.path,
    content,
    mode,
    frontmatter: kind !== undefined,
    existing: opened.kind === 'file' ? { bytes: opened.size } : null,
    maxFileBytes: deps.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
  })
  let versioned = false
  if (kind) ({ versioned } = await writeDocument(deps, location.owner, kind, slug, location.path, content, mode))
  else await writeTopic(deps, location, slug, content, mode)

  const indexSource = indexSourceOf(location, deps.layout.agent)
  await deps.activity.append({
    ts: deps.clock.now().toISOString(),
    type: 'memory_write',
    tool: WRITE_MEMORY_FILE_TOOL_NAME,
    content: location.path,
    summary: `${mode} ${location.path} (${content.length} chars)`,
    meta: { path: location.path, mode, chars: content.length, versioned, owner: location.owner },
  })
  let note = ''
  try {
    await deps.onWritten?.(location.path, { source: indexSource, absolutePath: join(location.absolute) })
  } catch (error) {
    // The file is written and safe; only the index lags until the next reindex.
    note = `\n(the search index was not updated: ${describeError(error)}; it catches up on the next \`engram reindex\`)`
  }
  return { location, mode, versioned, source: indexSource, ...(note !== '' ? { indexNote: note } : {}) }
}

/** The `write_memory_file` tool. */
export function buildWriteMemoryFileTool(deps: MemoryFileToolsDeps): EngramTool<WriteMemoryFileInput> {
  const viewer = deps.viewer ?? { agent: deps.layout.agent }
  return {
    name: WRITE_MEMORY_FILE_TOOL_NAME,
    description: [
      'Write a markdown note into your own memory: knowledge you worked out (knowledge/<name>.md), a procedure (procedures/<name>.md), your current task (state/current_task.md), or a topic file (memory/topics/<name>.md, project/topics/<name>.md).',
      'overwrite keeps the previous version in your archive; append adds to the end.',
      'In a conversation with a user the note is theirs (only their sessions see it) unless you pass owner "agent" or "shared".',
      `Frontmatter fields engram keeps (${OWNED_FRONTMATTER_FIELDS.join(', ')}) cannot be set here: report how a procedure went with report_procedure_outcome.`,
      'Rules, lessons and facts about the user go through memorize instead.',
    ].join(' '),
    inputSchema: writeMemoryFileInputSchema,
    jsonSchema: toolJsonSchema(writeMemoryFileInputSchema),
    async execute(input) {
      const parsed = writeMemoryFileInputSchema.safeParse(input)
      if (!parsed.success) {
        return invalidInput(
          WRITE_MEMORY_FILE_TOOL_NAME,
          parsed.error.issues,
          `{"path": "knowledge/<name>.md", "content": "markdown, at most ${WRITE_MAX_CHARS} characters", "mode": "overwrite|append", "owner": "${OWNER_CHOICES.join('|')} (optional)"}`,
        )
      }
      const { path } = parsed.data
      const mode = parsed.data.mode ?? 'overwrite'
      try {
        if (parsed.data.content.includes('\u0000')) {
          throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'The content contains a NUL byte; memory files are text.', fix: 'send plain markdown text' })
        }
        // Other control characters (a vertical tab, an escape sequence copied from a terminal) are
        // written as spaces, what recall would show of them anyway (decision 0028), and said so.
        const { text: content, replaced } = controlsAsSpaces(parsed.data.content)
        const cleaned = replaced > 0 ? ` ${replaced} control character${replaced === 1 ? ' was' : 's were'} written as ${replaced === 1 ? 'a space' : 'spaces'}.` : ''
        const requested = locateMemoryPath(path, deps.layout, viewer)
        // An unprefixed path lands in the tree of the owner asked for, else the session's own (decision 0017).
        const owner =
          parsed.data.owner !== undefined
            ? resolveOwnerChoice(parsed.data.owner, viewer)
            : requested.tree !== '' || requested.root === 'users'
              ? requested.owner
              : ownerOfUser(viewer.user)
        const location = writeTarget(requested, deps.layout, owner)
        assertWritable(location)
        // A note for the agent or for everyone, from a user's session: in copilot mode it waits for their yes.
        const promoted = viewer.user !== undefined && location.owner !== ownerOfUser(viewer.user)
        if (promoted && deps.gate?.mode === 'copilot') {
          // What waits for a yes is checked now, so the user never accepts a write that fails.
          const folder = assertWritable(location).folder
          await assertReadableMemoryWrite({ path: location.path, content, mode, frontmatter: docKindOf(folder) !== undefined, existing: null, maxFileBytes: deps.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES })
          const pending = await deps.gate.enqueue({ path: location.path, owner: location.owner, content, mode }, `copilot mode: promotion to ${location.owner}`)
          return {
            text: `Not written yet${cleaned === '' ? '' : ` (${cleaned.trim()})`}: ${location.path} would be ${location.owner === 'shared' ? 'shared with every agent of this home' : 'yours, seen with every user'}, so it waits for the user's confirmation (id ${pending.id}, shown after your answer).`,
            data: { path: location.path, owner: location.owner, pending: pending.id },
          }
        }
        const written = await applyMemoryFileWrite(deps, location, content, mode)
        const { versioned, source } = written
        const note = written.indexNote ?? ''
        const verb = mode === 'append' ? 'Appended' : versioned ? 'Rewrote' : 'Wrote'
        const whose = location.owner === 'agent' ? 'yours, seen with every user' : location.owner === 'shared' ? 'shared with every agent of this home' : `only ${userOfOwner(location.owner)}'s`
        return {
          text: `${verb} ${location.path} (${content.length} characters, ${whose})${versioned ? `; the previous version is kept in ${location.tree}archive/versions/` : ''}.${cleaned}${note}`,
          data: { path: location.path, mode, versioned, source, owner: location.owner },
        }
      } catch (error) {
        return errorResult(error, WRITE_MEMORY_FILE_TOOL_NAME)
      }
    },
  }
}
