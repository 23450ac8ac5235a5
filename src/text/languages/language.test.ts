import assert from 'node:assert/strict'
import { test } from 'node:test'
import { allLanguages, detectLanguage, LANGUAGE_TABLES } from './language.ts'
import { numeralValue } from './numbers.ts'

test('a message\'s language: by script, then by stop words; English and stray foreign words stay English (undefined)', () => {
  const cases: Array<[string, string | undefined]> = [
    ['デプロイトークンはどのくらいの頻度でローテーションされますか？', 'ja'],
    ['常にpsqlコマンドを示してください', 'ja'],
    ['部署令牌多久轮换一次？', 'zh'],
    ['배포 토큰은 얼마나 자주 교체되나요?', 'ko'],
    ['Wie oft werden die Deploy-Tokens rotiert?', 'de'],
    ['Ich bevorzuge kurze Antworten.', 'de'],
    ['À quelle fréquence les jetons sont-ils renouvelés ?', 'fr'],
    ['¿Con qué frecuencia se rotan los tokens?', 'es'],
    ['How often are deploy tokens rotated?', undefined],
    ['I went to see Die Hard with de la Cruz and the kids', undefined],
    ['I met Tanaka (田中) yesterday at the office', undefined],
    ['', undefined],
  ]
  for (const [text, code] of cases) assert.equal(detectLanguage(text)?.table.code, code, text)
})

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
