// @slow: several real `engram serve` servers of 2 processes, with the official MCP client and a load of clients
/**
 * `engram serve` on several processes and its admission control (decision 0089), through the real
 * server in a child process. Every request of these clients goes on a connection of its own, so
 * the cluster hands them round both processes:
 * - official MCP client sessions over /mcp keep working whichever process a request lands on, and
 *   the session bounds (decision 0054) stay the server's: with serve.mcpSessionsPerCaller 2, a
 *   caller's third session closes its own first one, on any process;
 * - a dashboard login made on one process works on the other (decision 0051);
 * - a process that dies is replaced, and the server answers again, MCP included;
 * - SIGTERM while clients are mid-flight: the whole server exits 0 and everything answered 2xx is
 *   there after a restart;
 * - a busy process answers 503 with Retry-After and the API's error shape at once (over /mcp a
 *   JSON-RPC error the official client raises), never refuses the health probe, and takes the
 *   request again once it has room.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { type LoadRun, runClients, type ServeUser } from './support/serve-clients.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const USERS: ServeUser[] = ['ada', 'bob'].map((user) => ({ user, token: `${user}-workers-token-0123456789` }))
const TOKENS = USERS.map(({ user, token }) => `${token}=default:${user}`).join(',')

/** `fetch` on a new connection every time (`Connection: close`), so that the cluster deals the requests round its processes. */
async function freshFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input)
  const headers = new Headers(init.headers)
  const body = init.body === undefined || init.body === null ? undefined : String(init.body)
  return new Promise<Response>((resolve, reject) => {
    const outgoing = httpRequest(url, { method: init.method ?? 'GET', headers: { ...Object.fromEntries(headers), connection: 'close' }, agent: false }, (incoming) => {
      const chunks: Buffer[] = []
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
      incoming.on('end', () => {
        const answerHeaders = new Headers()
        for (const [name, value] of Object.entries(incoming.headers)) if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value)
        const status = incoming.statusCode ?? 500
        resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: answerHeaders }))
      })
      incoming.on('error', reject)
    })
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean }
const textOf = (result: CallResult): string => result.content.map((part) => part.text ?? '').join('\n')

async function connect(url: URL, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(url, { fetch: freshFetch, requestInit: { headers: { authorization: `Bearer ${token}` } } })
  const client = new Client({ name: 'engram-workers-test', version: '1.0.0' })
  await client.connect(transport)
  return client
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallResult
  assert.equal(result.isError, undefined, textOf(result))
  return textOf(result)
}

