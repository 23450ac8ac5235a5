import assert from 'node:assert/strict'
import { test } from 'node:test'
import { analyseQuery } from '../memory/retrieval/query-analysis.ts'
import { allTerms, holdsUnspacedLetters, queryTerms, resegmentAnalysed, stem, terms, words } from './analyse.ts'

test('words fold apostrophes, drop possessives and keep every script', () => {
  assert.deepEqual(words("Caroline’s dog didn't bark at Zoë — 東京 2023"), ['caroline', 'dog', 'didnt', 'bark', 'at', 'zoë', '東京', '2023'])
})

test('terms drop stop words and stem, identically for documents and queries', () => {
  assert.deepEqual(terms('She was running to the paintings'), ['run', 'paint'])
  assert.equal(stem('painting'), stem('paints'))
  assert.deepEqual(queryTerms('what did we do?'), allTerms('what did we do?'), 'a stop-word-only query keeps its words')
})

test('query analysis drops question framing and participant names, and reports who is named', () => {
  const q = analyseQuery('What kind of pottery did Caroline make?', 16, ['Caroline', 'Melanie Smith'])
  assert.deepEqual(q.indexTerms, ['potteri', 'make'])
  assert.deepEqual(q.named, ['Caroline'])
  const both = analyseQuery('When did Caroline and Melanie meet?', 16, ['Caroline', 'Melanie Smith'])
  assert.deepEqual(both.named.sort(), ['Caroline', 'Melanie Smith'])
  assert.deepEqual(both.indexTerms, ['meet'])
  const onlyName = analyseQuery('Who is Caroline?', 16, ['Caroline'])
  assert.deepEqual(onlyName.indexTerms, ['carolin'], 'a name alone is searched rather than nothing')
})

test('text in unspaced scripts is cut into words, CJK words also into letter pairs; other text is split as before', () => {
  // ICU cuts トークン alone as トーク|ン: katakana runs are joined again, and pairs meet the compound.
  assert.deepEqual(words('トークンのローテーション'), ['トークン', 'トー', 'ーク', 'クン', 'の', 'ローテーション', 'ロー', 'ーテ', 'テー', 'ーシ', 'ショ', 'ョン'])
  for (const pair of ['トー', 'ーク', 'クン']) assert.ok(words('デプロイトークンは90日ごと').includes(pair), pair)
  assert.deepEqual(words('部署令牌每90天轮换一次'), ['部署', '令牌', '每', '90', '天', '轮换', '一次'])
  // Korean joins particles to its words: the pairs find 토큰 in 토큰은 and 토큰의.
  assert.ok(words('배포 토큰은').includes('토큰') && words('토큰의 교체').includes('토큰'))
  // Width and composition fold before cutting: half-width katakana, full-width Latin, NFD Hangul.
  assert.deepEqual(words('ﾃﾞﾌﾟﾛｲ ＡＰＩ'), words('デプロイ api'))
  assert.deepEqual(words('비밀번호'.normalize('NFD')), words('비밀번호'))
  assert.deepEqual(words("Zoë's 3.5 e-mail, naïve CAFÉ"), ['zoë', '3', '5', 'e', 'mail', 'naïve', 'café'])
})

test('a field analysed before segmentation, cut again, is what the analysis gives now', () => {
  for (const text of ['デプロイトークンは九十日ごとにローテーションします deploy tokens', '部署令牌每九十天轮换一次', '배포 토큰은 90일마다 교체됩니다', 'plain English, running']) {
    const before = text.normalize('NFKC').toLowerCase().split(/[^\p{L}\p{N}']+/u).filter((part) => part !== '').map(stem).join(' ')
    assert.equal(resegmentAnalysed(before), allTerms(text).join(' '), text)
  }
  assert.equal(holdsUnspacedLetters('plain café'), false)
  assert.equal(holdsUnspacedLetters('東京'), true)
})
