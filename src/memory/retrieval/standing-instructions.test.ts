import assert from 'node:assert/strict'
import { test } from 'node:test'
import { standingInstructions } from '../extraction/rules.ts'
import { asksWhatTheAgentSaid } from './agent-said.ts'
import type { StoredUnit } from '../../storage/contracts.ts'
import { analyseQuery } from './query-analysis.ts'
import { readRules, rulesThatApply } from './standing-instructions.ts'

test('standing instructions are the sentences that set one, as said; a question or a plain statement is none', () => {
  assert.deepEqual(standingInstructions('Hi! Always give me the psql command when I ask about databases. My app runs on Fly.io.'), ['Always give me the psql command when I ask about databases.'])
  assert.deepEqual(standingInstructions('Never use emojis in replies.'), ['Never use emojis in replies.'])
  assert.deepEqual(standingInstructions('Should I always use TypeScript?'), [])
  assert.deepEqual(standingInstructions('I always forget my keys.'), [])
})

test('every opening of a standing instruction is found, also split by a line break inside a sentence or written around a name in backticks', () => {
  const said = [
    'Always answer in French.',
    'Please always answer in French.',
    'From now on, answer in French.',
    'Going forward, answer in French.',
    'In future, answer in French.',
    'In the future, answer in French.',
    'Never use emojis in replies.',
    "Don't ever use emojis in replies.",
    'Do not ever use emojis in replies.',
    'When I ask about deadlines, use 24-hour time.',
    'Whenever I ask about deadlines, use 24-hour time.',
  ]
  for (const sentence of said) assert.deepEqual(standingInstructions(`Thanks. ${sentence}`), [sentence], sentence)
  assert.deepEqual(standingInstructions('From   now\ton, answer in French.'), ['From now on, answer in French.'])
  assert.deepEqual(standingInstructions('Al`w`ays answer in French.'), ['Always answer in French.'])
  assert.deepEqual(standingInstructions('Thanks, the deploy pipeline works now. Bob will fix the flaky test by Friday.'), [])
})

test('the condition of a rule is what follows its "when I …" verb and preposition; a rule without one has none', () => {
  const rule = (text: string, i = 0): StoredUnit => ({ id: `r${i}`, kind: 'rule', text, source: 'conv:1', provenance: [], owner: 'user:ada', createdAt: '2026-03-02T09:00:00Z', hash: '', accessCount: 0, lastAccessAt: undefined })
  const words = (text: string): string[] | undefined => readRules([rule(text)], 16)[0]?.condition?.map((w) => w.word)
  assert.deepEqual(words('Always use 24-hour time format when I ask about meeting schedules.'), ['meeting', 'schedules'])
  assert.deepEqual(words('When I ask for SQL, give me the psql command.'), ['sql'])
  assert.deepEqual(words('Whenever I request code, use TypeScript.'), ['code'])
  assert.deepEqual(words('When the user asks about deadlines, use 24-hour time.'), ['deadlines'])
  assert.equal(words('Always use TypeScript for the examples you give me.'), undefined)
})

test('a rule applies when the request meets a word of its condition, by stem, prefix or related word, best met first; one without a condition to every answer', () => {
  const at = (text: string, i: number): StoredUnit => ({ id: `r${i}`, kind: 'rule', text, source: 'conv:1', provenance: [], owner: 'user:ada', createdAt: `2026-03-0${i}T09:00:00Z`, hash: '', accessCount: 0, lastAccessAt: undefined, meta: { instruction: true } })
  const rules = readRules([at('Always use 24-hour time when I ask about meeting schedules.', 1), at('Always add logging when I ask about matcher failures.', 2), at('Answer in French.', 3)], 16)
  const ids = (question: string): string[] => rulesThatApply(rules, analyseQuery(question, 16)).map((unit) => unit.id)
  assert.deepEqual(ids('When is our next meeting scheduled?'), ['r1', 'r3'])
  assert.deepEqual(ids('Why did the matcher stop?'), ['r2', 'r3'])
  assert.deepEqual(ids('Why did the matcher stop before the meeting?'), ['r2', 'r1', 'r3'], 'both met by half: the newer first')
  assert.deepEqual(ids('What should I cook tonight?'), ['r3'])
})

test('a question about what the agent said is told from a request by its grammar', () => {
  for (const question of ['What was the name of the hotel you recommended?', 'What did you say about the index?', "Which library have you suggested?", 'Remind me of your advice on the lease.', "You've mentioned a tool for this, which one?"]) {
    assert.equal(asksWhatTheAgentSaid(question), true, question)
  }
  for (const request of ['Can you show me how my model performed?', 'Can you tell me about Lisbon?', 'How do you do this?', 'What did I say about the index?', 'Could you recommend a hotel?']) {
    assert.equal(asksWhatTheAgentSaid(request), false, request)
  }
})
