/**
 * Bad input is the caller's mistake on every surface and both backends (decision
 * 0055): a NUL or half a character (a lone UTF-16 surrogate) in any string of an HTTP request is a
 * 400 naming the field, never PostgreSQL's 500; over MCP (the official client, `engram mcp` in a
 * child process) `tools/call` with non-object arguments and `resources/read` with a lone surrogate
 * are invalid params (-32602), and `write_memory_file` refuses such a path without writing a file
 * named by U+FFFD.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema, GetPromptResultSchema, ListToolsResultSchema, ErrorCode as McpErrorCode, McpError, ReadResourceResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { EngramError } from '../src/core/errors.ts'
import { createMind } from '../src/mind.ts'
import { dropPostgresSchema } from '../src/storage/postgres/connection.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { ADA, ADMIN, type Answer, assertError, assertOk, call, openServeHome, type ServeHome } from './support/serve-app.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

const NUL = 'a\u0000b'
const LONE = 'x\ud800y'

/** A 400 `invalid_argument` whose message names `field` and says what was wrong with it. */
function assertRefused(answer: Answer, field: string, what: RegExp): void {
  assertError(answer, 400, 'invalid_argument')
  assert.match(answer.body.error.message, new RegExp(field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), answer.body.error.message)
  assert.match(answer.body.error.message, what, answer.body.error.message)
}

/** Every file name under `dir`, recursively (none on PostgreSQL, where memory files are rows). */
function namesUnder(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((entry) => entry.name)
}

/** `engram mcp` in a child process written to line by line (what the official client cannot send), and its answer to a request id. */
function rawMcp(home: string, env: Record<string, string | undefined>): { child: ChildProcess; answerTo(id: number): Promise<string> } {
  const child = spawn(process.execPath, [bin, 'mcp', '--home', home, '--user', 'ada'], { env, cwd: root, stdio: ['pipe', 'pipe', 'ignore'] })
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  const answerTo = async (id: number): Promise<string> => {
    for (let waited = 0; waited < 200; waited++) {
      const line = out.split('\n').find((candidate) => candidate.includes(`"id":${id}`))
      if (line) return line
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`no answer to request ${id}: ${out}`)
  }
  return { child, answerTo }
}

