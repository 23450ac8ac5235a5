import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { openMindInternals } from '../../mind-internals.ts'
import { makeTempHome } from '../../testing/temp-home.ts'

test('a message is found through its neighbours, and earlier messages gain the words of later ones', async () => {
  const temp = makeTempHome()
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, reindexOnOpen: false, clock: new ManualClock('2024-01-01T10:00:00Z'), embedder: null })
  try {
    const session = { sessionId: 's1', agent: mind.agent }
    const say = (content: string, name: string) => ({ role: 'user' as const, content, name })
    await mind.context.append(session, [say('Did you go to the harbour festival?', 'Ada'), say('Yes, last Sunday with the kids.', 'Ben')])
    const ids = async (query: string) => (await mind.retriever.search(query, { kinds: ['message'], limit: 5, recordAccess: false })).hits.map((h) => h.unit.text)
    const festival = await ids('harbour festival')
    assert.equal(festival[0], 'Did you go to the harbour festival?')
    assert.ok(festival.includes('Yes, last Sunday with the kids.'), 'the answer next to the question is found through it')

    await mind.context.append(session, [say('The fireworks over the lighthouse were amazing.', 'Ada')])
    const fireworks = await ids('fireworks lighthouse')
    assert.equal(fireworks[0], 'The fireworks over the lighthouse were amazing.')
    assert.ok(fireworks.includes('Yes, last Sunday with the kids.'), 'the previous message was re-indexed with its new neighbour')
    assert.ok(fireworks.includes('Did you go to the harbour festival?'), 'two back, at the far weight')
    assert.deepEqual(await mind.backend.index.participants?.(mind.agent), ['Ada', 'Ben'])
  } finally {
    await mind.close()
    temp.cleanup()
  }
})

test('naming one participant lifts their own messages', async () => {
  const temp = makeTempHome()
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, reindexOnOpen: false, clock: new ManualClock('2024-01-01T10:00:00Z'), embedder: null })
  try {
    const session = { sessionId: 's1', agent: mind.agent }
    await mind.context.append(session, [
      { role: 'user', content: 'I painted my cat, sleeping in the window by the door.', name: 'Ada' },
      { role: 'user', content: 'I painted a sunset.', name: 'Ben' },
    ])
    const hits = (await mind.retriever.search('What did Ada paint?', { kinds: ['message'], limit: 3, recordAccess: false })).hits
    assert.equal(hits[0]?.unit.text, 'I painted my cat, sleeping in the window by the door.')
    const unnamed = (await mind.retriever.search('What was painted?', { kinds: ['message'], limit: 3, recordAccess: false })).hits
    assert.equal(unnamed[0]?.unit.text, 'I painted a sunset.', 'without a name, the shorter match wins')
  } finally {
    await mind.close()
    temp.cleanup()
  }
})
