import assert from 'node:assert/strict'
import { test } from 'node:test'
import { informationContent, informationFactor, informationParts } from './information.ts'

test('a turn that reports something outweighs one that only reacts or asks', () => {
  const report = informationContent('We painted a sunset by Lake Tahoe last weekend, the kids loved it.')
  const reaction = informationContent("Wow, that's great!")
  const question = informationContent('What did you paint?')
  assert.ok(report > reaction, `${report} > ${reaction}`)
  assert.ok(report > question, `${report} > ${question}`)
})

test('proper names count except at the start of a sentence, "I", and the participants', () => {
  const parts = informationParts('Yesterday Caroline and I drove to Paris. Then we saw Notre Dame! [shares a photo: Eiffel Tower]', new Set(['caroline']))
  // Paris, Notre, Dame — not "Yesterday", "Then" (sentence starts), "I", "Caroline", nor the annotation.
  assert.equal(parts.names, 3)
  assert.equal(parts.question, false)
  assert.equal(parts.acknowledgement, false)
  // Annotations still count as words.
  assert.equal(parts.words, 17)
})

test('questions and acknowledgements are recognised on the turn itself, not its annotations', () => {
  assert.equal(informationParts('Did you go? [shares a photo: a lake]').question, true)
  assert.equal(informationParts('Thanks, Mel! It means a lot.').acknowledgement, true)
  assert.equal(informationParts('Thanksgiving was lovely at my parents.').acknowledgement, false)
})

test('length saturates, the factor is never negative, and weight 0 is neutral', () => {
  const long = Array.from({ length: 5000 }, () => 'word').join(' ')
  assert.equal(informationContent(long), Math.log1p(100))
  assert.equal(informationContent(''), 0)
  assert.equal(informationFactor("Wow, that's great?", 0), 1)
  assert.ok(informationFactor('Ok?', 10) >= 0)
  assert.ok(Math.abs(informationFactor('Paris again', 0.2) - (1 + 0.2 * (Math.log1p(2) + Math.log1p(0)))) < 1e-12)
})

test('through the recall path: the turn that says what was painted comes before the ones that ask or react', async () => {
  const { ManualClock } = await import('../../core/clock.ts')
  const { contentHash } = await import('../../core/hash.ts')
  const { openMindInternals } = await import('../../mind-internals.ts')
  const { makeTempHome } = await import('../../testing/temp-home.ts')
  const { createRetriever } = await import('./search.ts')
  const NOW = '2026-03-01T12:00:00.000Z'
  const temp = makeTempHome()
  const clock = new ManualClock(NOW)
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, reindexOnOpen: false })
  try {
    const message = (id: string, name: string, text: string) => ({ id, kind: 'message' as const, text, source: 'conv:1', provenance: [id], agent: 'default', createdAt: NOW, hash: contentHash(text), meta: { name } })
    await mind.backend.index.upsert([
      message('ask', 'Ben', 'What are you painting?'),
      message('react', 'Ben', 'Wow, painting sounds fun!'),
      message('answer', 'Ana', 'I am painting a sunset over Lake Tahoe with Rosa; painting it took the whole weekend.'),
    ])
    const search = (informationWeight: number) => createRetriever({ index: mind.backend.index, embedder: null, clock, settings: { informationWeight, sessionWeight: 0 } }).search('painting', { recordAccess: false, graph: false })
    const on = await search(0.2)
    assert.equal(on.hits[0]?.unit.id, 'answer')
    const factor = (id: string) => on.hits.find((hit) => hit.unit.id === id)?.terms.information ?? Number.NaN
    assert.ok(factor('answer') > 1 && factor('ask') < factor('answer') && factor('react') < factor('answer'))
    const off = await search(0)
    for (const hit of off.hits) assert.equal(hit.terms.information, 1)
    // BM25 alone prefers the short turns (length normalisation): the prior is what puts the answer first.
    assert.notEqual(off.hits[0]?.unit.id, 'answer')
  } finally {
    await mind.close()
    temp.cleanup()
  }
})

test('a long question states facts and is not penalised; a short one only asks', () => {
  assert.equal(informationParts('What did you paint?').question, true)
  const short = informationContent('What did you paint?')
  const long = 'I set a $700 budget ceiling for the new phone, prioritizing camera and battery life; will that be enough for a good smartphone?'
  assert.ok(informationParts(long).question)
  assert.equal(informationContent(long), Math.log1p(informationParts(long).words) + Math.log1p(informationParts(long).names))
  assert.ok(short < Math.log1p(4), 'the short question loses the penalty')
})

test('standing instructions and stated preferences are recognised; "I always loved it" is not one', () => {
  for (const text of ['Always provide a code example when I ask about async error handling.', 'Never use 12-hour times.', 'Please always include the API version.', "I'm building a chat app and I prefer Redis pub/sub over polling.", 'I prioritize battery life over graphics.']) {
    assert.equal(informationParts(text).directive, true, text)
  }
  for (const text of ['I always loved painting with my kids.', 'What do you prefer?', 'We never went back there.']) assert.equal(informationParts(text).directive, false, text)
  assert.ok(informationContent('Always use 24-hour time format for meetings.') > informationContent('We used a 24-hour clock at the meeting yesterday.'))
})