function httpCases(settings: () => Record<string, unknown>): void {
  let served: ServeHome
  before(async () => {
    served = await openServeHome(settings())
  })
  after(async () => {
    await served?.close()
  })

  test('a NUL or a lone surrogate in a session id, a user id or a message is a 400 naming the field', async () => {
    const { app } = served
    assertRefused(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: NUL, message: 'hello' } }), 'session', /NUL character/)
    assertRefused(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: LONE, message: 'hello' } }), 'session', /lone UTF-16 surrogate \(U\+D800/)
    assertRefused(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 'line\nbreak', message: 'hello' } }), 'session', /control character U\+000A/)
    assertRefused(await call(app, 'POST', '/v1/turns/begin', { token: ADMIN, body: { session: 's-admin', message: 'hello', user: NUL } }), 'user', /NUL character/)
    assertRefused(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 's1', message: `tea ${NUL}` } }), 'message', /NUL character/)
    assertRefused(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 's1', message: `tea ${LONE}` } }), 'message', /lone UTF-16 surrogate/)
    assertRefused(await call(app, 'POST', '/v1/turns/end', { token: ADA, body: { session: 's1', turn: 1, reply: `done ${NUL}` } }), 'reply', /NUL character/)
    // Nothing of the refused turns was stored: the session has no turn.
    assertError(await call(app, 'GET', '/v1/turns/s1/1', { token: ADA }), 404, 'not_found')
  })

  test('any other string field, a path parameter or a query value: 400 naming it', async () => {
    const { app } = served
    assertRefused(await call(app, 'POST', '/v1/memorize', { token: ADA, body: { entries: [{ text: `Ada drinks tea ${NUL}`, kind: 'profile' }] } }), 'entries.0.text', /NUL character/)
    assertRefused(await call(app, 'POST', '/v1/search', { token: ADA, body: { query: LONE } }), 'query', /lone UTF-16 surrogate/)
    assertRefused(await call(app, 'GET', '/v1/search?query=tea%00cup', { token: ADA }), 'query', /NUL character/)
    assertRefused(await call(app, 'GET', '/v1/search?query=tea&user=ada%00', { token: ADMIN }), 'user', /NUL character/)
    assertRefused(await call(app, 'POST', '/v1/recall', { token: ADA, body: { message: 'tea', session: LONE } }), 'session', /lone UTF-16 surrogate/)
    assertRefused(await call(app, 'POST', '/v1/forget', { token: ADA, body: { target: `knowledge/${LONE}.md` } }), 'target', /lone UTF-16 surrogate/)
    assertRefused(await call(app, 'POST', '/v1/restore', { token: ADA, body: { target: NUL } }), 'target', /NUL character/)
    assertRefused(await call(app, 'GET', '/v1/turns/s%00x/1', { token: ADA }), 'path', /NUL character/)
    assertRefused(await call(app, 'GET', '/v1/context?user=ada%00', { token: ADMIN }), 'query.user', /NUL character/)
    // The dashboard's pages read their parameters themselves: the address is checked before them.
    assertRefused(await call(app, 'GET', '/turns/s%00x/1', { token: ADA }), 'path', /NUL character/)
    assertRefused(await call(app, 'GET', '/conversations/c%00', { token: ADA }), 'path', /NUL character/)
    assertRefused(await call(app, 'POST', '/v1/memorize', { token: ADA, raw: `{"entries": [{"text": "ok", "kind": "profile"}], "\\ud800": 1}` }), 'key', /lone UTF-16 surrogate/)
  })

  test('well-formed text, astral characters included, is answered as before', async () => {
    const { app } = served
    const begun = assertOk(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 'tea-🍵', message: 'I drink 🍵 green tea\twith lemon' } }))
    assert.equal(begun.turn.number, 1)
    assertOk(await call(app, 'POST', '/v1/turns/end', { token: ADA, body: { session: 'tea-🍵', turn: 1, reply: 'Noted 🍵.' } }))
    assertOk(await call(app, 'POST', '/v1/memorize', { token: ADA, body: { entries: [{ text: 'Ada drinks 🍵 green tea', kind: 'profile' }] } }))
    const found = assertOk(await call(app, 'GET', '/v1/search?query=green%20tea', { token: ADA }))
    assert.ok(found.hits.some((hit: { text: string }) => hit.text.includes('🍵')), JSON.stringify(found.hits))
  })
}

/** An `invalid_argument` EngramError whose message names what was wrong. */
function invalidArgument(what: RegExp): (error: unknown) => boolean {
  return (error) => EngramError.is(error) && error.code === 'invalid_argument' && what.test(error.message)
}

function libraryCases(settings: () => Record<string, unknown>): void {
  test('mind.session refuses session ids and user ids a store would change or refuse; a NUL in a message is kept', async () => {
    const temp = makeTempHome('engram-bad-input-lib-')
    const mind = await createMind({ home: temp.home, env: temp.env, settings: settings() })
    try {
      assert.throws(() => mind.session(NUL), invalidArgument(/session id .*NUL character/))
      assert.throws(() => mind.session(LONE), invalidArgument(/session id .*lone UTF-16 surrogate/))
      assert.throws(() => mind.session('tab\there'), invalidArgument(/control character U\+0009/))
      // Two users differing only in half a character would share one tree once stored as U+FFFD.
      assert.throws(() => mind.session('s-lone', { user: 'ada\ud800' }), invalidArgument(/not a valid user id: it holds a lone UTF-16 surrogate/))
      assert.throws(() => mind.session('s-lone', { user: 'ada\udc00' }), invalidArgument(/not a valid user id/))
      // A message is the user's text: the library keeps a NUL in it on both backends (PostgreSQL's
      // context store escapes it), as it always has; HTTP and MCP refuse it at the wire.
      const turn = await mind.session('s-lib', { user: 'ada' }).begin(`tea ${NUL} 🍵`)
      assert.equal(turn.number, 1, 'the refused sessions began no turn')
      await mind.session('s-lib', { user: 'ada' }).end(turn, `noted ${NUL}`)
      const next = await mind.session('s-lib', { user: 'ada' }).begin('and then?')
      assert.deepEqual(
        next.messages.map((message) => message.content).filter((content) => typeof content === 'string' && content.includes('\u0000')),
        [`tea ${NUL} 🍵`, `noted ${NUL}`],
      )
    } finally {
      await mind.close()
      temp.cleanup()
    }
  })
}

