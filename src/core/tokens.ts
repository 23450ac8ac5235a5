/**
 * Token counting. Budgets everywhere in engram (context assembly, priming, memory context) are in
 * tokens of the o200k encoding (GPT-4o and later); other models' tokenizers differ by a few
 * percent, which the budgets' margins absorb.
 *
 * Counting is linear in the text whatever it holds (decision 0026). The encoder splits text into
 * pieces and byte-pair merges each piece in time quadratic in its length, so a long run without a
 * break (80,000 letters: 2.8 s; 10 MB: more than ten minutes) used to freeze the process. Here:
 * - a text whose pieces are all short is handed to the encoder as it is (exact);
 * - a text with a long stretch is counted in segments of at most SEGMENT_CHARS, cut where the
 *   encoder's pattern always starts a new piece (exact), and inside a stretch of more than
 *   SEGMENT_CHARS that has no such place at all (a run of one letter, a blob without digits), cut
 *   anyway, counting one token more per cut (conservative: never measured below the exact count);
 * - a text longer than EXACT_LIMIT is estimated from evenly spaced samples, 10% over their
 *   density and never above its UTF-8 byte count (every o200k token is at least one byte):
 *   measured 8–10% above the exact count on prose, random letters and mixed scripts.
 * Text that looks like the encoder's special tokens (`<|endoftext|>`) is counted as the text it
 * is: a message may say anything, and model APIs do not read special tokens out of user text.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { asciiPieceEnd, isAscii } from './ascii-pieces.ts'
import { O200K_PIECES, O200kTable } from './o200k-table.ts'

// Nothing of the encoder is loaded at start-up: commands that never count tokens do not pay for it.
const require = createRequire(import.meta.url)
type EncoderCount = (text: string, options?: { disallowedSpecial?: Set<string> }) => number
/** No special token is refused: `<|endoftext|>` in a message is counted as ordinary text. */
const NO_SPECIAL_TOKENS = new Set<string>()
/** The ranks shipped in their compact form (o200k-table.ts), two levels above this file in src/ and in dist/ alike. */
const RANKS = new URL('../../resources/o200k.ranks', import.meta.url)
let o200kCount: ((text: string) => number) | undefined

/**
 * The o200k count of a text: its pieces (the encoder's own pattern) counted over the shipped
 * ranks, which load in a millisecond. Without that file (a damaged install) gpt-tokenizer's own
 * encoder counts, the same numbers after 200–450 ms of building its tables.
 */
function encoder(): (text: string) => number {
  if (o200kCount === undefined) {
    let table: O200kTable | undefined
    try {
      table = O200kTable.read(readFileSync(RANKS))
    } catch {
      table = undefined
    }
    if (table) {
      const ranks = table
      o200kCount = (text) => {
        let n = 0
        // ASCII (most of what is counted): its pieces found without the pattern (ascii-pieces.ts).
        if (isAscii(text)) {
          for (let at = 0, end = 0; at < text.length; at = end) {
            end = asciiPieceEnd(text, at)
            n += ranks.countPieceIn(text, at, end)
          }
          return n
        }
        for (let at = 0; at < text.length; at = PIECES.lastIndex) {
          PIECES.lastIndex = at
          const piece = PIECES.exec(text)?.[0]
          // Every character belongs to some piece; were the pattern to say otherwise, the encoder counts.
          if (piece === undefined || piece === '') return gptTokenizerCount()(text)
          n += ranks.countPiece(piece)
        }
        return n
      }
    } else o200kCount = gptTokenizerCount()
  }
  return o200kCount
}

