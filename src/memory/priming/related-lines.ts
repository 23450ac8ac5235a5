/**
 * Recalled memories as what they say (decision 0075). A memory reaches the prompt on one line, so
 * markdown's structure — a heading's `#` run, `**emphasis**`, a list's `- ` — is gone as structure
 * and left only as tokens; an episode's extractive lines carry the activity log's markers
 * (`- [09:02] MSG< ada:`), a note on where its compressed text went and a list of the tools used.
 * None of it is evidence. Priming shows the words instead: a heading as its words, a logged message
 * as `ada: …` like a conversation excerpt, and for an episode only the sentences that share a
 * content word with the message (all of them when none does: it was recalled by meaning), without
 * the ones already shown as excerpts. Code keeps its marks: inside a fence nothing is touched.
 */
import type { StoredUnit } from '../../storage/contracts.ts'
import { truncateToTokens } from '../../core/tokens.ts'
import { COMPRESSION_NOTE } from '../consolidation/episode-compression.ts'
import { escapeRecalled } from '../engrams/escape-recalled.ts'
import { contentWords } from '../procedures/matching.ts'
import { factValidityOfUnit, siblingSource, validityNote } from '../retrieval/fact-history.ts'

const FENCE = /^\s{0,3}(?:`{3,}|~{3,})/
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/
// The same, on every line of a text at once (`[ \t]`: a heading's spaces never cross its line).
const HEADINGS = /^[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm
// `**x**` where it is emphasis: opened after a space or punctuation, closed before one, on one
// line (`2**3`, `**kwargs` and `a**b + c**d` are not).
const EMPHASIS = /(^|[\s([{"'])\*\*(?=\S)([^*\n]*?\S)\*\*(?![\w*])/g
const ENDS_SENTENCE = /[.!?:;…)\]"']$/

/** Each line of `text` outside code fences passed through `plain` (with its index); fenced lines as they are. */
function outsideCode(text: string, plain: (line: string, index: number) => string): string[] {
  let fenced = false
  return text.split('\n').map((line, index) => {
    if (FENCE.test(line)) {
      fenced = !fenced
      return line
    }
    return fenced ? line : plain(line, index)
  })
}

/**
 * A message's text without markdown's heading and emphasis marks outside code: on one line of a
 * prompt they structure nothing (an assistant's long answers are full of them). A heading that
 * opens the message keeps its marks (escaped, `\##`): its words would otherwise follow the
 * excerpt's speaker label directly, where a role label's own text starts (decision 0028's forged
 * line).
 */
export function withoutMarkup(text: string): string {
  if (!text.includes('#') && !text.includes('**')) return text
  // Priming reads this for every long answer it considers: without a fence, two passes over the
  // text after its first line; line by line only when there is code to keep.
  const lead = /^\s*/.exec(text)?.[0].length ?? 0
  const firstEnd = text.indexOf('\n', lead)
  if (firstEnd < 0) return text.replace(EMPHASIS, '$1$2')
  if (!text.includes('```') && !text.includes('~~~')) {
    return `${text.slice(0, firstEnd).replace(EMPHASIS, '$1$2')}${text.slice(firstEnd).replace(HEADINGS, '$1').replace(EMPHASIS, '$1$2')}`
  }
  const opening = text.split('\n').findIndex((line) => line.trim() !== '')
  return outsideCode(text, (line, index) => (index === opening ? line : line.replace(HEADING, '$1')).replace(EMPHASIS, '$1$2')).join('\n')
}

// An extractive episode's event line (episode-summary.ts `formatEventLine`): `[HH:MM] LABEL who: text`.
const EVENT_LINE = /^\[\d\d:\d\d\] (\S+)(?: (to )?([^:]{1,80}):)? (.*)$/
const LIST_ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])\s+/
// What an extractive episode lists that says nothing of what happened: its tools, its elided events.
const SAYS_NOTHING = /^(?:tools used: |… \d+ more events$)/

/** A line of a document as what it says: a logged event (`said`, kept whole) or prose; undefined when it says nothing. */
interface PlainLine {
  text: string
  said: boolean
}

function plainLine(line: string): PlainLine | undefined {
  const trimmed = line.trim()
  if (trimmed === '' || trimmed === COMPRESSION_NOTE || /^<!--.*-->$/.test(trimmed)) return undefined
  const heading = HEADING.exec(trimmed)
  if (heading) {
    const words = (heading[1] ?? '').trim()
    return words === '' ? undefined : { text: ENDS_SENTENCE.test(words) ? words : `${words}:`, said: false }
  }
  const item = trimmed.replace(LIST_ITEM, '')
  if (SAYS_NOTHING.test(item)) return undefined
  const event = EVENT_LINE.exec(item)
  if (event) {
    const [, label, to, who, text] = event
    // A tool call's input and result are the log's (recent activity and the log itself hold them).
    if (label === 'TOOL') return undefined
    // As a conversation excerpt says it (`ada: …`, the agent's own `assistant: …`), so the same words are recognised as shown.
    if (label === 'MSG<' || label === 'MSG>') return { text: `${label === 'MSG>' || to ? 'assistant' : (who ?? 'someone')}: ${text}`, said: true }
    return { text: `${label}${who ? ` ${to ?? ''}${who}:` : ''} ${text}`, said: true }
  }
  const prose = item.replace(EMPHASIS, '$1$2').trim()
  return prose === '' ? undefined : { text: ENDS_SENTENCE.test(prose) ? prose : `${prose}.`, said: false }
}

