// @slow: slow and greedy clients against a real server over sockets
/**
 * Slow and greedy clients of `engram serve` (decision 0056), against the real
 * server in a child process with small limits set through its settings (ENGRAM_SERVE_*): a
 * connection that sends nothing, headers a line at a time or a body a byte at a time is answered
 * 408 and closed within the configured time (Node's default held them for 300 s); of 200
 * trickling connections of one client, those beyond its limit are refused with 429 while a
 * well-behaved request of that client, and of another, is served; on a full server a newcomer
 * takes the place of an idle connection of a client holding more, and when every client holds as
 * few, gets 503 and its request is not run. What a bound on receiving must not cut: a large
 * export read slowly by its client, and an MCP session over HTTP used across the timeouts.
 */
import assert from 'node:assert/strict'
import { mkdirSync, readdirSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'
import { closedWithin, connected, send, sleep, statusOf, trickle } from './support/slow-clients.ts'

const ADMIN = 'admin-slow-token-0123456789'
const HEADERS_MS = 1_000
const REQUEST_MS = 1_500
const KEEP_ALIVE_MS = 1_000
const PER_CLIENT = 4
const MAX_CONNECTIONS = 16
/** One client's trickling connections at once, as in the issue's measurement. */
const FLOOD = 200
/**
 * Files of about 140 KB in the export, 22 MB in all: more than the sockets' buffers hold. Loopback
 * buffers grow to several megabytes (tcp_rmem and tcp_wmem reach 6 and 4 MB by default), so a 5 MB
 * export once fitted whole into them on a CI machine and was sent before its client read a byte.
 */
const TOPICS = 160
/** How late past its bound a close may come: Node checks every quarter timeout, and the machine is shared. */
const SLACK_MS = 1_500
/** Past the second a connection has to send a whole request before a full server may close it for a newcomer. */
const PROBATION_GRACE_MS = 1_300

/** A whole memorize request as raw bytes, to send on a connection the server refuses. */
function memorizeRequest(port: number, text: string): string {
  const body = JSON.stringify({ entries: [{ text, kind: 'lesson' }] })
  return `POST /v1/memorize HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${ADMIN}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
}

/** The lessons a search for `query` finds, as the administrator. */
async function lessonsFound(port: number, query: string): Promise<string[]> {
  const found = await send(port, '/v1/search', { localAddress: '127.0.0.1', token: ADMIN, body: { query, kinds: ['lesson'] } })
  assert.equal(found.status, 200, found.body)
  return (JSON.parse(found.body) as { hits: Array<{ text: string }> }).hits.map((hit) => hit.text)
}

/**
 * Waits until the server admits a connection of a new client and has seen it close: a client sees
 * its connections closed a moment before the server counts them closed.
 */
async function serverHasRoom(port: number): Promise<void> {
  for (let wait = 0; wait < 40 && (await send(port, '/v1/health', { localAddress: '127.0.9.9' })).status !== 200; wait++) await sleep(50)
  await sleep(200)
}

describe('engram serve: slow and greedy clients', { timeout: 120_000 }, () => {
  let temp: TempHome
  let server: ServeProcess
  let port: number
  let scratch: string

  before(async () => {
    temp = makeTempHome('engram-serve-slow-')
    // A large export: more than the socket buffers hold, so its answer is still being written while its client waits.
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    try {
      for (let i = 0; i < TOPICS; i++) await mind.backend.documents.write('knowledge', `topic-${i}`, { confidence: 0.8 }, `# Topic ${i}\n\n${`Fact ${i} about the Orion relay, kept in full. `.repeat(3_000)}\n`)
    } finally {
      await mind.close()
    }
    scratch = join(temp.home, '..', 'tmp')
    mkdirSync(scratch, { recursive: true })
    server = await startServe({
      home: temp.home,
      killAfterMs: 110_000,
      // The bounds are each process's (decision 0089): one process, so that they are the server's.
      args: ['--workers', '1'],
      env: {
        ...temp.env,
        TMPDIR: scratch,
        ENGRAM_SERVE_TOKENS: `${ADMIN}=admin`,
        ENGRAM_SERVE_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
        ENGRAM_SERVE_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
        ENGRAM_SERVE_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
        ENGRAM_SERVE_MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT),
        ENGRAM_SERVE_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      },
    })
    port = Number(new URL(server.address).port)
  })
  after(async () => {
    await server?.stop('SIGKILL')
    temp?.cleanup()
  })

  test('a connection that sends nothing, headers slowly or a body slowly gets 408 and is closed within the configured time', async () => {
    const silent = trickle(port, 'silent', { token: ADMIN })
    const headers = trickle(port, 'headers', { token: ADMIN })
    const body = trickle(port, 'body', { token: ADMIN })
    const [s, h, b] = await Promise.all([silent, headers, body].map((t) => closedWithin(t, REQUEST_MS + 4 * SLACK_MS)))
    assert.ok(s && h && b, `every slow connection is closed (Node's default would hold them 300 s): silent ${s?.afterMs}, headers ${h?.afterMs}, body ${b?.afterMs}`)
    for (const [name, closed, bound] of [['silent', s, HEADERS_MS], ['headers', h, HEADERS_MS], ['body', b, REQUEST_MS]] as const) {
      assert.equal(statusOf(closed.answer), 408, `${name}: ${JSON.stringify(closed.answer.slice(0, 80))}`)
      assert.ok(closed.afterMs >= bound - 100 && closed.afterMs <= bound + SLACK_MS, `${name} closed after ${Math.round(closed.afterMs)} ms, bound ${bound} ms`)
    }
  })

  test(`${FLOOD} trickling connections of one client: those beyond its limit are refused (429) at once or within a second, a well-behaved request of that client and of another is served`, async (t) => {
    const held = Array.from({ length: PER_CLIENT }, (_, i) => trickle(port, i % 2 === 0 ? 'headers' : 'body', { localAddress: '127.0.0.2', token: ADMIN }))
    await Promise.all(held.map(connected))
    const beyond = Array.from({ length: FLOOD - PER_CLIENT }, () => trickle(port, 'headers', { localAddress: '127.0.0.2', token: ADMIN }))
    await Promise.all(beyond.map(connected))
    // While the client's limit is taken by its slow connections and the server is full of its
    // flood: one quick request of that client, and one of another.
    const [same, other] = await Promise.all([send(port, '/v1/health', { localAddress: '127.0.0.2', token: ADMIN }), send(port, '/v1/health', { localAddress: '127.0.0.3', token: ADMIN })])
    assert.equal(same.status, 200, same.body)
    assert.equal(same.connection, 'close', 'a connection beyond the limit is served once, not kept')
    assert.equal(other.status, 200, other.body)
    assert.notEqual(other.connection, 'close', 'another client is within its own limit')

    const refused = await Promise.all(beyond.map((t) => closedWithin(t, HEADERS_MS + 4 * SLACK_MS)))
    let answered429 = 0
    for (const connection of refused) {
      assert.ok(connection, 'closed')
      // A client still sending when it is cut may see the connection reset before the answer.
      if (connection.answer !== '') {
        assert.equal(statusOf(connection.answer), 429, JSON.stringify(connection.answer.slice(0, 200)))
        assert.match(connection.answer, /serve\.maxConnectionsPerClient/)
        answered429++
      }
      assert.ok(connection.afterMs < HEADERS_MS + SLACK_MS, `refused after ${Math.round(connection.afterMs)} ms`)
    }
    t.diagnostic(`${refused.length} refused, ${answered429} of them with a 429 answer`)
    assert.ok(answered429 > refused.length / 2, `${answered429} of ${refused.length} answered 429`)
    for (const connection of await Promise.all(held.map((c) => closedWithin(c, REQUEST_MS + 4 * SLACK_MS)))) assert.equal(statusOf(connection?.answer ?? ''), 408)
    // Once they are closed the client has its connections back.
    const again = await send(port, '/v1/health', { localAddress: '127.0.0.2', token: ADMIN })
    assert.equal(again.status, 200)
    assert.notEqual(again.connection, 'close')
  })

  test('a full server: a newcomer takes the place of an idle connection of a client holding more, and when every client holds as few, gets 503 and its request is not run', async () => {
    await serverHasRoom(port)
    // Four clients with four connections each fill the server: a fifth client is let in, and one
    // connection of the ones holding the most makes room for it.
    const heavy = Array.from({ length: MAX_CONNECTIONS }, (_, i) => trickle(port, 'silent', { localAddress: `127.0.3.${1 + (i % 4)}` }))
    await Promise.all(heavy.map(connected))
    const newcomer = await send(port, '/v1/health', { localAddress: '127.0.3.9', token: ADMIN })
    assert.equal(newcomer.status, 200, newcomer.body)
    const heavyEnds = await Promise.all(heavy.map((t) => closedWithin(t, HEADERS_MS + 4 * SLACK_MS)))
    const statuses = heavyEnds.map((end) => statusOf(end?.answer ?? ''))
    assert.equal(statuses.filter((status) => status === 503).length, 1, `one made room: ${statuses}`)
    assert.equal(statuses.filter((status) => status === 408).length, MAX_CONNECTIONS - 1, `the rest timed out: ${statuses}`)
    assert.match(heavyEnds[statuses.indexOf(503)]?.answer ?? '', /serve\.maxConnections\b/)

    // Sixteen clients with one connection each: nobody holds more than the newcomer would, so it is refused.
    await serverHasRoom(port)
    const even = Array.from({ length: MAX_CONNECTIONS }, (_, i) => trickle(port, 'silent', { localAddress: `127.0.1.${1 + i}` }))
    await Promise.all(even.map(connected))
    // A whole request on the refused connection: answered 503, and never run.
    const refused = trickle(port, { whole: memorizeRequest(port, 'Refused lesson: the Vega gate code is 4411.') }, { localAddress: '127.0.2.1' })
    const closed = await closedWithin(refused, HEADERS_MS + 4 * SLACK_MS)
    assert.ok(closed, 'closed')
    assert.equal(statusOf(closed.answer), 503, JSON.stringify(closed.answer.slice(0, 200)))
    assert.match(closed.answer, /serve\.maxConnections\b/)
    assert.ok(closed.afterMs < HEADERS_MS / 2, `refused after ${Math.round(closed.afterMs)} ms`)
    for (const connection of await Promise.all(even.map((t) => closedWithin(t, HEADERS_MS + 4 * SLACK_MS)))) assert.equal(statusOf(connection?.answer ?? ''), 408)
    // Served again once the server has seen them close; the same request on a connection of its own is run.
    await serverHasRoom(port)
    const saved = await send(port, '/v1/memorize', { localAddress: '127.0.2.1', token: ADMIN, body: { entries: [{ text: 'Served lesson: the Vega gate code is 5522.', kind: 'lesson' }] } })
    assert.equal(saved.status, 200, saved.body)
    assert.deepEqual(await lessonsFound(port, 'Vega gate code'), ['Served lesson: the Vega gate code is 5522.'])
  })

  test('what the bounds must not cut: a large export read slowly, and an MCP session over HTTP used across the timeouts', async () => {
    const exporting = new Promise<{ status: number; body: string; midway: string[] }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/export', headers: { authorization: `Bearer ${ADMIN}` }, agent: false }, (res) => {
        // The client reads nothing for longer than every bound, then the rest.
        res.pause()
        res.on('error', reject)
        const chunks: Buffer[] = []
        void sleep(REQUEST_MS + KEEP_ALIVE_MS + 500).then(() => {
          const midway = readdirSync(scratch).filter((name) => name.startsWith('engram-serve-export-'))
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), midway }))
          res.resume()
        })
      })
      req.on('error', reject)
      req.end()
    })

    const transport = new StreamableHTTPClientTransport(new URL(`${server.address}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ADMIN}` } } })
    const client = new Client({ name: 'engram-slow-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const tools = await client.listTools()
      assert.ok(tools.tools.some((tool) => tool.name === 'search_memory'))
      await sleep(REQUEST_MS + KEEP_ALIVE_MS + 500)
      const found = await client.callTool({ name: 'search_memory', arguments: { query: 'Orion relay' } })
      assert.notEqual(found.isError, true, JSON.stringify(found))
      assert.match(JSON.stringify(found.content), /Orion relay/)
    } finally {
      await client.close()
    }

    const exported = await exporting
    assert.equal(exported.status, 200)
    assert.equal(exported.midway.length, 1, 'the answer was still being sent after every bound had passed')
    const parsed = JSON.parse(exported.body) as { ok: boolean; files: Array<{ path: string; content: string }> }
    assert.equal(parsed.ok, true)
    const topics = parsed.files.filter((file) => /topic-\d+\.md$/.test(file.path))
    assert.equal(topics.length, TOPICS, 'every file, whole')
    assert.ok(topics.every((file) => file.content.includes('kept in full.')))
    assert.ok(exported.body.length > 20_000_000, `${exported.body.length} bytes`)
  })
})

