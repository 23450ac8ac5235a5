/**
 * Facts with values through the agent's path (decision 0078): a user gives a subject a value, later
 * a new one in other words; search_memory and the next turn's primed context give the new value
 * first and keep the old one, with its date. The rule reads the change (same subject, a new value
 * of the same type), so the newer statement comes first even when the older one shares more words
 * with the question.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const OLDER = 'My monthly rent for the apartment is $1,200, utilities included.'
const NEWER = 'The landlord raised it: I pay $1,450 now for the apartment.'
const QUESTION = 'How much is my monthly rent for the apartment?'

test('a value the user changed later: search_memory and the next primed context give the new value first, the old one with its date', async (t) => {
  const temp = makeTempHome('engram-values-')
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock })
  t.after(async () => {
    await mind.close()
    temp.cleanup()
  })
  const said = [OLDER, 'Can you suggest a weekly plan for cooking on a budget?', NEWER, 'Which houseplants survive a dark apartment?']
  for (const [i, text] of said.entries()) {
    const session = mind.session(`day-${i}`, { user: 'ada' })
    const turn = await session.begin(text)
    await session.end(turn, 'Here is what I would suggest, step by step, with the trade-offs of each option.')
    clock.advance(20 * 86_400_000)
  }
  await mind.indexed()
  // Priming packs down the ranking and shows each day's lines in the order said: the smallest
  // budget that holds either value holds the new one (asked before the question is itself a message).
  for (let budget = 40; budget <= 400; budget += 10) {
    const primed = await mind.primer.prime({ message: QUESTION, budget, viewer: { agent: mind.agent, user: 'ada' }, type: 'question' })
    if (!primed.text.includes('$1,450') && !primed.text.includes('$1,200')) continue
    assert.ok(primed.text.includes('$1,450') && !primed.text.includes('$1,200'), `at ${budget} tokens:\n${primed.text}`)
    break
  }
  const later = mind.session('later', { user: 'ada' })
  const turn = await later.begin(QUESTION)
  // The next turn's primed context holds both, each under the day it was said.
  const newerAt = turn.system.indexOf('$1,450')
  const olderAt = turn.system.indexOf('$1,200')
  assert.ok(newerAt >= 0 && olderAt >= 0, turn.system)
  assert.match(turn.system, /2026-03-02/, 'the old value keeps its date')
  const search = turn.tools.find((tool) => tool.name === 'search_memory')
  const found = await search?.execute({ query: QUESTION })
  assert.ok(found && found.isError !== true, found?.text)
  const lines = found.text.split('\n')
  const rankOf = (needle: string): number => lines.findIndex((line) => line.includes(needle))
  assert.ok(rankOf('$1,450') >= 0 && rankOf('$1,450') < rankOf('$1,200'), found.text)

  // Switched off, the older statement — more words in common with the question — comes first: the rule is what does it.
  const plain = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, settings: { 'retrieval.restatementSimilarity': 1 } })
  t.after(() => plain.close())
  const hits = (await plain.retriever.search(QUESTION, { viewer: { agent: plain.agent, user: 'ada' }, kinds: ['message'], limit: 10, recordAccess: false })).hits.map((hit) => hit.unit.text)
  assert.ok(hits.indexOf(OLDER) >= 0 && hits.indexOf(OLDER) < hits.indexOf(NEWER), hits.join('\n'))
})

test('a later statement that shares the words but not a changed value does not move above the earlier one', async (t) => {
  const temp = makeTempHome('engram-values-same-')
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock })
  t.after(async () => {
    await mind.close()
    temp.cleanup()
  })
  const first = 'My monthly rent for the apartment is $1,200, utilities included.'
  const second = 'The apartment rent is fair for the area, I think.'
  for (const [i, text] of [first, second].entries()) {
    const session = mind.session(`day-${i}`, { user: 'ada' })
    const turn = await session.begin(text)
    await session.end(turn, 'Noted.')
    clock.advance(20 * 86_400_000)
  }
  await mind.indexed()
  const hits = (await mind.retriever.search(QUESTION, { viewer: { agent: mind.agent, user: 'ada' }, kinds: ['message'], limit: 10, recordAccess: false })).hits.map((hit) => hit.unit.text)
  assert.ok(hits.indexOf(first) >= 0 && hits.indexOf(first) < hits.indexOf(second), hits.join('\n'))
})

test('with facts extracted from turns, mind.memories.search gives the new place; the old one stays findable in the conversation with its date', async (t) => {
  const temp = makeTempHome('engram-values-memories-')
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, settings: { 'memory.extractFromTurns': true } })
  t.after(async () => {
    await mind.close()
    temp.cleanup()
  })
  for (const [i, text] of ['I live in Lisbon, near the river.', 'I moved to Berlin last month.'].entries()) {
    const session = mind.session(`day-${i}`, { user: 'ada' })
    const turn = await session.begin(text)
    await session.end(turn, 'Noted, thanks for telling me.')
    await mind.maintain()
    await mind.idle()
    clock.advance(40 * 86_400_000)
  }
  await mind.indexed()
  const found = await mind.memories.search('where does the user live', { user: 'ada' })
  const places = found.map((memory) => memory.text).filter((text) => /Lisbon|Berlin/.test(text))
  assert.deepEqual(places, ['Location: Berlin'], JSON.stringify(found))
  const turn = await mind.session('later', { user: 'ada' }).begin('Where did I live before Berlin?')
  const search = turn.tools.find((tool) => tool.name === 'search_memory')
  const said = await search?.execute({ query: 'live Lisbon river' })
  assert.ok(said && said.isError !== true, said?.text)
  assert.match(said.text, /\[message 2026-03-02\] I live in Lisbon/, said.text)
})
