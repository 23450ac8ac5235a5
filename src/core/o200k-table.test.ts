/**
 * The shipped o200k ranks count as gpt-tokenizer does (decision 0082): every token is found, and
 * real conversations (the dev sets in ../shared/bench, when present) and the texts that meet its
 * lookup's corners (byte-order marks, halves of surrogate pairs, invalid merges) get its counts.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { O200K_PIECES, O200kTable } from './o200k-table.ts'

const require = createRequire(import.meta.url)
const library = require('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens: (text: string, options: { disallowedSpecial: Set<string> }) => number }
const ranks = (require('gpt-tokenizer/cjs/bpeRanks/o200k_base') as { default: Array<string | number[]> }).default
const libraryPieces = (require('gpt-tokenizer/cjs/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX: RegExp }).O200K_TOKEN_SPLIT_REGEX
const split = new RegExp(O200K_PIECES, 'gu')
const root = resolve(import.meta.dirname, '../..')
const table = O200kTable.read(readFileSync(join(root, 'resources/o200k.ranks'))) as O200kTable

const expected = (text: string): number => library.countTokens(text, { disallowedSpecial: new Set() })
function counted(text: string): number {
  let n = 0
  for (const [piece] of text.matchAll(split)) n += table.countPiece(piece)
  return n
}

test('the pre-tokenisation pattern is gpt-tokenizer’s', () => {
  assert.equal(O200K_PIECES, libraryPieces.source)
  assert.ok(libraryPieces.unicode)
})

test('the shipped file holds gpt-tokenizer’s ranks: each token kept as a string is one token', () => {
  assert.ok(table, 'resources/o200k.ranks is not a table of this format')
  assert.equal(table.size, ranks.length)
  let strings = 0
  for (const token of ranks) {
    if (typeof token !== 'string') continue
    strings++
    assert.equal(table.countPiece(token), 1, JSON.stringify(token))
  }
  assert.ok(strings > 198_000)
})

test('counts the corners of gpt-tokenizer’s lookup as it does: byte-order marks, halves of surrogate pairs, special-token text', () => {
  const corners = [
    '\uFEFF',
    '\uFEFFhello',
    '\uFEFF\n\n',
    '\uFEFF\uFEFF',
    '\uFEFF//',
    ' \uFEFFnamespace',
    'x\uD800y',
    'ab\uDC00\uD800cd',
    '\uD83D',
    '<|endoftext|> and <|im_start|>',
    '😀😀 ﷽ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    '\u0000\u0001\u007f\u0080\u00ff',
    'ﾃｽﾄ テスト 테스트 тест',
  ]
  for (const text of corners) assert.equal(counted(text), expected(text), JSON.stringify(text))
})

// ../shared/bench beside the checkout (a worktree sits one folder deeper); ENGRAM_BENCH_DIR overrides.
const bench = process.env.ENGRAM_BENCH_DIR ?? [join(root, '../shared/bench'), join(root, '../../shared/bench')].find((dir) => existsSync(dir)) ?? join(root, '../shared/bench')
const sets = ['locomo10', 'beam500k-dev'].map((name) => join(bench, `${name}.eval.json`))
const available = sets.every((file) => existsSync(file))
if (!available) console.log(`NOTICE: o200k-table's dev-set comparison skipped: the dev sets are not in ${bench}`)

test('counts 3,000 turns of the dev sets (LoCoMo and BEAM) as gpt-tokenizer does', { skip: available ? false : 'the dev sets are not present' }, () => {
  type EvalSet = { conversations: Array<{ sessions: Array<{ turns: Array<{ text: string }> }> }> }
  const turns = sets.flatMap((file) => (JSON.parse(readFileSync(file, 'utf8')) as EvalSet).conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.text))))
  // Evenly spaced over both sets: chat, code, logs and tables.
  const step = Math.max(1, Math.floor(turns.length / 3000))
  let compared = 0
  for (let i = 0; i < turns.length && compared < 3000; i += step, compared++) {
    const text = turns[i] as string
    assert.equal(counted(text), expected(text), JSON.stringify(text.slice(0, 200)))
  }
  assert.equal(compared, 3000)
})
