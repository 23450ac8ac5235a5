import assert from 'node:assert/strict'
import { test } from 'node:test'
import { judgeForgetting } from './forgetting-policy.ts'

const NOW = new Date('2026-06-30T12:00:00Z')
const daysAgo = (days: number): string => new Date(NOW.getTime() - days * 86_400_000).toISOString()
const knowledge = (idle: number, accesses: number, extra: Record<string, unknown> = {}, body = 'A fact.') =>
  judgeForgetting({ docKind: 'knowledge', frontmatter: { created_at: daysAgo(400), ...extra }, body, modifiedAt: daysAgo(400), use: { accessCount: accesses, lastAccessAt: accesses > 0 ? daysAgo(idle) : undefined } }, NOW)

test('knowledge: low-activity after 90 idle days with fewer than 3 accesses, forgotten after 60 more', () => {
  assert.equal(knowledge(89, 1).state, 'active')
  const marked = knowledge(90, 2)
  assert.equal(marked.state, 'low-activity')
  assert.equal(marked.state === 'low-activity' && marked.forgetOn, daysAgo(90 - 150).slice(0, 10))
  assert.equal(knowledge(149, 2).state, 'low-activity')
  assert.equal(knowledge(150, 2).state, 'forget')
  assert.equal(knowledge(400, 3).state, 'active', 'three accesses: not low frequency')
  // Never recalled: idle since it was written.
  assert.equal(knowledge(0, 0).state, 'forget')
  assert.equal(judgeForgetting({ docKind: 'knowledge', frontmatter: {}, body: 'x', modifiedAt: daysAgo(10), use: { accessCount: 0, lastAccessAt: undefined } }, NOW).state, 'active')
})

test('protections: protected: true, [IMPORTANT] in the body or frontmatter, procedures at version 3', () => {
  assert.equal(knowledge(500, 0, { protected: true }).state, 'protected')
  assert.equal(knowledge(500, 0, {}, '[IMPORTANT] never on Fridays').state, 'protected')
  assert.equal(knowledge(500, 0, { description: '[important] keep' }).state, 'protected')
  const mature = judgeForgetting({ docKind: 'procedure', frontmatter: { version: 3, failure_count: 9, created_at: daysAgo(900) }, body: '1. x', modifiedAt: daysAgo(900), use: { accessCount: 0, lastAccessAt: undefined } }, NOW)
  assert.equal(mature.state, 'protected')
})

test('procedures: 180 idle days with fewer than 3 uses, or utility under 0.3 after 3 failures', () => {
  const procedure = (fm: Record<string, unknown>, idle: number) =>
    judgeForgetting({ docKind: 'procedure', frontmatter: { updated_at: daysAgo(idle), ...fm }, body: '1. x', modifiedAt: daysAgo(idle), use: { accessCount: 0, lastAccessAt: undefined } }, NOW).state
  assert.equal(procedure({}, 179), 'active')
  assert.equal(procedure({}, 180), 'low-activity')
  assert.equal(procedure({}, 240), 'forget')
  assert.equal(procedure({ success_count: 3 }, 300), 'active', 'used three times')
  assert.equal(procedure({ failure_count: 3 }, 1), 'low-activity', 'failing: marked at once')
  assert.equal(procedure({ failure_count: 3 }, 60), 'forget')
  assert.equal(procedure({ failure_count: 3, success_count: 2 }, 60), 'active', 'utility 0.4')
})
