/**
 * MCP over streamable HTTP at `/mcp` of `engram serve` (decision 0038), driven by the official MCP
 * client against a real listening server on a temp home: the tools, resources and the
 * `primed_context` prompt `engram mcp` serves over stdio, for the token's user; two users' tokens
 * not seeing each other's memories; no token or a wrong one 401; another token presenting a
 * session's id refused; DELETE ending a session; then the per-caller session bound, the idle
 * timeout and the mind's close on a route with small limits (the bounds between callers:
 * serve-mcp-callers.test.ts).
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { type ServerType, serve } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, ListToolsResultSchema, ErrorCode as McpErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { Hono } from 'hono'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { createMcpRoute } from '../src/interfaces/http/mcp-http.ts'
import type { ServeEnv } from '../src/interfaces/http/support.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const ADA = 'ada-token-0123456789abcdef'
const BOB = 'bob-token-0123456789abcdef'
const ADMIN = 'admin-token-0123456789abcd'
const TOKENS = `${ADA}=default:ada, ${BOB}=default:bob, ${ADMIN}=admin`

type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> }
const textOf = (result: CallResult): string => result.content.map((part) => part.text ?? '').join('\n')

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

interface Connection {
  client: Client
  transport: StreamableHTTPClientTransport
}

async function connect(url: URL, token: string, fetch?: typeof globalThis.fetch): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } }, ...(fetch ? { fetch } : {}) })
  const client = new Client({ name: 'engram-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

/** The text of a resource as the client reads it. */
async function resourceText(client: Client, uri: string): Promise<string> {
  const [content] = (await client.readResource({ uri })).contents
  return content !== undefined && 'text' in content ? content.text : ''
}

async function promptText(client: Client, args: Record<string, string>): Promise<string> {
  const prompt = await client.getPrompt({ name: 'primed_context', arguments: args })
  return String((prompt.messages[0]?.content as { text?: string } | undefined)?.text)
}