/** The MCP protocol error `promise` rejects with. */
async function mcpError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof McpError, String(error))
    return error
  }
  assert.fail('the request was answered, not refused')
}

function mcpCases(setup: () => { env: Record<string, string>; home: string }): void {
  let client: Client
  let transport: StdioClientTransport
  before(async () => {
    const { env, home } = setup()
    transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', home, '--user', 'ada'], env, cwd: root, stderr: 'pipe' })
    client = new Client({ name: 'engram-bad-input-test', version: '1.0.0' })
    await client.connect(transport)
  })
  after(async () => {
    await client?.close()
  })

  const toolCall = (params: Record<string, unknown>) => client.request({ method: 'tools/call', params: params as { name: string } }, CallToolResultSchema)

  test('tools/call with arguments that are not an object is invalid params with a readable message', async () => {
    for (const [args, shown] of [['query tea', /got a string/], [['tea'], /got an array/], [null, /got null/], [42, /got a number/]] as const) {
      const error = await mcpError(toolCall({ name: 'search_memory', arguments: args }))
      assert.equal(error.code, McpErrorCode.InvalidParams, error.message)
      assert.match(error.message, /params\.arguments must be a JSON object/)
      assert.match(error.message, shown)
    }
    const nameless = await mcpError(toolCall({ arguments: {} }))
    assert.equal(nameless.code, McpErrorCode.InvalidParams, nameless.message)
    // The server still answers a good call after the bad ones.
    const good = await client.callTool({ name: 'search_memory', arguments: { query: 'tea' } })
    assert.notEqual(good.isError, true)
  })

  test('a request whose params are not an object at all is answered with invalid params, not left unanswered', async () => {
    for (const [params, shown] of [['query tea', /got string/], [42, /got number/], [null, /got null/], [['tea'], /got an array/]] as const) {
      // A short timeout: the SDK's stdio transport dropped such a line, and the client waited for ever.
      const error = await mcpError(client.request({ method: 'tools/call', params } as never, CallToolResultSchema, { timeout: 5000 }))
      assert.equal(error.code, McpErrorCode.InvalidParams, `${JSON.stringify(params)}: ${error.message}`)
      assert.match(error.message, /tools\/call: params must be a JSON object/)
      assert.match(error.message, shown)
    }
    assert.notEqual((await client.callTool({ name: 'search_memory', arguments: { query: 'tea' } })).isError, true)
  })

  test('a path sent as bytes that are not UTF-8 (half a character as its own three bytes) writes no file named by U+FFFD', async () => {
    // The official client cannot send such bytes (JSON.stringify escapes half a character), so
    // they are written to a second engram mcp on the same home as a raw line of stdin.
    const { env, home } = setup()
    const { child, answerTo } = rawMcp(home, env)
    try {
      child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`)
      await answerTo(1)
      child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
      const call = Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_memory_file","arguments":{"path":"knowledge/'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('raw-tea.md","content":"# Tea\\n\\nGreen.\\n"}}}\n'),
      ])
      child.stdin?.write(call)
      const answer = JSON.parse(await answerTo(2)) as { result: { isError?: boolean; content: Array<{ text: string }> } }
      assert.equal(answer.result.isError, true, JSON.stringify(answer))
      assert.match(answer.result.content[0]?.text ?? '', /U\+FFFD/)
    } finally {
      child.kill()
    }
    assert.deepEqual(namesUnder(home).filter((name) => name.includes('\ufffd')), [], 'no file is named by a replacement character')
  })

  test('an initialize whose params have the wrong types is invalid params naming the field, and a good one then connects', async () => {
    // The SDK registered initialize before any handler of ours: a number as protocolVersion was -32603 (decision 0085).
    const { env, home } = setup()
    const { child, answerTo } = rawMcp(home, env)
    try {
      const initialize = (id: number, params: Record<string, unknown>) => child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params })}\n`)
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ protocolVersion: 5, capabilities: {}, clientInfo: { name: 'raw', version: '1' } }, /params\.protocolVersion/],
        [{ protocolVersion: '2025-06-18', capabilities: 'all', clientInfo: { name: 'raw', version: '1' } }, /params\.capabilities/],
        [{ protocolVersion: '2025-06-18', capabilities: {}, clientInfo: 7 }, /params\.clientInfo/],
      ]
      for (const [i, [params, field]] of cases.entries()) {
        initialize(i + 1, params)
        const answer = JSON.parse(await answerTo(i + 1)) as { error?: { code: number; message: string } }
        assert.equal(answer.error?.code, McpErrorCode.InvalidParams, JSON.stringify(answer))
        assert.match(answer.error?.message ?? '', field)
      }
      initialize(9, { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
      const good = JSON.parse(await answerTo(9)) as { result?: { protocolVersion: string; serverInfo: { name: string } } }
      assert.equal(good.result?.protocolVersion, '2025-06-18', JSON.stringify(good))
      assert.equal(good.result?.serverInfo.name, 'engram')
    } finally {
      child.kill()
    }
  })

  test('tools/list, resources/list and prompts/list with params of the wrong type are invalid params, not internal errors', async () => {
    for (const method of ['tools/list', 'resources/list', 'prompts/list'] as const) {
      const error = await mcpError(client.request({ method, params: { cursor: 5 } } as never, ListToolsResultSchema.passthrough()))
      assert.equal(error.code, McpErrorCode.InvalidParams, `${method}: ${error.message}`)
      assert.match(error.message, /params\.cursor/, error.message)
    }
    // The lists themselves still answer.
    assert.ok((await client.listTools()).tools.length > 0)
    assert.ok((await client.listPrompts()).prompts.some((prompt) => prompt.name === 'primed_context'))
  })

  test('prompts/get with arguments that are not an object of strings, or that hold half a character, is invalid params', async () => {
    for (const args of ['hello', ['hello'], { message: 42 }, { message: `tea ${LONE}` }, {}]) {
      const error = await mcpError(client.request({ method: 'prompts/get', params: { name: 'primed_context', arguments: args as unknown as Record<string, string> } }, GetPromptResultSchema))
      assert.equal(error.code, McpErrorCode.InvalidParams, `${JSON.stringify(args)}: ${error.message}`)
    }
    const unknown = await mcpError(client.getPrompt({ name: 'no_such_prompt', arguments: {} }))
    assert.equal(unknown.code, McpErrorCode.InvalidParams, unknown.message)
    const primed = await client.getPrompt({ name: 'primed_context', arguments: { message: 'tea 🍵' } })
    assert.equal(primed.messages.length, 1)
  })

  test('resources/read with a lone surrogate (or a NUL) in the URI, or no URI string, is invalid params', async () => {
    for (const uri of [`engram://memory/knowledge/${LONE}.md`, 'engram://memory/knowledge/\ud800.md', 'engram://memory/knowledge/a%00b.md', `engram://memory/${NUL}`]) {
      const error = await mcpError(client.request({ method: 'resources/read', params: { uri } }, ReadResourceResultSchema))
      assert.equal(error.code, McpErrorCode.InvalidParams, `${JSON.stringify(uri)}: ${error.message}`)
      assert.match(error.message, /NUL|lone UTF-16 surrogate/)
    }
    for (const params of [{ uri: 42 }, {}, { uri: null }]) {
      const error = await mcpError(client.request({ method: 'resources/read', params: params as unknown as { uri: string } }, ReadResourceResultSchema))
      assert.equal(error.code, McpErrorCode.InvalidParams, `${JSON.stringify(params)}: ${error.message}`)
      assert.match(error.message, /params\.uri, a resource URI as a string/)
    }
  })

  test('write_memory_file refuses a path with a lone surrogate, a NUL or a control character, and writes no file', async () => {
    for (const [path, what] of [
      ['knowledge/\ud800.md', /lone UTF-16 surrogate/],
      [`knowledge/${LONE}.md`, /lone UTF-16 surrogate/],
      ['knowledge/\udc80tea.md', /lone UTF-16 surrogate/],
      [`knowledge/${NUL}.md`, /NUL/],
      ['knowledge/tea\n.md', /control character/],
    ] as const) {
      const result = await client.callTool({ name: 'write_memory_file', arguments: { path, content: '# Tea\n\nGreen.\n' } })
      assert.equal(result.isError, true, JSON.stringify(result))
      const text = (result.content as Array<{ text: string }>)[0]?.text ?? ''
      assert.match(text, what, text)
      assert.match(text, /Fix:/)
    }
    // Neither a tool argument nor a memory (a NUL in memorize's text) reaches the store.
    const memorized = await client.callTool({ name: 'memorize', arguments: { entries: [{ text: `Ada likes tea ${NUL}`, kind: 'profile' }] } })
    assert.equal(memorized.isError, true, JSON.stringify(memorized))
    const listed = await client.callTool({ name: 'read_memory_file', arguments: { path: 'knowledge' } })
    assert.doesNotMatch(JSON.stringify(listed), /\ufffd|\\ufffd/i)
    const { home } = setup()
    assert.deepEqual(namesUnder(home).filter((name) => name.includes('\ufffd')), [], 'no file is named by a replacement character')
    // A good path is written.
    const written = await client.callTool({ name: 'write_memory_file', arguments: { path: 'knowledge/tea.md', content: '# Tea\n\nGreen 🍵.\n' } })
    assert.notEqual(written.isError, true, JSON.stringify(written))
  })
}

