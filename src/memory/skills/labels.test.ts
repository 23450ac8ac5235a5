import assert from 'node:assert/strict'
import { test } from 'node:test'
import { closestLabel, isSafeLabel, makeUniqueLabel, similarityRatio, slugify } from './labels.ts'

test('slugify makes snake_case identifiers', () => {
  assert.equal(slugify('CSV Summary'), 'csv_summary')
  assert.equal(slugify('  Résumé -- Builder!! '), 'resume_builder')
  assert.equal(slugify('!!!'), 'skill')
  assert.equal(slugify('x'.repeat(100)).length, 64)
})

test('similarityRatio equals difflib.SequenceMatcher.ratio', () => {
  // Values computed with CPython's difflib.
  assert.equal(similarityRatio('csv_sumary', 'csv_summary'), 20 / 21)
  assert.equal(similarityRatio('abcd', 'bcde'), 0.75)
  assert.equal(similarityRatio('', ''), 1)
  assert.equal(similarityRatio('abc', 'xyz'), 0)
  // Not symmetric, as the difflib documentation shows.
  assert.equal(similarityRatio('tide', 'diet'), 0.25)
  assert.equal(similarityRatio('diet', 'tide'), 0.5)
})

test('closestLabel applies the 0.6 cutoff and picks the best', () => {
  const labels = ['csv_summary', 'deploy_staging', 'csv_to_parquet']
  assert.deepEqual(closestLabel('csv_sumary', labels)?.label, 'csv_summary')
  assert.equal(closestLabel('send_email', labels), undefined)
  assert.equal(closestLabel('CSV_SUMMARY', labels)?.label, 'csv_summary')
})

test('makeUniqueLabel appends _2, _3 … and isSafeLabel refuses traversal', () => {
  assert.equal(makeUniqueLabel('CSV summary', []), 'csv_summary')
  assert.equal(makeUniqueLabel('CSV summary', ['csv_summary']), 'csv_summary_2')
  assert.equal(makeUniqueLabel('csv summary', ['csv_summary', 'csv_summary_2']), 'csv_summary_3')
  for (const bad of ['..', '../x', 'a/b', '.hidden', '']) assert.equal(isSafeLabel(bad), false, bad)
  assert.equal(isSafeLabel('csv-summary.v2'), true)
})