describe('engram serve: MCP over streamable HTTP', () => {
  let temp: TempHome
  let mind: MindInternals
  let server: ServerType
  let url: URL
  const open: Connection[] = []
  const as = async (token: string): Promise<Connection> => {
    const connection = await connect(url, token)
    open.push(connection)
    return connection
  }

  before(async () => {
    temp = makeTempHome('engram-serve-mcp-')
    mind = await openMindInternals({ home: temp.home, env: temp.env })
    const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => resolve(info.port))
    })
    url = new URL(`http://127.0.0.1:${port}/mcp`)
  })
  after(async () => {
    for (const { client } of open) await client.close()
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      if ('closeAllConnections' in server) server.closeAllConnections()
    })
    await mind.close()
    temp.cleanup()
  })

  test('the tools, a memory resource and primed_context, for the token\'s user', async () => {
    const { client } = await as(ADA)
    const { tools } = await client.listTools()
    // One tool per question (mcp.tools: essential), each with a title and an output schema the client checks results against.
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['memorize', 'search_memory', 'read_memory_file', 'write_memory_file', 'forget_memory', 'recall_skill'],
    )
    assert.ok(tools.reduce((sum, tool) => sum + (tool.description ?? '').length, 0) <= 1500)
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name)
      assert.equal(tool.outputSchema?.type, 'object', tool.name)
      assert.ok(tool.title, tool.name)
    }
    assert.deepEqual((await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate), ['engram://memory/{+path}'])

    const saved = (await client.callTool({ name: 'memorize', arguments: { entries: [{ text: 'The Orion staging deploy needs the VPN token refreshed every Monday.', kind: 'lesson', topic: 'deploy' }] } })) as CallResult
    assert.equal(saved.isError, undefined, textOf(saved))
    assert.match(textOf(saved), /saved \[lesson[^\]]*\] The Orion staging deploy/)

    const found = (await client.callTool({ name: 'search_memory', arguments: { query: 'Orion VPN token' } })) as CallResult
    assert.equal(found.isError, undefined, textOf(found))
    assert.match(textOf(found), /The Orion staging deploy needs the VPN token refreshed every Monday/)

    const { resources } = await client.listResources()
    const texts = await Promise.all(resources.map(async (resource) => ({ uri: resource.uri, text: await resourceText(client, resource.uri) })))
    const lessons = texts.find((resource) => resource.text.includes('Orion staging deploy'))
    assert.ok(lessons, `no resource holds the lesson: ${resources.map((resource) => resource.uri).join(', ')}`)
    assert.match(lessons.uri, /^engram:\/\/memory\//)

    const primed = await promptText(client, { message: 'when does the Orion VPN token need refreshing?' })
    assert.match(primed, /## Your memory — recalled for this message/)
    assert.match(primed, /Orion staging deploy/)
  })

  test('params that are not an object, or a wrong-typed cursor, are invalid params with the request id, not a parse error or -32603', async () => {
    const { client } = await as(ADA)
    for (const params of ['query tea', 42, ['tea']]) {
      const error = await client.request({ method: 'tools/call', params } as never, CallToolResultSchema).then(
        () => assert.fail(`${JSON.stringify(params)} was answered`),
        (error: unknown) => error as McpError,
      )
      assert.ok(error instanceof McpError, String(error))
      assert.equal(error.code, McpErrorCode.InvalidParams, `${JSON.stringify(params)}: ${error.message}`)
      assert.match(error.message, /tools\/call: params must be a JSON object/)
    }
    const cursor = await client.request({ method: 'tools/list', params: { cursor: 5 } } as never, ListToolsResultSchema).then(
      () => assert.fail('a numeric cursor was answered'),
      (error: unknown) => error as McpError,
    )
    assert.equal(cursor.code, McpErrorCode.InvalidParams, cursor.message)
    assert.ok((await client.listTools()).tools.length > 0, 'the session still answers')
  })

  test("two users' tokens do not see each other's memories; only an administrator primes for another user", async () => {
    const { client: bob } = await as(BOB)
    const found = (await bob.callTool({ name: 'search_memory', arguments: { query: 'Orion VPN token' } })) as CallResult
    assert.equal(found.isError, undefined, textOf(found))
    assert.doesNotMatch(textOf(found), /Orion staging deploy/)
    for (const resource of (await bob.listResources()).resources) {
      assert.doesNotMatch(await resourceText(bob, resource.uri), /Orion staging deploy/, resource.uri)
    }
    assert.doesNotMatch(await promptText(bob, { message: 'when does the Orion VPN token need refreshing?' }), /Orion staging deploy/)
    await assert.rejects(promptText(bob, { message: 'Orion VPN token?', user: 'ada' }), /acts for user "bob" and cannot prime for "ada"/)

    const { client: admin } = await as(ADMIN)
    assert.match(await promptText(admin, { message: 'when does the Orion VPN token need refreshing?', user: 'ada' }), /Orion staging deploy/)
  })

  test('no token or a wrong one is 401; a session id is no key for another token', async () => {
    const post = (headers: Record<string, string>, body: unknown = INITIALIZE) => fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) })
    const none = await post({})
    assert.equal(none.status, 401)
    assert.equal(((await none.json()) as { error: { code: string } }).error.code, 'unauthorized')
    const wrong = await post({ authorization: 'Bearer not-a-token-of-this-server' })
    assert.equal(wrong.status, 401)
    await wrong.body?.cancel()
    await assert.rejects(connect(url, 'not-a-token-of-this-server'), (error: Error & { code?: number }) => error.code === 401 && /not one of serve\.tokens/.test(error.message))

    const ada = await as(ADA)
    const sessionId = ada.transport.sessionId
    assert.ok(sessionId !== undefined && sessionId !== '', 'a stateful session has an id')
    const listTools = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }
    const stolen = await post({ authorization: `Bearer ${BOB}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, listTools)
    assert.equal(stolen.status, 404)
    const refusal = (await stolen.json()) as { ok: boolean; error: { code: string; fix: string } }
    assert.equal(refusal.ok, false)
    assert.equal(refusal.error.code, 'not_found')
    assert.match(refusal.error.fix, /initialize/)
    const ended = await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${BOB}`, 'mcp-session-id': sessionId } })
    assert.notEqual(ended.status, 200, 'another token cannot end the session either')
    await ended.body?.cancel()
    // Ada's session is untouched.
    assert.ok((await ada.client.listTools()).tools.length > 0)

    const stream = await fetch(url, { headers: { authorization: `Bearer ${ADA}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } })
    assert.equal(stream.status, 405, 'no standalone event stream is opened')
    await stream.body?.cancel()
  })

  const endAndCheck = async (headers: Record<string, string>) => {
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${BOB}`, ...headers } } })
    const client = new Client({ name: 'engram-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const sessionId = transport.sessionId
      assert.ok(sessionId !== undefined)
      await transport.terminateSession()
      const after = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${BOB}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }) })
      assert.equal(after.status, 404)
      await after.body?.cancel()
    } finally {
      await client.close()
    }
  }

  test('DELETE ends the session: its id is refused afterwards', async () => {
    // With a JSON Content-Type: the app's check refuses any other non-GET request without one (415).
    await endAndCheck({ 'content-type': 'application/json' })
  })

  test('a DELETE without a body, as MCP clients send it, ends the session', async () => {
    await endAndCheck({})
  })
})

