/**
 * YAML frontmatter codec: `---\n<yaml>\n---\n<body>`. Pure, no I/O.
 *
 * Uses the `yaml` package's YAML 1.2 core schema, so `2026-02-18T03:00:00+09:00` stays a string
 * (gray-matter and YAML 1.1 readers turn it into a Date, which then serializes differently).
 * A file whose frontmatter does not parse is never thrown away: the whole text becomes the body
 * and the problem is reported.
 */
import { parseDocument, stringify } from 'yaml'
import type { Frontmatter } from './memory-doc.ts'

export interface FrontmatterProblem {
  /** 1-based line in the file. */
  line: number
  reason: string
}

export interface ParsedFrontmatter {
  frontmatter: Frontmatter
  body: string
  /** Whether the text started with a frontmatter block that parsed. */
  hasFrontmatter: boolean
  /** Set when the text starts like frontmatter but cannot be read; `body` is then the whole text. */
  problem?: FrontmatterProblem
}

const OPENING = /^\uFEFF?---[ \t]*\r?\n/
const CLOSING = /^---[ \t]*\r?$/

/**
 * Aliases a frontmatter may expand. The `yaml` default (100) throws on more; an "alias bomb" (a
 * few nested anchors that expand to millions of nodes) must be a reported problem, not an
 * exception out of every reader of the file.
 */
const MAX_ALIAS_COUNT = 100

/**
 * Splits and parses frontmatter. Never throws: YAML that cannot be read (a syntax error, an alias
 * bomb, nesting too deep for the parser) is a `problem`, and the whole text is the body. Text
 * without frontmatter has `{}`. A file of bare carriage returns is read as lines (its body comes
 * back with `\n`).
 */
export function parseFrontmatter(text: string): ParsedFrontmatter {
  if (!text.includes('\n') && text.includes('\r')) text = text.replaceAll('\r', '\n')
  try {
    return splitAndParse(text)
  } catch (error) {
    return { frontmatter: {}, body: text, hasFrontmatter: false, problem: { line: 1, reason: `frontmatter cannot be read: ${firstLine(error instanceof Error ? error.message : String(error))}` } }
  }
}

function splitAndParse(text: string): ParsedFrontmatter {
  const opening = OPENING.exec(text)
  if (!opening) return { frontmatter: {}, body: text, hasFrontmatter: false }
  const rest = text.slice(opening[0].length)
  let offset = 0
  let closingAt = -1
  let closingLength = 0
  while (offset <= rest.length) {
    const newline = rest.indexOf('\n', offset)
    const lineEnd = newline < 0 ? rest.length : newline
    if (CLOSING.test(rest.slice(offset, lineEnd))) {
      closingAt = offset
      closingLength = lineEnd - offset + (newline < 0 ? 0 : 1)
      break
    }
    if (newline < 0) break
    offset = newline + 1
  }
  if (closingAt < 0) {
    return { frontmatter: {}, body: text, hasFrontmatter: false, problem: { line: 1, reason: 'frontmatter starts with --- but is never closed' } }
  }
  const yamlText = rest.slice(0, closingAt)
  const body = rest.slice(closingAt + closingLength)
  const document = parseDocument(yamlText, { schema: 'core', prettyErrors: false })
  const error = document.errors[0]
  if (error) {
    const line = (error.linePos?.[0]?.line ?? 1) + 1
    return { frontmatter: {}, body: text, hasFrontmatter: false, problem: { line, reason: `frontmatter is not valid YAML: ${firstLine(error.message)}` } }
  }
  const data: unknown = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  if (data === null || data === undefined) return { frontmatter: {}, body, hasFrontmatter: true }
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { frontmatter: {}, body: text, hasFrontmatter: false, problem: { line: 2, reason: 'frontmatter is not a key: value mapping' } }
  }
  return { frontmatter: data as Frontmatter, body, hasFrontmatter: true }
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message
}

/**
 * The file text for `frontmatter` and `body`. An empty frontmatter writes no block, unless the
 * body itself starts with `---` (which would otherwise be read back as frontmatter).
 * `parseFrontmatter(serializeFrontmatter(f, b))` gives back `f` and `b`.
 */
export function serializeFrontmatter(frontmatter: Frontmatter, body: string): string {
  const keys = Object.keys(frontmatter).filter((key) => frontmatter[key] !== undefined)
  if (keys.length === 0 && !OPENING.test(body)) return body
  const yamlText = keys.length === 0 ? '' : stringify(frontmatter, { lineWidth: 0 })
  return `---\n${yamlText}---\n${body}`
}
