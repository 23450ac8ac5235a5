/**
 * The MCP learning of test/mcp-learning.test.ts on PostgreSQL (decision 0045): `engram mcp --user`
 * in child processes on one database, the turn ended by a new `primed_context`, and a turn whose
 * process was SIGKILLed finished by a later `engram maintain` — each user's rule and post-mortem
 * lesson in their own memory, none in the agent's.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { openPostgres } from '../src/storage/postgres/connection.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { answer, lessonFor, postMortemsFor } from './support/mcp-learning.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
const RULE = /When a tool call fails twice in a row/

onPostgres('engram mcp --user learns in the user\'s memory', (url) => {
  describe('engram mcp --user learns in the user\'s memory (postgres)', () => {
    let tmp: TempHome
    let server: FakeOpenAiServer
    let env: Record<string, string>
    let mind: MindInternals
    const schema = freshSchema()
    const contextOf = async (user?: string): Promise<string> => (await mind.scope(user).memory.buildContext()).text

    async function connect(user: string): Promise<{ client: Client; transport: StdioClientTransport; closed: Promise<void> }> {
      const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--user', user], env, cwd: root, stderr: 'pipe' })
      const client = new Client({ name: 'engram-test', version: '1.0.0' })
      const closed = new Promise<void>((resolveClosed) => {
        client.onclose = () => resolveClosed()
      })
      await client.connect(transport)
      for (const n of [1, 2, 3]) {
        const result = await client.callTool({ name: 'read_memory_file', arguments: { path: `knowledge/${user}-missing-${n}.md` } })
        assert.equal((result as { isError?: boolean }).isError, true)
      }
      return { client, transport, closed }
    }

    before(async () => {
      tmp = makeTempHome('engram-mcp-learning-pg-')
      server = await startFakeOpenAiServer({ onChat: answer })
      env = {
        ...tmp.env,
        ENGRAM_HOME: tmp.home,
        ENGRAM_DATABASE_URL: url,
        ENGRAM_DATABASE_SCHEMA: schema,
        ENGRAM_LLM_PROVIDER: 'openai-compatible',
        ENGRAM_LLM_BASE_URL: server.url,
        ENGRAM_LLM_MODEL: 'fake-model',
        ENGRAM_LLM_MAX_RETRIES: '0',
      }
      mind = await openMindInternals({ home: tmp.home, env, ignoreConfigFile: true })
      assert.equal(mind.backend.name, 'postgres')
    })
    after(async () => {
      await mind?.close()
      await server?.close()
      tmp?.cleanup()
      const handle = await openPostgres({ url, schema })
      try {
        await handle.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await handle.close()
      }
    })

    test('a new primed_context ends the turn: rule and lesson in ada\'s memory', async () => {
      const ada = await connect('ada')
      await ada.client.getPrompt({ name: 'primed_context', arguments: { message: 'Next question' } })
      const deadline = Date.now() + 20_000
      while (!(await contextOf('ada')).includes(lessonFor('ada'))) {
        if (Date.now() > deadline) assert.fail(`no lesson in ada's memory: ${await contextOf('ada')}`)
        await sleep(100)
      }
      assert.match(await contextOf('ada'), RULE)
      assert.equal(postMortemsFor(server, 'ada'), 1)
      await ada.client.close()
    })

    test('a process SIGKILLed mid-turn: engram maintain finishes it in dee\'s memory', async () => {
      const dee = await connect('dee')
      const pid = dee.transport.pid
      assert.ok(pid)
      process.kill(pid, 'SIGKILL')
      await dee.closed
      assert.equal(postMortemsFor(server, 'dee'), 0)
      await run(process.execPath, [bin, 'maintain', '--json'], { env, cwd: root })
      const context = await contextOf('dee')
      assert.match(context, RULE)
      assert.ok(context.includes(lessonFor('dee')), context)
      assert.equal(postMortemsFor(server, 'dee'), 1)
      const agents = await contextOf()
      assert.doesNotMatch(agents, /fails twice in a row|learned with/)
      assert.ok(!(await contextOf('ada')).includes(lessonFor('dee')))
    })
  })
})
