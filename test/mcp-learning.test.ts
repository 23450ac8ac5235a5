/**
 * An MCP session reaches the same end-of-turn and end-of-session work as a library session (issue
 * 26, decision 0045), driven as a host runs it: `engram mcp --user X` in a child process, the
 * official MCP client over stdio, the model behind the fake OpenAI-compatible server. Three failed
 * calls of one tool teach X a rule (pattern monitor) and a lesson (the error learner's post-mortem
 * model call) in X's tree, whichever way the turn ends: a new `primed_context`, the client
 * disconnecting, SIGTERM, or — the process SIGKILLed — a later `engram maintain`. At the idle
 * boundary X's session gets its episode and sleep replay sees its steps. Two users over two
 * connections keep their learning apart. `/mcp` in `engram serve` ends a session's turn on DELETE,
 * on its idle close and when the server shuts down; two quiet minutes end a turn too.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Hono } from 'hono'
import { ManualClock } from '../src/core/clock.ts'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { createMcpRoute } from '../src/interfaces/http/mcp-http.ts'
import type { ServeEnv } from '../src/interfaces/http/support.ts'
import { MCP_TURN_GAP_MS } from '../src/interfaces/mcp/mcp-turns.ts'
import { createMindMcpServer } from '../src/interfaces/mcp/mind-server.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { answer, failThreeTimes, hangingFor, lessonFor, listenOnLoopback, postMortemsFor, RULE, read, waitFor } from './support/mcp-learning.ts'
import { textOf } from './support/tool-calls.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

describe('engram mcp --user: passive learning, replay and episodes reach the user', () => {
  let tmp: TempHome
  let server: FakeOpenAiServer
  let env: Record<string, string>
  const userTree = (user: string): string => join(tmp.home, 'agents/default/users', user)
  const rulesOf = (user: string): string => read(join(userTree(user), 'memory/rules.md'))
  const lessonsOf = (user: string): string => read(join(userTree(user), 'memory/lessons.md'))
  const agentMemory = (): string => read(join(tmp.home, 'agents/default/memory/rules.md')) + read(join(tmp.home, 'agents/default/memory/lessons.md'))

  interface Connection {
    client: Client
    transport: StdioClientTransport
    closed: Promise<void>
    stderr: () => string
  }

  async function connect(user: string): Promise<Connection> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', tmp.home, '--user', user], env, cwd: root, stderr: 'pipe' })
    let stderr = ''
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    const client = new Client({ name: 'engram-test', version: '1.0.0' })
    const closed = new Promise<void>((resolveClosed) => {
      client.onclose = () => resolveClosed()
    })
    await client.connect(transport)
    return { client, transport, closed, stderr: () => stderr }
  }

  before(async () => {
    tmp = makeTempHome('engram-mcp-learning-')
    server = await startFakeOpenAiServer({ onChat: answer })
    env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  })
  after(async () => {
    await server.close()
    tmp.cleanup()
  })

  let ada: Connection
  test('a new primed_context ends the turn: a rule and a post-mortem lesson in the user\'s tree, not the agent\'s', async () => {
    ada = await connect('ada')
    await failThreeTimes(ada.client, 'ada')
    assert.equal(postMortemsFor(server, 'ada'), 0, 'nothing is learned while the turn goes on')
    await ada.client.getPrompt({ name: 'primed_context', arguments: { message: 'Where are my notes on the billing queue?' } })
    await waitFor('ada\'s rule and lesson', () => RULE.test(rulesOf('ada')) && lessonsOf('ada').includes(lessonFor('ada')))
    assert.equal(postMortemsFor(server, 'ada'), 1, 'one post-mortem for the turn')
    assert.doesNotMatch(agentMemory(), /fails twice in a row|learned with/, 'nothing of ada\'s turn is the agent\'s')
  })

  test('a client that disconnects ends its turn; two users over two connections keep their learning apart', async () => {
    const bob = await connect('bob')
    await failThreeTimes(bob.client, 'bob')
    await bob.client.close()
    await waitFor('bob\'s rule and lesson', () => RULE.test(rulesOf('bob')) && lessonsOf('bob').includes(lessonFor('bob')))
    assert.equal(postMortemsFor(server, 'bob'), 1)
    assert.ok(!lessonsOf('bob').includes(lessonFor('ada')), 'ada\'s lesson is not in bob\'s tree')
    assert.ok(!lessonsOf('ada').includes(lessonFor('bob')), 'bob\'s lesson is not in ada\'s tree')
    assert.doesNotMatch(agentMemory(), /learned with/)
    // And each one's MCP session sees only their own lesson.
    const search = await ada.client.callTool({ name: 'search_memory', arguments: { query: 'exact note name before read_memory_file' } })
    assert.match(textOf(search), /learned with ada/)
    assert.doesNotMatch(textOf(search), /learned with bob/)
  })

  test('SIGTERM ends the turn before the process exits', async () => {
    const cy = await connect('cy')
    await failThreeTimes(cy.client, 'cy')
    const pid = cy.transport.pid
    assert.ok(pid)
    process.kill(pid, 'SIGTERM')
    await cy.closed
    assert.match(cy.stderr(), /session ended \(signal\)/)
    // The rule is learned offline before the process exits; the post-mortem asks the model within
    // the grace, or is handed back to the queue for the next maintain (the next test shows that).
    assert.match(rulesOf('cy'), RULE)
    assert.ok(postMortemsFor(server, 'cy') >= 1)
    if (!lessonsOf('cy').includes(lessonFor('cy'))) await run(process.execPath, [bin, 'maintain', '--home', tmp.home, '--json'], { env, cwd: root })
    assert.ok(lessonsOf('cy').includes(lessonFor('cy')), lessonsOf('cy'))
  })

  test('SIGTERM while the post-mortem waits on the model: the work goes back to the queue, and the next engram maintain does it at once', async () => {
    hangingFor.add('eve')
    const eve = await connect('eve')
    await failThreeTimes(eve.client, 'eve')
    await eve.client.getPrompt({ name: 'primed_context', arguments: { message: 'Next question' } })
    await waitFor('the post-mortem to reach the model', () => postMortemsFor(server, 'eve') === 1)
    const pid = eve.transport.pid
    assert.ok(pid)
    const stopping = performance.now()
    process.kill(pid, 'SIGTERM')
    await eve.closed
    assert.ok(performance.now() - stopping < 5_000, 'a stopped server does not wait for the model')
    assert.ok(!lessonsOf('eve').includes(lessonFor('eve')))

    hangingFor.delete('eve')
    const { stdout } = await run(process.execPath, [bin, 'maintain', '--home', tmp.home, '--json'], { env, cwd: root })
    const jobs = (JSON.parse(stdout) as { data: { jobs: Array<{ kind: string; status: string; session?: string }> } }).data.jobs
    assert.equal(jobs.find((job) => job.kind === 'error-learner' && job.session === 'mcp:eve')?.status, 'done', JSON.stringify(jobs))
    assert.ok(lessonsOf('eve').includes(lessonFor('eve')), lessonsOf('eve'))
    assert.equal(postMortemsFor(server, 'eve'), 2, 'asked once more, by the later process')
  })

  test('a client that closes while the post-mortem waits on the model: its SIGTERM two seconds later hands the work back to the queue', async () => {
    hangingFor.add('fay')
    const fay = await connect('fay')
    await failThreeTimes(fay.client, 'fay')
    // The SDK's close: stdin ends, then SIGTERM after 2 s if the server still runs, SIGKILL 2 s later.
    await fay.client.close()
    await fay.closed
    assert.match(fay.stderr(), /session ended \(stdin_closed\)/, 'stopped by the SIGTERM, not killed')
    assert.match(rulesOf('fay'), RULE, 'the offline work was done before the model was asked')
    assert.equal(postMortemsFor(server, 'fay'), 1)

    hangingFor.delete('fay')
    const { stdout } = await run(process.execPath, [bin, 'maintain', '--home', tmp.home, '--json'], { env, cwd: root })
    const jobs = (JSON.parse(stdout) as { data: { jobs: Array<{ kind: string; status: string; session?: string }> } }).data.jobs
    assert.equal(jobs.find((job) => job.kind === 'error-learner' && job.session === 'mcp:fay')?.status, 'done', JSON.stringify(jobs))
    assert.ok(lessonsOf('fay').includes(lessonFor('fay')), lessonsOf('fay'))
  })

  test('a process SIGKILLed mid-turn: a later engram maintain does the turn\'s work, once', async () => {
    const dee = await connect('dee')
    await failThreeTimes(dee.client, 'dee')
    const pid = dee.transport.pid
    assert.ok(pid)
    process.kill(pid, 'SIGKILL')
    await dee.closed
    assert.equal(rulesOf('dee'), '')
    assert.equal(postMortemsFor(server, 'dee'), 0)

    const { stdout } = await run(process.execPath, [bin, 'maintain', '--home', tmp.home, '--json'], { env, cwd: root })
    const jobs = (JSON.parse(stdout) as { data: { jobs: Array<{ kind: string; status: string; session?: string; result?: Record<string, unknown> }> } }).data.jobs
    const recovered = jobs.find((job) => job.kind === 'call-turn' && job.session === 'mcp:dee')
    assert.equal(recovered?.status, 'done', JSON.stringify(jobs))
    assert.equal(recovered?.result?.failures, 3)
    // The turns ended by their connections (bob's, cy's; ada's still open in a live process) are left alone.
    assert.deepEqual(jobs.filter((job) => job.kind === 'call-turn' && job.status === 'done').map((job) => job.session), ['mcp:dee'])
    assert.match(rulesOf('dee'), RULE)
    assert.ok(lessonsOf('dee').includes(lessonFor('dee')), lessonsOf('dee'))
    assert.equal(postMortemsFor(server, 'dee'), 1)

    // Done once: another maintain finds nothing of the turn to do.
    const again = await run(process.execPath, [bin, 'maintain', '--home', tmp.home, '--json'], { env, cwd: root })
    const second = (JSON.parse(again.stdout) as { data: { jobs: Array<{ kind: string; session?: string }> } }).data.jobs
    assert.deepEqual(second.filter((job) => job.session === 'mcp:dee' && ['call-turn', 'error-learner', 'pattern-monitor'].includes(job.kind)), [])
    assert.equal(postMortemsFor(server, 'dee'), 1)
  })

  test('at the idle boundary the user\'s MCP session gets its episode, and sleep replay sees its steps', async () => {
    await ada.client.close()
    // A later process, eleven minutes on: the session has been idle past the boundary.
    const clock = new ManualClock(new Date(Date.now() + 11 * 60_000).toISOString())
    const mind = await openMindInternals({ home: tmp.home, env, clock, ignoreConfigFile: true })
    try {
      const record = await mind.sessions.get('mcp:ada')
      assert.equal(record?.user, 'ada', 'the session record names the user the connection acts for')
      const report = await mind.maintain()
      const ofAda = report.jobs.filter((job) => job.session === 'mcp:ada')
      const replay = ofAda.find((job) => job.kind === 'sleep-replay')
      assert.equal(replay?.status, 'done', JSON.stringify(ofAda))
      assert.ok(Number(replay?.result?.steps) >= 3, JSON.stringify(replay))
      const encoding = report.boundaries.find((boundary) => boundary.session === 'mcp:ada')
      assert.equal(encoding?.kind, 'recorded', JSON.stringify(report.boundaries))
      const episodes = join(userTree('ada'), 'episodes')
      const days = readdirSync(episodes)
      assert.ok(days.some((day) => read(join(episodes, day)).includes('Looking for notes that were not there')), days.join(', '))
      assert.ok(!existsSync(join(tmp.home, 'agents/default/episodes')) || !readdirSync(join(tmp.home, 'agents/default/episodes')).some((day) => read(join(tmp.home, 'agents/default/episodes', day)).includes('mcp:ada')))
    } finally {
      await mind.close()
    }
  })
})

/** Three failed calls of one tool, through any MCP client. */
describe('/mcp in engram serve ends its sessions\' turns as engram mcp does', () => {
  let tmp: TempHome
  let server: FakeOpenAiServer
  let mind: MindInternals
  const rulesOf = (user: string): string => read(join(tmp.home, 'agents/default/users', user, 'memory/rules.md'))
  const lessonsOf = (user: string): string => read(join(tmp.home, 'agents/default/users', user, 'memory/lessons.md'))

  before(async () => {
    tmp = makeTempHome('engram-serve-mcp-learning-')
    server = await startFakeOpenAiServer({ onChat: answer })
    const env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
    mind = await openMindInternals({ home: tmp.home, env, ignoreConfigFile: true })
  })
  after(async () => {
    await mind.close().catch(() => {})
    await server.close()
    tmp.cleanup()
  })

  test('DELETE of the session (a client ending it) ends its turn', async () => {
    const token = 'ada-token-0123456789abcdef'
    const app = createServeApp({ mind, credentials: parseCredentials(`${token}=default:ada`) })
    const { port, close } = await listenOnLoopback(app.fetch)
    try {
      const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
      const client = new Client({ name: 'engram-test', version: '1.0.0' })
      await client.connect(transport)
      await failThreeTimes(client, 'ada')
      await transport.terminateSession()
      await client.close()
      await waitFor('ada\'s rule and lesson', () => RULE.test(rulesOf('ada')) && lessonsOf('ada').includes(lessonFor('ada')))
      assert.equal(postMortemsFor(server, 'ada'), 1)
    } finally {
      await close()
    }
  })

  test('an idle session closed by the server, and one open when the server shuts down, end their turns', async () => {
    // A token-less rig sets the principal, as the app's checks would, to reach the idle limit.
    let user = 'bob'
    const app = new Hono<ServeEnv>()
    app.use('*', async (c, next) => {
      c.set('principal', { agent: 'default', user, admin: false })
      return next()
    })
    app.route('/mcp', createMcpRoute({ mind, idleMs: 300 }))
    const fetchApp = ((input: string | URL | Request, init?: RequestInit) => app.request(input instanceof Request ? input : String(input), init)) as typeof fetch
    const connect = async (): Promise<Client> => {
      const client = new Client({ name: 'engram-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch: fetchApp }))
      return client
    }

    const bob = await connect()
    await failThreeTimes(bob, 'bob')
    await waitFor('bob\'s rule and lesson after the idle close', () => RULE.test(rulesOf('bob')) && lessonsOf('bob').includes(lessonFor('bob')))
    assert.equal(postMortemsFor(server, 'bob'), 1)

    user = 'cy'
    const cy = await connect()
    await failThreeTimes(cy, 'cy')
    // engram serve on SIGTERM: the mind closes, its MCP sessions first.
    await mind.close()
    assert.match(rulesOf('cy'), RULE)
    assert.ok(lessonsOf('cy').includes(lessonFor('cy')), lessonsOf('cy'))
    assert.equal(postMortemsFor(server, 'cy'), 1)
    await Promise.all([bob.close(), cy.close()])
  })
})

test('two quiet minutes end an MCP turn: its work is queued when the next call comes', async (t) => {
  const tmp = makeTempHome('engram-mcp-gap-')
  const server = await startFakeOpenAiServer({ onChat: answer })
  const clock = new ManualClock('2026-05-04T09:00:00Z')
  const env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  const mind = await openMindInternals({ home: tmp.home, env, clock, ignoreConfigFile: true })
  t.after(async () => {
    await mind.close()
    await server.close()
    tmp.cleanup()
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'engram-test', version: '1.0.0' })
  await Promise.all([createMindMcpServer(mind, { session: { sessionId: 'mcp:ada', user: 'ada' } }).connect(serverSide), client.connect(clientSide)])
  await failThreeTimes(client, 'ada')
  await mind.idle()
  assert.equal(postMortemsFor(server, 'ada'), 0, 'the turn goes on')
  clock.advance(MCP_TURN_GAP_MS)
  await client.callTool({ name: 'search_memory', arguments: { query: 'billing queue' } })
  await mind.idle()
  assert.equal(postMortemsFor(server, 'ada'), 1)
  assert.match(read(join(tmp.home, 'agents/default/users/ada/memory/rules.md')), RULE)
  // The call after the gap is a new turn: closing the connection ends it, with nothing to learn.
  await client.close()
  await mind.idle()
  assert.equal(postMortemsFor(server, 'ada'), 1)
})
