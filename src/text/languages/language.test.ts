import assert from 'node:assert/strict'
import { test } from 'node:test'
import { allLanguages, LANGUAGE_TABLES } from './language.ts'
import { numeralValue } from './numbers.ts'

test('every table compiles, and has the seed\'s twelve procedural patterns', () => {
  assert.equal(allLanguages().length, LANGUAGE_TABLES.length)
  for (const table of LANGUAGE_TABLES) {
    assert.equal(table.proceduralPatterns.length, 12, table.code)
    assert.ok(table.stopWords.length > 0 && table.greetings.length > 0 && table.always.length > 0 && table.never.length > 0, table.code)
    for (const phrase of [...table.greetings, ...table.stopWords, ...table.always]) assert.equal(phrase, phrase.normalize('NFKC').toLowerCase(), `${table.code}: tables are written in matched form`)
  }
})

test('numerals written as characters: positional and multiplied', () => {
  assert.equal(numeralValue('十五'), 15)
  assert.equal(numeralValue('二〇二五'), 2025)
  assert.equal(numeralValue('二千二十五'), 2025)
  assert.equal(numeralValue('一万二千'), 12_000)
  assert.equal(numeralValue('三'), 3)
  assert.equal(numeralValue('五x'), undefined)
})
