import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createUnitMemo } from './unit-memo.ts'

test('the unit memo computes a value once while it is in use, and holds at most its capacity', () => {
  const memo = createUnitMemo<string>(10)
  let computed = 0
  const value = (hash: string): string =>
    memo.get(hash, () => {
      computed++
      return `value of ${hash}`
    })
  assert.equal(value('a'), 'value of a')
  assert.equal(value('a'), 'value of a')
  assert.equal(computed, 1)
  // A unit used on every turn stays, however many others pass through.
  for (let i = 0; i < 100; i++) {
    value(`other ${i}`)
    assert.equal(value('a'), 'value of a')
  }
  assert.equal(computed, 101)
  // Held: at most the capacity; the oldest of the others are computed again.
  const before = computed
  const held = 100 - [...Array(100).keys()].filter((i) => memo.peek(`other ${i}`) === undefined).length
  assert.ok(held <= 10, `${held} held`)
  assert.equal(computed, before)
  assert.equal(value('other 0'), 'value of other 0')
  assert.equal(computed, before + 1)
  // peek and set: batched computation of the misses.
  assert.equal(memo.peek('new'), undefined)
  memo.set('new', 'given')
  assert.equal(memo.peek('new'), 'given')
  memo.clear()
  assert.equal(memo.peek('new'), undefined)
  assert.equal(memo.peek('a'), undefined)
})
