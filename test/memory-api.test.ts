/**
 * The plain memory API (`mind.memories`, decision 0065), through `createMind` only, on both
 * backends: two users add, search, list, get, update and delete their memories, and nothing of one
 * reaches the other; ids stay the same after a restart, in another process and after `engram migrate` to PostgreSQL. Last, the mind's
 * internal retriever: without a viewer it reads the agent's own view, not every user's.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { createMind, type Mind, type CreateMindOptions } from '../src/index.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { dropKillRunSchema, killRunSchema, runMigrate } from '../src/memory/portability/test-support/migrate-kill.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')

type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

function memoryApiSuite(target: Target): void {
  describe(`mind.memories: two users, nothing of one reaches the other (${target.backend})`, () => {
    let tmp: TempHome
    let options: CreateMindOptions
    let mind: Mind
    const schema = freshSchema()
    const ids: Record<string, string> = {}

    before(async () => {
      tmp = makeTempHome()
      const env = target.backend === 'postgres' ? { ...tmp.env, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : tmp.env
      options = { home: tmp.home, env, ignoreConfigFile: true }
      mind = await createMind(options)
    })
    after(async () => {
      await mind.close()
      if (target.backend === 'postgres') await dropSchema(target.url, schema)
      tmp.cleanup()
    })

    test('add stores each text for its user and says what it did, with ids; a repeat is unchanged', async () => {
      const ada = await mind.memories.add({ user: 'ada', text: ['Ada keeps bees on the aardvark farm', 'Ada takes her tea without sugar'] })
      assert.deepEqual(
        ada.results.map((r) => [r.event, r.owner, r.kind]),
        [
          ['added', 'user:ada', 'lesson'],
          ['added', 'user:ada', 'lesson'],
        ],
      )
      ids.bees = ada.results[0]?.id as string
      ids.tea = ada.results[1]?.id as string
      const bob = await mind.memories.add({ user: 'bob', text: 'Bob parks the pelican boat at the marina', kind: 'lesson' })
      ids.boat = bob.results[0]?.id as string
      const rule = await mind.memories.add({ text: 'Answer in short sentences', kind: 'always' })
      assert.equal(rule.results[0]?.owner, 'agent')
      ids.rule = rule.results[0]?.id as string
      const again = await mind.memories.add({ user: 'ada', text: 'Ada keeps bees on the aardvark farm' })
      assert.deepEqual(again.results.map((r) => [r.event, r.id]), [['unchanged', ids.bees]])
      for (const id of Object.values(ids)) assert.match(id, /^mem_[A-Za-z0-9_-]+$/)
      await assert.rejects(mind.memories.add({ user: 'ada', text: '   ' }), { code: 'invalid_argument' })
    })

    test('search finds a user their own memories and the agent’s, never another user’s', async () => {
      const found = await mind.memories.search('aardvark farm bees', { user: 'ada' })
      assert.equal(found[0]?.id, ids.bees)
      assert.equal(found[0]?.owner, 'user:ada')
      assert.equal(typeof found[0]?.score, 'number')
      assert.ok(Array.isArray(found[0]?.provenance))
      const owners = async (query: string, user?: string): Promise<string[]> => [...new Set((await mind.memories.search(query, user === undefined ? {} : { user })).map((m) => m.owner))].sort()
      assert.deepEqual(await owners('pelican boat marina', 'ada'), ['agent', 'user:ada'])
      assert.equal((await mind.memories.search('pelican boat marina', { user: 'bob' }))[0]?.id, ids.boat)
      assert.deepEqual(await owners('pelican boat marina aardvark farm bees', 'bob'), ['agent', 'user:bob'])
      assert.equal((await mind.memories.search('short sentences', { user: 'bob' }))[0]?.id, ids.rule)
      // The agent's own view: agent and shared memory, no user's.
      assert.deepEqual(await owners('aardvark farm bees pelican boat'), ['agent'])
    })

    test('getAll lists what the caller sees, a page at a time, by kind and owner', async () => {
      const ada = await mind.memories.getAll({ user: 'ada' })
      assert.deepEqual(ada.memories.map((m) => m.id).sort(), [ids.bees, ids.tea, ids.rule].sort())
      assert.equal(ada.total, 3)
      const first = await mind.memories.getAll({ user: 'ada', limit: 2 })
      assert.equal(first.memories.length, 2)
      assert.equal(first.nextOffset, 2)
      const second = await mind.memories.getAll({ user: 'ada', limit: 2, offset: 2 })
      assert.equal(second.memories.length, 1)
      assert.equal(second.nextOffset, undefined)
      assert.deepEqual((await mind.memories.getAll({ user: 'ada', kinds: ['always'] })).memories.map((m) => m.id), [ids.rule])
      assert.deepEqual((await mind.memories.getAll({ user: 'ada', owner: 'user:ada' })).total, 2)
      assert.deepEqual((await mind.memories.getAll({ user: 'ada', owner: 'user:bob' })).memories, [])
      assert.deepEqual((await mind.memories.getAll()).memories.map((m) => m.id), [ids.rule])
    })

    test('get of one’s own id works; another user’s id is not found for get, update, delete and history', async () => {
      const got = await mind.memories.get(ids.bees as string, { user: 'ada' })
      assert.equal(got.text, 'Ada keeps bees on the aardvark farm')
      assert.equal(got.owner, 'user:ada')
      for (const [who, id] of [
        ['bob', ids.bees],
        [undefined, ids.bees],
        ['ada', ids.boat],
      ] as const) {
        const scope = who === undefined ? {} : { user: who }
        await assert.rejects(mind.memories.get(id as string, scope), { code: 'not_found' })
        await assert.rejects(mind.memories.update(id as string, 'stolen', scope), { code: 'not_found' })
        await assert.rejects(mind.memories.delete(id as string, scope), { code: 'not_found' })
        await assert.rejects(mind.memories.history(id as string, scope), { code: 'not_found' })
      }
      await assert.rejects(mind.memories.get('mem_nonsense', { user: 'ada' }), { code: 'not_found' })
      // A user sees the agent's rule but may not change it.
      await assert.rejects(mind.memories.update(ids.rule as string, 'Answer at length', { user: 'ada' }), { code: 'access_denied' })
      assert.equal((await mind.memories.get(ids.rule as string, { user: 'ada' })).text, 'Answer in short sentences')
    })

    test('update goes through the write path and forgets the old text (restorable); delete forgets, purge deletes', async () => {
      const updated = await mind.memories.update(ids.tea as string, 'Ada takes her tea with honey', { user: 'ada' })
      assert.equal(updated.event, 'updated')
      assert.notEqual(updated.id, ids.tea)
      await assert.rejects(mind.memories.get(ids.tea as string, { user: 'ada' }), { code: 'not_found' })
      assert.equal((await mind.memories.get(updated.id as string, { user: 'ada' })).text, 'Ada takes her tea with honey')
      ids.tea = updated.id as string

      const forgotten = await mind.memories.delete(ids.tea as string, { user: 'ada' })
      assert.equal(forgotten.action, 'forgotten')
      await assert.rejects(mind.memories.get(ids.tea as string, { user: 'ada' }), { code: 'not_found' })
      const restored = await mind.restore(forgotten.path, { user: 'ada' })
      assert.equal(restored.action, 'restored')
      assert.equal((await mind.memories.get(ids.tea as string, { user: 'ada' })).text, 'Ada takes her tea with honey')

      const purged = await mind.memories.delete(ids.tea as string, { user: 'ada', purge: true })
      assert.equal(purged.action, 'purged')
      await assert.rejects(mind.restore(forgotten.path, { user: 'ada' }), { code: 'not_found' })
      // An entry keeps no versions: history says so rather than inventing one.
      await assert.rejects(mind.memories.history(ids.bees as string, { user: 'ada' }), { code: 'invalid_argument' })
    })

    test("updating a user's profile fact to a new value of its key keeps the old value restorable (decision 0071)", async () => {
      const [city] = (await mind.memories.add({ user: 'cyd', text: 'City: Lisbon', kind: 'profile' })).results
      assert.equal(city?.event, 'added')
      const updated = await mind.memories.update(city?.id as string, 'City: Porto', { user: 'cyd' })
      assert.equal(updated.event, 'updated')
      const profile = (await mind.memories.getAll({ user: 'cyd', kinds: ['profile'] })).memories.map((memory) => memory.text)
      assert.ok(profile.includes('City: Porto') && !profile.includes('City: Lisbon'), profile.join(' | '))
      // The new value took the old one's line; the old one is archived, not lost: restoring it puts it back in its key's place.
      const restored = await mind.restore('City: Lisbon', { user: 'cyd' })
      assert.equal(restored.action, 'restored')
      const after = (await mind.memories.getAll({ user: 'cyd', kinds: ['profile'] })).memories.map((memory) => memory.text)
      assert.ok(after.includes('City: Lisbon') && !after.includes('City: Porto'), after.join(' | '))
      // Saying the same again changes nothing and archives nothing.
      const same = await mind.memories.update(city?.id as string, 'City:  Lisbon', { user: 'cyd' })
      assert.equal(same.event, 'unchanged')
      assert.equal(same.id, city?.id)
    })

    test('the gate holds what it holds for confirmation, and add says so; with memory off nothing is written', async () => {
      await mind.close()
      mind = await createMind({ ...options, settings: { 'memory.mode': 'copilot' } })
      const held = await mind.memories.add({ user: 'ada', text: 'Ada might move to Oslo', confidence: 'medium' })
      const [change] = held.results
      assert.equal(change?.event, 'pending')
      assert.match(change?.reason ?? '', /copilot/)
      assert.equal(change?.id, undefined)
      assert.deepEqual((await mind.pendingConfirmations({ user: 'ada' })).map((item) => item.id), [change?.confirmationId])
      // Nothing of it is a memory until the user says yes.
      assert.ok(!(await mind.memories.getAll({ user: 'ada' })).memories.some((m) => m.text === 'Ada might move to Oslo'))
      await mind.confirm({ accept: [change?.confirmationId as string], user: 'ada' })
      assert.ok((await mind.memories.getAll({ user: 'ada' })).memories.some((m) => m.text === 'Ada might move to Oslo'))
      await mind.close()
      mind = await createMind({ ...options, settings: { 'memory.mode': 'off' } })
      const off = await mind.memories.add({ user: 'ada', text: 'Ada dislikes jazz' })
      assert.deepEqual(off.results.map((r) => [r.event, r.id]), [['suppressed', undefined]])
      await mind.close()
      mind = await createMind(options)
    })

    test('ids are the same after a restart and in another process', async () => {
      await mind.close()
      mind = await createMind(options)
      assert.equal((await mind.memories.get(ids.bees as string, { user: 'ada' })).text, 'Ada keeps bees on the aardvark farm')
      const listed = (await mind.memories.getAll({ user: 'bob' })).memories.map((m) => m.id).sort()
      const script = `import { createMind } from ${JSON.stringify(resolve(root, 'src/index.ts'))}
const mind = await createMind(${JSON.stringify(options)})
const page = await mind.memories.getAll({ user: 'bob' })
console.log(JSON.stringify(page.memories.map((m) => m.id).sort()))
await mind.close()`
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root, env: { ...process.env, ...options.env } })
      assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1) as string), listed)
      assert.ok(listed.includes(ids.boat as string))
    })

    test('a profile fact is found, read and forgotten by its id, only by its user', async () => {
      const [fact] = (await mind.memories.add({ user: 'ada', text: 'Hometown: Porto', kind: 'profile' })).results
      assert.equal(fact?.event, 'added')
      const found = await mind.memories.search('Hometown Porto', { user: 'ada', kinds: ['profile'] })
      assert.deepEqual(found.map((m) => [m.id, m.kind, m.owner]), [[fact?.id, 'profile', 'user:ada']])
      assert.deepEqual(await mind.memories.search('Hometown Porto', { user: 'bob', kinds: ['profile'] }), [])
      await assert.rejects(mind.memories.get(fact?.id as string, { user: 'bob' }), { code: 'not_found' })
      assert.equal((await mind.memories.delete(fact?.id as string, { user: 'ada' })).action, 'forgotten')
      await assert.rejects(mind.memories.get(fact?.id as string, { user: 'ada' }), { code: 'not_found' })
    })

    test('add({ messages }) stores the facts the user states, offline by the rules, for that user only; the assistant’s words are not read', async () => {
      const added = await mind.memories.add({
        user: 'cleo',
        messages: [
          { role: 'user', content: 'I am allergic to hazelnuts. Always answer in Portuguese from now on. Is my brother a pilot?' },
          { role: 'assistant', content: 'I live in a lighthouse and I am allergic to cats.' },
        ],
      })
      assert.equal(added.method, 'rules')
      assert.equal(added.degraded, undefined)
      assert.deepEqual(added.results.map((r) => [r.event, r.kind, r.owner, r.text]), [
        ['added', 'profile', 'user:cleo', 'The user is allergic to hazelnuts.'],
        ['added', 'always', 'user:cleo', 'Answer in Portuguese from now on.'],
      ])
      const found = await mind.memories.search('allergic hazelnuts', { user: 'cleo' })
      assert.equal(found[0]?.id, added.results[0]?.id)
      assert.deepEqual(await mind.memories.search('allergic hazelnuts', { user: 'ada', kinds: ['profile'] }), [])
      assert.equal((await mind.memories.add({ user: 'cleo', messages: [{ role: 'assistant', content: 'I am allergic to cats.' }] })).results.length, 0)
      await assert.rejects(mind.memories.add({ user: 'cleo', messages: 'I am allergic to hazelnuts.' as never }), { code: 'invalid_argument' })
    })

    test('add({ messages }): where the user lives, said again later, replaces what they said before (a keyed profile fact, decision 0066)', async () => {
      const first = await mind.memories.add({ user: 'dora', messages: [{ role: 'user', content: "I live in Lisbon and I work as a nurse. I'm 34." }] })
      assert.deepEqual(first.results.map((r) => [r.event, r.text]), [
        ['added', 'Location: Lisbon'],
        ['added', 'Role: nurse'],
        ['added', 'Age: 34'],
      ])
      const moved = await mind.memories.add({ user: 'dora', messages: [{ role: 'user', content: 'I live in Porto.' }] })
      assert.deepEqual(moved.results.map((r) => [r.event, r.text]), [['added', 'Location: Porto']])
      const live = (await mind.memories.getAll({ user: 'dora' })).memories.map((m) => m.text)
      assert.ok(live.includes('Location: Porto') && live.includes('Role: nurse') && live.includes('Age: 34'), live.join(' | '))
      assert.ok(!live.includes('Location: Lisbon'), live.join(' | '))
    })
  })
}

memoryApiSuite({ backend: 'embedded' })
onPostgres('mind.memories: two users, nothing of one reaches the other', (url) => memoryApiSuite({ backend: 'postgres', url }))

test("a mind's retriever without a viewer reads the agent's own view; every user's only when asked (allOwners)", async () => {
  const tmp = makeTempHome()
  const mind = await openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true })
  try {
    await mind.memories.add({ user: 'ada', text: 'Ada hides the quokka key under the mat' })
    await mind.memories.add({ text: 'The quokka enclosure opens at nine' })
    await mind.indexed()
    const owners = async (options: { allOwners?: boolean }): Promise<string[]> => [...new Set((await mind.retriever.search('quokka', options)).hits.map((hit) => hit.unit.owner))].sort()
    assert.deepEqual(await owners({}), ['agent'])
    assert.deepEqual(await owners({ allOwners: true }), ['agent', 'user:ada'])
  } finally {
    await mind.close()
    tmp.cleanup()
  }
})

onPostgres('mind.memories ids after engram migrate', (url) => {
  test('the ids of an embedded home are the ids of its copy in PostgreSQL after `engram migrate`', async () => {
    const tmp = makeTempHome()
    const schema = killRunSchema('memapi')
    try {
      const embedded = await createMind({ home: tmp.home, env: tmp.env, ignoreConfigFile: true })
      await embedded.memories.add({ user: 'ada', text: ['Ada rows on the canal at dawn', 'Name: Ada'], kind: 'lesson' })
      await embedded.memories.add({ user: 'ada', text: 'City: Porto', kind: 'profile' })
      await embedded.memories.add({ text: 'Never share one user’s notes with another', kind: 'never' })
      const before = { ada: (await embedded.memories.getAll({ user: 'ada' })).memories, agent: (await embedded.memories.getAll()).memories }
      await embedded.close()
      assert.equal(before.ada.length, 4)
      const run = await runMigrate(tmp.home, tmp.env, url, schema)
      assert.equal(run.code, 0, JSON.stringify(run.json) + run.stderr)
      const migrated = await createMind({ home: tmp.home, env: { ...tmp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }, ignoreConfigFile: true })
      try {
        assert.deepEqual((await migrated.memories.getAll({ user: 'ada' })).memories, before.ada)
        assert.deepEqual((await migrated.memories.getAll()).memories, before.agent)
        const profileFact = before.ada.find((memory) => memory.kind === 'profile') as { id: string }
        assert.equal((await migrated.memories.get(profileFact.id, { user: 'ada' })).text, 'City: Porto')
      } finally {
        await migrated.close()
      }
    } finally {
      await dropKillRunSchema(url, schema)
      tmp.cleanup()
    }
  })
})
