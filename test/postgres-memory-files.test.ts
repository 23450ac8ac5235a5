/**
 * The memory-file paths on PostgreSQL (decision 0037), through createMind → session → tools, with two
 * users: read_memory_file, write_memory_file, the MCP memory resources (official client),
 * `exportUser`, forget_memory / restore / purge (documents, entries, topics) and the daily legacy
 * migration read and write memory as rows through the seams, archive included — nothing of one
 * user reaches the other, and nothing is written to files of the home nobody reads.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ManualClock } from '../src/core/clock.ts'
import { createMindMcpServer } from '../src/interfaces/mcp/mind-server.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { openPostgres } from '../src/storage/postgres/connection.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { filesUnder } from '../src/memory/forgetting/user-files.ts'

const SECRET: Record<string, string> = { u1: 'aardvark', u2: 'pelican' }
const USERS = ['u1', 'u2'] as const
const other = (user: string): string => (user === 'u1' ? 'u2' : 'u1')
const start = new Date('2026-03-02T09:00:00Z')
const day = start.toISOString().slice(0, 10)

type Result = { text: string; isError?: boolean; data?: unknown }

onPostgres('memory files through the seams', (url) => {
  describe('memory files on PostgreSQL: read, write, resources, export, forget', () => {
    let tmp: TempHome
    let mind: Mind
    const schema = freshSchema()
    const clock = new ManualClock(start)
    const exec = (user: string | undefined, name: string, input: unknown): Promise<Result> =>
      mind.session(`s-${user ?? 'agent'}`, user === undefined ? {} : { user }).execute(name, input) as Promise<Result>

    /** Every engram row of an owner, as stored. */
    const rowsOf = async (owner: string): Promise<unknown[]> => {
      const handle = await openPostgres({ url, schema })
      try {
        return (await handle.pool.query('SELECT agent, scope, project, file, text FROM engram_files WHERE owner = $1 ORDER BY file', [owner])).rows
      } finally {
        await handle.close()
      }
    }

    before(async () => {
      tmp = makeTempHome()
      mind = await createMind({ home: tmp.home, env: { ...tmp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }, ignoreConfigFile: true, clock })
      assert.equal(mind.backend.name, 'postgres')
      for (const user of USERS) {
        const secret = SECRET[user] as string
        const memorized = await exec(user, 'memorize', {
          entries: [
            { text: `Always greet the ${secret} owner`, kind: 'always' },
            { text: `The ${secret} vault opens on Tuesdays`, kind: 'lesson', topic: 'vaults' },
            { text: `Pet: ${secret}`, kind: 'profile' },
          ],
        })
        assert.equal(memorized.isError, undefined, memorized.text)
        const written = await exec(user, 'write_memory_file', { path: 'knowledge/notes.md', content: `# Notes\nThe ${secret} vault is in the basement.\n` })
        assert.equal(written.isError, undefined, written.text)
      }
      await mind.idle()
    })
    after(async () => {
      await mind?.close()
      tmp?.cleanup()
      const handle = await openPostgres({ url, schema })
      try {
        await handle.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await handle.close()
      }
    })

    test('write_memory_file writes rows, not files of the home; a rewrite is versioned and an append grows the row', async () => {
      const notes = (user: string): string => join(tmp.home, 'agents/default/users', user, 'knowledge/notes.md')
      for (const user of USERS) assert.equal(existsSync(notes(user)), false, 'no file of the home holds the note')
      const doc = await mind.backend.owned('user:u1').documents.read('knowledge', 'notes')
      assert.match(doc?.body ?? '', /aardvark vault is in the basement/)
      const rewritten = await exec('u1', 'write_memory_file', { path: 'knowledge/notes.md', content: '# Notes\nThe aardvark vault moved to the attic.\n' })
      assert.match(rewritten.text, /^Rewrote users\/u1\/knowledge\/notes\.md/, rewritten.text)
      assert.equal((await mind.backend.owned('user:u1').documents.versions('knowledge', 'notes')).length, 1)
      const appended = await exec('u1', 'write_memory_file', { path: 'knowledge/notes.md', content: 'It has a red door.', mode: 'append' })
      assert.equal(appended.isError, undefined, appended.text)
      const read = await exec('u1', 'read_memory_file', { path: 'knowledge/notes.md' })
      assert.match(read.text, /^users\/u1\/knowledge\/notes\.md — lines 1-\d+ of \d+/)
      assert.match(read.text, /attic[\s\S]*red door/)
      assert.doesNotMatch(read.text, /pelican/)
    })

    for (const reader of USERS) {
      const owner = other(reader)
      test(`read_memory_file for ${reader}: their own rows, nothing of ${owner}`, async () => {
        const own = new RegExp(SECRET[reader] as string)
        const foreign = new RegExp(SECRET[owner] as string)
        const read = async (path: string): Promise<Result> => exec(reader, 'read_memory_file', { path })
        assert.match((await read('knowledge/notes.md')).text, own)
        assert.match((await read(`users/${reader}/memory/rules.md`)).text, new RegExp(`## Always[\\s\\S]*Always greet the ${SECRET[reader]} owner`))
        assert.match((await read(`users/${reader}/memory/lessons.md`)).text, own)
        assert.match((await read(`users/${reader}/memory/topics/vaults.md`)).text, new RegExp(`The ${SECRET[reader]} vault opens on Tuesdays`))
        const listed = await read('knowledge')
        assert.match(listed.text, new RegExp(`users/${reader}/knowledge/notes\\.md`))
        assert.match((await read(`users/${reader}/memory`)).text, /lessons\.md[\s\S]*rules\.md[\s\S]*topics\//)
        const users = await read('users')
        assert.match(users.text, new RegExp(`- users/${reader}\\.md\n- users/${reader}/`), 'their profile and their tree, listed from the rows')
        for (const path of [`users/${owner}/knowledge/notes.md`, `users/${owner}/memory/rules.md`, `users/${owner}`, `users/${owner}.md`]) {
          const refused = await read(path)
          assert.equal(refused.isError, true, path)
          assert.equal((refused.data as { code?: string }).code, 'access_denied', path)
        }
        for (const path of ['', 'users', 'knowledge', 'memory', 'memory/rules.md', 'memory/topics', `activity/${day}.jsonl`, 'episodes', 'shared']) {
          assert.doesNotMatch((await read(path)).text, foreign, path)
        }
        // The agent alone sees neither user.
        for (const path of ['users', 'knowledge', 'memory/rules.md', `users/${reader}/knowledge/notes.md`]) {
          assert.doesNotMatch((await exec(undefined, 'read_memory_file', { path })).text, /aardvark|pelican/, path)
        }
      })
    }

    test('an activity pointer reads the lines the activity log names, on PostgreSQL as in the file', async () => {
      const records = (await mind.backend.owned('user:u1').activity.read()).filter((record) => record.ref.startsWith(`activity/${day}.jsonl#L`))
      assert.ok(records.length >= 3, 'the writes were logged')
      const read = await exec('u1', 'read_memory_file', { path: `users/u1/activity/${day}.jsonl#L2-3` })
      assert.equal(read.isError, undefined, read.text)
      const lines = read.text.split('\n').slice(1)
      for (const [index, line] of lines.entries()) {
        const record = records.find((candidate) => candidate.ref === `activity/${day}.jsonl#L${index + 2}`)
        assert.ok(record)
        const { ref: _ref, ...event } = record
        assert.deepEqual(JSON.parse(line), event)
      }
      assert.equal(lines.length, 2)
      assert.match((await exec('u1', 'read_memory_file', { path: 'activity' })).text, new RegExp(`users/u1/activity/${day}\\.jsonl`))
    })

    test('a topic is written as free text into its row, overwritten and appended, found by search; nothing of the other user changes', async () => {
      const before = await rowsOf('user:u2')
      const written = await exec('u1', 'write_memory_file', { path: 'memory/topics/keys.md', content: '# keys\nThe aardvark vault has a free-text note.' })
      assert.equal(written.isError, undefined, written.text)
      assert.match(written.text, /^Wrote users\/u1\/memory\/topics\/keys\.md \(/)
      const overwritten = await exec('u1', 'write_memory_file', { path: 'memory/topics/keys.md', content: '# keys\nThe aardvark vault has a free-text note.' })
      assert.equal(overwritten.isError, undefined, overwritten.text)
      const appended = await exec('u1', 'write_memory_file', { path: 'memory/topics/keys.md', content: 'Its key is under the mat.', mode: 'append' })
      assert.equal(appended.isError, undefined, appended.text)
      const read = await exec('u1', 'read_memory_file', { path: 'users/u1/memory/topics/keys.md' })
      assert.match(read.text, /lines 1-3 of 3\n# keys\nThe aardvark vault has a free-text note\.\nIts key is under the mat\.$/)
      assert.equal(await mind.backend.owned('user:u1').engrams('global')?.recallTopic('keys'), '# keys\nThe aardvark vault has a free-text note.\nIts key is under the mat.\n')
      assert.ok(!existsSync(join(tmp.home, 'agents/default/users/u1/memory/topics/keys.md')), 'no file of the home')
      const [event] = await mind.backend.owned('user:u1').activity.read({ types: ['memory_write'], limit: 1 })
      assert.equal(event?.content, 'users/u1/memory/topics/keys.md')
      const topicHits = async (user: string): Promise<Array<{ kind: string; text: string }>> =>
        ((await exec(user, 'search_memory', { query: 'key under the mat' })).data as { hits: Array<{ kind: string; text: string }> }).hits.filter((hit) => hit.kind === 'topic')
      assert.ok((await topicHits('u1')).some((hit) => /under the mat/.test(hit.text)), 'the topic is indexed')
      assert.deepEqual(await topicHits('u2'), [], 'not for the other user')
      assert.deepEqual(await rowsOf('user:u2'), before)
    })

    test("archive/ reads a document's saved versions from the rows, listed as in the home; another user's archive is refused", async () => {
      const listed = await exec('u1', 'read_memory_file', { path: 'users/u1/archive/versions/knowledge' })
      assert.equal(listed.isError, undefined, listed.text)
      const [version] = (listed.data as { paths: string[] }).paths
      assert.match(version ?? '', /^users\/u1\/archive\/versions\/knowledge\/notes\.\d{4}-\d{2}-\d{2}T[\d-]+Z\.md$/)
      const read = await exec('u1', 'read_memory_file', { path: version })
      assert.match(read.text, /aardvark vault is in the basement/)
      assert.match((await exec('u1', 'read_memory_file', { path: 'users/u1/archive' })).text, /users\/u1\/archive\/versions\//)
      const refused = await exec('u1', 'read_memory_file', { path: 'users/u2/archive' })
      assert.equal((refused.data as { code?: string }).code, 'access_denied', refused.text)
      const missing = await exec('u1', 'read_memory_file', { path: 'users/u1/archive/versions/knowledge/nothing.2026-01-01T00-00-00-000Z.md' })
      assert.equal((missing.data as { code?: string }).code, 'not_found', missing.text)
    })

    for (const reader of USERS) {
      const owner = other(reader)
      test(`MCP resources for ${reader} list and read rows, nothing of ${owner}`, async () => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        const client = new Client({ name: 'pg-resources-test', version: '1.0.0' })
        await Promise.all([createMindMcpServer(mind, { session: { sessionId: `mcp-${reader}`, user: reader } }).connect(serverSide), client.connect(clientSide)])
        try {
          const { resources } = await client.listResources()
          const uris = resources.map((resource) => resource.uri)
          for (const path of [`users/${reader}/knowledge/notes.md`, `users/${reader}/memory/rules.md`, `users/${reader}/memory/topics/vaults.md`, `users/${reader}/activity/${day}.jsonl`]) {
            assert.ok(uris.includes(`engram://memory/${path}`), `${path} is listed: ${uris.join(', ')}`)
          }
          assert.ok(!uris.some((uri) => uri.includes(`/users/${owner}`)), 'nothing of the other user is listed')
          if (reader === 'u1') {
            // The saved version of the rewritten note, read from the rows, listed after the live files as in the home.
            const version = uris.find((uri) => uri.startsWith('engram://memory/users/u1/archive/versions/knowledge/notes.'))
            assert.ok(version, uris.join(', '))
            assert.equal(uris.indexOf(version), uris.length - 1, 'archives last')
            assert.match(JSON.stringify((await client.readResource({ uri: version })).contents), /aardvark vault is in the basement/)
          }
          for (const uri of uris) assert.doesNotMatch(JSON.stringify((await client.readResource({ uri })).contents), new RegExp(SECRET[owner] as string), uri)
          const notes = await client.readResource({ uri: `engram://memory/users/${reader}/knowledge/notes.md` })
          assert.match(JSON.stringify(notes.contents), new RegExp(SECRET[reader] as string))
          await assert.rejects(client.readResource({ uri: `engram://memory/users/${owner}/knowledge/notes.md` }), /another user|Refused/)
        } finally {
          await client.close()
        }
      })
    }

    test('exportUser writes the user\'s rows (profile, tree, activity) and nothing of the other user', async () => {
      const dir = join(tmp.project, '..', 'export-u1')
      const report = await mind.exportUser('u1', dir)
      const files = filesUnder(dir)
      for (const path of ['agents/default/files/knowledge/notes.md', 'agents/default/files/memory/rules.md', 'agents/default/files/memory/topics/vaults.md', `agents/default/files/activity/${day}.jsonl`]) {
        assert.ok(files.includes(path), `${path} in ${files.join(', ')}`)
      }
      assert.match(readFileSync(join(dir, 'agents/default/files/memory/rules.md'), 'utf8'), /Always greet the aardvark owner/)
      assert.ok(report.counts.files >= 4)
      assert.ok(
        files.some((path) => /^agents\/default\/files\/archive\/versions\/knowledge\/notes\.[\dT-]+Z\.md$/.test(path)),
        'the saved version of the rewritten note, read from the rows',
      )
      assert.ok(report.skipped.some((entry) => /only agent "default"'s tree is exported/.test(entry.reason)), 'what it does not export is said')
      for (const path of files) assert.doesNotMatch(readFileSync(join(dir, path), 'utf8'), /pelican/, path)
      assert.ok(readdirSync(dir).includes('manifest.json'))
    })

    test("forget_memory: a user's lesson leaves search, priming, lessons.md and its topic for the archive; restore brings it back; purge deletes it live and archived; nothing of the other user changes", async () => {
      const before = await rowsOf('user:u1')
      const lesson = 'The pelican vault opens on Tuesdays'
      const found = (await exec('u2', 'search_memory', { query: 'pelican vault Tuesdays' })).data as { hits: Array<{ id: string; kind: string; text: string }> }
      const hit = found.hits.find((candidate) => candidate.kind === 'lesson')
      assert.equal(hit?.text, lesson)
      const forgot = await exec('u2', 'forget_memory', { target: hit.id, reason: 'moved to Fridays' })
      assert.equal(forgot.isError, undefined, forgot.text)
      assert.match(forgot.text, /^Forgot users\/u2\/memory\/lessons\.md#[0-9a-f]{16} .*moved to users\/u2\/archive\/forgotten\/lessons\.md/)
      const lessonHits = async (): Promise<unknown[]> =>
        ((await exec('u2', 'search_memory', { query: 'pelican vault Tuesdays' })).data as { hits: Array<{ kind: string }> }).hits.filter((candidate) => candidate.kind === 'lesson')
      assert.deepEqual(await lessonHits(), [], 'out of the index at once')
      assert.doesNotMatch((await exec('u2', 'read_memory_file', { path: 'memory/lessons.md' })).text, /Tuesdays/)
      assert.doesNotMatch((await exec('u2', 'read_memory_file', { path: 'users/u2/memory/topics/vaults.md' })).text, /Tuesdays/, 'its copy in the topic went too')
      const turn = await mind.session('s-u2-prime', { user: 'u2' }).begin('When does the pelican vault open?')
      assert.doesNotMatch(turn.systemParts.memory, /Tuesdays/, 'gone from priming')
      const archived = await exec('u2', 'read_memory_file', { path: 'archive/forgotten/lessons.md' })
      assert.match(archived.text, /^users\/u2\/archive\/forgotten\/lessons\.md — lines 1-3 of 3\n# Forgotten lessons\n\n- The pelican vault opens on Tuesdays <!-- .*forgotten_from:users\/u2\/memory\/lessons\.md reason:moved_to_Fridays -->$/)
      assert.match((await exec('u2', 'read_memory_file', { path: 'users/u2/archive/forgotten' })).text, /users\/u2\/archive\/forgotten\/lessons\.md/)
      const [event] = await mind.backend.owned('user:u2').activity.read({ types: ['memory_write'], limit: 1 })
      assert.equal(event?.meta?.action, 'forget')
      assert.equal(event?.meta?.archive, 'users/u2/archive/forgotten/lessons.md')
      assert.doesNotMatch(JSON.stringify(event), /Tuesdays/)

      const restored = await mind.restore(lesson, { user: 'u2' })
      assert.equal(restored.action, 'restored')
      assert.match((await exec('u2', 'read_memory_file', { path: 'memory/lessons.md' })).text, /Tuesdays/)
      assert.match((await exec('u2', 'read_memory_file', { path: 'memory/topics/vaults.md' })).text, /Tuesdays/, 'filed into its topic again')
      assert.doesNotMatch((await exec('u2', 'read_memory_file', { path: 'archive/forgotten/lessons.md' })).text, /Tuesdays/)
      assert.equal((await lessonHits()).length, 1, 'back in the index')

      await exec('u2', 'forget_memory', { target: lesson })
      const purged = await mind.forget(lesson, { user: 'u2', purge: true })
      assert.equal(purged.action, 'purged')
      assert.equal(purged.deleted, 1, 'the archived entry')
      await assert.rejects(mind.restore(lesson, { user: 'u2' }), { code: 'not_found' })
      for (const path of ['memory/lessons.md', 'memory/topics/vaults.md', 'archive/forgotten/lessons.md']) {
        assert.doesNotMatch((await exec('u2', 'read_memory_file', { path })).text, /Tuesdays/, path)
      }
      const purges = (await mind.backend.owned('user:u2').activity.read({ types: ['memory_write'] })).filter((record) => record.meta?.action === 'purge')
      assert.equal(purges.length, 1)
      assert.doesNotMatch(JSON.stringify(purges), /Tuesdays/)
      assert.deepEqual(await rowsOf('user:u1'), before, "no row of u1's changed")
      assert.match((await exec('u1', 'read_memory_file', { path: 'memory/lessons.md' })).text, /aardvark vault opens on Tuesdays/)
    })

    test('forget_memory: a rule and a topic file move to the archive rows and back; a document is forgotten too', async () => {
      const rule = await exec('u2', 'forget_memory', { target: 'Always greet the pelican owner' })
      assert.equal(rule.isError, undefined, rule.text)
      assert.doesNotMatch((await exec('u2', 'read_memory_file', { path: 'memory/rules.md' })).text, /pelican owner/)
      assert.match((await exec('u2', 'read_memory_file', { path: 'archive/forgotten/rules.md' })).text, /# Forgotten rules[\s\S]*Always greet the pelican owner <!-- .*kind:always/)
      await exec('u2', 'memorize', { entries: [{ text: 'The pelican vault needs two keys', kind: 'lesson', topic: 'locks' }] })
      const topic = await exec('u2', 'forget_memory', { target: 'memory/topics/locks.md' })
      assert.equal(topic.isError, undefined, topic.text)
      assert.match(topic.text, /moved to users\/u2\/archive\/forgotten\/topics\/locks\.md/)
      assert.equal(await mind.backend.owned('user:u2').engrams('global')?.recallTopic('locks'), null)
      assert.deepEqual(await mind.backend.owned('user:u2').engrams('global')?.listTopics(), ['vaults'], 'an archived topic is no topic')
      assert.match((await exec('u2', 'read_memory_file', { path: 'archive/forgotten/topics/locks.md' })).text, /two keys/)
      assert.deepEqual(((await exec('u2', 'search_memory', { query: 'two keys' })).data as { hits: Array<{ kind: string }> }).hits.filter((hit) => hit.kind === 'topic'), [])
      await mind.restore('users/u2/archive/forgotten/topics/locks.md', { user: 'u2' })
      await mind.restore('Always greet the pelican owner', { user: 'u2' })
      assert.match((await exec('u2', 'read_memory_file', { path: 'memory/topics/locks.md' })).text, /two keys/)
      assert.match((await exec('u2', 'read_memory_file', { path: 'memory/rules.md' })).text, /## Always[\s\S]*pelican owner/)
      const again = await exec('u2', 'forget_memory', { target: 'memory/topics/locks.md' })
      assert.equal(again.isError, undefined, again.text)
      await mind.restore('users/u2/archive/forgotten/topics/locks.md', { user: 'u2' })
      await exec('u2', 'forget_memory', { target: 'memory/topics/locks.md' })
      const topicPurge = await mind.forget('users/u2/memory/topics/locks.md', { user: 'u2', purge: true })
      assert.equal(topicPurge.deleted, 1, 'the archived copy')
      assert.equal((await exec('u2', 'read_memory_file', { path: 'archive/forgotten/topics/locks.md' })).isError, true)

      const doc = await exec('u2', 'forget_memory', { target: 'knowledge/notes.md' })
      assert.equal(doc.isError, undefined, doc.text)
      assert.equal(await mind.backend.owned('user:u2').documents.read('knowledge', 'notes'), null)
      assert.match((await exec('u2', 'read_memory_file', { path: 'archive/forgotten/knowledge/notes.md' })).text, /pelican vault is in the basement/)
      assert.notEqual(await mind.backend.owned('user:u1').documents.read('knowledge', 'notes'), null, "u1's note of the same name is untouched")
    })

    test('the daily legacy migration gives a row without frontmatter the seed\'s, as it does a file', async () => {
      await mind.backend.owned('user:u1').documents.write('knowledge', 'legacy', {}, 'A legacy note about the aardvark.\n')
      const run = await mind.consolidate('daily')
      assert.ok(run.migrated.some((migrated) => migrated.path === 'users/u1/knowledge/legacy.md'), JSON.stringify(run.migrated))
      const doc = await mind.backend.owned('user:u1').documents.read('knowledge', 'legacy')
      assert.equal(doc?.frontmatter.version, 1)
      assert.equal(doc?.body, 'A legacy note about the aardvark.\n')
    })
  })
})
