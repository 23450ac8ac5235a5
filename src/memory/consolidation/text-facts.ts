/**
 * The text checks consolidation makes without a model (DESIGN principle 4): how similar two
 * memories are (cosine over their ranking terms), whether they state the same facts ("budget 40k"
 * never merges with "budget 30k"), which numbers, dates and names a candidate states that its
 * sources never did (a cheap first stage of validation: a fabricated figure is rejected before
 * any model is asked; the same figure written otherwise is not), code fences closed, and file
 * names from titles.
 */
import { tokenize } from '../episodes/text-ranking.ts'
import { type FactMention, factMentions, type MentionIndex, mentionIndex, mentionSupported } from './fact-mentions.ts'

/** A text's ranking terms with their counts (stopwords dropped, plurals folded). */
export function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const term of tokenize(text)) counts.set(term, (counts.get(term) ?? 0) + 1)
  return counts
}

/** Cosine similarity of two texts' term counts, in [0, 1]. */
export function textSimilarity(a: string, b: string): number {
  return countsSimilarity(termCounts(a), termCounts(b))
}

/** Cosine similarity of two term-count maps (`termCounts`), in [0, 1]. */
export function countsSimilarity(x: ReadonlyMap<string, number>, y: ReadonlyMap<string, number>): number {
  if (x.size === 0 || y.size === 0) return 0
  let dot = 0
  let nx = 0
  let ny = 0
  for (const [term, count] of x) {
    nx += count * count
    dot += count * (y.get(term) ?? 0)
  }
  for (const count of y.values()) ny += count * count
  return dot / Math.sqrt(nx * ny)
}

// A capitalised word that does not open a sentence (or a line): a name, a product, a place. A
// line in Title Case names nothing by its capitals.
const NAME = /(?<![.!?:]\s|^|\n|#\s)\b\p{Lu}[\p{L}\p{N}]*(?:[-.]\p{L}[\p{L}\p{N}]*)*/gu
const NOT_NAMES = new Set(['I', 'I\'m', 'OK', 'The', 'A', 'An', 'It', 'This', 'That', 'We', 'You', 'They', 'He', 'She', 'User', 'Agent', 'Resolved', 'New'])

/** Lower case, compatibility forms and accents folded, spaces dropped: "Zoë" finds "zoe", "Fly.io" finds "fly.io". */
const folded = (text: string): string =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\s+/g, '')

