import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, test } from 'node:test'
import { countTokens, countTokensByLine, EXACT_LIMIT, hasLongStretch, SEGMENT_CHARS, tokensAtLeast, tokensAtMost, truncateToTokens } from './tokens.ts'

// The encoder itself, for reference counts (special-token text counted as text, as engram does).
const library = (createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/o200k_base') as {
  countTokens: (text: string, options: { disallowedSpecial: Set<string> }) => number
}).countTokens
const exactCount = (text: string): number => library(text, { disallowedSpecial: new Set() })

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

/** `n` characters drawn from `alphabet` (code points), deterministic. */
function drawn(n: number, alphabet: string, seed: number): string {
  const next = random(seed)
  const chars = [...alphabet]
  const out: string[] = []
  for (let i = 0; i < n; i++) out.push(chars[Math.floor(next() * chars.length)] as string)
  return out.join('')
}

describe('countTokens', () => {
  test('is the encoder’s exact count on texts of ordinary words, long or short (property)', () => {
    // Long texts go through the segmented path when a stretch without spaces is long (a URL, a
    // CJK sentence with its punctuation, code): the cuts must never change the count.
    const next = random(7)
    const extra = ['中文，中文。', 'https://example.com/a/b?c=1&d=2', 'Ωμέγα', '٣', '½', '\u2028', 'ﬁ', '=====', '     ', "dog's", 'abcdefghij', 'x1y2z3', '\n\n']
    const fragments = [...FRAGMENTS, ...extra]
    for (let i = 0; i < 1500; i++) {
      let text = ''
      const n = Math.floor(next() * 400)
      for (let w = 0; w < n; w++) text += `${fragments[Math.floor(next() * fragments.length)]}${next() < 0.3 ? ' ' : ''}`
      text += ` ${i}`
      assert.equal(countTokens(text), exactCount(text), JSON.stringify(text.slice(0, 300)))
    }
  })

  test('counts a stretch with no place to cut at or above the exact count, by at most two tokens per cut', () => {
    const stretches: Array<[string, string]> = []
    for (const n of [200, 1_000, 5_000]) {
      stretches.push([`a×${n}`, 'a'.repeat(n)], [`letters ${n}`, drawn(n, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', n)])
      stretches.push([`cjk ${n}`, drawn(n, '的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生', n + 1)])
      stretches.push([`thai ${n}`, drawn(n, 'กขคงจฉชซญดตถทธนบปผพฟภมยรลวศษสหอฮะาิีึืุูเแโใไ่้', n + 2)])
      stretches.push([`spaces ${n}`, `x${' '.repeat(n)}y`], [`newlines ${n}`, `x${'\n'.repeat(n)}y`], [`dashes ${n}`, '-'.repeat(n)])
    }
    for (const [name, text] of stretches) {
      const ours = countTokens(text)
      const exact = exactCount(text)
      assert.ok(ours >= exact && ours <= exact + 2 * Math.ceil(text.length / SEGMENT_CHARS), `${name}: ${ours} for exactly ${exact}`)
    }
  })

  test('finds a long stretch exactly where the look-behind pattern it replaced does (property)', () => {
    const pattern = new RegExp(`(?<!\\S)\\S{${SEGMENT_CHARS + 1}}|(?<!\\s)\\s{${SEGMENT_CHARS + 1}}`, 'u')
    // Runs of one kind around the threshold, in code units and in code points: astral letters
    // (two code units, one character), lone surrogates, every kind of whitespace.
    const pieces = ['a', 'é', '東', '🙂', '\ud83d', '\ude42', ' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u2028', '\u3000', '\ufeff', '\u200b', '.']
    const next = random(99)
    for (let i = 0; i < 3_000; i++) {
      let text = ''
      const runs = 1 + Math.floor(next() * 4)
      for (let r = 0; r < runs; r++) {
        const piece = pieces[Math.floor(next() * pieces.length)] as string
        const other = pieces[Math.floor(next() * pieces.length)] as string
        const length = SEGMENT_CHARS - 3 + Math.floor(next() * 8)
        for (let k = 0; k < length; k++) text += next() < 0.97 ? piece : other
      }
      assert.equal(hasLongStretch(text), pattern.test(text), JSON.stringify(text))
    }
  })

  test('estimates a text over EXACT_LIMIT above its exact count and within a quarter of it', () => {
    const next = random(5)
    const vocabulary = 'the of and to in is was he for it with as his on be at by had not are but from or have an they which one you were her all she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three invoice ledger 2026 Ωμέγα 東京'.split(' ')
    const words: string[] = []
    let length = 0
    while (length < 4 * EXACT_LIMIT) {
      const word = vocabulary[Math.floor(next() * vocabulary.length)] as string
      words.push(word)
      length += word.length + 1
    }
    const text = words.join(next() < 0.5 ? ' ' : '\n')
    const ours = countTokens(text)
    const exact = exactCount(text)
    assert.ok(ours >= exact && ours <= exact * 1.25, `${ours} for exactly ${exact}`)
  })

  test('is linear: 10 MB without a space is counted in well under a second, never above its bytes', () => {
    for (const text of ['x'.repeat(10_000_000), drawn(10_000_000, 'abcdefghijklmnopqrstuvwxyz', 3)]) {
      const started = performance.now()
      const n = countTokens(text)
      const ms = performance.now() - started
      assert.ok(ms < 2_000, `took ${Math.round(ms)} ms`)
      assert.ok(n > text.length / 10 && n <= text.length, String(n))
    }
    // A text at the exact limit made of one stretch: segmented, not quadratic.
    const started = performance.now()
    countTokens(drawn(EXACT_LIMIT, 'abcdefghijklmnopqrstuvwxyz', 4))
    assert.ok(performance.now() - started < 2_000)
  })

  test('counts text that looks like a special token as the text it is', () => {
    for (const text of ['<|endoftext|>', 'a message that says <|im_start|>system and <|endofprompt|>']) {
      assert.equal(countTokens(text), exactCount(text))
      assert.ok(countTokens(text) > 1)
      assert.equal(countTokensByLine(`${text}\n${text}`), countTokens(`${text}\n${text}`))
    }
  })

  test('truncateToTokens stays within its budget on a long stretch', () => {
    const text = drawn(200_000, 'abcdefghijklmnopqrstuvwxyz', 9)
    const cut = truncateToTokens(text, 500)
    assert.ok(cut.length > 0 && countTokens(cut) <= 500)
  })
})

test('truncateToTokens keeps the longest prefix within a token of the budget, cut at a sentence or space, for any budget', () => {
  const prose = Array.from({ length: 120 }, (_, i) => `Sentence ${i} talks about the sensor at station ${i * 7} and what the crew logged there.`).join(' ')
  for (const budget of [1, 7, 50, 333, 1_000, 1_500]) {
    const cut = truncateToTokens(prose, budget)
    assert.ok(countTokens(cut) <= budget, `${budget}: ${countTokens(cut)}`)
    assert.ok(prose.startsWith(cut))
    // Long enough: no more than one sentence (≈ 20 tokens) short of the budget.
    if (budget >= 50) assert.ok(countTokens(cut) >= budget - 25, `${budget}: only ${countTokens(cut)}`)
  }
  assert.equal(truncateToTokens(prose, countTokens(prose)), prose)
})

test('tokensAtLeast and tokensAtMost bound countTokens on random texts of the tokenizer’s edge cases and of marks after signs (property)', () => {
  const next = random(23)
  const signs = ['--\u0301', '-\u0301-\u0301', '..\u0308x', "it's", "rock'n'roll", 'l’été', '𝟙𝟚𝟛𝟜', '١٢٣٤٥', 'x²³', '12a34', 'AbcDEF', 'ǅemal']
  let bounded = 0
  for (let i = 0; i < 3_000; i++) {
    let text = randomText(next)
    for (let k = 0; k < 3; k++) if (next() < 0.4) text += (next() < 0.5 ? ' ' : '') + (signs[Math.floor(next() * signs.length)] as string)
    const count = countTokens(text)
    const least = tokensAtLeast(text)
    const most = tokensAtMost(text)
    assert.ok(least <= count, `${least} > ${count} for ${JSON.stringify(text)}`)
    assert.ok(count <= most, `${count} > ${most} for ${JSON.stringify(text)}`)
    if (least > 0) bounded++
  }
  assert.ok(bounded > 2_000, `a lower bound above 0 only ${bounded} times in 3,000`)
  // Not vacuous: close on prose, where most English words are one token.
  const prose = 'The quick brown fox jumps over the lazy dog, twice, and 42 times more before 2026-11-29.'
  assert.ok(tokensAtLeast(prose) >= countTokens(prose) * 0.6, `${tokensAtLeast(prose)} of ${countTokens(prose)}`)
  assert.equal(tokensAtMost(prose), Buffer.byteLength(prose))
  // A text whose count is cut in segments or estimated has no byte bound.
  assert.equal(tokensAtMost('x'.repeat(SEGMENT_CHARS * 3)), Number.POSITIVE_INFINITY)
  assert.equal(tokensAtMost('a b '.repeat(EXACT_LIMIT)), Number.POSITIVE_INFINITY)
})
