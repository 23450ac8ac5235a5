/**
 * Privacy (decision 0017): two users plant a secret each through every write path a session has,
 * then each reads through every read path — the public API, the official MCP client and the CLI —
 * as the other user and as the agent alone. Nothing of one user may reach another; each user still
 * gets their own.
 *
 * Write paths: memorize of each kind (always, never, when, lesson, profile), conversation messages
 * (and the summaries that fold them), episodes, activity, the current task and resolutions,
 * write_memory_file, the error learner, the pattern monitor, sleep replay and identity extraction.
 * Read paths: priming and the memory context (turn.system), the conversation (turn.messages),
 * search_memory, recall, the memory tool (search, describe, expand, profile_get),
 * read_memory_file, MCP resources, tools and the primed_context prompt, and the CLI.
 *
 * The same scenarios run on both backends (decision 0037): embedded, and on PostgreSQL in a fresh
 * schema. What each user planted is checked through the seams (the export's tree, the activity
 * log), so the same assertions hold whether memory is files or rows.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import { createMindMcpServer } from '../src/interfaces/mcp/mind-server.ts'
import { collectMemoryTree } from '../src/memory/portability/memory-tree.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { openPostgres } from '../src/storage/postgres/connection.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import type { Turn } from '../src/session/turn.ts'
import { type FakeChatRequest, type FakeChatStep, type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import { call, textOf } from './support/tool-calls.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

/** Each user's secret word: it appears in everything that user plants, and nowhere else. */
const SECRET: Record<string, string> = { u1: 'aardvark', u2: 'pelican' }
const USERS = ['u1', 'u2'] as const
const other = (user: (typeof USERS)[number]): (typeof USERS)[number] => (user === 'u1' ? 'u2' : 'u1')

/** Words of what every user planted, without the secret: what a leak would be found by. */
const PROBES = ['vault code', 'basement', 'deploy target', 'fence fixed', 'favourite animal', 'Tuesdays', 'feed every morning', 'ants']

const start = new Date('2026-03-02T09:00:00Z')
const day = start.toISOString().slice(0, 10)

function schemaName(request: { body: unknown }): string {
  return (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
}

/** The model answers with the secret of the user whose data it was shown (and says so when shown both). */
function answer(request: FakeChatRequest): FakeChatStep {
  const text = request.messages.map((message) => message.content).join('\n')
  const shown = USERS.filter((user) => text.includes(SECRET[user] as string))
  if (shown.length > 1) return { fail: { status: 500, body: { error: { message: `one model call saw both users: ${shown.join(', ')}` } } } }
  const secret = shown[0] === undefined ? 'nobody' : SECRET[shown[0]]
  switch (schemaName(request)) {
    case 'episode':
      return { json: { title: `The ${secret} session`, summary: `We worked on the ${secret} vault.`, resolved: [`the ${secret} fence fixed`], newTasks: [`feed the ${secret}`] } }
    case 'lessons':
      return { json: { lessons: [{ tool: 'deploy', lesson: `Check that the ${secret} target exists before deploying to it.`, confidence: 'high' }] } }
    case 'identity_facts':
      return { json: { facts: [`Pet: ${secret}`] } }
    case 'consolidated_lessons':
      return { json: { rules: [{ text: `Always confirm the ${secret} target before a deploy`, kind: 'always', scope: 'global', confidence: 'high' }], lessons: [] } }
    default:
      return { text: `Summary of the ${secret} conversation.` }
  }
}

/** A tool of the agent's own that fails: the error learner and the pattern monitor learn from it. */
function deployTool(): ToolDefinition<{ target: string }> {
  return {
    name: 'deploy',
    description: 'Deploy a build to a target.',
    inputSchema: z.object({ target: z.string() }),
    async run({ target }) {
      return { isError: true, text: `deploy failed: no target named ${target}` }
    },
  }
}



/** Where the mind keeps its memory: the embedded home, or a PostgreSQL database (a fresh schema per run). */
type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

/** Every row of the PostgreSQL schema whose text holds `needle`, as `table: count`. */
async function rowsHolding(url: string, schema: string, needle: string): Promise<string[]> {
  const handle = await openPostgres({ url, schema })
  try {
    const { rows: tables } = await handle.pool.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [schema])
    const holding: string[] = []
    for (const { name } of tables) {
      const { rows } = await handle.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}"."${name}" AS r WHERE r::text ILIKE $1`, [`%${needle}%`])
      if (Number(rows[0]?.n ?? 0) > 0) holding.push(`${name}: ${rows[0]?.n}`)
    }
    return holding
  } finally {
    await handle.close()
  }
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const handle = await openPostgres({ url, schema })
  try {
    await handle.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await handle.close()
  }
}

