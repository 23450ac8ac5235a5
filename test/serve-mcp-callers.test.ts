/**
 * MCP sessions over HTTP are bounded per caller (decision 0054): the real
 * `engram serve` in a child process, driven by the official MCP client (StreamableHTTPClientTransport)
 * with two users' tokens. Bob opening more sessions than his bound closes only his own least
 * recently used ones, never Ada's; the global bound (serve.mcpSessions) refuses a new session with
 * 503 and Retry-After rather than closing anyone's.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const ADA = 'ada-token-0123456789abcdef'
const BOB = 'bob-token-0123456789abcdef'
const TOKENS = `${ADA}=default:ada, ${BOB}=default:bob`

type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean }
const textOf = (result: CallResult): string => result.content.map((part) => part.text ?? '').join('\n')

interface Connection {
  client: Client
  transport: StreamableHTTPClientTransport
}

async function connect(url: URL, token: string): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  const client = new Client({ name: 'engram-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

/** The `memory` tool's status in the connection's conversation: it answers only in a live session. */
async function memoryStatus(connection: Connection): Promise<string> {
  const result = (await connection.client.callTool({ name: 'memory', arguments: { action: 'status' } })) as CallResult
  assert.equal(result.isError, undefined, textOf(result))
  return textOf(result)
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

async function startOn(temp: TempHome, settings: Record<string, string> = {}): Promise<{ server: ServeProcess; url: URL }> {
  const server = await startServe({ home: temp.home, env: { ...temp.env, ENGRAM_SERVE_TOKENS: TOKENS, ENGRAM_MCP_TOOLS: 'all', ...settings }, killAfterMs: 240_000 })
  return { server, url: new URL(`${server.address}/mcp`) }
}

describe('engram serve: one caller cannot close another caller\'s MCP sessions', () => {
  let temp: TempHome
  let server: ServeProcess
  let url: URL
  const opened: Connection[] = []
  before(async () => {
    temp = makeTempHome('engram-serve-mcp-callers-')
    ;({ server, url } = await startOn(temp))
  })
  after(async () => {
    await Promise.all(opened.map(({ client }) => client.close().catch(() => {})))
    await server.stop()
    temp.cleanup()
  })

  test('Bob opening 105 sessions (more than his bound of 100) never closes Ada\'s two; his own least recently used ones go', async () => {
    const ada = [await connect(url, ADA), await connect(url, ADA)]
    opened.push(...ada)
    for (const session of ada) assert.match(await memoryStatus(session), /messages/)

    const bob: Connection[] = []
    for (let i = 0; i < 105; i++) bob.push(await connect(url, BOB))
    opened.push(...bob)

    // Ada's sessions are the least recently used of the server, and both still answer.
    for (const session of ada) {
      assert.match(await memoryStatus(session), /messages/)
      assert.ok((await session.client.listTools()).tools.length > 0)
    }
    // Bob's bound is his own: his oldest five made room for his newest.
    for (const session of bob.slice(0, 5)) await assert.rejects(session.client.listTools(), /404|not exist/)
    for (const session of bob.slice(5, 8)) assert.ok((await session.client.listTools()).tools.length > 0)
    assert.match(await memoryStatus(bob[104] as Connection), /messages/)
    assert.doesNotMatch(server.stderr(), /presented by another caller/)
  })
})

describe('engram serve: the global MCP session bound refuses, it never evicts another caller', () => {
  test('with serve.mcpSessions 3 and serve.mcpSessionsPerCaller 2: a fourth session is 503 with Retry-After; a caller at its own bound replaces its own', async () => {
    const temp = makeTempHome('engram-serve-mcp-global-')
    const { server, url } = await startOn(temp, { ENGRAM_SERVE_MCP_SESSIONS: '3', ENGRAM_SERVE_MCP_SESSIONS_PER_CALLER: '2' })
    const opened: Connection[] = []
    try {
      const ada1 = await connect(url, ADA)
      const ada2 = await connect(url, ADA)
      const bob1 = await connect(url, BOB)
      opened.push(ada1, ada2, bob1)

      // Bob is under his own bound, but the server is full: refused, with when to try again.
      const raw = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${BOB}` }, body: JSON.stringify(INITIALIZE) })
      assert.equal(raw.status, 503)
      const retryAfter = Number(raw.headers.get('retry-after'))
      assert.ok(Number.isInteger(retryAfter) && retryAfter > 0, `Retry-After: ${raw.headers.get('retry-after')}`)
      const refusal = (await raw.json()) as { ok: boolean; error: { code: string; message: string; fix: string } }
      assert.equal(refusal.ok, false)
      assert.equal(refusal.error.code, 'limit_exceeded')
      assert.match(refusal.error.message, /3 MCP sessions/)
      assert.match(refusal.error.fix, /Retry-After|serve\.mcpSessions/)
      await assert.rejects(connect(url, BOB), (error: Error & { code?: number }) => error.code === 503)

      // Nobody's session was closed to make room.
      for (const session of [ada1, ada2, bob1]) assert.match(await memoryStatus(session), /messages/)

      // Ada at her own bound: her least recently used session makes room, nobody else's.
      await memoryStatus(ada1)
      const ada3 = await connect(url, ADA)
      opened.push(ada3)
      await assert.rejects(ada2.client.listTools(), /404|not exist/)
      for (const session of [ada1, ada3, bob1]) assert.match(await memoryStatus(session), /messages/)
      assert.match(server.stderr(), /MCP sessions/)
    } finally {
      await Promise.all(opened.map(({ client }) => client.close().catch(() => {})))
      await server.stop()
      temp.cleanup()
    }
  })
})
