import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createNearDuplicateFilter } from './near-duplicates.ts'
import { setJaccard } from './query-analysis.ts'

/** A tiny deterministic random generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

test('the prefix filter finds exactly the near-duplicates a pairwise scan finds', () => {
  const next = random(7)
  const vocabulary = Array.from({ length: 40 }, (_, i) => `w${i}`)
  for (const threshold of [0.5, 0.8, 0.9, 1]) {
    const filter = createNearDuplicateFilter(threshold)
    const kept: Array<Set<string>> = []
    for (let n = 0; n < 400; n++) {
      // Mostly variations of earlier sets, so that near-duplicates actually occur.
      const base = kept.length > 0 && next() < 0.6 ? [...(kept[Math.floor(next() * kept.length)] as Set<string>)] : []
      const words = new Set(base.filter(() => next() > 0.1))
      const extra = Math.floor(next() * 12)
      for (let k = 0; k < extra; k++) words.add(vocabulary[Math.floor(next() * vocabulary.length)] as string)
      const expected = kept.some((other) => setJaccard(words, other) >= threshold)
      assert.equal(filter.isDuplicate(words), expected, `threshold ${threshold}, set ${n}: {${[...words].join(' ')}}`)
      if (!expected) {
        filter.keep(words)
        kept.push(words)
      }
    }
  }
})

test('empty word sets are duplicates of each other only', () => {
  const filter = createNearDuplicateFilter(0.9)
  assert.equal(filter.isDuplicate(new Set()), false)
  filter.keep(new Set(['a', 'b']))
  assert.equal(filter.isDuplicate(new Set()), false)
  filter.keep(new Set())
  assert.equal(filter.isDuplicate(new Set()), true)
  assert.equal(filter.isDuplicate(new Set(['c'])), false)
  assert.equal(filter.isDuplicate(new Set(['a', 'b'])), true)
})
