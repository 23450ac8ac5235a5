/**
 * Recall on a user–assistant chat, through the agent's path (decision 0029): what the user said is the
 * evidence a later question asks after; the assistant's long answers on the same topic must not
 * drown it (retrieval.agentMessageWeight).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const ANSWER = (topic: string): string =>
  `Here is a thorough overview of ${topic}. ${Array.from({ length: 12 }, (_, i) => `Point ${i + 1}: when you tune the Redis cache for your Flask API, consider the eviction policy, the memory limit, key expiry and connection pooling, and measure before and after each change.`).join(' ')}`

test("the user's own statement ranks above the assistant's long answers on the same topic, in search_memory and in priming", async (t) => {
  const temp = makeTempHome('engram-chat-')
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock })
  t.after(async () => {
    await mind.close()
    temp.cleanup()
  })
  const said = 'My Redis cache for the Flask API is capped at 256MB with the allkeys-lru eviction policy; how should I tune it?'
  const turns = ['How do I add a Redis cache to a Flask API?', said, 'What eviction policy suits a Redis cache for sessions?']
  for (const [i, text] of turns.entries()) {
    const session = mind.session(`day-${i}`, { user: 'ada' })
    const turn = await session.begin(text)
    await session.end(turn, ANSWER('Redis caching for a Flask API'))
    clock.advance(86_400_000)
  }
  const later = mind.session('later', { user: 'ada' })
  const turn = await later.begin('What memory limit and eviction policy did I set for my Redis cache?')
  const search = turn.tools.find((tool) => tool.name === 'search_memory')
  const found = await search?.execute({ query: 'memory limit eviction policy Redis cache' })
  assert.ok(found && found.isError !== true, found?.text)
  const first = found.text.split('\n').find((line) => /256MB|Point 1/.test(line)) ?? ''
  assert.match(first, /256MB/, found.text)
  assert.ok(turn.system.includes('capped at 256MB'), 'primed before the turn')
  // With no difference between the two (weight 1), the answers come first: the setting is what does it.
  const even = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, settings: { 'retrieval.agentMessageWeight': 1 } })
  t.after(() => even.close())
  const hits = (await even.retriever.search('What memory limit and eviction policy did I set for my Redis cache?', { viewer: { agent: even.agent, user: 'ada' }, kinds: ['message'], limit: 10, recordAccess: false })).hits
  const rank = (predicate: (text: string, role: unknown) => boolean): number => hits.findIndex((hit) => predicate(hit.unit.text, hit.unit.meta?.role))
  const shown = hits.map((hit) => `${hit.unit.meta?.role}: ${hit.unit.text.slice(0, 40)}`).join('\n')
  assert.ok(rank((_, role) => role === 'assistant') < rank((text) => text === said), shown)
})

test('a fact restated later with a new value ranks above the older statement, which stays findable', async (t) => {
  const temp = makeTempHome('engram-restated-')
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock })
  t.after(async () => {
    await mind.close()
    temp.cleanup()
  })
  const older = 'The login API response time is 180ms under 20 concurrent requests.'
  const newer = 'After optimizing the authentication flow and moving the session checks into a middleware, which took most of the week, the login API response time is down to 120ms under 20 concurrent requests, measured with k6 on the staging server.'
  const said = [older, 'Can you suggest a good folder layout for the Express controllers?', newer, 'How should I name the Redis keys for user sessions?']
  for (const [i, text] of said.entries()) {
    const session = mind.session(`day-${i}`, { user: 'ada' })
    const turn = await session.begin(text)
    await session.end(turn, 'Here is what I would suggest, step by step, with the trade-offs of each option.')
    clock.advance(3 * 86_400_000)
  }
  const question = 'What is the login API response time under 20 concurrent requests?'
  const hits = (await mind.retriever.search(question, { viewer: { agent: mind.agent, user: 'ada' }, kinds: ['message'], limit: 10, recordAccess: false })).hits.map((hit) => hit.unit.text)
  assert.ok(hits.indexOf(newer) >= 0 && hits.indexOf(newer) < hits.indexOf(older), hits.join('\n'))
  // Switched off (similarity 1), the older statement — more words in common with the question — comes first.
  const plain = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, settings: { 'retrieval.restatementSimilarity': 1 } })
  t.after(() => plain.close())
  const before = (await plain.retriever.search(question, { viewer: { agent: plain.agent, user: 'ada' }, kinds: ['message'], limit: 10, recordAccess: false })).hits.map((hit) => hit.unit.text)
  assert.ok(before.indexOf(older) >= 0 && before.indexOf(older) < before.indexOf(newer), before.join('\n'))
})
