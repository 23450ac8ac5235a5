import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventContent } from './activity.ts'
import { ruleWithPolarity } from './engram.ts'

test('a rule is shown with its polarity, once', () => {
  // The seed's rules.md files this under "## Never"; alone, the bare line reads as its opposite.
  assert.equal(ruleWithPolarity('never', 'Use time.sleep() in scratchpad cells'), 'Never: Use time.sleep() in scratchpad cells')
  assert.equal(ruleWithPolarity('always', 'Use httpx instead of requests'), 'Always: Use httpx instead of requests')
  assert.equal(ruleWithPolarity('when', 'Paginated API data → async + progress()'), 'When: Paginated API data → async + progress()')
  // Text that already says its polarity is not labelled again ("Never: Don't…" reads as a double negative).
  assert.equal(ruleWithPolarity('never', "Don't push on Fridays"), "Don't push on Fridays")
  assert.equal(ruleWithPolarity('never', 'Never push on Fridays'), 'Never push on Fridays')
  assert.equal(ruleWithPolarity('always', 'Always run the tests'), 'Always run the tests')
  assert.equal(ruleWithPolarity('when', 'If fetching paginated API data → async'), 'If fetching paginated API data → async')
  assert.equal(ruleWithPolarity('never', 'Notebook kernels for long jobs'), 'Never: Notebook kernels for long jobs')
})

test('a saved rule in the activity log reads with its polarity', () => {
  const saved = { type: 'memory_write' as const, content: 'Use time.sleep() in scratchpad cells', meta: { kind: 'never' } }
  assert.equal(eventContent(saved), 'Never: Use time.sleep() in scratchpad cells')
  assert.equal(eventContent({ ...saved, meta: { kind: 'lesson' } }), 'Use time.sleep() in scratchpad cells')
  assert.equal(eventContent({ type: 'message_received', content: 'Use time.sleep()' }), 'Use time.sleep()')
})