/** The facts a text states: its numbers, quantities, dates and times (normalised, fact-mentions.ts) and its names. */
function factsOf(text: string): { mentions: FactMention[]; names: Set<string>; folded: string } {
  const normalised = text.normalize('NFKC')
  const mentions = factMentions(normalised)
  // A fact's words are not names ("March 4", "2.5 GB"): blank them before looking for names.
  const pieces: string[] = []
  let at = 0
  for (const mention of mentions) {
    pieces.push(normalised.slice(at, mention.start), ' '.repeat(mention.end - mention.start))
    at = mention.end
  }
  const rest = pieces.join('') + normalised.slice(at)
  const names = new Set<string>()
  for (const line of rest.split('\n')) {
    // A list item or a heading opens like a sentence; emphasis is no capital's context.
    const plain = line.replace(/^\s*(?:#+|[-*+>]|\d+[.)])\s+/, '').replace(/\*\*|__|[*_`]/g, '')
    if (titleCase(plain)) continue
    for (const name of plain.match(NAME) ?? []) if (!NOT_NAMES.has(name)) names.add(folded(name))
  }
  return { mentions, names, folded: folded(normalised) }
}

/**
 * A text's facts read once (`readFacts`) for comparing it with many others (`factsAgree`): the
 * distinct figures it claims, what its figures offer another's claims, its names and its folded text.
 */
export interface TextFacts {
  claims: FactMention[]
  offered: MentionIndex
  names: ReadonlySet<string>
  folded: string
}

/** Claims that would be checked alike (same kind, readings, values and unit) are checked once. */
const claimSignature = (mention: FactMention): string => JSON.stringify([mention.kind, mention.keys, mention.values, mention.hasUnit])

export function readFacts(text: string): TextFacts {
  const { mentions, names, folded } = factsOf(text)
  const claims = new Map<string, FactMention>()
  for (const mention of mentions) if (mention.claim && !claims.has(claimSignature(mention))) claims.set(claimSignature(mention), mention)
  return { claims: [...claims.values()], offered: mentionIndex(mentions), names, folded }
}

/**
 * A title written in Title Case ("Staging Deploy Duration"): its capitals are style, not names.
 * More than half of its words of three letters or more capitalised, with at least two such words.
 */
function titleCase(line: string): boolean {
  const long = line.match(/\p{L}{3,}/gu) ?? []
  const capitalised = long.filter((word) => /^\p{Lu}/u.test(word)).length
  return capitalised >= 2 && capitalised * 2 > long.length
}

/**
 * Whether two texts state the same facts — each one's numbers, dates and names found in the other,
 * however written (what a merge without a model requires: "budget 40k" never merges with "budget
 * 30k", but "40k" does with "40,000"). A text compared with many is read once (`readFacts`).
 */
export function factsAgree(a: string | TextFacts, b: string | TextFacts): boolean {
  const x = typeof a === 'string' ? readFacts(a) : a
  const y = typeof b === 'string' ? readFacts(b) : b
  const covers = (from: TextFacts, to: TextFacts): boolean => from.claims.every((claim) => mentionSupported(claim, to.offered)) && [...from.names].every((name) => to.folded.includes(name))
  return covers(x, y) && covers(y, x)
}

/** What a source text states, read once (`statedFacts`) for checking many candidates against it. */
export interface StatedFacts {
  mentions: FactMention[]
  /** The text folded as names are compared (`folded`). */
  folded: string
}

export function statedFacts(sources: string): StatedFacts {
  return { mentions: factMentions(sources.normalize('NFKC')), folded: folded(sources) }
}

/**
 * The numbers, dates and names `candidate` states that `sources` never do, as the candidate wrote
 * them. Compared normalised: "2 hours" is stated by "two hours", "Kamal" by "kamal", "March 4" by
 * "2026-03-04". A figure the candidate only implies by an article ("a week") is not counted.
 */
export function unsupportedFacts(candidate: string, sources: string | StatedFacts): string[] {
  const claim = factsOf(candidate)
  const stated = typeof sources === 'string' ? statedFacts(sources) : sources
  const offered = mentionIndex(stated.mentions)
  const numbers = claim.mentions.filter((mention) => mention.claim && !mentionSupported(mention, offered)).map((mention) => mention.text)
  const names = [...claim.names].filter((name) => !stated.folded.includes(name))
  return [...new Set([...numbers, ...names])]
}

/**
 * Code fences made safe to store (the seed's sanitisation): a model's answer wrapped whole in one
 * fence (```markdown … ```) is unwrapped, and a fence left open is closed, so the text that
 * follows in the file is not swallowed into a code block.
 */
export function sanitizeFences(text: string): string {
  let body = text.trim()
  const wrapped = /^(`{3,}|~{3,})[\w-]*\n([\s\S]*?)\n\1\s*$/.exec(body)
  if (wrapped?.[2] !== undefined && !/^(`{3,}|~{3,})/m.test(wrapped[2])) body = wrapped[2].trim()
  let open: string | undefined
  for (const line of body.split('\n')) {
    const fence = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (!fence) continue
    if (open === undefined) open = fence
    else if (fence[0] === open[0] && fence.length >= open.length) open = undefined
  }
  return open === undefined ? body : `${body}\n${open}`
}

/** A file name for `title`: lower-case words joined by `-`, at most 60 characters, unique among `taken`. */
export function slugFor(title: string, taken: ReadonlySet<string>): string {
  const base =
    title
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60)
      .replace(/-+$/, '') || 'note'
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`
}
