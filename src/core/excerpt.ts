/**
 * The beginning and end of a text too long to use whole (decision 0026): what recall, a summary or
 * a model call takes from a pasted document or log, so that their work stays bounded however long
 * the message. The message itself is always stored whole; this is only what one step reads of it.
 */

/**
 * `text` when it has at most `maxChars` characters; else its first and last halves of `maxChars`
 * (each cut at a space when one is near), joined by `marker(omitted)`.
 */
export function headAndTail(text: string, maxChars: number, marker: (omitted: number) => string): string {
  if (text.length <= maxChars) return text
  const half = Math.max(1, Math.floor(maxChars / 2))
  let head = text.slice(0, half)
  const space = head.lastIndexOf(' ')
  if (space > half * 0.8) head = head.slice(0, space)
  let tail = text.slice(text.length - half)
  const start = tail.indexOf(' ')
  if (start >= 0 && start < half * 0.2) tail = tail.slice(start + 1)
  return `${head}${marker(text.length - head.length - tail.length)}${tail}`
}
