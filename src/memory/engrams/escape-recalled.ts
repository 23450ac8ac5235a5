/**
 * Recalled memories are data, not instructions (DESIGN principle 5). Every piece of remembered
 * text that reaches a model — in the system prompt, a tool description or a tool result — goes
 * through this one rule first, so that it cannot close engram's wrapper, open a section, a role
 * or a code block of its own, or pass for engram's framing (docs/decisions/0028-one-escaping-rule.md):
 *
 * - it stays on the line it was put on: every character a reader may take as a line break (LF,
 *   CR, vertical tab, form feed, the file/group/record separators, NEL, U+2028, U+2029) and every
 *   other control becomes a space;
 * - no tag opens anywhere: the `<` of `</memory>`, `<system>`, `<!--`, `<|im_start|>` (and its
 *   full-width forms `＜`, `﹤`) is written `&lt;`;
 * - no heading and no code fence where one could start: a heading or a fence is structure only at
 *   the start of a line, behind whitespace, invisible characters (zero-width joiners, BOM, bidi
 *   controls) and list or quote markers (`- `, `1. `, `> `, `>`). So they are escaped there and only
 *   there — at the start of the text (of each line, for `escapeRecalledLines`), looking through
 *   the text's own markers as a reader does, compatibility forms folded (`＃`, `－`, `＞`, `⒈`,
 *   `｀`): a run of `#` (or `＃`, `﹟`) gets one backslash before it (`\##`), a run of three or more
 *   backticks or tildes too (`` \``` ``). Anywhere else on a line they start nothing and stay as
 *   written, so recalled code and prose are verbatim: `x = 1  # comment`, `use ```js fences`, `C#`, `#1`, `a ## b`;
 * - no thematic break or setext underline: text that is nothing but `---`, `***`, `___`, `===`
 *   (behind list or quote markers of its own) starts with a backslash.
 *
 * The caller puts engram's own visible prefix before the text on its line (`- `, `[date] `,
 * `Speaker: `, a gutter): a role label such as `SYSTEM:` is structure only at the very start of a
 * line, and remembered text never starts one. A prefix that is itself a list or quote marker
 * (`- `, `> `, `1. `) is looked through like the text's own, which the escaping at the start of the
 * text covers; text after any other prefix is mid-line, where no heading or fence can start.
 */

// Anything a reader or a model could take as a line break — CR/LF, vertical tab, form feed, the
// separators Python's splitlines honours (U+001C–U+001E), NEL, U+2028 and U+2029 — and the other
// C0/C1 controls. Tabs are controls too: on one line they are only space.
const LINE_BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/
const CONTROLS_BUT_TAB = /[\u0000-\u0008\u000e-\u001b\u001f\u007f-\u0084\u0086-\u009f]+/g
// The opening `<` (or a compatibility form that reads as one) of a tag, closing tag, comment,
// processing instruction or chat-template token: `<` followed, behind any invisible characters,
// by a letter, `/`, `!`, `?` or `|`. "a < b", "I <3 it" and "x <= y" are left alone.
const TAG_OPEN = /[<\uFF1C\uFE64](?=\p{Cf}*[\p{L}/!?|\uFF0F\uFF01\uFF1F\uFF5C])/gu
// Characters a thematic break or setext underline is made of (and their full-width forms).
const BREAK_CHARS = new Set(['-', '*', '_', '=', '\uFF0D', '\uFF0A', '\uFF3F', '\uFF1D'])
const SPACE_OR_INVISIBLE = /[\s\p{Cf}]/u
const LIST_OR_QUOTE_MARKER = /(?:[-*+>]|\d{1,9}[.)])(?=[\s\p{Cf}])/yu

