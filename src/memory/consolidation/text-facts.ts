/**
 * The text checks consolidation makes without a model (DESIGN principle 4): how similar two
 * memories are (cosine over their ranking terms), whether they state the same numbers and names
 * ("budget 40k" never merges with "budget 30k"), which numbers and names a candidate states that
 * its sources never did (a cheap first stage of validation: a fabricated figure is rejected
 * before any model is asked), code fences closed, and file names from titles.
 */
import { tokenize } from '../episodes/text-ranking.ts'

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

const NUMBER = /\d+(?:[.,:/]\d+)*\s?(?:k|m|bn|%|gb|mb|tb|ms|s)?\b/gi
// A capitalised word that does not open a sentence (or a line): a name, a product, a place.
const NAME = /(?<![.!?:]\s|^|\n|#\s)\b\p{Lu}[\p{L}\p{N}]*(?:[-.]\p{L}[\p{L}\p{N}]*)*/gu
const NOT_NAMES = new Set(['I', 'I\'m', 'OK', 'The', 'A', 'An', 'It', 'This', 'That', 'We', 'You', 'They', 'He', 'She', 'User', 'Agent', 'Resolved', 'New'])

/** The numbers and names a text states, normalised (lower case, no inner spaces). */
export function factsOf(text: string): { numbers: Set<string>; names: Set<string> } {
  const numbers = new Set((text.match(NUMBER) ?? []).map((n) => n.replace(/\s+/g, '').toLowerCase()))
  const names = new Set((text.match(NAME) ?? []).filter((n) => !NOT_NAMES.has(n)).map((n) => n.toLowerCase()))
  return { numbers, names }
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => a.size === b.size && [...a].every((item) => b.has(item))

/** Whether two texts state the same numbers and the same names (what a merge without a model requires). */
export function factsAgree(a: string, b: string): boolean {
  const x = factsOf(a)
  const y = factsOf(b)
  return sameSet(x.numbers, y.numbers) && sameSet(x.names, y.names)
}

/** Numbers and names `candidate` states that appear nowhere in `sources` (case-insensitive). */
export function unsupportedFacts(candidate: string, sources: string): string[] {
  const haystack = sources.toLowerCase().replace(/\s+/g, '')
  const { numbers, names } = factsOf(candidate)
  return [...numbers, ...names].filter((fact) => !haystack.includes(fact.replace(/\s+/g, '')))
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
