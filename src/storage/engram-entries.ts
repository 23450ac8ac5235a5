/**
 * What an EngramStore does with the entries of a memory file, whatever holds the file's text: the
 * embedded backend's markdown files (`files/engram-store.ts`) and PostgreSQL's rows
 * (`postgres/engram-store.ts`) both call these, so deduplication, group writes, rewrites, the order
 * of lessons and tool wisdom are the same code on both. Pure, apart from the queue of entries
 * waiting for their file's next write.
 */
import { type Clock, isoDay } from '../core/clock.ts'
import { dedupeKey, type EngramEntry, type EngramScope, RULE_KINDS, type RuleKind } from '../core/engram.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { wellFormed } from '../core/lossless-utf8.ts'
import { emptyMemoryFile, entriesOf, insertEntry, type MemoryFileDocument, parseMemoryFile, replaceEntries, serializeMemoryFile } from '../core/markdown-entry.ts'
import type { EncodeOutcome, EngramFile, EngramStore } from './contracts.ts'

/**
 * A topic name as a file slug: lower case, `[a-z0-9-]`, no leading/trailing dashes, at most 80
 * characters. Returns '' when nothing usable is left.
 */
export function topicSlug(topic: string): string {
  return topic
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '')
}

// Every encode compares the new entry with every entry of its file; normalising the same texts
// over and over dominated the cost of a write to a large file. Bounded like the token cache.
const dedupeKeys = new Map<string, string>()
const DEDUPE_CACHE_LIMIT = 50_000

function cachedDedupeKey(text: string): string {
  let key = dedupeKeys.get(text)
  if (key === undefined) {
    if (dedupeKeys.size >= DEDUPE_CACHE_LIMIT) dedupeKeys.clear()
    key = dedupeKey(text)
    dedupeKeys.set(text, key)
  }
  return key
}

