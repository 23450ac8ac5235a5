/**
 * Codec for Anton's markdown memory files (`rules.md`, `lessons.md`, `profile.md`,
 * `topics/<slug>.md`). Pure: text in, text out, no I/O.
 *
 * An entry is one line, `- text <!-- key:value key:value -->`, the comment optional. A parsed file
 * keeps every raw line, so that editing it (inserting an entry, replacing all entries) leaves
 * headings, blank lines and lines it could not read exactly as they were: a person's hand edit is
 * never thrown away because the parser did not understand it.
 *
 * Text that would break the line format (a newline, `<!--`, `-->`, control characters, leading or
 * trailing blanks) is written backslash-escaped and flagged with `esc:1` in the comment. Lines
 * without that flag are read literally, so a hand-written `C:\new` stays `C:\new`.
 */
import {
  CONFIDENCES,
  type Confidence,
  ENGRAM_SOURCES,
  type EngramEntry,
  type EngramKind,
  type EngramSource,
  RULE_KINDS,
  type RuleKind,
} from './engram.ts'
import { EngramError, ErrorCode } from './errors.ts'
import { hasUndecodableBytes } from './lossless-utf8.ts'

/** Which memory file a text is: decides the title and how entries get their kind. */
export type MemoryFileKind = 'rules' | 'lessons' | 'profile' | 'topic'

/** A line the parser could not read (1-based line number). The store adds the file name. */
export interface LineProblem {
  line: number
  text: string
  reason: string
}

export type MemoryLine =
  | { type: 'title'; raw: string }
  | { type: 'heading'; raw: string; title: string }
  | { type: 'blank'; raw: string }
  /** `problem`: a part of the line was ignored (a `ts` that is no date); the line is kept as it is. */
  | { type: 'entry'; raw: string; entry: EngramEntry; problem?: string }
  | { type: 'unreadable'; raw: string; reason: string }

/** A memory file as read: every line in order, kept raw, plus the entries and the problems. */
export interface MemoryFileDocument {
  kind: MemoryFileKind
  lines: MemoryLine[]
  /** Whether the original text ended with a newline (kept on serialization). */
  trailingNewline: boolean
  /**
   * The line break of a file written with bare carriage returns (old Mac editors, some exports):
   * its lines are read one by one and written back with `\r`. Absent: `\n` (a `\r\n` file keeps
   * its `\r` in each raw line).
   */
  lineBreak?: '\r'
}

/** Metadata key that marks an entry whose text is backslash-escaped. Never shown in `meta`. */
export const ESCAPED_TEXT_KEY = 'esc'

const TITLES: Record<Exclude<MemoryFileKind, 'topic'>, string> = {
  rules: 'Rules',
  lessons: 'Lessons',
  profile: 'Profile',
}

const SECTION_TITLES: Record<RuleKind, string> = { always: 'Always', never: 'Never', when: 'When' }

/** Typed metadata keys in the order the seeds print them. */
const TYPED_KEYS = ['topic', 'tool', 'confidence', 'source', 'ts'] as const

