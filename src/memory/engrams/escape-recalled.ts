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
 * - no heading: a run of `#` (or `＃`, `﹟`) is escaped `\#` where a heading would start (the start
 *   of the text, behind list or quote markers of its own) and wherever it stands as a word of its
 *   own (`a ## b`, a heading line flattened), also behind invisible characters (zero-width
 *   joiners, BOM, bidi controls); `C#`, `#1` and `#hashtags` in a sentence stay as they are;
 * - no code fence: a run of three backticks or tildes is escaped `` \``` ``;
 * - no thematic break or setext underline: text that is nothing but `---`, `***`, `___`, `===`
 *   (behind list or quote markers of its own) starts with a backslash.
 *
 * The caller puts engram's own visible prefix before the text on its line (`- `, `[date] `,
 * `Speaker: `, a gutter): a role label such as `SYSTEM:` is structure only at the very start of a
 * line, and remembered text never starts one.
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
// List and quote markers the text opens with: markdown looks through them (`- ## x` is a heading).
const OWN_CONTAINERS = String.raw`(?:[\s\p{Cf}]*(?:[-*+>]|\d{1,9}[.)])(?=[\s\p{Cf}]))*[\s\p{Cf}]*`
// A `#` run where a heading would start — the start of the text, behind its own list or quote
// markers — and a `#` run standing as a word of its own anywhere (`a ## b`, what a flattened
// heading line becomes). `C#`, `#1` and `#hashtag` inside a sentence are left as they are.
const LEADING_HASHES = new RegExp(`^(${OWN_CONTAINERS})([#\uFF03\uFE5F]+)`, 'u')
const HEADING_HASHES = /(^|[\s\p{Cf}])([#\uFF03\uFE5F]+)(?=[\s\p{Cf}]|$)/gu
// Three or more backticks or tildes open a fenced code block.
const FENCE = /[`\uFF40]{3,}|[~\uFF5E]{3,}/g
// Text that is only a thematic break or setext underline, behind list or quote markers of its own.
const ONLY_A_BREAK = new RegExp(`^(${OWN_CONTAINERS})([-*_=\\uFF0D\\uFF0A\\uFF3F\\uFF1D])(?:[\\s\\p{Cf}]*\\2)*[\\s\\p{Cf}]*$`, 'u')

function escapeEach(hashes: string): string {
  return hashes.replace(/./gu, '\\$&')
}

/** The per-line part of the rule: tags, headings, fences, a line that is only a break. */
function defuse(line: string): string {
  const defused = line
    .replace(TAG_OPEN, '&lt;')
    .replace(LEADING_HASHES, (_whole, lead: string, hashes: string) => `${lead}${escapeEach(hashes)}`)
    .replace(HEADING_HASHES, (_whole, before: string, hashes: string) => `${before}${escapeEach(hashes)}`)
    .replace(FENCE, (run) => `\\${run}`)
  return defused.replace(ONLY_A_BREAK, (whole, lead: string) => `${lead}\\${whole.slice(lead.length)}`)
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
