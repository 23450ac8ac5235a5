/**
 * WordNet expansion through the path an agent uses: messages appended to a session are indexed
 * with the related words of the WordNet map shipped with engram, and recall finds them by those words.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../core/clock.ts'
import { createMind } from '../mind.ts'
import { makeTempHome } from '../testing/temp-home.ts'

test('a named place is found by the country it is in, and an instrument by its kind', async () => {
  const temp = makeTempHome()
  const clock = new ManualClock('2026-03-01T12:00:00.000Z')
  const mind = await createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, reindexOnOpen: false })
  try {
    const turns = [
      ['Jolene', 'I bought this pendant a year ago in Paris.'],
      ['Deborah', 'It is lovely! I have been busy with my garden lately.'],
      ['Jolene', 'My brother plays the clarinet in a small band.'],
      ['Deborah', 'We had a picnic by the lake with some friends from yoga.'],
    ]
    const at = (i: number) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + i * 30_000).toISOString()
    const stored = await mind.context.append(
      { sessionId: 's1', agent: mind.agent },
      turns.map(([name, content], i) => ({ role: 'user' as const, name: name as string, content: content as string, at: at(i) })),
    )
    await mind.indexed()
    const first = async (question: string) => (await mind.retriever.search(question, { kinds: ['message'], recordAccess: false })).hits[0]
    // "France" is nowhere in the text: Paris is indexed with what it is part of.
    const france = await first('Has Jolene been to France?')
    assert.deepEqual(france?.provenance, [String(stored[0]?.id)])
    // "instrument" is nowhere either: clarinet is indexed with its hypernyms.
    const instrument = await first('Did anyone mention an instrument?')
    assert.deepEqual(instrument?.provenance, [String(stored[2]?.id)])
  } finally {
    await mind.close()
    temp.cleanup()
  }
})
