import assert from 'node:assert/strict'
import { test } from 'node:test'
import { analyseQuery } from '../memory/retrieval/query-analysis.ts'
import { allTerms, queryTerms, stem, terms, words } from './analyse.ts'

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