describe('bad input over HTTP (SQLite)', () => {
  httpCases(() => ({}))
})

describe('bad input through the library (SQLite)', () => {
  libraryCases(() => ({}))
})

describe('bad input over MCP (SQLite)', { timeout: 120_000 }, () => {
  let temp: TempHome
  before(() => {
    temp = makeTempHome('engram-bad-input-mcp-')
  })
  after(() => temp?.cleanup())
  mcpCases(() => ({ env: temp.env, home: temp.home }))
})

onPostgres('bad input', (url) => {
  const schema = freshSchema()
  after(async () => {
    await dropPostgresSchema(url, schema)
  })

  describe('bad input over HTTP (PostgreSQL)', { timeout: 120_000 }, () => {
    httpCases(() => ({ 'storage.url': url, 'storage.schema': schema }))
  })

  describe('bad input through the library (PostgreSQL)', { timeout: 120_000 }, () => {
    libraryCases(() => ({ 'storage.url': url, 'storage.schema': schema }))
  })

  describe('bad input over MCP (PostgreSQL)', { timeout: 120_000 }, () => {
    let temp: TempHome
    const mcpSchema = freshSchema()
    before(() => {
      temp = makeTempHome('engram-bad-input-mcp-pg-')
    })
    after(async () => {
      temp?.cleanup()
      await dropPostgresSchema(url, mcpSchema)
    })
    mcpCases(() => ({ env: { ...temp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: mcpSchema }, home: temp.home }))
  })
})
