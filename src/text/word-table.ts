/**
 * A read-only table of lines keyed by their first word, over the bytes of a shipped resource file:
 * `key` or `key rest of the line`, one per line, ASCII keys. It costs the file's bytes plus two
 * typed arrays (line starts and an open-addressing hash of the keys, 1.4 MB for the 100k words of
 * the vectors), where a `Map<string, number>` and the word strings cost tens of MB of heap.
 *
 * Building those arrays takes tens of milliseconds at start-up, so scripts/build-resources.ts
 * ships them beside the file (`.idx`, `index()`) and `WordTable.read` takes them as they are when
 * they fit the file (same byte length, same line count), and builds them otherwise.
 */
import { endianness } from 'node:os'

const NEWLINE = 0x0a
const SPACE = 0x20
const EMPTY = -1
/** Index layout version, first word of an `.idx` file. */
const INDEX_FORMAT = 1
/** Header words of an `.idx` file: format, byte length of the table's file, lines, hash capacity. */
const HEADER = 4

/** FNV-1a over the key's character codes (all below 128 for a key the table can hold). */
function hashOf(key: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

export class WordTable {
  /** Lines in the file (a final newline does not start one). */
  readonly size: number
  readonly #bytes: Buffer
  /** Byte offset of each line's start, and one past the last line's end. */
  readonly #starts: Uint32Array
  /** The line of each key at its hash slot (linear probing), EMPTY where free. */
  readonly #slots: Int32Array
  readonly #mask: number

  /** The table over `bytes`, with its shipped `index` when that fits these bytes, else built now. */
  static read(bytes: Buffer, index?: Buffer): WordTable {
    if (index && index.byteLength >= HEADER * 4 && index.byteLength % 4 === 0 && endianness() === 'LE') {
      const words = index.byteOffset % 4 === 0 ? new Uint32Array(index.buffer, index.byteOffset, index.byteLength / 4) : new Uint32Array(new Uint8Array(index).buffer)
      const [format, length, lines, capacity] = words as unknown as [number, number, number, number]
      if (format === INDEX_FORMAT && length === bytes.byteLength && words.length === HEADER + lines + 1 + capacity) {
        const starts = words.subarray(HEADER, HEADER + lines + 1)
        const slots = new Int32Array(words.buffer, words.byteOffset + (HEADER + lines + 1) * 4, capacity)
        return new WordTable(bytes, starts, slots)
      }
    }
    return WordTable.build(bytes)
  }

  /** Index `bytes` now (a pass over the file and one hash insert per line). */
  static build(bytes: Buffer): WordTable {
    const length = bytes.length
    let lines = 0
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) lines++
    if (length > 0 && bytes[length - 1] !== NEWLINE) lines++
    const starts = new Uint32Array(lines + 1)
    let capacity = 1
    while (capacity < lines * 2) capacity *= 2
    const slots = new Int32Array(capacity).fill(EMPTY)
    const table = new WordTable(bytes, starts, slots)
    let at = 0
    for (let line = 0; line < lines; line++) {
      starts[line] = at
      let hash = 0x811c9dc5
      let byte = bytes[at]
      while (at < length && byte !== SPACE && byte !== NEWLINE) {
        hash = Math.imul(hash ^ (byte as number), 0x01000193)
        byte = bytes[++at]
      }
      const keyEnd = at
      while (at < length && bytes[at] !== NEWLINE) at++
      at++
      // The first line of a key wins, as a Map filled in file order with "if absent" would.
      for (let slot = (hash >>> 0) & (capacity - 1); ; slot = (slot + 1) & (capacity - 1)) {
        const other = slots[slot] as number
        if (other === EMPTY) {
          slots[slot] = line
          break
        }
        if (table.#keyIs(other, bytes.toString('latin1', starts[line] as number, keyEnd))) break
      }
    }
    starts[lines] = Math.min(at, length + 1)
    return table
  }

  private constructor(bytes: Buffer, starts: Uint32Array, slots: Int32Array) {
    this.#bytes = bytes
    this.#starts = starts
    this.#slots = slots
    this.#mask = slots.length - 1
    this.size = starts.length - 1
  }

  /** The index as `WordTable.read` takes it (the `.idx` file shipped beside a resource). */
  index(): Uint8Array {
    const words = new Uint32Array(HEADER + this.#starts.length + this.#slots.length)
    words.set([INDEX_FORMAT, this.#bytes.byteLength, this.size, this.#slots.length])
    words.set(this.#starts, HEADER)
    words.set(new Uint32Array(this.#slots.buffer, this.#slots.byteOffset, this.#slots.length), HEADER + this.#starts.length)
    return new Uint8Array(words.buffer)
  }

  /** The line holding `key`, or -1. */
  find(key: string): number {
    for (let slot = hashOf(key) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const line = this.#slots[slot] as number
      if (line === EMPTY) return -1
      if (this.#keyIs(line, key)) return line
    }
  }

  /** The key of `line`. */
  key(line: number): string {
    return this.#bytes.toString('latin1', this.#starts[line] as number, this.#keyEnd(line))
  }

  /** The rest of `line` after its key and the space ('' when the line is only a key). */
  rest(line: number): string {
    const from = this.#keyEnd(line) + 1
    const to = (this.#starts[line + 1] as number) - 1
    return from >= to ? '' : this.#bytes.toString('utf8', from, to)
  }

  /** Byte offset just past the key of `line`. */
  #keyEnd(line: number): number {
    const bytes = this.#bytes
    const end = Math.min((this.#starts[line + 1] as number) - 1, bytes.length)
    let at = this.#starts[line] as number
    while (at < end && bytes[at] !== SPACE) at++
    return at
  }

  /** Is `key` the key of `line`: its bytes, then a space, the end of the line or of the file. */
  #keyIs(line: number, key: string): boolean {
    const bytes = this.#bytes
    const start = this.#starts[line] as number
    const after = start + key.length
    if (after > bytes.length) return false
    for (let i = 0; i < key.length; i++) if (bytes[start + i] !== key.charCodeAt(i)) return false
    return after === bytes.length || bytes[after] === SPACE || bytes[after] === NEWLINE
  }
}