function invalid(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

/** Refuses anything but an always, never or when rule (encodeRule). */
export function checkRuleKind(entry: EngramEntry): void {
  if (!(RULE_KINDS as readonly string[]).includes(entry.kind)) {
    throw invalid(`encodeRule takes always, never or when rules, not "${entry.kind}".`, 'Encode lessons with encodeLesson and profile facts with rewriteIdentity.', {
      kind: entry.kind,
    })
  }
}

/** Refuses anything but a lesson (encodeLesson). */
export function checkLessonKind(entry: EngramEntry): void {
  if (entry.kind !== 'lesson') {
    throw invalid(`encodeLesson takes lessons, not "${entry.kind}".`, 'Encode always/never/when rules with encodeRule.', { kind: entry.kind })
  }
}

/** The entry as it is written: text required and well-formed, its own copy of `meta`, `ts` today unless given. */
export function preparedEntry(entry: EngramEntry, clock: Clock): EngramEntry {
  if (typeof entry.text !== 'string' || entry.text.trim().length === 0) {
    throw invalid('A memory entry needs text; this one is empty.', 'Pass the memory as a non-empty line of text.')
  }
  return { ...entry, text: wellFormed(entry.text), meta: { ...(entry.meta ?? {}) }, ts: entry.ts ?? isoDay(clock.now()) }
}

/** The profile snapshot rewriteIdentity writes: every entry a profile fact. */
export function identityEntries(entries: EngramEntry[]): EngramEntry[] {
  return entries.map((entry) => ({ ...entry, kind: 'profile' as const, meta: { ...(entry.meta ?? {}) } }))
}

/** An entry waiting for its file's next group write. */
export interface QueuedEntry {
  entry: EngramEntry
  resolve: (outcome: EncodeOutcome) => void
  reject: (error: unknown) => void
}

/**
 * Writes of one file are committed in groups: an entry waits in its file's queue (`queues`, by
 * `key`), and whoever gets to write the file writes every entry queued by then with one read, one
 * dedupe pass and one write. An agent with 200 tool calls in flight (or a process serving many
 * sessions) then writes a few times instead of 200 times, and each caller still gets its own
 * honest outcome, resolved only once the write that holds its entry is stored.
 *
 * `write(take)` starts the group's write: it calls `take()` once it holds the file (entries queued
 * from then on form the next group, which waits for it) — as often as it likes, the same group is
 * returned — and settles each taken entry (see `addEntries`). When `write` rejects, every entry of
 * the group that is not settled yet is rejected with its error.
 */
export function groupWrite(queues: Map<string, QueuedEntry[]>, key: string, entry: EngramEntry, write: (take: () => QueuedEntry[]) => Promise<void>): Promise<EncodeOutcome> {
  return new Promise<EncodeOutcome>((resolve, reject) => {
    const group = queues.get(key)
    if (group) {
      group.push({ entry, resolve, reject })
      return
    }
    queues.set(key, [{ entry, resolve, reject }])
    let taken: QueuedEntry[] | undefined
    const take = (): QueuedEntry[] => {
      if (taken === undefined) {
        taken = queues.get(key) ?? []
        queues.delete(key)
      }
      return taken
    }
    write(take).catch((error: unknown) => {
      // Not taken: the file could not be had (a lock failed), and the whole group still queued
      // fails with it. Taken: the write failed (or what followed it) before the group was settled.
      const failed = taken ?? queues.get(key) ?? []
      if (taken === undefined) queues.delete(key)
      for (const item of failed) item.reject(error)
    })
  })
}

/**
 * One dedupe pass of a group over a parsed file: each entry, in order, is added unless an entry
 * with the same dedupe key (and kind) is there or came earlier in the group. Returns the file with
 * the new entries, how many there are, and a settle callback per entry (its outcome, or the error
 * that kept it out) to call once the file is stored.
 */
export function addEntries(doc: MemoryFileDocument, group: QueuedEntry[], topic?: string): { doc: MemoryFileDocument; added: number; settle: Array<() => void> } {
  const known = new Map<string, EngramEntry>()
  for (const entry of entriesOf(doc)) {
    const key = `${entry.kind}\u0000${cachedDedupeKey(entry.text)}`
    if (!known.has(key)) known.set(key, entry)
  }
  const settle: Array<() => void> = []
  let added = 0
  let next = doc
  for (const item of group) {
    const { entry } = item
    const key = `${entry.kind}\u0000${cachedDedupeKey(entry.text)}`
    const existing = known.get(key)
    if (existing) {
      settle.push(() => item.resolve({ kind: 'duplicate', existing }))
      continue
    }
    try {
      next = insertEntry(next, entry, topic)
    } catch (error) {
      settle.push(() => item.reject(error))
      continue
    }
    known.set(key, entry)
    added++
    settle.push(() => item.resolve({ kind: 'added', entry }))
  }
  return { doc: next, added, settle }
}

/**
 * The text of `file` after a rewrite (rewriteIdentity, rewriteAll) of its current text (`null`: no
 * file yet): every entry replaced by `entries`, or by what the function returns given the current
 * ones; `null` when the function leaves the file alone. Unreadable lines, headings and blank lines
 * stay where they were. Throws `invalid_argument` for an entry that does not belong in the file.
 */
export function rewrittenText(text: string | null, file: EngramFile, entries: EngramEntry[] | ((current: EngramEntry[]) => EngramEntry[] | null)): string | null {
  const doc = text === null ? emptyMemoryFile(file) : parseMemoryFile(text, file)
  const next = typeof entries === 'function' ? entries(entriesOf(doc)) : entries
  if (next === null) return null
  const written = next.map((entry) => ({ ...entry, text: wellFormed(entry.text) }))
  return serializeMemoryFile(replaceEntries(doc, written))
}

/** The entries of rules.md by kind, each in file order. */
export function rulesByKind(entries: EngramEntry[]): Record<RuleKind, EngramEntry[]> {
  const grouped: Record<RuleKind, EngramEntry[]> = { always: [], never: [], when: [] }
  for (const entry of entries) {
    if ((RULE_KINDS as readonly string[]).includes(entry.kind)) grouped[entry.kind as RuleKind].push(entry)
  }
  return grouped
}

/** Lessons (in file order) most recent first, as many as fit in `tokenBudget` (all when omitted). */
export async function recentLessons(entries: EngramEntry[], tokenBudget?: number): Promise<EngramEntry[]> {
  const lessons = entries.map((entry, index) => ({ entry, index }))
  // Most recent first: by `ts`, then later lines first (appends go to the end).
  lessons.sort((a, b) => (b.entry.ts ?? '').localeCompare(a.entry.ts ?? '') || b.index - a.index)
  if (tokenBudget === undefined) return lessons.map(({ entry }) => entry)
  // Loaded on first use: the o200k tables take ~0.5 s to load, which writers never need.
  const { countTokens } = await import('../core/tokens.ts')
  const chosen: EngramEntry[] = []
  let left = tokenBudget
  for (const { entry } of lessons) {
    // A lesson too large for what is left is skipped; older, shorter ones may still fit.
    const cost = countTokens(entry.text)
    if (cost > left) continue
    chosen.push(entry)
    left -= cost
  }
  return chosen
}

function lessonMatchesTool(entry: EngramEntry, tool: string | undefined): boolean {
  if (tool === undefined) return entry.tool !== undefined
  if (entry.tool === tool) return true
  return entry.topic !== undefined && topicSlug(entry.topic) === topicSlug(tool) && topicSlug(tool) !== ''
}

/**
 * Tool wisdom from rules.md's entries and the lessons (most recent first): the "when" rules tagged
 * for `tool` and the lessons tagged for it (by `tool`, or a topic named like it); every tagged one
 * when `tool` is omitted.
 */
export function toolWisdom(rules: EngramEntry[], lessons: EngramEntry[], tool: string | undefined): EngramEntry[] {
  // Only rules that name a tool: an untagged "when" rule is about no tool in particular (it is in
  // the memory context already), and matching it to every tool put it in every description.
  const tagged = rules.filter((entry) => entry.kind === 'when' && entry.tool !== undefined && (tool === undefined || entry.tool === tool))
  return [...tagged, ...lessons.filter((entry) => lessonMatchesTool(entry, tool))]
}

/** Names an engram archive's `read` accepts (files in the home, rows on PostgreSQL): forgotten engram files and topics (a set-aside copy too), nothing else of the folder. */
export const ARCHIVE_NAME = /^forgotten\/(?:project\/)?(?:rules|lessons|profile|topics\/[a-z0-9-]+(?:\.[0-9TZ-]+)?)$/

/** Whether `name` is one of `scope`'s archive (`forgotten/…` for the global scope, `forgotten/project/…` for a project's). */
export function isArchiveNameOf(scope: EngramScope, name: string): boolean {
  return typeof name === 'string' && ARCHIVE_NAME.test(name) && name.startsWith('forgotten/project/') === (scope === 'project')
}

/** The recalls every EngramStore answers the same way from the entries of its files (`entriesIn`). */
export function entryRecalls(entriesIn: (file: EngramFile) => Promise<EngramEntry[]>): Pick<EngramStore, 'recallIdentity' | 'recallRules' | 'recallLessons'> {
  return {
    recallIdentity: () => entriesIn('profile'),
    recallRules: async () => rulesByKind(await entriesIn('rules')),
    recallLessons: async (tokenBudget) => recentLessons(await entriesIn('lessons'), tokenBudget),
  }
}
