/**
 * The related-memories channel packed the way a reader takes in a conversation: what was said,
 * by whom, on which day, in the order it was said.
 *
 * Ranked hits are taken down the ranking while they fit (one that does not fit is skipped, so a
 * shorter one further down can still be taken). Messages and summaries of a conversation
 * (`conv:<id>` sources) are then shown as excerpts, grouped by day, each group under its date and
 * in chronological order inside:
 *
 *   [2023-05-08]
 *   Caroline: I went to a LGBTQ support group yesterday and it was so powerful.
 *   Melanie: That's great! What happened there?
 *
 * The date is what a reader needs of where a line was said; the session's id (`conv-26#1`, often a
 * UUID: 7 to 39 tokens a header) is an identifier, not meaning, and each message's own pointer
 * names its conversation when it is cut (decision 0075).
 * A per-line `- [message date] … (-> pointer)` frame costs about a dozen tokens, as much as a short
 * turn; paid once per group instead, the same budget holds many more of the turns an answer needs.
 * Other kinds (knowledge, lessons, rules, episodes…) keep their compact line each, above the
 * excerpts. Message text is what was said, through the one escaping rule of everything recalled
 * (`escapeRecalled`): it stays on its line and can open no tag, heading or fence.
 */
import { countTokensByLine, truncateToTokens } from '../../core/tokens.ts'
import type { StoredUnit } from '../../storage/contracts.ts'
import { escapeRecalled } from '../engrams/escape-recalled.ts'
import { type BudgetMeter, headingCost, lineCost, type PackedSection } from './packing.ts'
import { withoutMarkup } from './related-lines.ts'
import type { PrimingChannel } from './settings.ts'

/** A ranked candidate for the section: its unit, and its compact line when it is not conversational. */
export interface RelatedCandidate<T> {
  unit: StoredUnit
  /**
   * The compact line of a unit that is not a conversation message or summary, given what is
   * already said (`said('ada: text')`: an excerpt line taken, or the message in recent activity),
   * which it need not say again; '' when it has nothing more to say.
   */
  compact?: (said: (line: string) => boolean) => string
  meta: T
}

export interface RelatedPack<T> {
  section: PackedSection<T>
  /** Every memory shown, in rank order, with the exact tokens of its own line. */
  packed(): Array<{ meta: T; tokens: number }>
}

/** Below this many budget units left, nothing else could fit: stop counting. */
const NOTHING_FITS = 4

/** Whether a unit is part of a conversation (shown as an excerpt line). */
export function isConversational(unit: StoredUnit): boolean {
  return (unit.kind === 'message' || unit.kind === 'summary') && unit.source.startsWith('conv:')
}

const day = (iso: string): string => iso.slice(0, 10)

// What a speaker label must not read as: a role of a chat transcript other than its own.
const ROLE_WORD = /^(?:system|assistant|user|human|developer|tool|function|model|ai|bot)$/i

/**
 * The speaker label of an excerpt line: the name, else the role. A name is data and starts the
 * line, so it loses its colons, is escaped, and a name that reads as another role (a user named
 * "system") or starts with anything but a letter or digit keeps its role in front:
 * `user (system): …`.
 */
function speakerOf(unit: StoredUnit): string {
  const name = unit.meta?.name
  const role = typeof unit.meta?.role === 'string' && unit.meta.role !== '' ? unit.meta.role : 'someone'
  if (typeof name !== 'string' || name.trim() === '') return role
  // Colons go before escaping: what the escaping sees first must be what starts the line.
  const label = escapeRecalled(name.replace(/:/g, ' '))
  if (label === '') return role
  const plain = label.normalize('NFKC')
  if ((ROLE_WORD.test(plain) && plain.toLowerCase() !== role.toLowerCase()) || !/^[\p{L}\p{N}]/u.test(plain)) return `${role} (${label})`
  return label
}

function groupHeader(unit: StoredUnit): string {
  return `[${day(unit.createdAt)}]`
}

/**
 * The excerpt line of a message or summary. A message longer than `longest` budget units (a
 * pasted document, a log) is cut, with a pointer to where it can be read in full, so that one
 * of them cannot crowd out every other memory; conversational turns are far shorter.
 */
