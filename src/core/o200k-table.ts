/**
 * The o200k encoding's byte-pair ranks in the compact form engram ships (resources/o200k.ranks,
 * written by scripts/build-resources.ts from gpt-tokenizer's own table), and the count of one
 * pre-tokenised piece over them. gpt-tokenizer keeps its 200k ranks as a 2.4 MB JavaScript array
 * of strings and builds a Map of them on first use: 200–450 ms of CPU, the largest part of a fresh
 * process's first `begin` and of `engram mcp`'s first answer (issue 33). Here the ranks are the
 * file's bytes read as they are: each token's bytes, their offsets, and an open-addressing hash of
 * them; nothing is built at start-up.
 *
 * Counts are gpt-tokenizer's exactly (tokens.test.ts compares them on thousands of real and random
 * texts), including one quirk of its lookup: a byte sequence that is valid UTF-8 is looked up as
 * the string TextDecoder makes of it, which drops a leading byte-order mark (EF BB BF), and among
 * the tokens it keeps as strings only; the others (invalid UTF-8, and the nine tokens that start
 * with a byte-order mark) are looked up as bytes.
 */
import { endianness } from 'node:os'

/**
 * The o200k pre-tokenisation pattern, gpt-tokenizer's O200K_TOKEN_SPLIT_REGEX (tiktoken's), as a
 * source for the `u` flag; o200k-table.test.ts holds it to gpt-tokenizer's.
 */
export const O200K_PIECES =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/** Layout version, first word of the file. */
const FORMAT = 1
/** Header words: format, tokens, bytes of all tokens, hash capacity. */
const HEADER = 4
const EMPTY = -1
const NO_RANK = Number.POSITIVE_INFINITY
/** Half of a surrogate pair (TextEncoder writes it as U+FFFD; gpt-tokenizer's string lookup never finds it). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
/**
 * Pieces whose count is remembered: merged ones, as gpt-tokenizer's merge cache does, and whole
 * tokens, whose look-up (encoding the piece, hashing its bytes) cost more than finding it here —
 * priming counts the lines of memories it has not shown before, made of words it has. The memo
 * has twice as many slots (open addressing) and is emptied when full.
 */
const PIECE_MEMO_LIMIT = 100_000
const PIECE_MEMO_SLOTS = 262_144

/** FNV-1a over `bytes[start, end)`. */
function hashOf(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193)
  return hash >>> 0
}

/** Whether `bytes[start, end)` is well-formed UTF-8 (as gpt-tokenizer's isValidUTF8 decides it). */
function validUtf8(bytes: Uint8Array, start: number, end: number): boolean {
  let i = start
  while (i < end) {
    const lead = bytes[i] as number
    let length: number
    let codePoint: number
    if (lead <= 0x7f) {
      i++
      continue
    } else if ((lead & 0xe0) === 0xc0) {
      if (lead <= 0xc1) return false
      length = 2
      codePoint = lead & 0x1f
    } else if ((lead & 0xf0) === 0xe0) {
      length = 3
      codePoint = lead & 0x0f
    } else if ((lead & 0xf8) === 0xf0) {
      if (lead > 0xf4) return false
      length = 4
      codePoint = lead & 0x07
    } else return false
    if (i + length > end) return false
    for (let j = 1; j < length; j++) {
      const byte = bytes[i + j] as number
      if ((byte & 0xc0) !== 0x80) return false
      codePoint = (codePoint << 6) | (byte & 0x3f)
    }
    if ((length === 3 && codePoint < 0x800) || (length === 4 && codePoint < 0x10000)) return false
    if ((codePoint >= 0xd800 && codePoint <= 0xdfff) || codePoint > 0x10ffff) return false
    i += length
  }
  return true
}

/** Whether `bytes[start, end)` begins with a UTF-8 byte-order mark. */
const bomAt = (bytes: Uint8Array, start: number, end: number): boolean => end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf

export class O200kTable {
  readonly #starts: Uint32Array
  readonly #slots: Int32Array
  readonly #mask: number
  readonly #tokens: Uint8Array
  readonly #encoder = new TextEncoder()
  /** The piece being counted, as UTF-8 (grown when a longer piece comes). */
  #scratch = new Uint8Array(256)
  /** The memo of piece counts, keyed by the piece's characters: found without making a string of a piece cut from a longer text. */
  #memoKeys: Array<string | undefined> = new Array(PIECE_MEMO_SLOTS)
  readonly #memoCounts = new Int32Array(PIECE_MEMO_SLOTS)
  #memoSize = 0

  /** The file's contents as the table, or undefined when they are not a table of this format. */
  static read(file: Buffer): O200kTable | undefined {
    if (endianness() !== 'LE' || file.byteLength < HEADER * 4) return undefined
    const aligned = file.byteOffset % 4 === 0 ? file : Buffer.from(file)
    const header = new Uint32Array(aligned.buffer, aligned.byteOffset, HEADER)
    const [format, count, bytes, capacity] = header as unknown as [number, number, number, number]
    const words = HEADER + count + 1 + capacity
    if (format !== FORMAT || aligned.byteLength !== words * 4 + bytes || (capacity & (capacity - 1)) !== 0) return undefined
    const starts = new Uint32Array(aligned.buffer, aligned.byteOffset + HEADER * 4, count + 1)
    const slots = new Int32Array(aligned.buffer, aligned.byteOffset + (HEADER + count + 1) * 4, capacity)
    return new O200kTable(starts, slots, new Uint8Array(aligned.buffer, aligned.byteOffset + words * 4, bytes))
  }

