/**
 * Token counting. Budgets everywhere in engram (context assembly, priming, memory context) are in
 * tokens of the o200k encoding (GPT-4o and later); other models' tokenizers differ by a few
 * percent, which the budgets' margins absorb.
 */
import { createRequire } from 'node:module'

// The o200k tables take ~80 ms to load; commands that never count tokens should not pay for them,
// so the encoder is required synchronously on first use rather than imported at start-up.
const require = createRequire(import.meta.url)
let o200kCount: ((text: string) => number) | undefined
// Text is counted as text: `<|endoftext|>` or `<|im_start|>` in a message or a memory is its
// characters, as an API sends a user's words, not a special token (gpt-tokenizer's default throws
// on them, which made a turn that quoted one fail).
const AS_TEXT = { disallowedSpecial: new Set<string>() }
function encoder(): (text: string) => number {
  if (!o200kCount) {
    const { countTokens: count } = require('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens: (text: string, options: typeof AS_TEXT) => number }
    o200kCount = (text) => count(text, AS_TEXT)
  }
  return o200kCount
}
let o200kPieces: RegExp | null | undefined
/**
 * The encoder's own pre-tokenisation pattern (what it splits text into before byte-pair merging),
 * sticky; null when this version of gpt-tokenizer does not export it where expected (it is not
 * part of its documented API): countTokensByLine then counts the whole text.
 */
function pieces(): RegExp | null {
  if (o200kPieces === undefined) {
    try {
      const source = (require('gpt-tokenizer/cjs/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX?: RegExp }).O200K_TOKEN_SPLIT_REGEX?.source
      o200kPieces = source === undefined ? null : new RegExp(source, 'uy')
    } catch {
      o200kPieces = null
    }
  }
  return o200kPieces
}

// Short strings are the common case on the hot path (entries, messages); caching them avoids
// re-encoding the same rule or lesson on every turn. Bounded so that it cannot grow without limit.
const cache = new Map<string, number>()
const CACHE_LIMIT = 20_000
const CACHEABLE_LENGTH = 2_000

/** Exact number of o200k tokens in `text`. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0
  if (text.length > CACHEABLE_LENGTH) return encoder()(text)
  const hit = cache.get(text)
  if (hit !== undefined) return hit
  const n = encoder()(text)
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(text, n)
  return n
}

const WHITESPACE = /\s/u
const NEWLINE_RUNS = /\n+/g

/** The last piece the encoder splits `line` into (`line` ends with something other than whitespace). */
function lastPiece(line: string, pattern: RegExp): string {
  // A space after anything but whitespace always starts a piece (no pattern reaches across it), so
  // the scan can start at the last such space instead of at the beginning of the line.
  let from = line.lastIndexOf(' ')
  while (from > 0 && WHITESPACE.test(line.charAt(from - 1))) from = line.lastIndexOf(' ', from - 1)
  let at = Math.max(0, from)
  let last = ''
  while (at < line.length) {
    pattern.lastIndex = at
    const match = pattern.exec(line)
    // Every character belongs to some piece. Were the pattern to say otherwise, the whole line is
    // returned: counting it again with its newlines is exact too, only slower.
    if (!match || match[0] === '') return line
    last = match[0]
    at = pattern.lastIndex
  }
  return last
}

/**
 * Exact o200k tokens of a text of many lines (a priming block), from the counts of its lines —
 * which the caller has usually counted already, and which are cached — instead of encoding the
 * whole text again. Always equal to countTokens(text).
 *
 * Why that holds: the encoder first splits text into pieces by a fixed pattern and then encodes each
 * piece on its own. Where a line ends in something other than whitespace and the next one starts
 * with something other than whitespace or `/`, the only piece that differs from counting the lines
 * apart is the line's last one, which takes the newlines (`)` + `\n` may be one token). So
 * tokens(A \n B) = tokens(A) − tokens(last) + tokens(last + \n) + tokens(B). Lines whose boundary does
 * not look like that are counted together. tokens.test.ts checks the equality on random texts.
 */
export function countTokensByLine(text: string): number {
  const pattern = pieces()
  if (pattern === null) return countTokens(text)
  const parts = text.split(NEWLINE_RUNS)
  const breaks = text.match(NEWLINE_RUNS) ?? []
  const opensPiece = (line: string): boolean => line !== '' && !WHITESPACE.test(line.charAt(0)) && line.charAt(0) !== '/'
  let total = 0
  let current = parts[0] as string
  for (let i = 0; i < breaks.length; i++) {
    const newlines = breaks[i] as string
    const next = parts[i + 1] as string
    if (current === '' && i === 0 && opensPiece(next)) {
      // Newlines at the very start are a piece of their own.
      total += countTokens(newlines)
      current = next
    } else if (current !== '' && !WHITESPACE.test(current.charAt(current.length - 1)) && opensPiece(next)) {
      const last = lastPiece(current, pattern)
      total += countTokens(current) - countTokens(last) + countTokens(last + newlines)
      current = next
    } else {
      current = `${current}${newlines}${next}`
    }
  }
  return total + countTokens(current)
}

/**
 * The longest prefix of `text` that fits in `budget` tokens, cut at a sentence or word boundary
 * when one is near. Returns '' when not even one word fits.
 */
export function truncateToTokens(text: string, budget: number): string {
  if (budget <= 0) return ''
  if (countTokens(text) <= budget) return text
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (countTokens(text.slice(0, mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  const cut = text.slice(0, lo)
  const sentence = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('.\n'), cut.lastIndexOf('! '), cut.lastIndexOf('? '))
  if (sentence > cut.length * 0.5) return cut.slice(0, sentence + 1)
  const space = cut.lastIndexOf(' ')
  if (space > cut.length * 0.5) return cut.slice(0, space)
  return cut
}
