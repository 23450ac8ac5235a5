import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openHarness } from '../memory/context/test-support/harness.ts'
import { createUserProfiles } from '../memory/engrams/user-profiles.ts'
import { buildMemoryTool, memoryActionsFor } from './memory-tool.ts'

const session = { sessionId: 'tool', agent: 'default', user: 'ada' }

test('the LCM provider yields every action; the simple provider a smaller tool; profile actions need a user', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const profiles = createUserProfiles({ documents: h.backend.documents, locks: h.backend.locks, clock: h.clock })
  const full = buildMemoryTool(h.provider('lcm'), session, profiles)
  const small = buildMemoryTool(h.provider('simple'), session, profiles)
  assert.deepEqual(memoryActionsFor(h.provider('lcm'), { profiles: true }), ['status', 'search', 'describe', 'expand', 'profile_get', 'profile_update'])
  assert.deepEqual(memoryActionsFor(h.provider('simple'), { profiles: true }), ['status', 'profile_get', 'profile_update'])
  assert.deepEqual(memoryActionsFor(h.provider('lcm')), ['status', 'search', 'describe', 'expand'])
  const actionsOf = (schema: Record<string, unknown>) => (schema.properties as Record<string, { enum: string[] }>).action?.enum
  assert.deepEqual(actionsOf(full.jsonSchema), ['status', 'search', 'describe', 'expand', 'profile_get', 'profile_update'])
  assert.deepEqual(actionsOf(small.jsonSchema), ['status', 'profile_get', 'profile_update'])
  assert.ok(!('query' in (small.jsonSchema.properties as object)), 'no search fields without a Searcher')
  assert.match(full.description, /expand \{id, toMessages\?\}/)
  assert.doesNotMatch(small.description, /search|expand/)
  const refused = await small.execute({ action: 'search', query: 'x' })
  assert.equal(refused.isError, true)
  assert.match(refused.text, /Fix: pass \{"action": one of "status", "profile_get", "profile_update"/)
})

test('actions run against the provider; bad arguments give readable errors, never throws', async (t) => {
  const h = openHarness()
  t.after(() => h.close())
  const lcm = h.provider('lcm', { autoCompact: false, freshTail: 2 })
  await lcm.append(session, Array.from({ length: 24 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `Step ${i}: configure the quokka gateway on port ${8000 + i}.` }) as const))
  await lcm.compact(session, { mode: 'full', freshTail: 2 })
  const profiles = createUserProfiles({ documents: h.backend.documents, locks: h.backend.locks, clock: h.clock })
  const tool = buildMemoryTool(lcm, session, profiles)

  const status = await tool.execute({ action: 'status' })
  assert.equal(status.isError, undefined)
  assert.match(status.text, /^24 messages/)

  const search = await tool.execute({ action: 'search', query: 'quokka 8003' })
  assert.match(search.text, /hits:\n/)
  const summaryId = (await lcm.assemble(session, 100_000, 2)).items.find((i) => i.kind === 'summary')!.summaryId!
  const described = await tool.execute({ action: 'describe', id: summaryId })
  assert.match(described.text, /written by extractive — a fallback, not an LLM/)
  const expanded = await tool.execute({ action: 'expand', id: summaryId, toMessages: true, limit: 3 })
  assert.match(expanded.text, /^msg:\d+ #1 /)
  assert.match(expanded.text, /raise limit/)

  assert.equal((await tool.execute({ action: 'profile_update', content: 'Likes quokkas.' })).isError, undefined)
  assert.equal((await tool.execute({ action: 'profile_get' })).text, 'Likes quokkas.')
  assert.match((await profiles.read('ada'))?.body ?? '', /Likes quokkas/, 'the one profile, shared/users/ada.md')

  const bad = [
    await tool.execute({ action: 'fly' }),
    await tool.execute({ action: 'search' }),
    await tool.execute({ action: 'describe', id: 'sum_0000' }),
    await tool.execute({ action: 'status', extra: 1 }),
    await tool.execute(null),
  ]
  for (const result of bad) {
    assert.equal(result.isError, true)
    assert.match(result.text, /Fix|fix|not found/)
  }
  assert.match(bad[1]!.text, /needs "query"/)
  const noUser = buildMemoryTool(lcm, { sessionId: 'tool', agent: 'default' }, profiles)
  const refused = await noUser.execute({ action: 'profile_get' })
  assert.equal(refused.isError, true, 'a session without a user is not offered profile actions')
  assert.match(refused.text, /Fix: pass \{"action": one of "status", "search", "describe", "expand"/)
  // Another user's conversation is out of reach: its summary is "not found".
  const other = buildMemoryTool(lcm, { sessionId: 'other', agent: 'default', user: 'bob' }, profiles)
  const hidden = await other.execute({ action: 'describe', id: summaryId })
  assert.equal(hidden.isError, true)
  assert.match(hidden.text, /not found|No /i)
  assert.match((await other.execute({ action: 'search', query: 'quokka' })).text, /No messages or summaries match/)
})