/** gpt-tokenizer's own o200k count (what the shipped ranks reproduce). */
function gptTokenizerCount(): (text: string) => number {
  const count = (require('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens: EncoderCount }).countTokens
  return (text) => count(text, { disallowedSpecial: NO_SPECIAL_TOKENS })
}

/**
 * The encoder's own pre-tokenisation pattern (what it splits text into before byte-pair merging),
 * sticky: one compiled pattern both counts and finds a line's last piece (each compile of it costs
 * milliseconds in a fresh process).
 */
const PIECES = new RegExp(O200K_PIECES, 'uy')

// Short strings are the common case on the hot path (entries, messages); caching them avoids
// re-encoding the same rule or lesson on every turn. Bounded so that it cannot grow without limit.
const cache = new Map<string, number>()
const CACHE_LIMIT = 20_000
const CACHEABLE_LENGTH = 2_000
/** Longer texts (up to EXACT_LIMIT) are remembered by digest, fewer of them. */
const longCache = new Map<string, number>()
const LONG_CACHE_LIMIT = 2_000

/**
 * The longest text handed to the encoder in one call once a text has a long stretch. Merging one
 * piece of n characters costs ~n² steps: measured on random letters, 0.35 µs a character in
 * segments of 64, 1.8 µs in segments of 256.
 */
export const SEGMENT_CHARS = 64
/**
 * Texts up to this many characters (≈ 16k tokens of prose) are counted exactly; longer ones are
 * estimated. Text the encoder has no words for (random letters) costs it 1.5–2 µs a character
 * however it is cut: 64 Ki characters keep one count under ~120 ms, so a signal is never kept
 * waiting long.
 */
export const EXACT_LIMIT = 65_536
/** The estimate of a longer text counts this many evenly spaced samples of SAMPLE_CHARS each (32 Ki characters in all). */
const SAMPLES = 16
const SAMPLE_CHARS = 2_048
/** How far above the samples' density an estimate is put. */
const ESTIMATE_MARGIN = 1.1

/**
 * Places where the encoder's pattern always starts a new piece, whatever comes before or after
 * (so the text can be counted in parts there with the same result):
 * - after a letter, before anything but a letter, a combining mark or an apostrophe (a run of
 *   letters is one piece, with an optional `'s`/`'ll`… suffix; a letter is never part of a
 *   punctuation or digit piece);
 * - where digits begin or end (digits are only ever pieces of their own);
 * - after a character other than whitespace, before whitespace other than a line break (only a
 *   punctuation piece takes what follows it, and only line breaks and `/`).
 * Never after whitespace: how a run of whitespace splits depends on what follows it.
 * tokens.test.ts checks the equality on random texts built from the pattern's edge cases.
 */
const BREAK = /(?<=\p{L})(?![\p{L}\p{M}'])|(?<=\p{N})(?!\p{N})|(?<=[^\s\p{N}])(?=\p{N})|(?<=\S)(?=[^\S\r\n])/gu
/**
 * Whether `text` holds a stretch of more than SEGMENT_CHARS characters (code points) without
 * whitespace, or of whitespace: only such a text can hold a piece long enough to be slow. The
 * answer of `/(?<!\S)\S{65}|(?<!\s)\s{65}/u`, found in one pass over the characters: that
 * pattern, tried at every position with its look-behind, was a tenth of the cost of counting a
 * priming line (tokens.test.ts holds the two to the same answers).
 */
export function hasLongStretch(text: string): boolean {
  let run = 0
  let inSpace = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    // A surrogate pair is one code point, never whitespace.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    const space = isWhitespace(code)
    if (space === inSpace) run++
    else {
      inSpace = space
      run = 1
    }
    if (run > SEGMENT_CHARS) return true
  }
  return false
}

/** What `\s` matches (ECMAScript WhiteSpace and LineTerminator), by code unit. */
function isWhitespace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d)
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
}

/**
 * A copy of `text` that shares no memory with the string it was cut from. The encoder keeps the
 * pieces it merged in a cache; a piece cut from a 10 MB message would keep the whole message alive.
 */
function detached(text: string): string {
  return ` ${text}`.slice(1)
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/** The last place in (start, end] where the text can be cut without changing its count, or -1. */
function lastBreak(text: string, start: number, end: number): number {
  // Two characters of context either side: enough for a surrogate pair behind or ahead.
  const from = Math.max(0, start - 2)
  const window = text.slice(from, Math.min(text.length, end + 2))
  let found = -1
  for (const match of window.matchAll(BREAK)) {
    const at = from + match.index
    if (at > end) break
    if (at > start) found = at
  }
  return found
}

/** Tokens of `text` counted in segments of at most SEGMENT_CHARS (see the file comment). */
function countInSegments(text: string): number {
  const count = encoder()
  let total = 0
  let start = 0
  while (text.length - start > SEGMENT_CHARS) {
    let end = lastBreak(text, start, start + SEGMENT_CHARS)
    if (end < 0) {
      // A stretch with no place to cut: cut anyway, and count the cut as one token more.
      end = start + SEGMENT_CHARS
      if (isHighSurrogate(text.charCodeAt(end - 1))) end--
      total++
    }
    total += count(detached(text.slice(start, end)))
    start = end
  }
  return total + (start < text.length ? count(detached(text.slice(start))) : 0)
}

/** Estimated tokens of a text longer than EXACT_LIMIT: never below its samples' density, never above its UTF-8 bytes. */
function estimate(text: string): number {
  const step = text.length / SAMPLES
  let chars = 0
  let tokens = 0
  for (let i = 0; i < SAMPLES; i++) {
    let from = Math.floor(i * step + Math.max(0, step - SAMPLE_CHARS) / 2)
    if (from > 0 && isHighSurrogate(text.charCodeAt(from - 1))) from++
    let to = Math.min(text.length, from + SAMPLE_CHARS)
    if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1))) to--
    const sample = text.slice(from, to)
    chars += sample.length
    tokens += countInSegments(sample)
  }
  return Math.min(Buffer.byteLength(text, 'utf8'), Math.ceil((text.length * tokens * ESTIMATE_MARGIN) / Math.max(1, chars)))
}

function countUncached(text: string): number {
  if (text.length > EXACT_LIMIT) return estimate(text)
  if (text.length <= SEGMENT_CHARS || !hasLongStretch(text)) return encoder()(text)
  return countInSegments(text)
}

