/**
 * Text as it may enter engram from outside: HTTP bodies, paths and query strings, MCP arguments
 * and resource URIs, tool calls. JSON and URLs can carry what no store keeps as it was sent:
 *
 * - a lone UTF-16 surrogate (half of a character) becomes U+FFFD on its way into UTF-8 — a file
 *   named `\uFFFD.md`, a session id that silently changed into another;
 * - a NUL is refused by PostgreSQL in any text column (SQLite stores it), so one request answered
 *   200 on one backend and 500 on the other.
 *
 * Each boundary checks what arrives once, with these functions, and refuses it as the caller's
 * mistake, naming the field and the character (decision 0055). Names — ids, paths — also refuse the
 * other control characters, which no id or file name needs.
 */

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const NUL = /\u0000/
/** C0 controls and DEL (NUL is reported as itself). */
const CONTROL = /[\u0001-\u001f\u007f]/

/** Deeper than this, a request is not a memory request; the walk stops and says so. */
const MAX_DEPTH = 64

function codePoint(char: string): string {
  return `U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
}

/**
 * What makes `text` unfit to store as sent: a NUL or a lone surrogate, with its position (a
 * JavaScript string index); undefined when it is well-formed text.
 */
export function textProblem(text: string): string | undefined {
  const nul = NUL.exec(text)
  if (nul) return `a NUL character (U+0000) at index ${nul.index}`
  const lone = LONE_SURROGATE.exec(text)
  if (lone) return `a lone UTF-16 surrogate (${codePoint(lone[0])}, half of a character) at index ${lone.index}`
  return undefined
}

/** `textProblem`, and for names (ids, paths) also a control character such as a line break or tab. */
export function nameProblem(text: string): string | undefined {
  const problem = textProblem(text)
  if (problem) return problem
  const control = CONTROL.exec(text)
  if (control) return `the control character ${codePoint(control[0])} at index ${control.index}`
  return undefined
}

/** The first string in a JSON value (a key or a value) that is not well-formed text. */
export interface MalformedText {
  /** Where: `session`, `entries.0.text`, `(key of) meta`; `''` for the value itself. */
  path: string
  problem: string
}

/** Walks a parsed JSON value (keys included) and returns the first string `textProblem` refuses. */
export function findMalformedText(value: unknown): MalformedText | undefined {
  const walk = (item: unknown, path: string[], depth: number): MalformedText | undefined => {
    if (typeof item === 'string') {
      const problem = textProblem(item)
      return problem ? { path: path.join('.'), problem } : undefined
    }
    if (typeof item !== 'object' || item === null) return undefined
    if (depth >= MAX_DEPTH) return { path: path.join('.'), problem: `nesting deeper than ${MAX_DEPTH} levels` }
    if (Array.isArray(item)) {
      for (const [i, element] of item.entries()) {
        const found = walk(element, [...path, String(i)], depth + 1)
        if (found) return found
      }
      return undefined
    }
    for (const [key, element] of Object.entries(item)) {
      const keyProblem = textProblem(key)
      if (keyProblem) return { path: [...path, `(key ${JSON.stringify(key.slice(0, 40))})`].join('.'), problem: keyProblem }
      const found = walk(element, [...path, key], depth + 1)
      if (found) return found
    }
    return undefined
  }
  return walk(value, [], 0)
}

/** The one fix every refusal of these gives. */
export const WELL_FORMED_FIX = 'send text as whole Unicode characters (no lone surrogates) without NUL characters; ids and paths also without control characters such as line breaks or tabs'