  /** The file `read` takes, for the tokens' bytes in rank order (scripts/build-resources.ts). */
  static file(tokens: readonly Uint8Array[]): Uint8Array {
    let capacity = 1
    while (capacity < tokens.length * 2.5) capacity *= 2
    const bytes = tokens.reduce((sum, token) => sum + token.byteLength, 0)
    const words = HEADER + tokens.length + 1 + capacity
    const out = new Uint8Array(words * 4 + bytes)
    const header = new Uint32Array(out.buffer, 0, words)
    header.set([FORMAT, tokens.length, bytes, capacity])
    const starts = header.subarray(HEADER, HEADER + tokens.length + 1)
    const slots = new Int32Array(out.buffer, (HEADER + tokens.length + 1) * 4, capacity).fill(EMPTY)
    const all = out.subarray(words * 4)
    let at = 0
    tokens.forEach((token, rank) => {
      starts[rank] = at
      all.set(token, at)
      at += token.byteLength
      let slot = hashOf(token, 0, token.byteLength) & (capacity - 1)
      while (slots[slot] !== EMPTY) slot = (slot + 1) & (capacity - 1)
      slots[slot] = rank
    })
    starts[tokens.length] = at
    return out
  }

  private constructor(starts: Uint32Array, slots: Int32Array, tokens: Uint8Array) {
    this.#starts = starts
    this.#slots = slots
    this.#mask = slots.length - 1
    this.#tokens = tokens
  }

  /** Tokens in the rank table. */
  get size(): number {
    return this.#starts.length - 1
  }

  /** The rank of the token whose bytes are exactly `bytes[start, end)`, or -1. */
  #find(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start
    const tokens = this.#tokens
    for (let slot = hashOf(bytes, start, end) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const rank = this.#slots[slot] as number
      if (rank === EMPTY) return -1
      const from = this.#starts[rank] as number
      if ((this.#starts[rank + 1] as number) - from !== length) continue
      let same = true
      for (let i = 0; i < length && same; i++) same = tokens[from + i] === bytes[start + i]
      if (same) return rank
    }
  }

  /** The rank gpt-tokenizer finds for `bytes[start, end)` (see the file comment), or NO_RANK. */
  #rank(bytes: Uint8Array, start: number, end: number): number {
    if (validUtf8(bytes, start, end)) {
      const from = bomAt(bytes, start, end) ? start + 3 : start
      if (from === end || bomAt(bytes, from, end)) return NO_RANK
      const rank = this.#find(bytes, from, end)
      return rank < 0 ? NO_RANK : rank
    }
    const rank = this.#find(bytes, start, end)
    return rank < 0 ? NO_RANK : rank
  }

  /** Tokens of one piece of the o200k pre-tokenisation (a match of its split pattern). */
  countPiece(piece: string): number {
    return this.countPieceIn(piece, 0, piece.length)
  }

  /** Tokens of the piece `text[start, end)`. */
  countPieceIn(text: string, start: number, end: number): number {
    if (end - start === 1 && text.charCodeAt(start) < 0x80) return 1
    let hash = 0x811c9dc5
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
    const mask = PIECE_MEMO_SLOTS - 1
    let slot = hash & mask
    for (let key = this.#memoKeys[slot]; key !== undefined; slot = (slot + 1) & mask, key = this.#memoKeys[slot]) {
      if (key.length !== end - start) continue
      let same = true
      for (let i = 0; i < key.length && same; i++) same = key.charCodeAt(i) === text.charCodeAt(start + i)
      if (same) return this.#memoCounts[slot] as number
    }
    // Kept as a copy: a piece cut from a long message must not keep the whole message alive.
    const piece = ` ${text.slice(start, end)}`.slice(1)
    const n = this.#countUncached(piece)
    if (this.#memoSize >= PIECE_MEMO_LIMIT) {
      this.#memoKeys = new Array(PIECE_MEMO_SLOTS)
      this.#memoSize = 0
      slot = hash & mask
    }
    this.#memoKeys[slot] = piece
    this.#memoCounts[slot] = n
    this.#memoSize++
    return n
  }

  #countUncached(piece: string): number {
    if (this.#scratch.length < piece.length * 3) this.#scratch = new Uint8Array(piece.length * 3)
    const bytes = this.#scratch
    const length = this.#encoder.encodeInto(piece, bytes).written
    // A whole piece that is a token: gpt-tokenizer finds it among its string tokens (never one that
    // starts with a byte-order mark; never a piece holding half a surrogate pair).
    const whole = !bomAt(bytes, 0, length) && this.#find(bytes, 0, length) >= 0 && (length === piece.length || !LONE_SURROGATE.test(piece))
    return whole ? 1 : this.#mergedCount(bytes, length)
  }

  /** Parts left after byte-pair merging `bytes[0, length)`: the lowest-ranked adjacent pair first, the leftmost of equals. */
  #mergedCount(bytes: Uint8Array, length: number): number {
    const starts: number[] = []
    const ranks: number[] = []
    for (let i = 0; i <= length; i++) {
      starts.push(i)
      ranks.push(i < length - 1 ? this.#rank(bytes, i, i + 2) : NO_RANK)
    }
    const rankAt = (index: number): number => {
      const end = starts[index + 2]
      return end === undefined ? NO_RANK : this.#rank(bytes, starts[index] as number, end)
    }
    while (starts.length > 1) {
      let lowest = NO_RANK
      let at = -1
      for (let i = 0; i < ranks.length - 1; i++) {
        if ((ranks[i] as number) < lowest) {
          lowest = ranks[i] as number
          at = i
        }
      }
      if (at === -1) break
      starts.splice(at + 1, 1)
      ranks.splice(at, 1)
      ranks[at] = rankAt(at)
      if (at > 0) ranks[at - 1] = rankAt(at - 1)
    }
    return starts.length - 1
  }
}
