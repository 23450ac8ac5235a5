/**
 * What a gathering question is about (decision 0080): each form of the closed grammar says how to
 * tell, not what about, and the subject is the rest of the question — including the words a form
 * holds inside it ("how did my sourdough develop": the subject sits between "how did" and the verb).
 * Each form, asked with its subject where that form puts it, recalls the one thread on that subject
 * out of two, written as gathering writes them (`threadLine`).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { threadLine } from '../src/memory/threads/gather-threads.ts'
import { recallThread, type ThreadSource } from '../src/memory/threads/gathering-question.ts'

/** Ada's sourdough (turns 1, 3, 5) and her bike (2, 4): no word of one is in the other. */
const SAID: ReadonlyArray<readonly [number, string, string]> = [
  [1, '2026-03-02T09:00:00Z', 'I started a sourdough starter with rye flour today.'],
  [2, '2026-03-02T09:01:00Z', 'Also my bike needs a new chain before the weekend ride.'],
  [3, '2026-03-05T09:00:00Z', 'The sourdough starter doubled overnight, so I baked my first loaf.'],
  [4, '2026-03-05T09:01:00Z', 'The bike chain arrived, I fitted it myself.'],
  [5, '2026-03-08T09:00:00Z', 'My sourdough came out dense, I think the oven was too cool.'],
]
const SOURDOUGH = ['1', '3', '5']

function thread(subject: string): { slug: string; body: string } {
  const lines = SAID.filter(([, , content]) => content.toLowerCase().includes(subject)).map(([id, at, content]) => threadLine({ id, at, name: 'ada', content }, subject))
  return { slug: subject, body: lines.join('\n') }
}
const threads: ThreadSource = async () => [thread('sourdough'), thread('bike')]

test('every form of the grammar, its subject where the form puts it, recalls the thread on that subject', async () => {
  for (const question of [
    // "how did/has/have/do/does … develop/evolve/change/progress/grow/shift": the subject is inside the form.
    'How did my sourdough develop?',
    'How has my sourdough changed?',
    'How have the sourdough loaves evolved?',
    'How does my sourdough progress?',
    'How did the sourdough grow?',
    'How do my sourdough bakes shift?',
    'How did my sourdough starter develop over time?',
    // The forms whose subject is outside them.
    'In what order did I do things with my sourdough?',
    'Which order did the sourdough steps come in?',
    'Tell me the order in which I baked sourdough.',
    'List my sourdough steps in order.',
    'Across our conversations, what did I say about my sourdough?',
    'What did I bake throughout my sessions with the sourdough?',
    'What happened to my sourdough over time?',
    'Summarize my sourdough.',
    'Tell me the whole story of my sourdough.',
    "Tell me everything we've discussed about my sourdough.",
  ]) {
    const recalled = await recallThread(threads, question)
    assert.ok(recalled, question)
    assert.deepEqual(recalled.messageIds, SOURDOUGH, question)
    assert.deepEqual(SOURDOUGH.map((id) => recalled.subjects.get(id)), ['sourdough', 'sourdough', 'sourdough'], question)
  }
  // The same form about the other subject recalls the other thread.
  assert.deepEqual((await recallThread(threads, 'How has my bike changed?'))?.messageIds, ['2', '4'])
})

test('a gathering form with no subject left, or a question that does not gather, recalls no thread', async () => {
  for (const question of [
    // Gathering, but about nothing a thread holds: every word left is a stop word.
    'How did it develop?',
    'In what order?',
    'Summarize.',
    // Not gathering: "progress" after a possessive is a noun, the question asks about a feeling.
    'How did you feel about my progress with the sourdough?',
    'Which flour did I use for the sourdough starter?',
  ]) {
    assert.equal(await recallThread(threads, question), undefined, question)
  }
})