function excerptLine(unit: StoredUnit, longest: number, itemTokens: number, meter: BudgetMeter, said?: string): string {
  const pointer = `${unit.source}#${unit.id}`
  if (unit.kind === 'summary') {
    const text = escapeRecalled(withoutMarkup(unit.text))
    const cut = truncateToTokens(text, itemTokens)
    return cut.length < text.length ? `(summary) ${cut}… (-> ${pointer})` : `(summary) ${text} (-> ${pointer})`
  }
  const line = said ?? spokenLine(unit)
  const part = passageOf(unit)
  // A passage of a long message says which part it is and where the whole is read.
  const whole = part === undefined ? '' : ` (-> msg:${part.messageId}, part ${part.index} of ${part.count})`
  // Encoding is the cost here: a line whose characters alone are over `longest` is cut without
  // counting it whole, and what the cut cannot keep is not encoded either.
  if (meter.atLeast(line) <= longest && meter.line(line) <= longest) return `${line}${whole}`
  const target = Math.max(itemTokens, Math.floor(longest * 0.8))
  const room = meter.charsFor(target)
  let head = line
  if (line.length > room) {
    let end = room
    if (end > 0 && isHighSurrogate(line.charCodeAt(end - 1))) end--
    head = line.slice(0, end)
  }
  return `${truncateToTokens(head, target)}…${whole === '' ? ` (-> ${pointer})` : whole}`
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/** A message as said: its speaker and its text without markup (related-lines.ts), escaped, before any cut or pointer. */
function spokenLine(unit: StoredUnit): string {
  return `${speakerOf(unit)}: ${escapeRecalled(withoutMarkup(unit.text))}`
}

/**
 * Whether a message's excerpt certainly cannot fit in `left` units, known without encoding it: it
 * would be shown whole (its characters are within `longest`) and its characters alone are over
 * (a pointer only adds to them).
 */
function certainlyOver(said: string, longest: number, left: number, meter: BudgetMeter): boolean {
  const least = meter.atLeast(said)
  return least > left && least <= longest
}

/**
 * Whether a message's excerpt certainly cannot fit in `left` units, known from bounds of its tokens
 * without encoding it: it is shown whole (a message, not a passage of one, whose line is at most
 * `longest`) and is more than `left` (excerptLine).
 */
function cannotFitWhole(unit: StoredUnit, said: string, longest: number, left: number, meter: BudgetMeter): boolean {
  return passageOf(unit) === undefined && meter.lineAtLeast(said) > left && meter.atLeast(said) <= longest && meter.lineAtMost(said) <= longest
}

/** Which passage of which message a unit is (context-index.ts `passageUnit`), else undefined. */
export function passageOf(unit: StoredUnit): { messageId: number; index: number; count: number } | undefined {
  const meta = unit.meta
  if (unit.kind !== 'message' || typeof meta?.messageId !== 'number' || typeof meta.passage !== 'number' || typeof meta.passages !== 'number') return undefined
  return { messageId: meta.messageId, index: meta.passage, count: meta.passages }
}

/** The most budget units one excerpt may take of a section of `budget` units. */
export function longestExcerpt(budget: number, itemTokens: number): number {
  return Math.max(itemTokens, Math.floor(budget / 4))
}

const seqOf = (unit: StoredUnit): number => (typeof unit.meta?.seq === 'number' ? unit.meta.seq : Number.POSITIVE_INFINITY)

function chronological(a: StoredUnit, b: StoredUnit): number {
  return a.createdAt.localeCompare(b.createdAt) || seqOf(a) - seqOf(b) || a.id.localeCompare(b.id)
}

interface Chosen<T> {
  rank: number
  candidate: RelatedCandidate<T>
  line: string
  /** Grouping key for excerpts; undefined for compact lines. */
  group: string | undefined
  header: string | undefined
}

/**
 * Pack `candidates` (best first) into `budget` units under `heading`: down the ranking, each
 * taken if it still fits (a new excerpt group pays its header and the blank line before it), and
 * none said twice: a message already said whole by a compact line taken or by the recent
 * `activity` above is skipped, and a compact line leaves out what excerpts taken say.
 * Compact lines come first in rank order, then the excerpt groups in chronological order.
 */
export function packRelated<T>(
  channel: PrimingChannel,
  heading: string,
  candidates: ReadonlyArray<RelatedCandidate<T>>,
  budget: number,
  meter: BudgetMeter,
  itemTokens: number,
  activity = '',
): RelatedPack<T> {
  const chosen: Array<Chosen<T>> = []
  // Recent activity already said these words in full (`MSG< text`, `MSG> text`, `MSG< ada: text`, each ending its line).
  const lines = `${activity}\n`
  const inActivity = (text: string): boolean => text !== '' && (lines.includes(`< ${text}\n`) || lines.includes(`> ${text}\n`) || lines.includes(`: ${text}\n`))
  let left = budget - headingCost(heading, meter)
  const longest = longestExcerpt(budget, itemTokens)
  const openGroups = new Set<string>()
  // What is already said, so that nothing is said twice: excerpt lines taken, and compact lines.
  const saidLines = new Set<string>()
  const compactLines: string[] = []
  // A part of an episode (`ada: text`, or a sentence) is said above when an excerpt taken is that line, or activity its words.
  const alreadySaid = (line: string): boolean => {
    if (saidLines.has(line)) return true
    const speaker = line.indexOf(': ')
    return activity !== '' && inActivity(speaker < 0 ? line : line.slice(speaker + 2))
  }
  for (const [rank, candidate] of candidates.entries()) {
    if (left < NOTHING_FITS) break
    const unit = candidate.unit
    if (!isConversational(unit)) {
      const line = candidate.compact?.(alreadySaid) ?? ''
      if (line === '') continue
      if (meter.lineAtLeast(line) > left) continue
      const cost = meter.line(line)
      if (cost > left) continue
      chosen.push({ rank, candidate, line, group: undefined, header: undefined })
      compactLines.push(line)
      left -= cost
      continue
    }
    const said = unit.kind === 'message' ? spokenLine(unit) : undefined
    // A message an episode line or recent activity already says in full is not shown again.
    if (said !== undefined && (compactLines.some((line) => line.includes(said)) || (activity !== '' && inActivity(escapeRecalled(unit.text))))) continue
    if (said !== undefined && certainlyOver(said, longest, left, meter)) continue
    if (said !== undefined && cannotFitWhole(unit, said, longest, left - (openGroups.has(day(unit.createdAt)) ? 0 : meter.line(groupHeader(unit)) + 1), meter)) continue
    const line = excerptLine(unit, longest, itemTokens, meter, said)
    const group = day(unit.createdAt)
    const header = groupHeader(unit)
    const cost = meter.line(line) + (openGroups.has(group) ? 0 : meter.line(header) + 1)
    if (cost > left) continue
    openGroups.add(group)
    chosen.push({ rank, candidate, line, group, header })
    if (said !== undefined) saidLines.add(said)
    left -= cost
  }

  const section: PackedSection<T> = { channel, heading, items: [] }
  const render = (): void => {
    section.items = []
    const compact = chosen.filter((c) => c.group === undefined)
    for (const c of compact) section.items.push({ text: c.line, meta: c.candidate.meta, tokens: lineCost(c.line), cost: meter.line(c.line) })
    const groups = new Map<string, Array<Chosen<T>>>()
    for (const c of chosen) {
      if (c.group === undefined) continue
      const members = groups.get(c.group)
      if (members) members.push(c)
      else groups.set(c.group, [c])
    }
    const ordered = [...groups.values()].map((members) => members.sort((a, b) => chronological(a.candidate.unit, b.candidate.unit)))
    ordered.sort((a, b) => chronological((a[0] as Chosen<T>).candidate.unit, (b[0] as Chosen<T>).candidate.unit))
    for (const members of ordered) {
      const first = members[0] as Chosen<T>
      // One item per group: its lines are rendered together; the blank line separates groups.
      const lead = section.items.length > 0 ? '\n' : ''
      const text = `${lead}${first.header}\n${members.map((m) => m.line).join('\n')}`
      const cost = meter.line(first.header as string) + 1 + members.reduce((sum, m) => sum + meter.line(m.line), 0)
      // Its lines were counted while packing: count the group from them rather than encode it again.
      section.items.push({ text, meta: first.candidate.meta, tokens: countTokensByLine(text) + 1, cost })
    }
  }
  render()
  section.dropWeakest = () => {
    if (chosen.length === 0) return false
    // The weakest is the lowest-ranked memory taken, wherever it is shown.
    let weakest = 0
    for (let i = 1; i < chosen.length; i++) if ((chosen[i] as Chosen<T>).rank > (chosen[weakest] as Chosen<T>).rank) weakest = i
    chosen.splice(weakest, 1)
    render()
    return true
  }
  return {
    section,
    packed: () => [...chosen].sort((a, b) => a.rank - b.rank).map((c) => ({ meta: c.candidate.meta, tokens: lineCost(c.line) })),
  }
}
