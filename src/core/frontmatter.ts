/**
 * YAML frontmatter codec: `---\n<yaml>\n---\n<body>`. Pure, no I/O.
 *
 * Uses the `yaml` package's YAML 1.2 core schema, so `2026-02-18T03:00:00+09:00` stays a string
 * (gray-matter and YAML 1.1 readers turn it into a Date, which then serializes differently).
 * A file whose frontmatter does not parse is never thrown away: the whole text becomes the body
 * and the problem is reported.
 *
 * The flat frontmatter engram writes itself (`key: scalar`, lists of scalars) is read by a small
 * exact reader that gives what `yaml` gives; anything else goes to `yaml`, which is loaded only
 * then (72 modules, a third of what `engram status` loaded; decision 0041).
 */
import { createRequire } from 'node:module'
import type { Frontmatter } from './memory-doc.ts'

type Yaml = typeof import('yaml')
let yamlModule: Yaml | undefined
/** The `yaml` package, loaded on first need (synchronously: parsing stays a pure function). */
function yaml(): Yaml {
  yamlModule ??= createRequire(import.meta.url)('yaml') as Yaml
  return yamlModule
}

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
  const simple = readSimpleFrontmatter(yamlText)
  if (simple !== undefined) return { frontmatter: simple, body, hasFrontmatter: true }
  const document = yaml().parseDocument(yamlText, { schema: 'core', prettyErrors: false })
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

const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$/
const ITEM_LINE = /^ {2}- (.*)$/
/** Keys the core schema reads as something else than their text, or that an object cannot hold as its own. */
const SPECIAL_KEY = /^(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|__proto__)$/
/** Characters the reader leaves to `yaml`: controls, tabs, byte-order marks, non-characters, lone surrogates, line and paragraph separators. */
const UNUSUAL_CHARACTER = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]|\p{Cs}/u
/** A plain scalar the reader takes: no indicator first, no comment, no `: `, no flow brackets, no whitespace but single spaces inside. */
const SAFE_PLAIN = /^[^\s\-?:,[\]{}#&*!|>'"%@`.+~][^\s[\]{}]*(?: [^\s[\]{}]+)*$/u
const DOUBLE_QUOTED = /^"([^"\\]*)"$/
const SINGLE_QUOTED = /^'((?:[^']|'')*)'$/
// The core schema's resolution of plain scalars (yaml 2, schema/core): what is not a string.
const CORE_NULL = /^(?:~|[Nn]ull|NULL)?$/
const CORE_TRUE = /^(?:[Tt]rue|TRUE)$/
const CORE_FALSE = /^(?:[Ff]alse|FALSE)$/
const CORE_NUMBER = /^(?:0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$/
/** The numbers the reader takes (others go to `yaml`): a decimal integer without a leading zero, safely below 2^53, or a decimal fraction. */
const PLAIN_NUMBER = /^(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?$/

/**
 * The frontmatter engram writes itself, read without `yaml`: one `key: value` per line, a value
 * being a plain, single- or double-quoted scalar (no escapes), `[]`, `{}`, or nothing followed by
 * `  - item` lines. `undefined` for anything else, which `yaml` then reads; what this returns is
 * what `yaml` (core schema) gives for the same text (frontmatter.test.ts compares them).
 */
export function readSimpleFrontmatter(yamlText: string): Frontmatter | undefined {
  if (UNUSUAL_CHARACTER.test(yamlText)) return undefined
  const lines = yamlText.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  const frontmatter: Frontmatter = {}
  for (let i = 0; i < lines.length; i++) {
    const match = KEY_LINE.exec(lines[i] as string)
    if (!match) return undefined
    const key = match[1] as string
    if (SPECIAL_KEY.test(key) || Object.hasOwn(frontmatter, key)) return undefined
    if (match[2] !== undefined) {
      const value = simpleValue(match[2])
      if (value === undefined) return undefined
      frontmatter[key] = value
      continue
    }
    const items: unknown[] = []
    for (let item = ITEM_LINE.exec(lines[i + 1] ?? ''); item; item = ITEM_LINE.exec(lines[i + 1] ?? '')) {
      const value = simpleValue(item[1] as string)
      if (value === undefined) return undefined
      items.push(value)
      i++
    }
    frontmatter[key] = items.length > 0 ? items : null
  }
  return frontmatter
}

/** One value on a line of `readSimpleFrontmatter`; `undefined` when `yaml` must read it. */
function simpleValue(text: string): unknown {
  if (text === '[]') return []
  if (text === '{}') return {}
  const double = DOUBLE_QUOTED.exec(text)
  if (double) return double[1]
  const single = SINGLE_QUOTED.exec(text)
  if (single) return (single[1] as string).replaceAll("''", "'")
  if (!SAFE_PLAIN.test(text)) return undefined
  if (text.includes(': ') || text.includes(' #') || text.endsWith(':')) return undefined
  if (CORE_NULL.test(text)) return null
  if (CORE_TRUE.test(text)) return true
  if (CORE_FALSE.test(text)) return false
  if (CORE_NUMBER.test(text)) return PLAIN_NUMBER.test(text) ? Number(text) : undefined
  return text
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
  const yamlText = keys.length === 0 ? '' : yaml().stringify(frontmatter, { lineWidth: 0 })
  return `---\n${yamlText}---\n${body}`
}
