/**
 * Clause-level reading (decision 0070): reported events, past facts and settled facts of the user's
 * world are extracted as the user said them (events dated from the turn's time), and filed as the
 * user's lessons; what is not a fact — a try at fixing something, a feeling, a plan only weighed, a
 * problem's working, a thing pointed at — is not.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { extractFacts } from './extract.ts'
import { ruleFacts } from './rules.ts'
import { resolveWhen } from './when-said.ts'

const facts = (said: string, at?: Date) => ruleFacts(said, at).map((fact) => `${fact.kind}: ${fact.text}`)
// A Wednesday.
const WEDNESDAY = new Date('2022-09-14T10:00:00Z')

test('reported events are the user\'s lessons, with their time as said and, from the turn\'s time, as a date', () => {
  const cases: Array<[said: string, fact: string]> = [
    ['Last Friday, I made a dessert with almond milk - it was good!', 'lesson: The user made a dessert with almond milk last Friday (2022-09-09).'],
    ['I took a creative writing class yesterday.', 'lesson: The user took a creative writing class yesterday (2022-09-13).'],
    ['I just finished my first marathon.', 'lesson: The user just finished their first marathon.'],
    ['I started playing acoustic guitar five years ago.', 'profile: The user started playing acoustic guitar five years ago.'],
    ['My girlfriend and I went fishing last weekend.', 'lesson: The user and their girlfriend went fishing last weekend (the week before 2022-09-14).'],
    ["I've got a gaming tournament next month.", 'lesson: The user has a gaming tournament next month.'],
    ['I was able to jog a bit two days ago.', 'lesson: The user was able to jog a bit two days ago (2022-09-12).'],
  ]
  for (const [said, fact] of cases) assert.deepEqual(facts(said, WEDNESDAY), [fact], said)
  // Without a time the phrase stays as said.
  assert.deepEqual(facts('I took a creative writing class yesterday.'), ['lesson: The user took a creative writing class yesterday.'])
})

test('settled facts of the user\'s world and past facts, clause by clause', () => {
  const cases: Array<[said: string, expected: string[]]> = [
    ["I'm using PostgreSQL 15 with Prisma.", ['lesson: The user is using PostgreSQL 15 with Prisma.']],
    ['We decided to use Redis for the cache.', ['lesson: The user and others decided to use Redis for the cache.']],
    ["I've configured AWS CloudTrail for audit logging, but I'm not sure how to read the logs.", ['lesson: The user has configured AWS CloudTrail for audit logging.']],
    ['I\'m trying to optimize the queries in my Flask app, which is deployed on Fly.io.', ['lesson: The user has a Flask app.', "lesson: The user's Flask app is deployed on Fly.io."]],
    ["I'm planning to use MongoDB v6.0 for persistence.", ['lesson: The user is planning to use MongoDB v6.0 for persistence.']],
    ["I'm trying to implement auth using PyJWT v2.7.0.", ['lesson: The user is trying to implement auth using PyJWT v2.7.0.']],
    ['My mom was interested in art.', ["profile: The user's mom was interested in art."]],
    ['I used to go horseback riding with my dad.', ['profile: The user used to go horseback riding with their dad.']],
    ['I play the drums.', ['profile: The user plays the drums.']],
    ['I prefer step-by-step explanations with examples - can you show me one?', ['profile: The user prefers step-by-step explanations with examples.']],
    // The clause after an intent stands on its own; a purpose that points back ("to find it") is cut.
    ["I'm trying to debug a leak, and I used Grafana dashboards to find it last week.", ['lesson: The user used Grafana dashboards.']],
    ["I'm trying to debug a leak in my Redis client, and I used Grafana dashboards to trace the process.", ['lesson: The user has a Redis client.', 'lesson: The user used Grafana dashboards to trace the process.']],
  ]
  for (const [said, expected] of cases) assert.deepEqual(facts(said), expected, said)
})

test('not facts: a try at a fix, a feeling, a plan only weighed, a problem\'s working, a thing pointed at, a negation, someone else\'s words', () => {
  const none = [
    "I'm trying to fix the login.",
    'I want to add caching to my app.',
    "I'm thinking of adopting a dog.",
    "I'm considering the Pixel 7.",
    'We had a great time.',
    'I felt so happy.',
    'My dad was so proud.',
    'I got x = 3.',
    'I got 2522.',
    'I made it!',
    'I sat with her.',
    "I've tried using a try-except block.",
    "I'm getting an error in the login form.",
    "I didn't finish the marathon.",
    'She said I went to Paris.',
    'If I had gone to Paris, I would have seen it.',
    'I used the power rule.',
    'I have a feeling this will work.',
  ]
  for (const said of none) assert.deepEqual(facts(said), [], said)
})

test('a time phrase resolves from the moment it was said, or not at all', () => {
  assert.equal(resolveWhen('last Friday', WEDNESDAY), '2022-09-09')
  assert.equal(resolveWhen('Friday', new Date('2022-09-16T10:00:00Z')), '2022-09-09', 'said on a Friday: the Friday before')
  assert.equal(resolveWhen('last month', WEDNESDAY), '2022-08')
  assert.equal(resolveWhen('two years ago', WEDNESDAY), 'about 2020')
  assert.equal(resolveWhen('three days ago', WEDNESDAY), '2022-09-11')
  assert.equal(resolveWhen('recently', WEDNESDAY), undefined)
  assert.equal(resolveWhen('yesterday', undefined), undefined)
})

test('extractFacts dates a message\'s events from its `at`, files them as lessons of method rules', async () => {
  const { engrams, method } = await extractFacts([
    { role: 'user', content: 'Last Friday, I ran a charity race. I love hiking.', at: '2023-05-22T10:00:00Z' },
    { role: 'assistant', content: 'I went to the moon yesterday.' },
  ])
  assert.equal(method, 'rules')
  assert.deepEqual(
    engrams.map((engram) => [engram.kind, engram.text, engram.meta.method, engram.source]),
    [
      ['lesson', 'The user ran a charity race last Friday (2023-05-19).', 'rules', 'user'],
      ['profile', 'The user loves hiking.', 'rules', 'user'],
    ],
  )
})
