// @slow: drives sessions through their boundaries, also on PostgreSQL
/**
 * Threads (decision 0080): what was said about one subject, gathered at session boundaries into the
 * user's tree, in time order with dates, pointing back to its turns; recalled by priming when a
 * question asks for order, change or the whole story, and only then. Through `createMind` →
 * `mind.session(id, { user })` → `begin`/`end` → `mind.sessions.end` → `maintain`, on the embedded
 * backend and on PostgreSQL.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { asksForTheWholeStory } from '../src/memory/threads/gathering-question.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const DAY = 86_400_000

/** What Ada says in each of three sittings, days apart: the sourdough comes back each time, among other things. */
const SITTINGS: ReadonlyArray<readonly string[]> = [
  ['I started a sourdough starter with rye flour today.', 'Also my bike needs a new chain before the weekend ride.'],
  ['The sourdough starter doubled overnight, so I baked my first loaf.', 'The garden tomatoes are finally turning red.'],
  ['My sourdough came out dense, I think the oven was too cool.', 'I booked the dentist for Thursday.'],
]

type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

function threadSuite(target: Target): void {
  test(`three sessions about one subject gather a thread that an "in what order" question primes (${target.backend})`, async (t) => {
    const temp = makeTempHome('engram-threads-')
    t.after(temp.cleanup)
    const schema = freshSchema()
    const env = target.backend === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : temp.env
    const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'))
    const mind = await openMindInternals({ home: temp.home, env, ignoreConfigFile: true, clock, embedder: null })
    t.after(() => mind.close())
    if (target.backend === 'postgres') t.after(() => dropSchema(target.url, schema))

    for (const [i, said] of SITTINGS.entries()) {
      clock.set(Date.parse('2026-03-02T09:00:00Z') + i * 3 * DAY)
      const session = mind.session(`kitchen-${i}`, { user: 'ada' })
      for (const message of said) {
        const turn = await session.begin(message)
        await session.end(turn, 'Noted.')
        clock.advance(60_000)
      }
      await mind.sessions.end(`kitchen-${i}`)
      await mind.maintain()
      await mind.idle()
    }

    // Gathered into Ada's tree: the subject her sessions share, each turn a dated line, pointing back to the turns.
    const ada = mind.backend.owned('user:ada').documents
    const thread = await ada.read('thread', 'sourdough')
    assert.ok(thread, `a sourdough thread; threads: ${JSON.stringify(await ada.slugs('thread'))}`)
    assert.equal(thread.path, `agents/${mind.agent}/users/ada/threads/sourdough.md`)
    const lines = thread.body.split('\n').filter((line) => line.startsWith('- '))
    assert.deepEqual(
      lines.map((line) => line.replace(/ <!-- msg:\d+ reply:\d+ -->$/, '')),
      [
        '- 2026-03-02 ada: I started a sourdough starter with rye flour today.',
        '- 2026-03-05 ada: The sourdough starter doubled overnight, so I baked my first loaf.',
        '- 2026-03-08 ada: My sourdough came out dense, I think the oven was too cool.',
      ],
    )
    const ids = lines.map((line) => /<!-- msg:(\d+) reply:\d+ -->$/.exec(line)?.[1] ?? '')
    const replies = lines.map((line) => / reply:(\d+) -->$/.exec(line)?.[1] ?? '')
    const messages = await mind.backend.context.messagesById([...ids, ...replies].map(Number))
    const said = (id: string): string | undefined => messages.find((message) => String(message.id) === id)?.content
    assert.deepEqual(ids.map(said), SITTINGS.map((sitting) => sitting[0]), 'each line points back to its turn, in time order')
    assert.deepEqual(replies.map(said), ['Noted.', 'Noted.', 'Noted.'], 'and to the reply that answered it')
    // A subject said in one sitting only starts no thread.
    assert.equal(await ada.read('thread', 'dentist'), null)
    // Gathering again writes nothing new: the boundary's job is done once per period, and a rebuild of the same turns is the same thread.
    assert.deepEqual((await mind.maintain()).jobs.filter((job) => job.kind === 'thread-gathering'), [])

    // An "in what order" question primes the thread's turns first, as dated excerpts, in time order.
    clock.advance(DAY)
    const asking = mind.session('kitchen-ask', { user: 'ada' })
    const turn = await asking.begin('In what order did I do things with my sourdough?')
    const primed = turn.systemParts.primed
    const at = SITTINGS.map((said) => primed.indexOf(said[0] as string))
    assert.ok(
      at.every((i) => i >= 0),
      primed,
    )
    assert.deepEqual([...at].sort((a, b) => a - b), at, `in time order: ${primed}`)
    for (const day of ['2026-03-02', '2026-03-05', '2026-03-08']) assert.match(primed, new RegExp(day), `dated: ${primed}`)
    assert.ok(
      turn.provenance.primed.some((item) => item.kind === 'message' && ids.includes(item.provenance[0] ?? '')),
      'the primed memories are the turns themselves',
    )
    await asking.end(turn, 'Starter, first loaf, then a dense one.')

    // A summary asks for both sides: each turn, then the reply that answered it.
    const summary = await mind.primer.prime({ message: 'Summarize what I told you about my sourdough.', viewer: { agent: mind.agent, user: 'ada' }, inspect: true })
    const summarised = summary.injected.flatMap((item) => (item.kind === 'message' ? item.provenance : []))
    for (const id of [...ids, ...replies]) assert.ok(summarised.includes(id), `message ${id} in ${JSON.stringify(summarised)}`)

    // How a subject changed, the subject named between "how did" and the verb: the turns, in time order.
    const developed = await mind.primer.prime({ message: 'How did my sourdough develop?', viewer: { agent: mind.agent, user: 'ada' }, inspect: true })
    const told = developed.injected.filter((item) => item.channel === 'related').flatMap((item) => (item.kind === 'message' ? item.provenance : []))
    assert.deepEqual(told.slice(0, ids.length), ids, `the thread's turns first, in time order: ${JSON.stringify(told)}`)

    // The same subject asked without the form of a whole story is an ordinary question: no thread.
    const plain = await mind.primer.prime({ message: 'Which flour did I use for the sourdough starter?', viewer: { agent: mind.agent, user: 'ada' }, inspect: true })
    assert.ok(!plain.injected.some((item) => item.kind === 'thread'))
    assert.match(plain.text, /rye flour/)

    // A gathering question's access record (the Hebbian term of later recalls) is what the message alone
    // would have shown: the story's turns are shown because the thread holds them, and the turns they
    // displace were recalled by the message — so no later question ranks otherwise for the thread.
    const viewer = { agent: mind.agent, user: 'ada' }
    const story = 'Across our conversations, what did I say about the oven and my bread?'
    const related = (primed: { injected: ReadonlyArray<{ channel: string; id: string }> }): string[] => primed.injected.filter((item) => item.channel === 'related').map((item) => item.id)
    await ada.archive('thread', 'sourdough', 'forgotten')
    const alone = await mind.primer.prime({ message: story, viewer, budget: 160, inspect: true })
    await ada.restore('thread', 'sourdough', 'forgotten')
    const gathered = await mind.primer.prime({ message: story, viewer, budget: 160, inspect: true })
    assert.notDeepEqual(related(gathered), related(alone), 'the thread shows other turns than the message alone')
    const accessed = async (): Promise<Map<string, number>> => new Map((await mind.backend.index.list({ kinds: ['message'] }, { limit: 1000 })).map((unit) => [unit.id, unit.accessCount]))
    const before = await accessed()
    await mind.primer.prime({ message: story, viewer, budget: 160 })
    const recalled = [...(await accessed())].filter(([id, count]) => count > (before.get(id) ?? 0)).map(([id]) => id)
    assert.deepEqual(recalled.sort(), related(alone).sort())
  })
}

threadSuite({ backend: 'embedded' })
onPostgres('three sessions about one subject gather a thread that an "in what order" question primes', (url) => threadSuite({ backend: 'postgres', url }))

test('the closed grammar of a question about order, change or the whole story', () => {
  for (const question of [
    'In what order did I bring up the laptop options?',
    'Can you list the order in which I asked about the API?',
    'How did my plan for the garden develop?',
    'How has my training changed since spring?',
    'Summarize what we said about the move.',
    'Give me a summary of the budget discussions.',
    'Across our conversations, what did I say about sleep?',
    'What did I try throughout our sessions to fix the build?',
    'How did my reading habits shift over time?',
    'Tell me the whole story of the kitchen renovation.',
    "Give me an overview of everything we've discussed about the wedding.",
  ]) {
    assert.ok(asksForTheWholeStory(question), question)
  }
  for (const question of [
    'What flour did I use?',
    'Which order number was the blender?',
    'I need this in order to finish the report.',
    'When did I book the dentist?',
    'How did the meeting go?',
    'How did you feel about my progress with the piano?',
  ]) {
    assert.ok(!asksForTheWholeStory(question), question)
  }
})
