import assert from 'node:assert/strict'
import { test } from 'node:test'
import { questionMetrics, summarise, summariseByCategory } from './retrieval-metrics.ts'

const texts: Record<string, string> = { A: 'alpha  said\nthis', B: 'beta said that', C: 'gamma', S: 'stale fact' }
const text = (id: string): string | undefined => texts[id]

test('rank metrics of a hand-checked question', () => {
  // gold A, B; A at rank 3 (index 2), B at rank 12 (index 11); stale S at rank 1.
  const ranked = ['x1', 'S', 'A', ...Array.from({ length: 8 }, (_, i) => `y${i}`), 'B']
  const m = questionMetrics({ category: 'c', evidence: ['A', 'B'], staleEvidence: ['S'] }, { id: 'q', ranked, contexts: {}, ms: 1 }, text)
  assert.deepEqual(m.recall, { 1: 0, 5: 0.5, 10: 0.5, 25: 1, 50: 1 })
  assert.equal(m.all10, 0)
  assert.equal(m.hit10, 1)
  assert.equal(m.mrr, 1 / 3)
  assert.equal(m.updOverStale, 0, 'the stale turn ranks above the evidence')
})

test('context recall folds whitespace, and a context over budget scores 0', () => {
  const fits = '[2024-03-01]\nAda: alpha said this\nBen: gamma'
  const tooLong = `alpha said this ${'x'.repeat(1024 * 4)}`
  const m = questionMetrics({ category: 'c', evidence: ['A', 'B'] }, { id: 'q', ranked: [], contexts: { 512: fits, 1024: tooLong, 2048: 'beta said that alpha said this' }, ms: 2 }, text)
  assert.deepEqual(m.budget, { 512: 0.5, 1024: 0, 2048: 1 })
  assert.equal(m.mrr, 0)
  assert.equal(m.updOverStale, undefined)
})

test('summaries average per category, overall leaves adversarial out and reports it alone', () => {
  const q = (recall10: number, ms: number) => ({ recall: { 1: 0, 5: 0, 10: recall10, 25: 0, 50: 0 }, all10: recall10 === 1 ? 1 : 0, hit10: recall10 > 0 ? 1 : 0, mrr: 0, budget: { 512: 0, 1024: 0, 2048: 0 }, updOverStale: undefined, ms })
  const rows = [
    { category: 'single-hop', metrics: q(1, 1) },
    { category: 'multi-hop', metrics: q(0.5, 3) },
    { category: 'adversarial', metrics: q(0, 9) },
  ]
  const by = summariseByCategory(rows)
  assert.deepEqual(by.map((r) => r.label), ['multi-hop', 'single-hop', 'overall', 'adversarial'])
  const overall = by.find((r) => r.label === 'overall')?.summary
  assert.equal(overall?.n, 2)
  assert.equal(overall?.recall[10], 75)
  assert.equal(overall?.all10, 50)
  assert.equal(by.find((r) => r.label === 'adversarial')?.summary.recall[10], 0)
  assert.equal(summarise([]).n, 0)
})

test('context recall counts a turn only when all of its text was packed, as read: escaping and markdown marks folded, a cut or a pointer not counted', () => {
  const said: Record<string, string> = {
    H: '## Plan\nUse **pgbouncer** in <transaction> mode',
    L: 'The first half of a long reply. The second half holds the answer.',
    P: 'only pointed to',
  }
  const context = [
    '[2024-03-01]',
    // Priming's forms: a heading run escaped at the start, emphasis and heading marks left out, a tag's < escaped.
    'user: \\## Plan Use pgbouncer in &lt;transaction> mode',
    'assistant: The first half of a long reply.… (-> conv:1#msg:7)',
    '(-> conv:1#msg:9)',
  ].join('\n')
  const m = questionMetrics({ category: 'c', evidence: ['H', 'L', 'P'] }, { id: 'q', ranked: ['H', 'L', 'P'], contexts: { 512: context, 1024: context, 2048: context }, ms: 1 }, (id) => said[id])
  assert.deepEqual(m.budget, { 512: 1 / 3, 1024: 1 / 3, 2048: 1 / 3 }, 'the escaped, unmarked turn counts; the cut one and the one only pointed to do not')
  assert.equal(m.recall[5], 1, 'all three ranked: rank recall is not what the context holds')
})
