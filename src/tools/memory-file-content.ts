/**
 * What `write_memory_file` may write (decision 0025): the agent must not be able to write a file
 * that engram itself then skips. Before anything touches the disk, the content is checked as a
 * reader will read it — text (no control characters: the tool writes them as spaces first, see
 * `controlsAsSpaces`; no lone surrogates), frontmatter that parses
 * (an alias bomb or a syntax error is refused, not written and reported later), and a file that
 * stays within `memory.maxFileBytes`.
 */
import { stat } from 'node:fs/promises'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { parseFrontmatter } from '../core/frontmatter.ts'
import { wellFormed } from '../core/lossless-utf8.ts'

/** C0 controls other than tab, line feed and carriage return, and DEL: no memory file holds them. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/

/**
 * `text` with each control character that is not tab, line feed or carriage return (NUL aside:
 * the tool refuses it) written as a space, and how many there were.
 */
export function controlsAsSpaces(text: string): { text: string; replaced: number } {
  let replaced = 0
  const cleaned = text.replace(/[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, () => {
    replaced++
    return ' '
  })
  return { text: cleaned, replaced }
}

function refused(path: string, why: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `Nothing was written to ${path}: ${why}.`, fix, details: { path } })
}

/**
 * Throws `invalid_argument` (with the fix) when `content` would make a memory file engram cannot
 * read. `existing` is the real path of the file being appended to (or its size in bytes), if there is one; `frontmatter`
 * is whether the folder's files start with YAML frontmatter (knowledge, procedures, state).
 */
export async function assertReadableMemoryWrite(options: {
  path: string
  content: string
  mode: 'overwrite' | 'append'
  frontmatter: boolean
  existing: string | { bytes: number } | null
  maxFileBytes: number
}): Promise<void> {
  const { path, content } = options
  const control = CONTROL.exec(content)
  if (control) {
    const code = `U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
    throw refused(path, `the content holds the control character ${code}; memory files are text`, 'send plain markdown text, without control characters')
  }
  if (wellFormed(content) !== content) throw refused(path, 'the content holds a lone UTF-16 surrogate (half of a character)', 'send the text as whole characters')
  if (options.frontmatter) {
    const problem = parseFrontmatter(content).problem
    if (problem) throw refused(path, `its frontmatter ${problem.reason.replace(/^frontmatter /, '')} (line ${problem.line})`, 'write the frontmatter as plain "key: value" YAML between two --- lines, without anchors or aliases, or leave it out')
  }
  const adding = Buffer.byteLength(content, 'utf8')
  const { existing } = options
  const before = options.mode !== 'append' || existing === null ? 0 : typeof existing === 'string' ? (await stat(existing)).size : existing.bytes
  if (before + adding > options.maxFileBytes) {
    throw refused(
      path,
      `the file would be ${before + adding} bytes, more than memory.maxFileBytes (${options.maxFileBytes}), and engram skips files that large`,
      'keep the note shorter or split it over several files; a person can raise the limit with ENGRAM_MEMORY_MAX_FILE_BYTES',
    )
  }
}