/**
 * o200k tokens in `text`: exact up to EXACT_LIMIT characters (but for stretches of more than
 * SEGMENT_CHARS with no place to cut, each cut counted one token high), estimated above. Linear in
 * the length of the text.
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0
  if (text.length > CACHEABLE_LENGTH) {
    if (text.length > EXACT_LIMIT) return countUncached(text)
    // A long message or passage is counted again and again (priming measures its line, cuts it,
    // measures the group): remembered by a digest of its text, which costs far less than encoding it.
    const key = createHash('sha1').update(text).digest('base64')
    const known = longCache.get(key)
    if (known !== undefined) return known
    const n = countUncached(text)
    if (longCache.size >= LONG_CACHE_LIMIT) longCache.clear()
    longCache.set(key, n)
    return n
  }
  const hit = cache.get(text)
  if (hit !== undefined) return hit
  const n = countUncached(text)
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(detached(text), n)
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
 * whole text again. Equal to countTokens(text) whenever that count is exact (see countTokens).
 *
 * Why that holds: the encoder first splits text into pieces by a fixed pattern and then encodes each
 * piece on its own. Where a line ends in something other than whitespace and the next one starts
 * with something other than whitespace or `/`, the only piece that differs from counting the lines
 * apart is the line's last one, which takes the newlines (`)` + `\n` may be one token). So
 * tokens(A \n B) = tokens(A) − tokens(last) + tokens(last + \n) + tokens(B). Lines whose boundary does
 * not look like that are counted together. tokens.test.ts checks the equality on random texts.
 */
export function countTokensByLine(text: string): number {
  const pattern = PIECES
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
  // Short enough to fit whatever its tokens: not encoded.
  if (tokensAtMost(text) <= budget) return text
  const total = countTokens(text)
  if (total <= budget) return text
  // The longest prefix within the budget: the prefix [0, lo) fits, [0, hi) does not. Steps guess
  // where the budget falls from the counts at both ends (tokens grow about evenly with characters),
  // every other step halves the interval (never more steps than bisection); a prefix within one
  // token of the budget is long enough — the cut then goes back to a sentence or a space anyway.
  let lo = 0
  let loCount = 0
  let hi = text.length
  let hiCount = total
  for (let step = 0; hi - lo > 1 && loCount < budget - 1; step++) {
    const guess = step % 2 === 0 ? lo + Math.floor(((hi - lo) * (budget - loCount)) / Math.max(1, hiCount - loCount)) : lo + Math.floor((hi - lo) / 2)
    const mid = Math.min(hi - 1, Math.max(lo + 1, guess))
    const n = countTokens(text.slice(0, mid))
    if (n <= budget) {
      lo = mid
      loCount = n
    } else {
      hi = mid
      hiCount = n
    }
  }
  const cut = text.slice(0, lo)
  const sentence = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('.\n'), cut.lastIndexOf('! '), cut.lastIndexOf('? '))
  if (sentence > cut.length * 0.5) return cut.slice(0, sentence + 1)
  const space = cut.lastIndexOf(' ')
  if (space > cut.length * 0.5) return cut.slice(0, space)
  return cut
}

/*
 * Bounds of countTokens(text) that encode nothing, for a caller that only needs to know whether a
 * line can fit (priming looks at hundreds of candidate lines and keeps a few dozen: encoding each
 * was half of its own work).
 *
 * At least: every piece of the encoder's pattern (O200K_TOKEN_SPLIT_REGEX) is at least one token.
 * A piece holding letters holds one run of letters and marks (after an optional sign, before an
 * optional contraction such as `'s`), and a piece of digits at most three digits and nothing
 * else; marks without letters may share a piece of signs. So a run of letters and marks that
 * holds a letter (runs joined by an apostrophe counted once), and every three digits of a run,
 * are at least one token each. At most: every o200k token is at least one byte, where the count
 * is exact (not cut in segments, not estimated).
 */
const COUNTED_RUNS = /[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*|\p{N}+/gu
const LETTER = /\p{L}/u
const DIGIT = /^\p{N}/u

/** A number of tokens countTokens(text) is never below, found without encoding. */
export function tokensAtLeast(text: string): number {
  if (text.length > EXACT_LIMIT) return 0
  let n = 0
  for (const [run] of text.matchAll(COUNTED_RUNS)) {
    if (DIGIT.test(run)) n += Math.ceil([...run].length / 3)
    else if (LETTER.test(run)) n++
  }
  return n
}

/** A number of tokens countTokens(text) is never above, found without encoding (Infinity when the count is not exact). */
export function tokensAtMost(text: string): number {
  if (text.length > EXACT_LIMIT || (text.length > SEGMENT_CHARS && hasLongStretch(text))) return Number.POSITIVE_INFINITY
  return Buffer.byteLength(text, 'utf8')
}