function isolationSuite(target: Target): void {
  describe(`two users: nothing of one reaches the other, through any path (${target.backend})`, () => {
    let tmp: TempHome
    let server: FakeOpenAiServer
    let mind: Mind
    /** The mind's environment: the temp home's, plus the database and a schema of its own on PostgreSQL. */
    let env: Record<string, string>
    const schema = freshSchema()
    const clock = new ManualClock(start)
    /** What each user's own conversation holds: message ids and the summary ids that fold them. */
    const stored: Record<string, { messageIds: number[]; summaryIds: string[] }> = {}

    function llmSettings(): Record<string, unknown> {
      return {
        'llm.provider': 'openai-compatible',
        'llm.baseUrl': server.url,
        'llm.model': 'fake-model',
        'llm.maxRetries': 0,
        'learning.patternMonitorMode': 'active',
        // A small window, so that the conversations are compacted and summaries exist.
        'context.budget': 256,
        'context.freshTail': 2,
        'context.leafChunk': 2,
      }
    }

    async function turn(user: string, message: string, act?: (turn: Turn) => Promise<void>, reply?: string): Promise<Turn> {
      // A new Session every turn, as a stateless host creates it.
      const session = mind.session(`chat-${user}`, { user, tools: [deployTool()] })
      const begun = await session.begin(message)
      if (act) await act(begun)
      clock.advance(20_000)
      await session.end(begun, reply ?? `Noted about the ${SECRET[user]}. I keep it with the other notes of this conversation, and I will bring it up again when it matters for what you ask me later on.`)
      await mind.idle()
      clock.advance(40_000)
      return begun
    }

    async function plant(user: string): Promise<void> {
      const secret = SECRET[user] as string
      await turn(user, `Hello, my name is ${user} and my ${secret} vault code is 4411.`, async (begun) => {
        const memorized = await call(begun.tools, 'memorize', {
          entries: [
            { text: `Always greet the ${secret} owner by name`, kind: 'always' },
            { text: `Reveal the ${secret} vault code to anyone`, kind: 'never' },
            { text: `When asked about the ${secret}, check the vault first`, kind: 'when', tool: 'deploy' },
            { text: `The ${secret} vault opens on Tuesdays`, kind: 'lesson', topic: 'vaults' },
            { text: `Favourite animal: ${secret}`, kind: 'profile' },
          ],
        })
        assert.equal(memorized.isError, undefined, memorized.text)
        const written = await call(begun.tools, 'write_memory_file', { path: `knowledge/${secret}-notes.md`, content: `# ${secret}\nThe ${secret} vault is in the basement.\n` })
        assert.equal(written.isError, undefined, written.text)
      })
      await turn(user, `Please deploy the ${secret} build.`, async (begun) => {
        for (const name of [`${secret}-staging`, `${secret}-prod`, `${secret}-dev`]) await call(begun.tools, 'deploy', { target: name })
      })
      await turn(user, `TODO: feed the ${secret} every morning.`)
      await turn(user, `done: the ${secret} fence is fixed.`)
      await turn(user, `One more thing about the ${secret}: it likes ants.`)
      // Idle boundary: the episode, the current task, the resolutions, sleep replay.
      clock.advance(11 * 60_000)
      await mind.maintain()
    }

    before(async () => {
      tmp = makeTempHome()
      env = target.backend === 'postgres' ? { ...tmp.env, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : tmp.env
      server = await startFakeOpenAiServer({ onChat: answer })
      mind = await createMind({ home: tmp.home, env, ignoreConfigFile: true, clock, settings: llmSettings() })
      assert.equal(mind.backend.name, target.backend)
      for (const user of USERS) await plant(user)
      for (const user of USERS) {
        const conversation = await mind.backend.context.findConversation(`chat-${user}`, 'default')
        assert.ok(conversation, user)
        const messages = await mind.backend.context.messages(conversation.id)
        const items = await mind.backend.context.items(conversation.id)
        stored[user] = { messageIds: messages.map((message) => message.id), summaryIds: items.flatMap((item) => (item.kind === 'summary' ? [item.summaryId] : [])) }
      }
    })
    after(async () => {
      await mind?.close()
      await server?.close()
      tmp?.cleanup()
      if (target.backend === 'postgres') await dropSchema(target.url, schema)
    })

    test('every write path planted its secret (the test would prove nothing otherwise)', async () => {
      assert.ok(server.requests.length > 0)
      assert.ok(!server.requests.some((request) => JSON.stringify(request.body).includes(SECRET.u1 as string) && JSON.stringify(request.body).includes(SECRET.u2 as string)), 'no model call saw both users')
      const { readFileSync } = await import('node:fs')
      // The memory as the seams hold it (the export's tree), whether it is files or rows.
      const { files } = await collectMemoryTree({ backend: mind.backend, agent: 'default' })
      for (const user of USERS) {
        const secret = SECRET[user] as string
        const read = (rel: string): string => files.get(`agents/default/users/${user}/${rel}`) ?? ''
        assert.match(read('memory/rules.md'), new RegExp(`Always greet the ${secret}[\\s\\S]*Reveal the ${secret}[\\s\\S]*When asked about the ${secret}`))
        assert.match(read('memory/rules.md'), new RegExp(`confirm the ${secret} target`), 'sleep replay')
        assert.match(read('memory/lessons.md'), new RegExp(`The ${secret} vault opens on Tuesdays`))
        assert.match(read('memory/lessons.md'), new RegExp(`Check that the ${secret} target exists`), 'the error learner')
        assert.match(read(`knowledge/${secret}-notes.md`), /basement/)
        assert.match(read(`episodes/${day}.md`), new RegExp(`The ${secret} session`))
        assert.match(read('state/current_task.md'), new RegExp(`feed the ${secret}`))
        assert.match(JSON.stringify(await mind.backend.owned(`user:${user}`).activity.read()), new RegExp(secret))
        const profile = files.get(`shared/users/${user}.md`) ?? ''
        assert.match(profile, new RegExp(`Favourite animal: ${secret}`))
        assert.match(profile, new RegExp(`Pet: ${secret}`), 'identity extraction at the fifth turn')
        assert.match(readFileSync(join(tmp.home, 'shared/resolutions.jsonl'), 'utf8'), new RegExp(`the ${secret} fence fixed`))
        assert.ok((stored[user]?.summaryIds.length ?? 0) > 0, `${user}'s conversation was compacted into summaries`)
      }
      // Nothing of either user in the agent's own tree.
      const agentFiles = ['memory/rules.md', 'memory/lessons.md', 'memory/profile.md', `episodes/${day}.md`, 'state/current_task.md']
      for (const rel of agentFiles) assert.doesNotMatch(files.get(`agents/default/${rel}`) ?? '', /aardvark|pelican/, rel)
    })

    for (const reader of USERS) {
      const owner = other(reader)
      test(`${reader} reads through the session's paths: nothing of ${owner}, all of their own`, async () => {
        const foreign = new RegExp(SECRET[owner] as string, 'i')
        const own = new RegExp(SECRET[reader] as string, 'i')
        const session = mind.session(`read-${reader}`, { user: reader, tools: [deployTool()] })
        // The probes name what the other user planted, never their secret word: any sight of it is a leak.
        const begun = await session.begin('What do you know about the vault, its code, the basement, the fence and the deploy targets?')
        const seen: Array<[string, string]> = [
          ['turn.system', begun.system],
          ['turn.messages', JSON.stringify(begun.messages)],
          ['turn.provenance', JSON.stringify(begun.provenance)],
          ['turn.warnings', JSON.stringify(begun.warnings)],
          ['tool descriptions', begun.tools.map((tool) => tool.description).join('\n')],
        ]
        const tools = begun.tools
        for (const query of PROBES) {
          seen.push([`search_memory ${query}`, (await call(tools, 'search_memory', { query, limit: 50 })).text])
          seen.push([`recall ${query}`, (await call(tools, 'recall', { query, max_results: 200, days_back: 365 })).text])
          seen.push([`memory search ${query}`, (await call(tools, 'memory', { action: 'search', query, limit: 200 })).text])
        }
        seen.push(['memory profile_get', (await call(tools, 'memory', { action: 'profile_get' })).text])
        for (const id of [...(stored[owner]?.summaryIds ?? []), ...(stored[owner]?.messageIds.map((n) => `msg:${n}`) ?? [])]) {
          const described = await call(tools, 'memory', { action: 'describe', id })
          assert.equal(described.isError, true, `describe ${id} of ${owner}`)
          seen.push([`memory describe ${id}`, described.text])
          if (id.startsWith('sum_')) seen.push([`memory expand ${id}`, (await call(tools, 'memory', { action: 'expand', id, toMessages: true })).text])
        }
        const paths = [
          '',
          'users',
          `users/${owner}.md`,
          `users/${owner}`,
          `users/${owner}/knowledge`,
          `users/${owner}/memory/rules.md`,
          `users/${owner}/episodes/${day}.md`,
          `users/${owner}/activity/${day}.jsonl`,
          `agents/default/users/${owner}/memory/lessons.md`,
          `shared/users/${owner}.md`,
          'knowledge',
          'memory/rules.md',
          'memory/lessons.md',
          'memory/profile.md',
          `episodes/${day}.md`,
          `activity/${day}.jsonl`,
          'state/current_task.md',
          'shared',
        ]
        for (const path of paths) seen.push([`read_memory_file ${path}`, (await call(tools, 'read_memory_file', { path })).text])
        for (const [where, text] of seen) assert.doesNotMatch(text, foreign, `${where} shows ${owner}'s memory:\n${text}`)

        // Each user still gets their own, through the same paths.
        assert.match(begun.system, own, 'their memory context and priming')
        assert.match(begun.systemParts.memory, new RegExp(`Never: Reveal the ${SECRET[reader]}`), 'their rules, with polarity')
        assert.match(begun.systemParts.memory, new RegExp(`Favourite animal: ${SECRET[reader]}`), 'their profile is the identity')
        assert.match(begun.systemParts.state ?? '', new RegExp(`feed the ${SECRET[reader]}`), 'their current task')
        assert.match(begun.tools.find((tool) => tool.name === 'deploy')?.description ?? '', new RegExp(`When asked about the ${SECRET[reader]}`), 'their tool wisdom')
        assert.match((await call(tools, 'search_memory', { query: SECRET[reader] })).text, own)
        assert.match((await call(tools, 'recall', { query: SECRET[reader] })).text, own)
        assert.match((await call(tools, 'memory', { action: 'search', query: SECRET[reader] })).text, own)
        assert.match((await call(tools, 'memory', { action: 'profile_get' })).text, own)
        assert.match((await call(tools, 'read_memory_file', { path: `knowledge/${SECRET[reader]}-notes.md` })).text, /basement/, 'their note, by the short path')
        const expanded = await call(tools, 'memory', { action: 'expand', id: stored[reader]?.summaryIds[0], toMessages: true })
        assert.equal(expanded.isError, undefined, expanded.text)
        const ended = await session.end(begun, 'Nothing to share.')
        assert.doesNotMatch(JSON.stringify(ended), foreign, 'TurnEnd')
        await mind.idle()
      })
    }

    test('a session without a user (the agent alone) sees neither user', async () => {
      const session = mind.session('agent-alone')
      const begun = await session.begin('What do you know about the vault, its code, the basement, the fence and the deploy targets?')
      const seen = [begun.system, JSON.stringify(begun.messages), JSON.stringify(begun.provenance)]
      for (const query of PROBES) {
        seen.push((await call(begun.tools, 'search_memory', { query, limit: 50 })).text)
        seen.push((await call(begun.tools, 'recall', { query, days_back: 365 })).text)
        seen.push((await call(begun.tools, 'memory', { action: 'search', query })).text)
      }
      for (const path of ['users', 'users/u1.md', 'users/u2/memory/rules.md', `episodes/${day}.md`, `activity/${day}.jsonl`]) seen.push((await call(begun.tools, 'read_memory_file', { path })).text)
      for (const text of seen) assert.doesNotMatch(text, /aardvark|pelican/i, text)
      // The low-level mind API on the agent's behalf sees nothing of the users either.
      assert.doesNotMatch(JSON.stringify(await mind.recall('vault code basement fence', { daysBack: 365 })), /aardvark|pelican/i)
      assert.doesNotMatch((await mind.memory.buildContext()).text, /aardvark|pelican/i)
      assert.deepEqual(await mind.pendingConfirmations(), [])
      await session.end(begun, 'OK.')
      await mind.idle()
    })

    test('a session id belongs to its user: another user cannot open it', async () => {
      await assert.rejects(mind.session('chat-u1', { user: 'u2' }).begin('Let me in.'), (error: unknown) => (error as { code?: string }).code === 'access_denied')
      await assert.rejects(mind.session('chat-u1').begin('Let me in.'), (error: unknown) => (error as { code?: string }).code === 'access_denied')
    })

    for (const reader of USERS) {
      const owner = other(reader)
      test(`MCP for ${reader}: resources, tools and primed_context show nothing of ${owner}`, async () => {
        const foreign = new RegExp(SECRET[owner] as string, 'i')
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        const client = new Client({ name: 'isolation-test', version: '1.0.0' })
        await Promise.all([createMindMcpServer(mind, { session: { sessionId: `mcp-${reader}`, user: reader } }).connect(serverSide), client.connect(clientSide)])
        try {
          const seen: string[] = []
          const { resources } = await client.listResources()
          seen.push(JSON.stringify(resources))
          assert.ok(!resources.some((resource) => resource.uri.includes(`/users/${owner}`)), 'no resource of the other user is listed')
          assert.ok(resources.some((resource) => resource.uri.includes(`/users/${reader}`)), 'their own are')
          for (const path of [`users/${owner}.md`, `users/${owner}/memory/rules.md`, `users/${owner}/state/current_task.md`]) {
            await assert.rejects(client.readResource({ uri: `engram://memory/${path}` }), /another user|Refused/, path)
          }
          for (const resource of resources.filter((entry) => entry.mimeType === 'text/markdown' || entry.mimeType === 'application/x-ndjson')) {
            const read = await client.readResource({ uri: resource.uri })
            seen.push(JSON.stringify(read.contents))
          }
          const primed = await client.getPrompt({ name: 'primed_context', arguments: { message: 'What about the vault code, the basement and the fence?' } })
          seen.push(JSON.stringify(primed.messages))
          await assert.rejects(client.getPrompt({ name: 'primed_context', arguments: { message: 'hi', user: owner } }), /cannot prime for/)
          const { tools } = await client.listTools()
          seen.push(JSON.stringify(tools))
          const calls: Array<[string, Record<string, unknown>]> = [
            ...PROBES.map((query): [string, Record<string, unknown>] => ['search_memory', { query, limit: 50 }]),
            ...PROBES.map((query): [string, Record<string, unknown>] => ['recall', { query, days_back: 365 }]),
            ...PROBES.map((query): [string, Record<string, unknown>] => ['memory', { action: 'search', query }]),
            ['memory', { action: 'profile_get' }],
            ['read_memory_file', { path: `users/${owner}/memory/rules.md` }],
            ['read_memory_file', { path: 'users' }],
          ]
          for (const [name, args] of calls) seen.push(textOf(await client.callTool({ name, arguments: args })))
          for (const text of seen) assert.doesNotMatch(text, foreign, text)
          assert.match(JSON.stringify(primed.messages), new RegExp(SECRET[reader] as string), 'their own memory is primed')
        } finally {
          await client.close()
        }
      })
    }

    test('the CLI acts for the user it is given, and for the agent alone without one', async () => {
      const cliEnv = { ...env, ENGRAM_HOME: tmp.home }
      const cli = async (args: string[]): Promise<string> => {
        try {
          const { stdout } = await run(process.execPath, [bin, ...args, '--json'], { env: cliEnv, cwd: root })
          return stdout
        } catch (error) {
          return (error as { stdout: string }).stdout
        }
      }
      for (const reader of [...USERS, undefined]) {
        const as = reader === undefined ? [] : ['--user', reader]
        const outputs = [
          await cli(['recall', 'vault code basement fence deploy target', '--days', '365', ...as]),
          await cli(['memory', 'context', ...as]),
          await cli(['confirm', ...as]),
          await cli(['context', 'search', 'vault code basement', '--limit', '50', ...as]),
        ]
        for (const output of outputs) {
          if (reader !== 'u1') assert.doesNotMatch(output, /aardvark/i, `as ${reader ?? 'the agent'}: ${output}`)
          if (reader !== 'u2') assert.doesNotMatch(output, /pelican/i, `as ${reader ?? 'the agent'}: ${output}`)
        }
        if (reader !== undefined) assert.match(outputs[1] as string, new RegExp(SECRET[reader] as string), `${reader}'s own memory context`)
      }
    })

    test(`after \`engram forget --user u1 --purge\`, nothing of u1 is found by any path — nor in any byte of the home${target.backend === 'postgres' ? ', nor in any row of the database' : ''}`, async () => {
      await mind.idle()
      if (target.backend === 'postgres') assert.notDeepEqual(await rowsHolding(target.url, schema, SECRET.u1 as string), [], 'the database held u1 before')
      const { stdout } = await run(process.execPath, [bin, 'forget', '--user', 'u1', '--purge', '--json'], { env: { ...env, ENGRAM_HOME: tmp.home }, cwd: root })
      assert.equal((JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { ok: boolean }).ok, true, stdout)
      // Every file of the home, the database included: no byte of u1's secret is left.
      const { readdirSync, readFileSync, statSync } = await import('node:fs')
      const holding: string[] = []
      const walk = (dir: string): void => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name)
          if (statSync(path).isDirectory()) walk(path)
          else if (readFileSync(path).includes(SECRET.u1 as string)) holding.push(path)
        }
      }
      walk(tmp.home)
      assert.deepEqual(holding, [])
      if (target.backend === 'postgres') assert.deepEqual(await rowsHolding(target.url, schema, SECRET.u1 as string), [], 'no row of the database holds u1')
      // Through the paths: u1 (should they come back), u2 and the agent find nothing of u1; u2 keeps theirs.
      await mind.close()
      mind = await createMind({ home: tmp.home, env, ignoreConfigFile: true, clock, settings: llmSettings() })
      for (const user of ['u1', 'u2', undefined]) {
        const session = mind.session(`after-${user ?? 'agent'}`, user === undefined ? {} : { user })
        const begun = await session.begin('What do you know about the vault, its code, the basement, the fence and the deploy targets?')
        const seen = [begun.system, JSON.stringify(begun.messages)]
        for (const query of PROBES) {
          seen.push((await call(begun.tools, 'search_memory', { query, limit: 50 })).text)
          seen.push((await call(begun.tools, 'recall', { query, days_back: 365 })).text)
          seen.push((await call(begun.tools, 'memory', { action: 'search', query })).text)
        }
        for (const text of seen) assert.doesNotMatch(text, /aardvark/i, text)
        if (user === 'u2') assert.match(begun.system, /pelican/, "u2's memories are untouched")
        await session.end(begun, 'Nothing.')
      }
      await mind.idle()
    })
  })
}

isolationSuite({ backend: 'embedded' })
onPostgres('two users: nothing of one reaches the other, through any path', (url) => isolationSuite({ backend: 'postgres', url }))
