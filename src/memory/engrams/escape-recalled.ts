/**
 * Recalled memories are data, not instructions (DESIGN principle 5). Before a remembered line is
 * put into a prompt it is flattened and defused so that it cannot close the memory wrapper, start
 * a section of its own, or pass for another one: a lesson that says "## Your memory — Rules" or
 * "</memory>" arrives as inert text inside its bullet.
 */

// Anything a reader or a model could take as a line break: CR/LF, NEL, the Unicode line and
// paragraph separators, and the other C0/C1 controls.
const LINE_BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g

/**
 * One line of recalled text, safe to place inside a bullet of a memory section: no line breaks,
 * heading markers (`#`) at the start of a word escaped as `\#`, the opening `<` of anything
 * tag-like (`</memory>`, `<system>`, `<!--`) written as `&lt;`, and code fences broken up.
 */
export function escapeRecalled(text: string): string {
  return text
    .replace(LINE_BREAKS_AND_CONTROLS, ' ')
    .replace(/(^|\s)(#+)/g, (_whole, before: string, hashes: string) => `${before}${hashes.replace(/#/g, '\\#')}`)
    .replace(/<(?=[A-Za-z/!?])/g, '&lt;')
    .replace(/```/g, '`\u200b``')
    .replace(/\s+/g, ' ')
    .trim()
}