describe('engram serve: slow connections from many addresses, one each, do not keep a newcomer out', { timeout: 60_000 }, () => {
  let temp: TempHome
  let server: ServeProcess
  let port: number
  // Long timeouts, so what lets the newcomer in is the server's choice, not Node's 408.
  const headersMs = 8_000
  const cap = 8

  before(async () => {
    temp = makeTempHome('engram-serve-slow-many-')
    server = await startServe({
      home: temp.home,
      killAfterMs: 55_000,
      // The bounds are each process's (decision 0089): one process, so that they are the server's.
      args: ['--workers', '1'],
      env: {
        ...temp.env,
        ENGRAM_SERVE_TOKENS: `${ADMIN}=admin`,
        ENGRAM_SERVE_HEADERS_TIMEOUT_MS: String(headersMs),
        ENGRAM_SERVE_REQUEST_TIMEOUT_MS: String(headersMs + 2_000),
        ENGRAM_SERVE_MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT),
        ENGRAM_SERVE_MAX_CONNECTIONS: String(cap),
      },
    })
    port = Number(new URL(server.address).port)
  })
  after(async () => {
    await server?.stop('SIGKILL')
    temp?.cleanup()
  })

  test('a full server of connections that sent no whole request within a second: a newcomer takes the place of the oldest (503 to it)', async () => {
    // One slow connection from each of `cap` loopback addresses: every client holds as few as a newcomer would.
    const slow = Array.from({ length: cap }, (_, i) => trickle(port, i % 2 === 0 ? 'silent' : 'headers', { localAddress: `127.0.5.${1 + i}` }))
    await Promise.all(slow.map(connected))
    await sleep(PROBATION_GRACE_MS)
    const started = Date.now()
    const newcomer = await send(port, '/v1/health', { localAddress: '127.0.5.99', token: ADMIN })
    assert.equal(newcomer.status, 200, newcomer.body)
    assert.ok(Date.now() - started < headersMs / 2, `served after ${Date.now() - started} ms, not after the slow ones timed out`)
    const ends = await Promise.all(slow.map((t) => closedWithin(t, 500)))
    const cut = ends.filter((end) => end !== undefined)
    assert.equal(cut.length, 1, 'one slow connection made room')
    assert.equal(statusOf(cut[0]?.answer ?? ''), 503)
    assert.match(cut[0]?.answer ?? '', /sent no whole request/)
    for (const t of slow) t.socket.destroy()
  })
})