const META_KEY = /^[A-Za-z0-9_.-]+$/
const HEADING = /^(#{1,6})[ \t]+(.*?)[ \t#]*$/
const ENTRY = /^[ \t]*[-*+][ \t]+(.*)$/
const WHITESPACE = /\s+/
const COMMENT_TAIL = /^<!--(.*)-->[ \t]*$/

// Characters that cannot appear literally inside an entry line: line breaks of any kind (JSON
// readers and editors disagree on U+2028/U+2029/U+0085) and other control characters.
const NEEDS_ESCAPE_CHAR = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/
/** What no line engram writes holds literally (entries escape it): a line with it is not an entry. Tab and a closing CR are text. */
const CONTROL_CHAR = /[\u0000-\u0008\u000b-\u001f\u007f]/

/** The `# Title` line a file of this kind starts with. */
export function fileTitle(kind: MemoryFileKind, topic?: string): string {
  if (kind === 'topic') return `# ${topic ?? 'Topic'}`
  return `# ${TITLES[kind]}`
}

/** The section heading a rule kind is filed under in rules.md. */
export function sectionHeading(kind: RuleKind): string {
  return `## ${SECTION_TITLES[kind]}`
}

/** A new, empty file: `# Rules` with its three sections, or just the title for the others. */
export function emptyMemoryFile(kind: MemoryFileKind, topic?: string): MemoryFileDocument {
  const lines: MemoryLine[] = [{ type: 'title', raw: fileTitle(kind, topic) }]
  if (kind === 'rules') {
    for (const rule of RULE_KINDS) {
      const title = SECTION_TITLES[rule]
      lines.push({ type: 'blank', raw: '' }, { type: 'heading', raw: `## ${title}`, title })
    }
  }
  return { kind, lines, trailingNewline: true }
}

function textNeedsEscape(text: string): boolean {
  return (
    NEEDS_ESCAPE_CHAR.test(text) ||
    text.includes('<!--') ||
    text.includes('-->') ||
    text !== text.trim()
  )
}

function escapeText(text: string): string {
  let out = ''
  const last = text.length - 1
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string
    const code = ch.charCodeAt(0)
    const edge = (i === 0 || i === last) && /\s/.test(ch)
    if (ch === '\\') out += '\\\\'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t' && !edge) out += '\\t'
    else if (edge || NEEDS_ESCAPE_CHAR.test(ch)) out += `\\u${code.toString(16).padStart(4, '0')}`
    else out += ch
  }
  // After backslashes are doubled, breaking the two markers cannot create a new escape sequence.
  return out.replaceAll('<!--', '<\\!--').replaceAll('-->', '--\\>')
}

function unescapeText(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (whole, seq: string) => {
    if (seq.length === 5) return String.fromCharCode(Number.parseInt(seq.slice(1), 16))
    switch (seq) {
      case 'n':
        return '\n'
      case 'r':
        return '\r'
      case 't':
        return '\t'
      case '\\':
      case '!':
      case '>':
        return seq
      default:
        return whole
    }
  })
}

/**
 * Metadata value as it can be written: no whitespace (it separates pairs) and no `-->` (it would
 * close the comment). Whitespace runs become `_`.
 */
export function sanitizeMetaValue(value: string): string {
  return value
    .trim()
    .replace(/\s+/g, '_')
    .replace(/-{2,}>/g, '->')
}

function orderedMeta(entry: EngramEntry): Array<[string, string]> {
  const typed: Record<(typeof TYPED_KEYS)[number], string | undefined> = {
    topic: entry.topic,
    tool: entry.tool,
    confidence: entry.confidence,
    source: entry.source,
    ts: entry.ts,
  }
  const pairs = new Map<string, string>()
  // Keys already in the file keep their position; typed fields win over stale meta values.
  for (const [key, value] of Object.entries(entry.meta ?? {})) {
    if (key === ESCAPED_TEXT_KEY) continue
    const override = (typed as Record<string, string | undefined>)[key]
    pairs.set(key, override ?? value)
  }
  for (const key of TYPED_KEYS) {
    const value = typed[key]
    if (value !== undefined && !pairs.has(key)) pairs.set(key, value)
  }
  return [...pairs]
}

/**
 * One entry as a line: `- text <!-- key:value … -->` (no comment when there is no metadata).
 * Throws `invalid_argument` for empty text or a metadata key that cannot be written.
 */
export function formatEntryLine(entry: EngramEntry): string {
  if (entry.text.trim().length === 0) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: 'A memory entry needs text; this one is empty.',
      fix: 'Pass the memory as a non-empty line of text.',
    })
  }
  const pairs = orderedMeta(entry)
  const escaped = textNeedsEscape(entry.text)
  if (escaped) pairs.push([ESCAPED_TEXT_KEY, '1'])
  for (const [key] of pairs) {
    if (!META_KEY.test(key)) {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: `Metadata key "${key}" cannot be written to a memory file.`,
        fix: 'Use metadata keys made of letters, digits, "_", "." and "-" only.',
        details: { key },
      })
    }
  }
  const text = escaped ? escapeText(entry.text) : entry.text
  if (pairs.length === 0) return `- ${text}`
  const comment = pairs.map(([key, value]) => `${key}:${sanitizeMetaValue(value)}`).join(' ')
  return `- ${text} <!-- ${comment} -->`
}

type EntryParse = { ok: true; entry: EngramEntry; problem?: string } | { ok: false; reason: string }

const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/

/**
 * The instant an entry's `ts` stands for: a day (`2026-03-01`, the format engram writes) is its
 * midnight UTC, a full ISO-8601 instant is itself. Undefined for anything else (`ts:yesterday`),
 * and for days that do not exist (`2026-02-30`).
 */