describe('engram serve: MCP sessions are bounded, expire when idle, and end with the mind', () => {
  test('the caller\'s least recently used session makes room; an idle one is closed; a closed mind refuses them all', async () => {
    const temp = makeTempHome('engram-serve-mcp-limits-')
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    try {
      // The app's checks set the principal; here a token-less rig sets Ada's, to reach the limits.
      const app = new Hono<ServeEnv>()
      app.use('*', async (c, next) => {
        c.set('principal', { agent: 'default', user: 'ada', admin: false })
        return next()
      })
      app.route('/mcp', createMcpRoute({ mind, maxSessionsPerCaller: 2, idleMs: 300 }))
      const fetchApp = ((input: string | URL | Request, init?: RequestInit) => app.request(input instanceof Request ? input : String(input), init)) as typeof fetch
      const url = new URL('http://127.0.0.1/mcp')
      const tools = async (connection: Connection) => (await connection.client.listTools()).tools.length

      const first = await connect(url, ADA, fetchApp)
      const second = await connect(url, ADA, fetchApp)
      assert.ok((await tools(second)) > 0)
      const third = await connect(url, ADA, fetchApp)
      assert.ok((await tools(third)) > 0)
      await assert.rejects(tools(first), /404|not exist/, 'the least recently used session was closed to admit the third')
      assert.ok((await tools(second)) > 0, 'the others stay')

      await new Promise((resolve) => setTimeout(resolve, 700))
      await assert.rejects(tools(third), /404|not exist/, 'an idle session is closed')

      const fourth = await connect(url, ADA, fetchApp)
      await mind.close()
      await assert.rejects(tools(fourth), /503|shutting down/)
      for (const connection of [first, second, third, fourth]) await connection.client.close()
    } finally {
      await mind.close().catch(() => {})
      temp.cleanup()
    }
  })

  test('a caller whose every session is answering a call is refused with 429; concurrent initializes do not pass its bound', async () => {
    const temp = makeTempHome('engram-serve-mcp-busy-')
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    try {
      const app = new Hono<ServeEnv>()
      app.use('*', async (c, next) => {
        c.set('principal', { agent: 'default', user: 'ada', admin: false })
        return next()
      })
      app.route('/mcp', createMcpRoute({ mind, maxSessionsPerCaller: 1, maxSessions: 10 }))
      const fetchApp = ((input: string | URL | Request, init?: RequestInit) => app.request(input instanceof Request ? input : String(input), init)) as typeof fetch
      const url = new URL('http://127.0.0.1/mcp')
      const initialize = () => app.request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${ADA}` }, body: JSON.stringify(INITIALIZE) })

      const first = await connect(url, ADA, fetchApp)
      // A call of the only session still arriving (its body not finished): the session is answering it.
      const bytes = new TextEncoder()
      let finish: () => void = () => {}
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.encode('{"jsonrpc":"2.0","id":9,"method":"tools/list"'))
          finish = () => {
            controller.enqueue(bytes.encode(',"params":{}}'))
            controller.close()
          }
        },
      })
      const held = app.request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${ADA}`, 'mcp-session-id': String(first.transport.sessionId), 'mcp-protocol-version': '2025-06-18' }, body, duplex: 'half' } as RequestInit)
      await new Promise((resolve) => setTimeout(resolve, 50))
      const busy = await initialize()
      assert.equal(busy.status, 429)
      assert.equal(busy.headers.get('retry-after'), '5')
      const refusal = (await busy.json()) as { error: { code: string; fix: string } }
      assert.equal(refusal.error.code, 'limit_exceeded')
      assert.match(refusal.error.fix, /serve\.mcpSessionsPerCaller/)
      finish()
      assert.equal((await held).status, 200, 'the call in progress was answered')
      assert.ok((await first.client.listTools()).tools.length > 0, 'and its session was not closed')

      // Five at once: one is admitted (closing the caller's quiet session), the rest wait their turn.
      const answers = await Promise.all(Array.from({ length: 5 }, () => initialize()))
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 429, 429, 429, 429])
      await Promise.all(answers.map((answer) => answer.body?.cancel()))
      await assert.rejects(first.client.listTools(), /404|not exist/)
      await first.client.close()
    } finally {
      await mind.close().catch(() => {})
      temp.cleanup()
    }
  })
})