describe('engram serve --workers 2', { timeout: 240_000 }, () => {
  let temp: TempHome
  let server: ServeProcess
  before(async () => {
    temp = makeTempHome('engram-serve-workers-')
    server = await startServe({ home: temp.home, env: { ...temp.env, ENGRAM_SERVE_TOKENS: TOKENS, ENGRAM_SERVE_MCP_SESSIONS_PER_CALLER: '2' }, args: ['--workers', '2'], killAfterMs: 200_000 })
  })
  after(async () => {
    await server.stop('SIGKILL')
    temp.cleanup()
  })

  test('prints one start-up line for the whole server, naming its 2 processes', () => {
    assert.equal(server.started.workers, 2)
    assert.equal(server.started.tokens, 'configured')
  })

  test('official MCP client sessions of two users work across both processes; a caller\'s bound closes its own oldest session', async () => {
    const url = new URL(`${server.address}/mcp`)
    const [ada, bob] = USERS as [ServeUser, ServeUser]
    const adaFirst = await connect(url, ada.token)
    const bobOnly = await connect(url, bob.token)
    // Each call on a new connection: about half land on the process that does not hold the session.
    for (let round = 0; round < 6; round++) {
      await call(adaFirst, 'memorize', { entries: [{ text: `zqworkersada${round}: the ledger of round ${round} is kept by Ada`, kind: 'lesson' }] })
      await call(bobOnly, 'memorize', { entries: [{ text: `zqworkersbob${round}: the vault of round ${round} is kept by Bob`, kind: 'lesson' }] })
    }
    for (let round = 0; round < 6; round++) {
      assert.match(await call(adaFirst, 'search_memory', { query: `zqworkersada${round}` }), new RegExp(`zqworkersada${round}`))
      assert.doesNotMatch(await call(bobOnly, 'search_memory', { query: `zqworkersada${round}` }), /\] zqworkersada/, "Ada's lesson is not Bob's")
    }
    // Ada at her bound of 2: her third session closes her own least recently used one (the first), never Bob's.
    const adaSecond = await connect(url, ada.token)
    await call(adaSecond, 'search_memory', { query: 'ledger' })
    const adaThird = await connect(url, ada.token)
    await call(adaThird, 'search_memory', { query: 'ledger' })
    await assert.rejects(call(adaFirst, 'search_memory', { query: 'ledger' }), /404|does not exist/)
    assert.match(await call(bobOnly, 'search_memory', { query: 'zqworkersbob0' }), /zqworkersbob0/)
    await Promise.all([adaSecond, adaThird, bobOnly, adaFirst].map((client) => client.close().catch(() => {})))
  })

  test('a process that dies is replaced (logged) and the server goes on answering, MCP included', async () => {
    const children = readFileSync(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').trim().split(/\s+/).map(Number)
    assert.equal(children.length, 2, 'two serving processes')
    // The first of them answers /mcp: kill it, the one the others depend on.
    process.kill(children[0] as number, 'SIGKILL')
    const deadline = Date.now() + 60_000
    while (!/process \d \(pid \d+\) ended \(SIGKILL\); starting another in its place/.test(server.stderr()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    assert.match(server.stderr(), /ended \(SIGKILL\); starting another in its place/)
    const [ada] = USERS as [ServeUser]
    let client: Client | undefined
    while (client === undefined && Date.now() < deadline) {
      client = await connect(new URL(`${server.address}/mcp`), ada.token).catch(() => undefined)
      if (client === undefined) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.ok(client, 'MCP over HTTP is answered again once the new process listens')
    assert.match(await call(client, 'search_memory', { query: 'zqworkersada1' }), /\] zqworkersada1/)
    await client.close()
    for (let i = 0; i < 4; i++) assert.equal((await freshFetch(`${server.address}/v1/health`)).status, 200)
  })

  test('SIGTERM while 16 clients are mid-flight: the whole server exits 0 and every 2xx answer is there after a restart', async () => {
    let signalledAt = Number.POSITIVE_INFINITY
    const serving = server
    const signal = (run: LoadRun) => {
      if (signalledAt !== Number.POSITIVE_INFINITY || run.memorized.length < 32) return
      signalledAt = performance.now()
      void serving.stop('SIGTERM')
    }
    const bound = performance.now() + 60_000
    const run = await runClients({ address: serving.address, users: USERS, clients: 16, running: () => performance.now() < bound, stopOnRefused: true, run: 'wk', onProgress: signal })
    assert.ok(signalledAt < bound, 'the signal was sent')
    assert.equal(await serving.exited, 0, serving.stderr())
    assert.match(serving.stderr(), /process 0 stopped \(SIGTERM\)[\s\S]*stopped \(SIGTERM, 2 processes\)|process 1 stopped \(SIGTERM\)[\s\S]*stopped \(SIGTERM, 2 processes\)/)
    assert.equal(serving.stderr().match(/process \d stopped/g)?.length, 2, serving.stderr())
    assert.doesNotMatch(serving.stderr(), /still open after/)
    const failed = run.outcomes.filter((outcome) => typeof outcome.status === 'number' && outcome.status >= 300)
    assert.deepEqual(failed, [], run.failures.join('\n'))
    assert.equal(run.outcomes.filter((outcome) => outcome.status === 'refused' && outcome.sentAt + outcome.ms < signalledAt).length, 0, 'nothing fails before the signal')
    assert.ok(run.memorized.length >= 32)

    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    try {
      for (const turn of run.turns) assert.ok(await mind.turnProvenance({ sessionId: turn.session, turn: turn.turn }), `turn ${turn.session}#${turn.turn} is stored`)
    } finally {
      await mind.close()
    }
    server = await startServe({ home: temp.home, env: { ...temp.env, ENGRAM_SERVE_TOKENS: TOKENS }, args: ['--workers', '2'], killAfterMs: 120_000 })
    for (const lesson of run.memorized) {
      const answer = await freshFetch(`${server.address}/v1/search`, { method: 'POST', headers: { authorization: `Bearer ${lesson.user.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: lesson.tag, kinds: ['lesson'], limit: 5 }) })
      const body = (await answer.json()) as { hits: Array<{ text: string }> }
      assert.ok(body.hits.some((hit) => hit.text === lesson.text), `${lesson.user.user}'s lesson ${lesson.tag} is found after the restart`)
    }
  })
})

test('engram serve --workers 2: a process other than the first that ends before it listens is started again, and the server starts', { timeout: 120_000 }, async (t) => {
  const temp = makeTempHome('engram-serve-workers-restart-')
  let killed: number | undefined
  let watching: NodeJS.Timeout | undefined
  // The second process is forked once the first listens, and takes hundreds of milliseconds to open
  // the home: killed as soon as it appears, it ends before it listens.
  const watch = (pid: number) => {
    watching = setInterval(() => {
      try {
        const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
        if (killed === undefined && children.length >= 2) {
          killed = children[1] as number
          process.kill(killed, 'SIGKILL')
          clearInterval(watching)
        }
      } catch {
        // Not there yet, or already gone.
      }
    }, 2)
  }
  const server = await startServe({ home: temp.home, env: { ...temp.env, ENGRAM_SERVE_TOKENS: TOKENS }, args: ['--workers', '2'], killAfterMs: 100_000, onSpawn: watch })
  t.after(async () => {
    clearInterval(watching)
    await server.stop('SIGKILL')
    temp.cleanup()
  })
  assert.ok(killed !== undefined, 'the second process was seen and killed')
  assert.equal(server.started.workers, 2)
  assert.match(server.stderr(), /process 1 \(pid \d+\) ended before it listened \(SIGKILL\); starting another in its place/)
  const health = await freshFetch(`${server.address}/v1/health`)
  assert.equal(health.status, 200)
  assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
})

test('engram serve --workers 2 without tokens: a dashboard login made on one process works on the other', { timeout: 120_000 }, async (t) => {
  const temp = makeTempHome('engram-serve-workers-dash-')
  const server = await startServe({ home: temp.home, env: temp.env, args: ['--workers', '2'], killAfterMs: 100_000 })
  t.after(async () => {
    await server.stop('SIGKILL')
    temp.cleanup()
  })
  const exchange = await freshFetch(server.dashboard)
  assert.equal(exchange.status, 303)
  const place = exchange.headers.get('location') ?? ''
  const cookie = (exchange.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  assert.match(place, /^\/engram-\d+-[A-Za-z0-9_-]{22}\//)
  assert.match(cookie, /^engram_session=/)
  // Six pages on six connections: both processes take the session made by one of them.
  for (let page = 0; page < 6; page++) {
    const answer = await freshFetch(`${server.address}${place}`, { headers: { cookie } })
    const page = await answer.text()
    assert.equal(answer.status, 200, page)
    assert.match(page, /<meta name="engram-place"/, 'the page is served as the session\'s')
  }
  assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
})

test('a busy engram serve answers 503 with Retry-After at once, over /v1 and /mcp, and serves the health probe', { timeout: 120_000 }, async (t) => {
  const temp = makeTempHome('engram-serve-busy-')
  const [ada] = USERS as [ServeUser]
  const server = await startServe({
    home: temp.home,
    env: { ...temp.env, ENGRAM_SERVE_TOKENS: TOKENS, ENGRAM_SERVE_REQUESTS_IN_WORK: '1', ENGRAM_SERVE_REQUESTS_QUEUED: '0' },
    args: ['--workers', '1'],
    killAfterMs: 100_000,
  })
  t.after(async () => {
    await server.stop('SIGKILL')
    temp.cleanup()
  })
  const mcp = await connect(new URL(`${server.address}/mcp`), ada.token)
  const post = (path: string, body: Record<string, unknown>) => freshFetch(`${server.address}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ada.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  // Twelve turns begun at once against one place in work and none in the queue: the first is
  // answered, the ones that come while it is in work are refused, each at once.
  const burst = async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const started = performance.now()
      const answer = await post('/v1/turns/begin', { session: `busy-${i}`, message: `the ledger of round ${i}` })
      return { answer, ms: performance.now() - started }
    }))
    return answers
  }
  let answers = await burst()
  for (let attempt = 0; attempt < 10 && !answers.some(({ answer }) => answer.status === 503); attempt++) answers = await burst()
  const refusals = answers.filter(({ answer }) => answer.status === 503)
  assert.ok(refusals.length > 0, `a request beyond the bound is refused: ${answers.map(({ answer }) => answer.status)}`)
  assert.ok(answers.some(({ answer }) => answer.status === 200), 'the one in work is answered')
  assert.deepEqual([...new Set(answers.map(({ answer }) => answer.status))].sort(), [200, 503], 'nothing else than served or busy')
  t.diagnostic(`refusals answered in ${refusals.map(({ ms }) => ms.toFixed(1)).join(', ')} ms`)
  const [refusal] = refusals
  assert.equal(refusal?.answer.headers.get('retry-after'), '1')
  const refused = (await refusal?.answer.json()) as { ok: boolean; error: { code: string; message: string; fix: string } }
  assert.equal(refused.ok, false)
  assert.equal(refused.error.code, 'limit_exceeded')
  assert.match(refused.error.message, /busy/)
  assert.match(refused.error.fix, /Retry-After/)

  // Over /mcp: a JSON-RPC error the official client raises, saying so; the operators' probe is never refused.
  let mcpRefusal: Error | undefined
  for (let attempt = 0; attempt < 20 && mcpRefusal === undefined; attempt++) {
    const [, called, health] = await Promise.all([
      burst(),
      mcp.callTool({ name: 'search_memory', arguments: { query: 'ledger' } }).then(() => undefined, (error: Error) => error),
      new Promise((resolve) => setTimeout(resolve, 5)).then(() => freshFetch(`${server.address}/v1/health`)),
    ])
    assert.equal(health.status, 200, 'the health probe is answered while the server is busy')
    mcpRefusal = called
  }
  assert.ok(mcpRefusal, 'an MCP call that came while the server was busy was refused')
  assert.equal((mcpRefusal as Error & { code?: number }).code, 503)
  assert.match(mcpRefusal.message, /busy/)
  assert.match(mcpRefusal.message, /-32000/)

  // With room again, the same calls are answered.
  assert.ok((await call(mcp, 'search_memory', { query: 'ledger' })).length > 0)
  assert.equal((await post('/v1/turns/begin', { session: 'after', message: 'hello again' })).status, 200)
  await mcp.close()
  assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
})
