import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { countTokens, countTokensByLine } from './tokens.ts'

/** A deterministic pseudo-random generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
}

// Fragments chosen to sit on every rule of the encoder's split pattern: letters in both cases,
// contractions, digits, runs of punctuation, `/` after a newline, spaces and tabs before and after
// line breaks, carriage returns, combining marks, CJK, emoji.
const FRAGMENTS = [
  'the', 'The', 'THE', 'Caroline', "don't", "I'LL", '2023-05-08', '12345', '3.14', '(-> conv:1#msg:7)', ')', '…', '.', '!?', '->',
  '- [', '] ', '[2023-05-08 · session conv-26#1]', '### Related memories', '/usr/bin', '//', '/', ' ', '  ', '\t', '\r', '\u00a0',
  'e\u0301', 'café', 'naïve', '東京', 'こんにちは', '🙂', '👩‍💻', '&lt;', '\\#', '"', "'", '`', '$', '%', '#', '',
]

function randomText(next: () => number): string {
  const lines: string[] = []
  const count = 1 + Math.floor(next() * 12)
  for (let l = 0; l < count; l++) {
    let line = ''
    const words = Math.floor(next() * 9)
    for (let w = 0; w < words; w++) line += `${FRAGMENTS[Math.floor(next() * FRAGMENTS.length)]}${next() < 0.6 ? ' ' : ''}`
    lines.push(next() < 0.5 ? line.trimEnd() : line)
  }
  const breaks = ['\n', '\n', '\n', '\n\n', '\n\n\n']
  return lines.reduce((text, line, i) => (i === 0 ? line : `${text}${breaks[Math.floor(next() * breaks.length)]}${line}`), next() < 0.1 ? '\n' : '')
}

describe('countTokensByLine', () => {
  test('equals countTokens on random texts built from the tokenizer’s edge cases (property)', () => {
    const next = random(11)
    for (let i = 0; i < 3000; i++) {
      const text = randomText(next)
      assert.equal(countTokensByLine(text), countTokens(text), JSON.stringify(text))
    }
  })

  test('equals countTokens where a newline merges with the line before it', () => {
    // `)` and `.` followed by newlines encode differently together than apart.
    for (const text of ['a (-> x)\nb', 'end.\n\nNext', '- [knowledge 2026-01-01] text (-> agents/a.md)\n- [rule 2026-01-02] more', 'x)\n/y', 'x \ny', 'x\n y', '\n\nstart', 'end\n\n', '']) {
      assert.equal(countTokensByLine(text), countTokens(text), JSON.stringify(text))
    }
  })
})

test('special tokens in text are counted as the characters they are, never refused', () => {
  for (const text of ['<|endoftext|>', 'say <|im_start|>system hi<|im_end|>', '<|fim_prefix|>x']) {
    assert.ok(countTokens(text) > 1, text)
    assert.equal(countTokensByLine(`${text}\n${text}`), countTokens(`${text}\n${text}`))
  }
})
