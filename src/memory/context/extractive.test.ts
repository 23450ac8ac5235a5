import assert from 'node:assert/strict'
import { test } from 'node:test'
import { countTokens } from '../../core/tokens.ts'
import { extractiveSummary, splitSentences } from './extractive.ts'
import { prng } from './test-support/harness.ts'

test('sentences split at . ! ? and line breaks', () => {
  assert.deepEqual(splitSentences('One. Two! Three?\nFour 4.5 stays'), ['One.', 'Two!', 'Three?', 'Four 4.5 stays'])
})

test('keeps the informative sentences, in chronological order, with speaker and time', () => {
  const summary = extractiveSummary(
    [
      { prefix: '[2026-03-01 09:00] ada (user)', text: 'Good morning! The Kestrel deploy failed at 02:14 because the TLS certificate expired.' },
      { prefix: '[2026-03-01 09:02] assistant', text: 'Sure. I will renew it.' },
      { prefix: '[2026-03-01 09:05] ada (user)', text: 'We decided to automate renewal with certbot, and it must run weekly.' },
    ],
    70,
  )
  const lines = summary.split('\n')
  assert.match(lines[0]!, /^\[2026-03-01 09:00\] ada \(user\): The Kestrel deploy failed at 02:14/)
  assert.match(summary, /\[2026-03-01 09:05\] ada \(user\): We decided to automate renewal/)
  assert.doesNotMatch(summary, /Good morning|Sure\./)
  assert.ok(countTokens(summary) <= 70)
})

test('never over the target, never empty, for random inputs', () => {
  const random = prng(11)
  const vocabulary = 'alpha beta gamma 42 Delta decided must the a of to. and! Zurich why? 2026-03-01'.split(' ')
  for (let round = 0; round < 60; round++) {
    const segments = Array.from({ length: 1 + Math.floor(random() * 12) }, (_, i) => ({
      prefix: `[2026-03-01 09:${String(i).padStart(2, '0')}] user`,
      text: Array.from({ length: 1 + Math.floor(random() * 80) }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' '),
    }))
    const target = 16 + Math.floor(random() * 200)
    const summary = extractiveSummary(segments, target)
    assert.ok(summary.length > 0)
    assert.ok(countTokens(summary) <= target, `${countTokens(summary)} ≤ ${target}`)
  }
})

test('a target too small for a line with its time still gives a whole sentence, with its speaker', () => {
  // A chunk of four short messages: its target (a third of 49 tokens) is smaller than one
  // "[2026-03-02 09:00] ada (user)" prefix, which left a summary of the prefix alone.
  const segments = [
    { prefix: '[2026-03-02 09:00] ada (user)', text: 'Hi, my name is Ada Lovelace. I look after the billing service.' },
    { prefix: '[2026-03-02 09:00] assistant', text: 'Nice to meet you, Ada.' },
    { prefix: '[2026-03-02 09:03] ada (user)', text: 'Please deploy the billing service to staging.' },
    { prefix: '[2026-03-02 09:03] assistant', text: '[tool call deploy c1] {"service":"billing","target":"staging"}' },
  ]
  for (const target of [16, 17]) {
    const summary = extractiveSummary(segments, target)
    assert.match(summary, /^(ada \(user\)|assistant): [A-Z][^\n]*[.!?]$/, summary)
    assert.ok(countTokens(summary) <= target, `${countTokens(summary)} ≤ ${target}`)
  }
  // Room for the full prefix: it is kept.
  assert.match(extractiveSummary(segments, 30), /^\[2026-03-02 09:0\d\] /)
})

test('a number in full-width digits or numerals counts as a number (decision 0077)', () => {
  for (const figure of ['３０', '三十']) {
    const summary = extractiveSummary(
      [
        { prefix: '[2026-03-01 09:00] ada (user)', text: 'Die Bereitstellung dauert ungefähr lange Minuten heute.' },
        { prefix: '[2026-03-01 09:01] ada (user)', text: `Die Bereitstellung dauert ungefähr ${figure} Minuten heute.` },
      ],
      20,
    )
    assert.match(summary, new RegExp(figure), summary)
    assert.doesNotMatch(summary, /lange/, summary)
  }
})
