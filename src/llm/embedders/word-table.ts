/**
 * A read-only table of lines keyed by their first word, over the bytes of a shipped resource file:
 * `key` or `key rest of the line`, one per line, ASCII keys. It costs the file's bytes plus three
 * small typed arrays (line starts, key ends, an open-addressing hash of the keys), a few MB for
 * the 341k words of the vectors, where a `Map<string, number>` and the word strings cost tens of
 * MB of heap and a second of start-up.
 */

const NEWLINE = 0x0a
const SPACE = 0x20
const EMPTY = -1

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
  /** Byte offset just past each line's key. */
  readonly #keyEnds: Uint32Array
  readonly #slots: Int32Array
  readonly #mask: number

  constructor(bytes: Buffer) {
    this.#bytes = bytes
    let lines = 0
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) lines++
    if (bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE) lines++
    this.size = lines
    this.#starts = new Uint32Array(lines + 1)
    this.#keyEnds = new Uint32Array(lines)
    let capacity = 1
    while (capacity < lines * 2) capacity *= 2
    this.#slots = new Int32Array(capacity).fill(EMPTY)
    this.#mask = capacity - 1
    let start = 0
    for (let line = 0; line < lines; line++) {
      let keyEnd = start
      while (keyEnd < bytes.length && bytes[keyEnd] !== SPACE && bytes[keyEnd] !== NEWLINE) keyEnd++
      let end = bytes[keyEnd] === SPACE ? bytes.indexOf(NEWLINE, keyEnd) : keyEnd
      if (end === -1) end = bytes.length
      this.#starts[line] = start
      this.#keyEnds[line] = keyEnd
      // The first line of a key wins, as a Map filled in file order with "if absent" would.
      const slot = this.#freeSlot(start, keyEnd)
      if (slot >= 0) this.#slots[slot] = line
      start = end + 1
    }
    this.#starts[lines] = start
  }

  /** The line holding `key`, or -1. */
  find(key: string): number {
    const slot = this.#slotOf(key)
    return slot < 0 ? -1 : (this.#slots[slot] as number)
  }

  /** The key of `line`. */
  key(line: number): string {
    return this.#bytes.toString('latin1', this.#starts[line] as number, this.#keyEnds[line] as number)
  }

  /** The rest of `line` after its key and the space ('' when the line is only a key). */
  rest(line: number): string {
    const from = (this.#keyEnds[line] as number) + 1
    const to = (this.#starts[line + 1] as number) - 1
    return from >= to ? '' : this.#bytes.toString('utf8', from, to)
  }

  /** The slot of `key` when present, else -1. */
  #slotOf(key: string): number {
    for (let slot = hashOf(key) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const line = this.#slots[slot] as number
      if (line === EMPTY) return -1
      if (this.#keyIs(line, key)) return slot
    }
  }

  /** The free slot for the key at bytes[start, end), or -1 when an earlier line has that key. */
  #freeSlot(start: number, end: number): number {
    const bytes = this.#bytes
    let hash = 0x811c9dc5
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193)
    for (let slot = (hash >>> 0) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const line = this.#slots[slot] as number
      if (line === EMPTY) return slot
      const other = this.#starts[line] as number
      if ((this.#keyEnds[line] as number) - other === end - start && bytes.compare(bytes, start, end, other, other + end - start) === 0) return -1
    }
  }

  #keyIs(line: number, key: string): boolean {
    const start = this.#starts[line] as number
    if ((this.#keyEnds[line] as number) - start !== key.length) return false
    for (let i = 0; i < key.length; i++) if (this.#bytes[start + i] !== key.charCodeAt(i)) return false
    return true
  }
}
