/**
 * UTF-8 that gives every byte back. Memory files are edited by hand and copied between machines, so
 * a rules file can hold a line of Latin-1, a pasted binary blob or a multi-byte character cut in
 * half. Node's decoders turn such bytes into U+FFFD, and the next rewrite of the file would write
 * U+FFFD back: the person's bytes would be gone (DESIGN §1 principle 10: kept as it is).
 *
 * `decodeUtf8Lossless` maps each byte that is not part of valid UTF-8 to the lone surrogate
 * U+DC80…U+DCFF (Python's `surrogateescape`). Valid UTF-8 never decodes to a lone surrogate, so
 * `encodeUtf8Lossless` can turn exactly those code units back into their bytes, and
 * `encode(decode(bytes))` equals `bytes` for any input. A line holding such a code unit is not
 * text: readers report it and leave it alone (`hasUndecodableBytes`).
 */

import { Buffer, isUtf8 } from 'node:buffer'

/*
 * Valid UTF-8 as it is, a byte-order mark kept (Buffer's decoder never strips one). Validated with
 * `isUtf8` rather than a fatal TextDecoder: the two refuse the same bytes (overlong forms,
 * surrogates, code points past U+10FFFF), and creating the first TextDecoder of a process loads
 * Node's encoding support, ~4 ms of every `engram status`.
 */
const decodeValid = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')

/** A low surrogate U+DC80…U+DCFF not preceded by a high surrogate: an escaped byte. */
const ESCAPED_BYTE = /(?<![\ud800-\udbff])[\udc80-\udcff]/
const ESCAPED_BYTES = /(?<![\ud800-\udbff])[\udc80-\udcff]/g

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there cannot start one. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const first = bytes[i] as number
  if (first < 0x80) return 1
  const cont = (at: number, low = 0x80, high = 0xbf): boolean => {
    const byte = bytes[at]
    return byte !== undefined && byte >= low && byte <= high
  }
  if (first >= 0xc2 && first <= 0xdf) return cont(i + 1) ? 2 : 0
  if (first === 0xe0) return cont(i + 1, 0xa0) && cont(i + 2) ? 3 : 0
  // 0xED 0xA0–0xBF would encode a surrogate.
  if (first === 0xed) return cont(i + 1, 0x80, 0x9f) && cont(i + 2) ? 3 : 0
  if (first >= 0xe1 && first <= 0xef) return cont(i + 1) && cont(i + 2) ? 3 : 0
  if (first === 0xf0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0
  if (first >= 0xf1 && first <= 0xf3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0
  if (first === 0xf4) return cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3) ? 4 : 0
  return 0
}

/** Decodes UTF-8, keeping a byte-order mark and escaping every invalid byte (see the file comment). */
export function decodeUtf8Lossless(bytes: Uint8Array): string {
  if (isUtf8(bytes)) return decodeValid(bytes)
  let out = ''
  let run = 0
  let i = 0
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i)
    if (length > 0) {
      i += length
      continue
    }
    out += decodeValid(bytes.subarray(run, i)) + String.fromCharCode(0xdc00 + (bytes[i] as number))
    i++
    run = i
  }
  return out + decodeValid(bytes.subarray(run))
}

/** Encodes text as UTF-8, turning the escaped bytes of `decodeUtf8Lossless` back into themselves. */
export function encodeUtf8Lossless(text: string): Buffer {
  if (!ESCAPED_BYTE.test(text)) return Buffer.from(text, 'utf8')
  const parts: Buffer[] = []
  let last = 0
  for (const match of text.matchAll(ESCAPED_BYTES)) {
    parts.push(Buffer.from(text.slice(last, match.index), 'utf8'), Buffer.of(text.charCodeAt(match.index) - 0xdc00))
    last = match.index + 1
  }
  parts.push(Buffer.from(text.slice(last), 'utf8'))
  return Buffer.concat(parts)
}

/** Whether text decoded by `decodeUtf8Lossless` holds bytes that were not UTF-8. */
export function hasUndecodableBytes(text: string): boolean {
  return ESCAPED_BYTE.test(text)
}

const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * Text with every lone surrogate replaced by U+FFFD, as UTF-8 would store it: what a writer hands
 * engram is made well-formed before it is written, so no new line can pass for escaped bytes.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATES, '\ufffd')
}