const SENTENCE_BREAK = /(?<=[.!?…])\s+(?=[\p{Lu}\p{N}"'(])/u
// An episode section's heading as the indexer writes it on a chunk's first line: `09:00 — <title>`.
const SECTION_TIME = /^(\d\d:\d\d(?:[–-]\d\d:\d\d)?) — (.*)$/

/** The document's lines as what they say; a fenced line is code and kept as it is. */
function plainLines(text: string): PlainLine[] {
  const out: PlainLine[] = []
  let fenced = false
  for (const line of text.split('\n')) {
    if (FENCE.test(line)) fenced = !fenced
    const plain = fenced || FENCE.test(line) ? (line.trim() === '' ? undefined : { text: line.trim(), said: false }) : plainLine(line)
    if (plain !== undefined) out.push(plain)
  }
  return out
}

/**
 * A document unit as it says it (see the file comment): its heading (an episode's first line,
 * `09:00 — <title>`), and its parts, escaped: one per line — an episode's prose one per sentence, a
 * label (`Resolved:`) with what follows it.
 */
function documentParts(unit: StoredUnit): { head: string | undefined; parts: string[] } {
  // A message or summary outside a conversation is said as it was, without its markup.
  if (unit.kind === 'message' || unit.kind === 'summary') return { head: undefined, parts: [escapeRecalled(withoutMarkup(unit.text))] }
  const lines = plainLines(unit.text)
  const heading = unit.meta?.heading
  const hasHead = unit.kind === 'episode' && typeof heading === 'string' && heading !== '' && unit.text.startsWith(heading)
  const body = hasHead ? lines.slice(1) : lines
  const split = unit.kind === 'episode' ? body.flatMap((line) => (line.said ? [line.text] : line.text.split(SENTENCE_BREAK))) : body.map((line) => line.text)
  const parts: string[] = []
  for (const part of split.map(escapeRecalled)) {
    const last = parts[parts.length - 1]
    if (last?.endsWith(':')) parts[parts.length - 1] = `${last} ${part}`
    else if (part !== '') parts.push(part)
  }
  const first = lines[0]?.text ?? ''
  if (!hasHead) return { head: undefined, parts }
  // An extractive section is titled by its first request, which its first line says again: the time is enough.
  const time = SECTION_TIME.exec(first)
  const title = escapeRecalled(time?.[2] ?? '').replace(/[.:]$/, '')
  const head = time && title !== '' && parts.some((part) => part.includes(title)) ? `${time[1]}:` : escapeRecalled(first)
  return { head, parts }
}

/** The parts that share a content word with the message; all of them when none does (recalled by meaning). */
function matchedParts(parts: readonly string[], messageWords: ReadonlySet<string>): string[] {
  const matched = parts.filter((part) => [...contentWords(part)].some((word) => messageWords.has(word)))
  return matched.length === 0 ? [...parts] : matched
}

const day = (iso: string): string => iso.slice(0, 10)

/**
 * A related memory that is not a conversation excerpt as one line: kind, date, what it says (cut
 * with a pointer when long), source, and for a fact with a history what replaced it and when it
 * held (decision 0033). An episode says only its heading and the sentences that match the message,
 * less any already said above (`said`: an excerpt line or recent activity); '' when that leaves
 * nothing.
 */
export function relatedLine(unit: StoredUnit, itemTokens: number, messageWords: ReadonlySet<string>, said: (line: string) => boolean = () => false): string {
  const { head, parts: all } = documentParts(unit)
  let parts = all
  if (unit.kind === 'episode') {
    parts = matchedParts(parts, messageWords)
    parts = parts.filter((part) => !said(part))
    // Everything it would say is already shown: it is not said again.
    if (parts.length === 0) return ''
  }
  // A standing instruction said in a conversation (decision 0079) is the user's words: said as theirs, pointing to its message.
  const instruction = unit.meta?.instruction === true
  const text = [...(instruction ? ['user:'] : []), ...(head === undefined ? [] : [head]), ...parts].join(' ')
  const pointer = unit.kind === 'message' || unit.kind === 'summary' ? `${unit.source}#${unit.id}` : instruction ? `${unit.source}#msg:${String(unit.meta?.messageId)}` : unit.source
  const cut = truncateToTokens(text, itemTokens)
  const body = cut.length < text.length ? `${cut}… (-> ${pointer})` : `${text} (-> ${pointer})`
  const note = validityNote(factValidityOfUnit(unit), (slug) => siblingSource(unit.source, slug))
  return `- [${unit.kind} ${day(unit.createdAt)}] ${body}${note === '' ? '' : ` ${escapeRecalled(note)}`}`
}
