/**
 * The memory-file paths on PostgreSQL (issue 16), through createMind → session → tools, with two
 * users: read_memory_file, write_memory_file, the MCP memory resources (official client),
 * `exportUser`, forget_memory and the daily legacy migration read and write memory as rows through
 * the seams — nothing of one user reaches the other, and what the seams cannot do yet is refused
 * with `unsupported` instead of being written to files of the home nobody reads.
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

    test('what no seam does on PostgreSQL yet is refused with unsupported: a topic written as free text, the archive', async () => {
      const topic = await exec('u1', 'write_memory_file', { path: 'memory/topics/vaults.md', content: '# vaults\nfree text\n' })
      assert.equal(topic.isError, true)
      assert.equal((topic.data as { code?: string }).code, 'unsupported', topic.text)
      assert.match(topic.text, /topic files are rows kept by memorize/)
      assert.doesNotMatch((await exec('u1', 'read_memory_file', { path: 'users/u1/memory/topics/vaults.md' })).text, /free text/)
      const archive = await exec('u1', 'read_memory_file', { path: 'archive' })
      assert.equal((archive.data as { code?: string }).code, 'unsupported', archive.text)
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
      assert.ok(report.skipped.some((entry) => /no storage seam reads yet/.test(entry.reason)), 'what it cannot read is said')
      for (const path of files) assert.doesNotMatch(readFileSync(join(dir, path), 'utf8'), /pelican/, path)
      assert.ok(readdirSync(dir).includes('manifest.json'))
    })

    test('forget_memory: documents are forgotten through the seams; entries and topics are refused with unsupported', async () => {
      const entry = await exec('u2', 'forget_memory', { target: 'Always greet the pelican owner' })
      assert.equal(entry.isError, true, entry.text)
      assert.match(entry.text, /cannot be forgotten on the postgres backend yet/)
      assert.match((await exec('u2', 'read_memory_file', { path: 'memory/rules.md' })).text, /pelican/, 'nothing was changed')
      const doc = await exec('u2', 'forget_memory', { target: 'knowledge/notes.md' })
      assert.equal(doc.isError, undefined, doc.text)
      assert.equal(await mind.backend.owned('user:u2').documents.read('knowledge', 'notes'), null)
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