export function entryInstant(ts: string): string | undefined {
  if (ISO_DAY.test(ts)) {
    const ms = Date.parse(`${ts}T00:00:00.000Z`)
    return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === ts ? `${ts}T00:00:00.000Z` : undefined
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(ts)) return undefined
  const ms = Date.parse(ts)
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

/** Reads one entry line; `kind` comes from where the line stands in its file. */
export function parseEntryLine(line: string, kind: EngramKind): EntryParse | null {
  const body = ENTRY.exec(stripCr(line))?.[1]
  if (body === undefined) return null
  let text = body
  const meta: Record<string, string> = {}
  let escaped = false
  const comment = trailingComment(body)
  if (comment) {
    text = body.slice(0, comment.index)
    for (const token of comment.inner.split(WHITESPACE)) {
      if (token.length === 0) continue
      const colon = token.indexOf(':')
      if (colon <= 0) return { ok: false, reason: `metadata "${token}" is not key:value` }
      const key = token.slice(0, colon)
      const value = token.slice(colon + 1)
      // The escape flag is about the line's encoding, not the memory: it never reaches `meta`.
      if (key === ESCAPED_TEXT_KEY) escaped = value === '1'
      else meta[key] = value
    }
  }
  text = escaped ? unescapeText(text.trim()) : text.trim()
  if (text.length === 0) return { ok: false, reason: 'entry has no text' }
  const entry: EngramEntry = { text, kind, meta }
  const { confidence, source, ts, topic, tool } = meta
  if (confidence !== undefined && (CONFIDENCES as readonly string[]).includes(confidence)) entry.confidence = confidence as Confidence
  if (source !== undefined && (ENGRAM_SOURCES as readonly string[]).includes(source)) entry.source = source as EngramSource
  if (topic !== undefined) entry.topic = topic
  if (tool !== undefined) entry.tool = tool
  if (ts === undefined) return { ok: true, entry }
  // A hand-written `ts:yesterday` must not stop a reader that sorts or dates entries: the entry is
  // read without it (the value stays in the line and in `meta`) and the line is reported.
  if (entryInstant(ts) === undefined) return { ok: true, entry, problem: `ts:${ts} is not a date (YYYY-MM-DD); the entry is read without it` }
  entry.ts = ts
  return { ok: true, entry }
}

/** The metadata comment ending a line, if any: the last `<!--` whose `-->` closes the line. */
function trailingComment(body: string): { index: number; inner: string } | undefined {
  const open = body.lastIndexOf('<!--')
  if (open < 0) return undefined
  const match = COMMENT_TAIL.exec(body.slice(open))
  const inner = match?.[1]
  if (inner === undefined || inner.includes('-->')) return undefined
  return { index: open, inner }
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}

function ruleKindOfHeading(title: string): RuleKind | undefined {
  const lower = title.trim().toLowerCase()
  return RULE_KINDS.find((kind) => kind === lower)
}

/**
 * Parses a memory file. Never throws: a line that is neither blank, a heading nor an entry is
 * kept as `unreadable` and reported. In rules.md an entry outside `## Always/Never/When` is
 * unreadable too (its kind is unknown).
 */
export function parseMemoryFile(text: string, kind: MemoryFileKind): MemoryFileDocument {
  // A file of bare carriage returns is one line to a `\n` reader: every entry in it would be lost
  // to one unreadable line.
  const lineBreak = !text.includes('\n') && text.includes('\r') ? '\r' : '\n'
  const rawLines = text.split(lineBreak)
  const trailingNewline = text.endsWith(lineBreak)
  if (trailingNewline) rawLines.pop()
  if (text.length === 0) rawLines.length = 0
  const lines: MemoryLine[] = []
  let section: RuleKind | 'other' | undefined
  let sawTitle = false
  for (const [index, raw] of rawLines.entries()) {
    // A byte-order mark starts the first line (Windows editors write one); it stays in the raw line.
    const clean = stripCr(index === 0 && raw.startsWith('\uFEFF') ? raw.slice(1) : raw)
    const notText = hasUndecodableBytes(clean) ? 'holds bytes that are not UTF-8 text' : CONTROL_CHAR.test(clean) ? 'holds control characters' : undefined
    if (notText) {
      lines.push({ type: 'unreadable', raw, reason: notText })
      continue
    }
    if (clean.trim().length === 0) {
      lines.push({ type: 'blank', raw })
      continue
    }
    const heading = clean.startsWith('#') ? HEADING.exec(clean) : null
    if (heading) {
      const level = heading[1]?.length ?? 0
      const title = heading[2] ?? ''
      if (level === 1 && !sawTitle) {
        sawTitle = true
        lines.push({ type: 'title', raw })
      } else {
        lines.push({ type: 'heading', raw, title })
        if (level === 2) section = ruleKindOfHeading(title) ?? 'other'
      }
      continue
    }
    const entryKind: EngramKind | undefined =
      kind === 'rules' ? (section === 'other' ? undefined : section) : kind === 'profile' ? 'profile' : 'lesson'
    const parsed = parseEntryLine(clean, entryKind ?? 'when')
    if (parsed === null) {
      lines.push({ type: 'unreadable', raw, reason: 'not a heading or a "- " entry' })
    } else if (!parsed.ok) {
      lines.push({ type: 'unreadable', raw, reason: parsed.reason })
    } else if (entryKind === undefined) {
      lines.push({ type: 'unreadable', raw, reason: 'rule outside an ## Always, ## Never or ## When section' })
    } else {
      lines.push({ type: 'entry', raw, entry: parsed.entry, ...(parsed.problem ? { problem: parsed.problem } : {}) })
    }
  }
  return { kind, lines, trailingNewline, ...(lineBreak === '\r' ? { lineBreak } : {}) }
}

/** The entries of a parsed file, in file order. */
export function entriesOf(doc: MemoryFileDocument): EngramEntry[] {
  return doc.lines.flatMap((line) => (line.type === 'entry' ? [line.entry] : []))
}

/** The unreadable lines of a parsed file, with 1-based line numbers. */
export function problemsOf(doc: MemoryFileDocument): LineProblem[] {
  const problems: LineProblem[] = []
  doc.lines.forEach((line, index) => {
    if (line.type === 'unreadable') problems.push({ line: index + 1, text: line.raw, reason: line.reason })
    else if (line.type === 'entry' && line.problem) problems.push({ line: index + 1, text: line.raw, reason: line.problem })
  })
  return problems
}

/** The file's text: every line as it was read, except the ones an edit produced. */
export function serializeMemoryFile(doc: MemoryFileDocument): string {
  if (doc.lines.length === 0) return ''
  const lineBreak = doc.lineBreak ?? '\n'
  const text = doc.lines.map((line) => line.raw).join(lineBreak)
  return doc.trailingNewline ? `${text}${lineBreak}` : text
}

function entryLine(entry: EngramEntry): MemoryLine {
  return { type: 'entry', raw: formatEntryLine(entry), entry }
}

/** Index of a region's `##` heading for a rule kind, or -1. */
function sectionIndex(doc: MemoryFileDocument, kind: RuleKind): number {
  return doc.lines.findIndex((line) => line.type === 'heading' && HEADING.exec(stripCr(line.raw))?.[1] === '##' && ruleKindOfHeading(line.title) === kind)
}

/** End (exclusive) of the region that starts after `start`: the next `##`-or-higher heading. */
function regionEnd(doc: MemoryFileDocument, start: number): number {
  for (let i = start; i < doc.lines.length; i++) {
    const line = doc.lines[i] as MemoryLine
    if (line.type === 'title') return i
    if (line.type === 'heading' && (HEADING.exec(stripCr(line.raw))?.[1]?.length ?? 7) <= 2) return i
  }
  return doc.lines.length
}

/** Where a region's entries go: after its last entry, else after its last non-blank line. */
function insertionPoint(doc: MemoryFileDocument, start: number, end: number): number {
  let lastEntry = -1
  let lastContent = start - 1
  for (let i = start; i < end; i++) {
    const line = doc.lines[i] as MemoryLine
    if (line.type === 'entry') lastEntry = i
    if (line.type !== 'blank') lastContent = i
  }
  return (lastEntry >= 0 ? lastEntry : lastContent) + 1
}

function ensureTitle(doc: MemoryFileDocument, topic?: string): MemoryLine[] {
  if (doc.lines.some((line) => line.type === 'title')) return [...doc.lines]
  return [{ type: 'title', raw: fileTitle(doc.kind, topic) }, ...doc.lines]
}

/** Region bounds for an entry's kind: its rules section (created when missing) or the whole file. */
function regionFor(lines: MemoryLine[], doc: MemoryFileDocument, kind: EngramKind): { start: number; end: number } {
  const view: MemoryFileDocument = { ...doc, lines }
  if (doc.kind !== 'rules') {
    const title = lines.findIndex((line) => line.type === 'title')
    return { start: title + 1, end: lines.length }
  }
  const rule = kind as RuleKind
  let heading = sectionIndex(view, rule)
  if (heading < 0) {
    while (lines.length > 0 && lines[lines.length - 1]?.type === 'blank') lines.pop()
    lines.push({ type: 'blank', raw: '' }, { type: 'heading', raw: sectionHeading(rule), title: SECTION_TITLES[rule] })
    heading = lines.length - 1
  }
  return { start: heading + 1, end: regionEnd(view, heading + 1) }
}

function assertKindFits(doc: MemoryFileDocument, entry: EngramEntry): void {
  const fits =
    doc.kind === 'rules'
      ? (RULE_KINDS as readonly string[]).includes(entry.kind)
      : doc.kind === 'profile'
        ? entry.kind === 'profile'
        : entry.kind === 'lesson'
  if (!fits) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `An entry of kind "${entry.kind}" does not belong in a ${doc.kind} file.`,
      fix: 'Rules (always/never/when) go to rules.md, lessons to lessons.md and topics, profile facts to profile.md.',
      details: { kind: entry.kind, file: doc.kind },
    })
  }
}

