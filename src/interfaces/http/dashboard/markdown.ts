/**
 * Memory text as a person reads it (issue 30, decision 0072): the small part of markdown memories
 * are written in — headings, paragraphs, lists, quotes, code, emphasis and web links — rendered
 * to HTML that can hold nothing else. Every character of the text is escaped before any tag is
 * written, so stored markup (`<script>`, `<img onerror>`, HTML comments) shows as the characters
 * it is and never becomes an element; a link is written only for an `http:`/`https:` address; no
 * attribute but `href`, `class` and `rel` is ever produced. The dashboard's CSP stays the second
 * wall. Headings inside a memory become bold lines, not `<h1>`s: a memory's "# Title" must not
 * break the page's own outline, which a screen reader walks by its headings.
 */
import { raw } from 'hono/html'
import type { HtmlEscapedString } from 'hono/utils/html'

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** `text` with every character that means something in HTML written as its entity. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char)
}

/**
 * The inline marks, first match wins: code spans (their inside is literal), bold, web links,
 * italics with `*` or `_` (not inside a word, so snake_case and 2*3*4 stay as they are).
 */
const INLINE = /`([^`\n]+)`|\*\*([^*\n]+?)\*\*|\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)|(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])|(?<![\w_])_([^_\s][^_\n]*?)_(?![\w_])/

function inline(text: string): string {
  let out = ''
  let rest = text
  for (let match = INLINE.exec(rest); match !== null; match = INLINE.exec(rest)) {
    out += escapeHtml(rest.slice(0, match.index))
    const [whole, code, bold, label, url, star, underscore] = match
    if (code !== undefined) out += `<code>${escapeHtml(code)}</code>`
    else if (bold !== undefined) out += `<strong>${inline(bold)}</strong>`
    else if (label !== undefined && url !== undefined) out += `<a href="${escapeHtml(url)}" rel="nofollow noopener noreferrer">${inline(label)}</a>`
    else out += `<em>${inline(star ?? underscore ?? '')}</em>`
    rest = rest.slice(match.index + whole.length)
  }
  return out + escapeHtml(rest)
}

const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/
const BULLET = /^\s*[-*+]\s+(.*)$/
const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/
const QUOTE = /^\s*>\s?(.*)$/
const FENCE = /^\s*(```|~~~)/

/** The blocks of `text` as HTML: each line read once, in order. */
function blocks(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n')
  const out: string[] = []
  let paragraph: string[] = []
  let list: { tag: 'ul' | 'ol'; items: string[] } | undefined
  const flush = (): void => {
    if (paragraph.length > 0) out.push(`<p>${paragraph.map(inline).join('<br>')}</p>`)
    paragraph = []
    if (list) out.push(`<${list.tag}>${list.items.map((item) => `<li>${inline(item)}</li>`).join('')}</${list.tag}>`)
    list = undefined
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    const fence = FENCE.exec(line)
    if (fence) {
      flush()
      const code: string[] = []
      for (i++; i < lines.length && !(lines[i] ?? '').trimStart().startsWith(fence[1] ?? '```'); i++) code.push(lines[i] ?? '')
      out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`)
      continue
    }
    if (line.trim() === '') {
      flush()
      continue
    }
    const heading = HEADING.exec(line)
    if (heading) {
      flush()
      out.push(`<p class="md-heading"><strong>${inline(heading[2] ?? '')}</strong></p>`)
      continue
    }
    const bullet = BULLET.exec(line)
    const numbered = bullet ? null : NUMBERED.exec(line)
    if (bullet || numbered) {
      const tag = bullet ? 'ul' : 'ol'
      if (paragraph.length > 0 || (list && list.tag !== tag)) flush()
      list ??= { tag, items: [] }
      list.items.push((bullet ?? numbered)?.[1] ?? '')
      continue
    }
    const quote = QUOTE.exec(line)
    if (quote) {
      flush()
      const quoted = [quote[1] ?? '']
      for (; i + 1 < lines.length && QUOTE.test(lines[i + 1] ?? ''); i++) quoted.push(QUOTE.exec(lines[i + 1] ?? '')?.[1] ?? '')
      out.push(`<blockquote>${blocks(quoted.join('\n'))}</blockquote>`)
      continue
    }
    // A line under a list item continues it; anything else is a paragraph's line.
    if (list && /^\s+\S/.test(line)) {
      list.items[list.items.length - 1] += ` ${line.trim()}`
      continue
    }
    if (list) flush()
    paragraph.push(line.trim())
  }
  flush()
  return out.join('')
}

/** `text` (untrusted memory text) rendered as safe HTML, in a `<div class="md">`. */
export function markdown(text: string): HtmlEscapedString {
  return raw(`<div class="md">${blocks(text)}</div>`)
}

/**
 * `text` as plain words for a place where markup cannot go (a chart's label, a `title`): heading
 * marks, emphasis, code ticks and link syntax taken away, the words and addresses kept.
 */
export function markdownAsText(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(HEADING, '$2').replace(BULLET, '• $1'))
    .join('\n')
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, '$1 ($2)')
    .replace(/\*\*([^*\n]+?)\*\*/g, '$1')
    .replace(/`([^`\n]+)`/g, '$1')
    .replace(/(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])/g, '$1')
    .replace(/(?<![\w_])_([^_\s][^_\n]*?)_(?![\w_])/g, '$1')
}

/** `text` cut to about `max` characters at a line or word end, its lines kept (for markdown shown in a table). */
export function cutKeepingLines(text: string, max: number): string {
  const trimmed = text.trim()
  if (trimmed.length <= max) return trimmed
  const cut = trimmed.slice(0, max)
  const end = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf(' '))
  return `${(end > max / 2 ? cut.slice(0, end) : cut).trimEnd()}…`
}
