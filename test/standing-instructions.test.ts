/**
 * Standing instructions and what the agent itself said (decision 0079), through the session path an
 * agent uses (`createMind` → `mind.session(id, { user })`, a new Session object per turn), with the
 * default offline embedder (GloVe word vectors):
 *   - an instruction the user gave once, in an earlier sitting, is primed for a later request it
 *     applies to by its condition, sharing no word with it; an instruction without a condition is
 *     primed for every question or request; neither for a greeting, nor the conditional one for a
 *     request outside its condition;
 *   - a question about what the agent recommended finds the agent's own reply first, where the same
 *     words without "you recommended" rank the user's message first (the agent's replies are demoted).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { internalsOf } from '../src/mind-internals.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const PSQL = 'Always give me the psql command when I ask about databases.'
const TYPESCRIPT = 'Always use TypeScript for the examples you give me.'

async function sitting(mind: Mind, sessionId: string, message: string, reply: string): Promise<string> {
  // A new Session object per turn, as a host that handles each request on its own does.
  const session = mind.session(sessionId, { user: 'ada' })
  const turn = await session.begin(message)
  await session.end(turn, reply)
  return turn.systemParts.primed
}

async function openMind(prefix: string): Promise<{ mind: Mind; clock: ManualClock; cleanup: () => void }> {
  const temp = makeTempHome(prefix)
  // The default offline embedder, as an agent gets it out of the box (the temp home's env picks the small hashing one).
  const { ENGRAM_EMBED_MODEL: _small, ...env } = temp.env
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env, ignoreConfigFile: true, clock })
  return { mind, clock, cleanup: temp.cleanup }
}

test('an instruction given once is primed for a later request it applies to, by its condition and without shared words; not for a greeting', async (t) => {
  const { mind, clock, cleanup } = await openMind('engram-standing-')
  t.after(cleanup)
  t.after(() => mind.close())
  await sitting(mind, 'monday', `Hi! ${PSQL} ${TYPESCRIPT}`, 'Understood.')
  await mind.idle()

  clock.set('2026-03-05T10:00:00Z')
  // No word in common with the instruction: "SQL" is a related word of "databases".
  const sql = await sitting(mind, 'thursday', 'How do I write an SQL query that joins two tables?', 'SELECT … JOIN …')
  assert.ok(sql.includes(PSQL), sql)
  assert.ok(sql.includes(TYPESCRIPT), 'an instruction without a condition applies to every answer')
  assert.match(sql, /user: Always give me the psql command/, 'said as the user\'s words')

  clock.set('2026-03-05T11:00:00Z')
  const dinner = await sitting(mind, 'thursday-2', 'What should I cook for dinner tonight?', 'Pasta.')
  assert.ok(!dinner.includes(PSQL), `outside its condition: ${dinner}`)
  assert.ok(dinner.includes(TYPESCRIPT), dinner)

  clock.set('2026-03-05T12:00:00Z')
  const hello = await sitting(mind, 'thursday-3', 'Hi, how are you today?', 'Fine, thanks!')
  assert.ok(!hello.includes(PSQL) && !hello.includes(TYPESCRIPT), `a greeting asks for nothing they shape: ${hello}`)
})

test('a question about what the agent recommended finds the agent\'s reply; the same words otherwise rank the user\'s message first', async (t) => {
  const { mind, clock, cleanup } = await openMind('engram-agent-said-')
  t.after(cleanup)
  t.after(() => mind.close())
  const asked = 'I need a quiet hotel in Lisbon; the last hotel I booked there was noisy.'
  const recommended = 'I recommend the Hotel Avenida Palace: quiet and central.'
  await sitting(mind, 'trip', asked, recommended)
  await mind.idle()
  clock.set('2026-03-09T09:00:00Z')
  const internals = internalsOf(mind)
  await internals.indexed()
  const first = async (question: string): Promise<string | undefined> => {
    const result = await internals.retriever.search(question, { kinds: ['message'], allOwners: true, recordAccess: false })
    return result.hits[0]?.unit.text
  }
  assert.equal(await first('What was the name of the hotel you recommended?'), recommended)
  assert.equal(await first('What was the name of the hotel?'), asked, 'without "you recommended", the agent\'s reply stays demoted')
})

/**
 * Rules stated in turns of one mind and of another process on the same home (and, on PostgreSQL,
 * the same schema), and the index's stamp of rules around them: equal across a turn that states
 * none (the retriever keeps what it listed), changed by a stated rule, which the next turn primes.
 */
async function rulesKeptUntilStated(database: Record<string, string>, backend: string): Promise<void> {
  const temp = makeTempHome('engram-rules-kept-')
  const { ENGRAM_EMBED_MODEL: _small, ...homeEnv } = temp.env
  const env = { ...homeEnv, ...database }
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: temp.home, env, ignoreConfigFile: true, clock })
  try {
  assert.equal(internalsOf(mind).backend.name, backend)
  const index = internalsOf(mind).backend.index
  const stamp = () => (index.stamp as NonNullable<typeof index.stamp>)(['rule'])

  await sitting(mind, 'monday', 'How do I list the tables of a database?', 'Use \\dt.')
  await mind.idle()
  const listed = await stamp()
  clock.set('2026-03-02T10:00:00Z')
  const before = await sitting(mind, 'monday-2', 'How do I join two tables in SQL?', 'SELECT … JOIN …')
  await mind.idle()
  assert.ok(!before.includes(PSQL))
  assert.equal(await stamp(), listed, 'a turn that states no rule leaves the rules as listed')

  // Stated in this process: the next request it applies to has it.
  clock.set('2026-03-03T09:00:00Z')
  await sitting(mind, 'tuesday', PSQL, 'Understood.')
  await mind.idle()
  assert.notEqual(await stamp(), listed)
  clock.set('2026-03-03T10:00:00Z')
  const sql = await sitting(mind, 'tuesday-2', 'How do I write an SQL query that joins two tables?', 'SELECT … JOIN …')
  assert.ok(sql.includes(PSQL), sql)
  assert.ok(!sql.includes(TYPESCRIPT))

  // Stated by another process on the same home: seen by this one's next turn.
  const elsewhere = await createMind({ home: temp.home, env, ignoreConfigFile: true, clock })
  await sitting(elsewhere, 'wednesday', TYPESCRIPT, 'Sure.')
  await elsewhere.idle()
  await elsewhere.close()
  clock.set('2026-03-04T10:00:00Z')
  const both = await sitting(mind, 'wednesday-2', 'How do I write an SQL query that groups rows?', 'GROUP BY …')
  assert.ok(both.includes(PSQL) && both.includes(TYPESCRIPT), both)
  } finally {
    await mind.close()
    temp.cleanup()
  }
}

test('the rules listed for a turn are kept until one is stated, in this process or another (decision 0090)', () => rulesKeptUntilStated({}, 'embedded'))

onPostgres('the rules listed for a turn kept until one is stated', (url) => {
  test('on PostgreSQL too, the rules listed for a turn are kept until one is stated, in this process or another (decision 0094)', async () => {
    const schema = freshSchema()
    try {
      await rulesKeptUntilStated({ ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }, 'postgres')
    } finally {
      await dropSchema(url, schema)
    }
  })
})