/**
 * Adds one entry: in rules.md at the end of its section (the section is created when missing),
 * elsewhere after the last entry. Every other line stays as it was.
 */
export function insertEntry(doc: MemoryFileDocument, entry: EngramEntry, topic?: string): MemoryFileDocument {
  assertKindFits(doc, entry)
  const lines = ensureTitle(doc, topic)
  const { start, end } = regionFor(lines, doc, entry.kind)
  const at = insertionPoint({ ...doc, lines }, start, end)
  lines.splice(at, 0, entryLine(entry))
  return { ...doc, lines, trailingNewline: true }
}

/**
 * Replaces every entry with `entries` (compaction, identity rewrite). Headings, blank lines and
 * unreadable lines stay where they were (verbatim); each region's new entries take the place of
 * its first old entry, or follow its last line when it had none.
 */
export function replaceEntries(doc: MemoryFileDocument, entries: EngramEntry[], topic?: string): MemoryFileDocument {
  for (const entry of entries) assertKindFits(doc, entry)
  let lines = ensureTitle(doc, topic)
  // Mark where each region's entries were, then drop them.
  const anchors = new Map<string, number>()
  const kept: MemoryLine[] = []
  let region = 'file'
  for (const line of lines) {
    if (line.type === 'heading' && doc.kind === 'rules' && HEADING.exec(stripCr(line.raw))?.[1] === '##') {
      region = ruleKindOfHeading(line.title) ?? `other:${kept.length}`
    }
    if (line.type === 'entry') {
      if (!anchors.has(region)) anchors.set(region, kept.length)
      continue
    }
    kept.push(line)
  }
  lines = kept
  const groups = new Map<string, EngramEntry[]>()
  const ordered = doc.kind === 'rules' ? RULE_KINDS.flatMap((rule) => entries.filter((entry) => entry.kind === rule)) : entries
  for (const entry of ordered) {
    const key = doc.kind === 'rules' ? entry.kind : 'file'
    groups.set(key, [...(groups.get(key) ?? []), entry])
  }
  // Insert from the bottom of the file up so that earlier anchors stay valid.
  const plan: Array<{ at: number; group: EngramEntry[] }> = []
  for (const [key, group] of groups) {
    const anchor = anchors.get(key)
    if (anchor !== undefined) {
      plan.push({ at: anchor, group })
      continue
    }
    const { start, end } = regionFor(lines, doc, group[0]?.kind ?? 'lesson')
    plan.push({ at: insertionPoint({ ...doc, lines }, start, end), group })
  }
  plan.sort((a, b) => b.at - a.at)
  for (const { at, group } of plan) lines.splice(at, 0, ...group.map(entryLine))
  return { ...doc, lines, trailingNewline: true }
}
