/**
 * Skill labels: the handle by which a stored procedure is addressed (Anton's `label`, distinct from
 * the display `name` and the retrieval cue `when_to_use`). Pure functions, no I/O.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'

/** What `slugify` falls back to when nothing usable is left of the text. */
export const FALLBACK_LABEL = 'skill'
const MAX_LABEL_LENGTH = 64
// Labels written by hand or imported may use `-` or `.`; they still name exactly one folder.
const SAFE_LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/**
 * Arbitrary text as a snake_case identifier: accents folded, lower case, runs of anything but
 * letters and digits become one `_`, at most 64 characters. `"CSV Summary!"` → `csv_summary`.
 */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_LABEL_LENGTH)
    .replace(/_+$/, '')
  return slug === '' ? FALLBACK_LABEL : slug
}

/** True when `label` can name a skill folder (no separators, no `..`, no leading dot). */
export function isSafeLabel(label: string): boolean {
  return typeof label === 'string' && SAFE_LABEL.test(label) && !label.includes('..')
}

/** Throws `invalid_argument` unless `label` is a safe skill label. */
export function assertSafeLabel(label: string): void {
  if (isSafeLabel(label)) return
  throw new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `Invalid skill label ${JSON.stringify(label)}: it must name one folder under skills/.`,
    fix: 'Use letters, digits, "_", "-" or "." (starting with a letter or digit), such as "csv_summary".',
    details: { label },
  })
}

/**
 * A label derived from `base` that no existing skill uses: `csv_summary`, then `csv_summary_2`,
 * `csv_summary_3`, …
 */
export function makeUniqueLabel(base: string, existing: Iterable<string>): string {
  const taken = new Set(existing)
  const root = slugify(base)
  if (!taken.has(root)) return root
  for (let n = 2; ; n++) {
    const suffix = `_${n}`
    const candidate = `${root.slice(0, MAX_LABEL_LENGTH - suffix.length)}${suffix}`
    if (!taken.has(candidate)) return candidate
  }
}

/**
 * Python difflib's `SequenceMatcher(None, a, b).ratio()`: 2·M / (|a| + |b|) where M counts the
 * characters of the matching blocks found by recursively taking the longest common substring.
 * (No junk heuristic: labels are far shorter than the 200 characters where difflib's applies.)
 */
export function similarityRatio(a: string, b: string): number {
  const total = a.length + b.length
  if (total === 0) return 1
  return (2 * matchingCharacters(a, 0, a.length, b, 0, b.length)) / total
}

function matchingCharacters(a: string, aLo: number, aHi: number, b: string, bLo: number, bHi: number): number {
  if (aLo >= aHi || bLo >= bHi) return 0
  // Longest common substring of a[aLo:aHi] and b[bLo:bHi]; ties go to the earliest in a, then b,
  // as in difflib.find_longest_match.
  let bestI = aLo
  let bestJ = bLo
  let bestSize = 0
  let previous = new Map<number, number>()
  for (let i = aLo; i < aHi; i++) {
    const current = new Map<number, number>()
    for (let j = bLo; j < bHi; j++) {
      if (a[i] !== b[j]) continue
      const size = (previous.get(j - 1) ?? 0) + 1
      current.set(j, size)
      if (size > bestSize) {
        bestI = i - size + 1
        bestJ = j - size + 1
        bestSize = size
      }
    }
    previous = current
  }
  if (bestSize === 0) return 0
  return (
    bestSize +
    matchingCharacters(a, aLo, bestI, b, bLo, bestJ) +
    matchingCharacters(a, bestI + bestSize, aHi, b, bestJ + bestSize, bHi)
  )
}

/** Default similarity a typo must reach to be resolved (difflib.get_close_matches' default). */
export const CLOSEST_MATCH_CUTOFF = 0.6

/**
 * The candidate most similar to `input` with a ratio ≥ `cutoff` (difflib.get_close_matches with
 * n=1), or undefined. Ties go to the first candidate in the given order.
 */
export function closestLabel(input: string, candidates: readonly string[], cutoff = CLOSEST_MATCH_CUTOFF): { label: string; ratio: number } | undefined {
  let best: { label: string; ratio: number } | undefined
  const needle = input.toLowerCase()
  for (const candidate of candidates) {
    const ratio = similarityRatio(needle, candidate.toLowerCase())
    if (ratio >= cutoff && (!best || ratio > best.ratio)) best = { label: candidate, ratio }
  }
  return best
}
