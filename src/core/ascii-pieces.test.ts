import assert from 'node:assert/strict'
import { test } from 'node:test'
import { seededRandom } from '../test-support/seeded-random.ts'
import { asciiPieceEnd, isAscii } from './ascii-pieces.ts'
import { O200K_PIECES } from './o200k-table.ts'

const PATTERN = new RegExp(O200K_PIECES, 'gu')

function scanned(text: string): string[] {
  const pieces: string[] = []
  for (let at = 0, end = 0; at < text.length; at = end) {
    end = asciiPieceEnd(text, at)
    assert.ok(end > at, `no progress at ${at} of ${JSON.stringify(text)}`)
    pieces.push(text.slice(at, end))
  }
  return pieces
}

// Every rule of the pattern in ASCII: both cases, contractions (whole, cut short, in either case),
// digit runs, signs, slashes and line breaks after signs, every whitespace character, control characters.
const FRAGMENTS = [
  'the', 'The', 'THE', 'tHe', 'ABc', "don't", "DON'T", "I'LL", "we'Re", "it'S", "'s", "'", "''", "'l", "'v", "x'", 'O\'Neil', 'McDonald',
  '2023-05-08', '12345', '7', '3.14', '(-> conv:1#msg:7)', ')', '.', '!?', '->', '- [', '] ', '/usr/bin', '//', '/', '\\', '"', '`', '$',
  ' ', '  ', '   ', '\t', '\n', '\r', '\r\n', '\v', '\f', ' \n ', '\n\n', '\t\n', '\u0000', '\u001f', '\u007f', '~', '_', '_x', 'x_y',
]

test('finds the pieces the encoder’s pattern finds, on random ASCII texts of its edge cases (property)', () => {
  const next = seededRandom(7)
  for (let i = 0; i < 20_000; i++) {
    let text = ''
    const parts = 1 + Math.floor(next() * 10)
    for (let p = 0; p < parts; p++) text += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)]
    assert.deepEqual(scanned(text), text.match(PATTERN) ?? [], JSON.stringify(text))
  }
})

test('finds the pieces of every ASCII character alone and of every pair', () => {
  const chars = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code))
  for (const a of chars) {
    assert.deepEqual(scanned(a), a.match(PATTERN), JSON.stringify(a))
    for (const b of chars) for (const c of ['', 'a', 'A', ' ', '1', '.', '\n', "'s"]) {
      const text = `${a}${b}${c}`
      assert.deepEqual(scanned(text), text.match(PATTERN), JSON.stringify(text))
    }
  }
})

test('isAscii is false as soon as one character is not ASCII', () => {
  assert.equal(isAscii('plain text, 42.'), true)
  assert.equal(isAscii(''), true)
  assert.equal(isAscii('café'), false)
  assert.equal(isAscii('a\u0080'), false)
  assert.equal(isAscii('🙂'), false)
})
