/**
 * Decisions 0045, 0046 and 0057, as an MCP client meets them (`engram mcp --user X` in a child process, the official MCP
 * client): a profile fact found with `search_memory` is forgotten by the id the result shows — that
 * fact, not the whole profile — and its text never reaches the model again, not even through the
 * recent activity that recorded saving it; and a server started after one was killed finishes the
 * killed one's turn within seconds, not at its first five-minute maintenance.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { answer, lessonFor, postMortemsFor, RULE, read, waitFor } from './support/mcp-learning.ts'
import { textOf } from './support/tool-calls.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

describe('engram mcp: forgetting what search showed, and a restart after a kill', () => {
  let tmp: TempHome
  let server: FakeOpenAiServer
  let env: Record<string, string>

  before(async () => {
    tmp = makeTempHome('engram-mcp-forget-')
    server = await startFakeOpenAiServer({ onChat: answer })
    env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  })
  after(async () => {
    await server.close()
    tmp.cleanup()
  })

  async function connect(user: string): Promise<{ client: Client; transport: StdioClientTransport; closed: Promise<void> }> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', tmp.home, '--user', user], env, cwd: root, stderr: 'pipe' })
    const client = new Client({ name: 'engram-test', version: '1.0.0' })
    const closed = new Promise<void>((resolveClosed) => {
      client.onclose = () => resolveClosed()
    })
    await client.connect(transport)
    return { client, transport, closed }
  }
  /** The files the saves in `user`'s activity log name. */
  const savedFiles = (user: string): string[] => {
    const dir = join(tmp.home, 'agents/default/users', user, 'activity')
    return readdirSync(dir)
      .flatMap((day) => read(join(dir, day)).split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as { type: string; meta?: { file?: string } })
      .filter((record) => record.type === 'memory_write' && record.meta?.file !== undefined)
      .map((record) => record.meta?.file as string)
  }
  const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<string> => textOf(await client.callTool({ name, arguments: args }))
  const primed = async (client: Client, message: string): Promise<string> => JSON.stringify(await client.getPrompt({ name: 'primed_context', arguments: { message } }))

  test("a profile fact is forgotten by the id search_memory shows; its text is then in none of the user's primed context", async () => {
    const ada = await connect('ada')
    const bob = await connect('bob')
    try {
      await primed(ada.client, 'Please remember where I live and what I drink.')
      assert.match(await call(ada.client, 'memorize', { entries: [{ text: 'Home city: Lisbon', kind: 'profile' }, { text: 'Drink: green tea', kind: 'profile' }] }), /saved \[profile/)
      assert.match(await call(bob.client, 'memorize', { entries: [{ text: 'Home city: Oslo', kind: 'profile' }] }), /saved \[profile/)

      // The save is logged naming the file it went to, home-relative.
      assert.deepEqual(savedFiles('ada'), ['shared/users/ada.md', 'shared/users/ada.md'])

      const found = await call(ada.client, 'search_memory', { query: 'home city', limit: 1 })
      // The source names the fact itself: the path alone would be the whole profile.
      const id = /source: (users\/ada\.md#[0-9a-f]{16}) \(open with read_memory_file users\/ada\.md\)/.exec(found)?.[1]
      assert.ok(id, found)
      assert.match(await call(ada.client, 'forget_memory', { target: id, reason: 'moved away' }), /^Forgot users\/ada\.md#/)

      assert.doesNotMatch(await call(ada.client, 'search_memory', { query: 'home city' }), /Lisbon/)
      assert.match(await call(ada.client, 'search_memory', { query: 'drink green tea' }), /Drink: green tea/, 'the other fact of her profile stays')
      // The save of the fact and the forget_memory answer are in her recent activity: neither carries the text.
      const context = await primed(ada.client, 'Which city do I live in?')
      assert.match(context, /Recent activity/, context)
      assert.match(context, /forget_memory/, 'the activity is still primed')
      assert.doesNotMatch(context, /Lisbon/, context)
      assert.match(context, /green tea/, 'what she did not forget is still primed')
      // Bob's profile and activity are his own.
      const bobs = await primed(bob.client, 'Which city do I live in?')
      assert.match(bobs, /Oslo/)
      assert.doesNotMatch(bobs, /Lisbon|green tea/)
    } finally {
      await Promise.all([ada.client.close(), bob.client.close()])
    }
  })

  test("a server started after one was killed mid-turn finishes that turn within seconds, once", async () => {
    const dee = await connect('dee')
    for (const n of [1, 2, 3]) {
      const result = await dee.client.callTool({ name: 'read_memory_file', arguments: { path: `knowledge/dee-missing-${n}.md` } })
      assert.equal((result as { isError?: boolean }).isError, true)
    }
    const pid = dee.transport.pid
    assert.ok(pid)
    process.kill(pid, 'SIGKILL')
    await dee.closed
    assert.equal(read(join(tmp.home, 'agents/default/users/dee/memory/rules.md')), '')

    const again = await connect('dee')
    try {
      await waitFor("dee's rule and lesson from the killed server's turn", () => {
        return RULE.test(read(join(tmp.home, 'agents/default/users/dee/memory/rules.md'))) && read(join(tmp.home, 'agents/default/users/dee/memory/lessons.md')).includes(lessonFor('dee'))
      }, 15_000)
      assert.equal(postMortemsFor(server, 'dee'), 1)
      // The saves are logged after the files are written.
      await waitFor('the saves logged', () => new Set(savedFiles('dee')).size === 2)
      assert.deepEqual([...new Set(savedFiles('dee'))].sort(), ['agents/default/users/dee/memory/lessons.md', 'agents/default/users/dee/memory/rules.md'])
    } finally {
      await again.client.close()
    }
    assert.equal(postMortemsFor(server, 'dee'), 1, 'done once')
  })
})