// Where a line's first block starts, read on its compatibility-folded start as the forged-line
// definition reads it (test-support/forged-lines.ts): whitespace and invisible characters, then
// any number of list markers (each followed by a space) and quote markers (`>`, a space or not).
const LEAD = /[\s\p{Cf}]*/uy
const CONTAINER = /(?:[-*+]|\d{1,9}[.)])[\s\p{Cf}]+|>[\s\p{Cf}]*/uy
// What a character may fold to and still be part of those markers.
const MAY_LEAD = /^[\s\p{Cf}\d.)*+>-]*$/u
// At a block's start, a `#` opens a heading and three backticks or tildes a fence (folded: `＃`,
// `﹟`, `｀`, `～` and the like read as these).
const OPENS_HEADING = /^#/
const OPENS_FENCE = /^(?:`{3}|~{3})/

function skip(pattern: RegExp, text: string, from: number): number {
  pattern.lastIndex = from
  return pattern.test(text) ? pattern.lastIndex : from
}

/** `line` with a heading or a fence at the start of its first block escaped (see the file comment). */
function defuseStart(line: string): string {
  // Fold one character at a time, remembering where each folded character came from, as far as
  // the markers reach and three characters beyond — enough to see a fence, and no work in
  // proportion to a long line.
  let folded = ''
  const origin: number[] = []
  let beyond = 0
  for (let index = 0; index < line.length && beyond < 3; ) {
    const char = String.fromCodePoint(line.codePointAt(index) as number)
    const form = char < '\u0080' ? char : char.normalize('NFKC')
    for (let k = 0; k < form.length; k++) origin.push(index)
    folded += form
    if (beyond > 0 || !MAY_LEAD.test(form)) beyond++
    index += char.length
  }
  let at = skip(LEAD, folded, 0)
  for (let next = skip(CONTAINER, folded, at); next > at; next = skip(CONTAINER, folded, at)) at = skip(LEAD, folded, next)
  const start = origin[at]
  // Nothing after the markers, or a block starting inside a form that folds to several characters
  // (`⒈` is `1.`): no `#`, backtick or tilde is one of those.
  if (start === undefined || (at > 0 && origin[at - 1] === start)) return line
  const block = folded.slice(at)
  // One backslash before the run is enough: a block that starts with `\` opens no heading and no
  // fence in any reader, and the `#`s or backticks after it are text. One per `#` (`\#\#`) doubled
  // what a recalled heading cost and read as noise.
  return OPENS_HEADING.test(block) || OPENS_FENCE.test(block) ? `${line.slice(0, start)}\\${line.slice(start)}` : line
}

/**
 * Where the thematic break or setext underline starts when `line` is nothing but one behind list
 * or quote markers of its own (`---`, `- * * *`, `> ===`), else -1; of the possible starts, the
 * latest (the markers taken as far as they go). Linear in the line: which positions the markers
 * can reach is found in one pass forward, where the break can start in one pass backward (a
 * regular expression with both in it backtracks quadratically on `- - - … x`).
 */
function breakStart(line: string): number {
  const space = (at: number): boolean => SPACE_OR_INVISIBLE.test(line.charAt(at))
  // Backward: the earliest position from which the rest is one break character and spaces only.
  let mark: string | undefined
  let from = line.length
  for (let at = line.length - 1; at >= 0; at--) {
    const char = line.charAt(at)
    if (space(at)) continue
    if (!BREAK_CHARS.has(char) || (mark !== undefined && char !== mark)) break
    mark = char
    from = at
  }
  if (mark === undefined) return -1
  // Forward: the positions a run of the text's own markers (each before a space) and spaces ends at.
  const reached = new Uint8Array(line.length + 1)
  reached[0] = 1
  let latest = -1
  for (let at = 0; at < line.length; at++) {
    if (!reached[at]) continue
    if (at >= from && line.charAt(at) === mark) latest = at
    if (space(at)) reached[at + 1] = 1
    LIST_OR_QUOTE_MARKER.lastIndex = at
    if (LIST_OR_QUOTE_MARKER.test(line)) reached[LIST_OR_QUOTE_MARKER.lastIndex] = 1
  }
  return latest
}

/** The per-line part of the rule: tags anywhere; a heading, a fence or a break where a block starts. */
function defuse(line: string): string {
  const defused = defuseStart(line.replace(TAG_OPEN, '&lt;'))
  const start = breakStart(defused)
  return start < 0 ? defused : `${defused.slice(0, start)}\\${defused.slice(start)}`
}

/**
 * One line of remembered text, safe to place after engram's own prefix on a line of a prompt, a
 * tool description or a tool result: see the file comment. Runs of whitespace fold to one space.
 */
export function escapeRecalled(text: string): string {
  return defuse(text.replace(LINE_BREAKS_AND_CONTROLS, ' ').replace(/\s+/g, ' ').trim())
}

/**
 * Remembered text of several lines (a message, a summary, an episode), by the same rule line by
 * line, each line behind `gutter` — engram's visible prefix, such as `  | ` — and with its own
 * indentation kept, so code keeps its shape. Blank lines are kept (as the bare gutter).
 */
export function escapeRecalledLines(text: string, gutter: string): string[] {
  return text
    .trim()
    .split(LINE_BREAK)
    .map((line) => `${gutter}${defuse(line.replace(CONTROLS_BUT_TAB, ' ').trimEnd())}`.trimEnd())
}
