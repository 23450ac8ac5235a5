// @slow: engram serve and engram maintain processes in turn, one server stopped through its 5 s grace (about 20 s, mostly waiting)
/**
 * `/mcp` in `engram serve` reaches the end-of-turn work as `engram mcp` does (issue 26, decisions
 * 0045 and 0084), driven as a host runs it: the real `engram serve` in a child process, the
 * official MCP client over HTTP with two users' tokens, the model behind the fake OpenAI-compatible
 * server. SIGTERM ends both users' turns and each learns in their own tree; a server SIGKILLed
 * mid-turn leaves the turn to a later process (`engram maintain`), which finishes it once; a server
 * stopped while a post-mortem waits on the model exits within its grace, and a later `engram
 * maintain` does that work at once.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { answer, failThreeTimes, hangingFor, lessonFor, postMortemsFor, RULE, read, waitFor } from './support/mcp-learning.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
const ADA = 'ada-token-0123456789abcdef'
const BOB = 'bob-token-0123456789abcdef'

describe('/mcp in a real engram serve: a stop and a kill end every turn', () => {
  let tmp: TempHome
  let model: FakeOpenAiServer
  let env: Record<string, string>
  const rulesOf = (user: string): string => read(join(tmp.home, 'agents/default/users', user, 'memory/rules.md'))
  const lessonsOf = (user: string): string => read(join(tmp.home, 'agents/default/users', user, 'memory/lessons.md'))
  const start = (): Promise<ServeProcess> => startServe({ home: tmp.home, env })
  /** `engram maintain` in a process of its own: the jobs it ran. */
  const maintain = async (): Promise<Array<{ kind: string; status: string; session?: string; result?: Record<string, unknown> }>> => {
    const { stdout } = await run(process.execPath, [bin, 'maintain', '--home', tmp.home, '--json'], { env, cwd: root })
    return (JSON.parse(stdout) as { data: { jobs: Array<{ kind: string; status: string; session?: string; result?: Record<string, unknown> }> } }).data.jobs
  }

  async function connect(server: ServeProcess, token: string): Promise<Client> {
    const client = new Client({ name: 'engram-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.address}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    return client
  }

  before(async () => {
    tmp = makeTempHome('engram-serve-mcp-stop-')
    model = await startFakeOpenAiServer({ onChat: answer })
    env = { ...tmp.env, ENGRAM_SERVE_TOKENS: `${ADA}=default:ada, ${BOB}=default:bob`, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: model.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  })
  after(async () => {
    await model.close()
    tmp.cleanup()
  })

  test('SIGTERM ends both users\' open turns: each learns a rule and a lesson in their own tree', async () => {
    const server = await start()
    const ada = await connect(server, ADA)
    const bob = await connect(server, BOB)
    await failThreeTimes(ada, 'ada')
    await failThreeTimes(bob, 'bob')
    assert.equal(postMortemsFor(model, 'ada') + postMortemsFor(model, 'bob'), 0, 'nothing is learned while the turns go on')
    assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
    for (const [user, other] of [['ada', 'bob'], ['bob', 'ada']] as const) {
      assert.match(rulesOf(user), RULE)
      assert.ok(lessonsOf(user).includes(lessonFor(user)), lessonsOf(user))
      assert.ok(!lessonsOf(user).includes(lessonFor(other)), `${other}'s lesson is not in ${user}'s tree`)
      assert.equal(postMortemsFor(model, user), 1)
    }
    await Promise.all([ada.close(), bob.close()])
  })

  test('a server SIGKILLed mid-turn: a later engram maintain finishes that turn, once', async () => {
    const killed = await start()
    const ada = await connect(killed, ADA)
    await failThreeTimes(ada, 'cy')
    await killed.stop('SIGKILL')
    await ada.close().catch(() => {})
    assert.ok(!lessonsOf('ada').includes(lessonFor('cy')))

    const jobs = await maintain()
    const recovered = jobs.find((job) => job.kind === 'call-turn' && job.session === 'mcp:ada')
    assert.equal(recovered?.status, 'done', JSON.stringify(jobs))
    assert.equal(recovered?.result?.failures, 3)
    assert.match(rulesOf('ada'), RULE)
    assert.ok(lessonsOf('ada').includes(lessonFor('cy')), lessonsOf('ada'))
    assert.deepEqual((await maintain()).filter((job) => job.session === 'mcp:ada' && ['call-turn', 'error-learner'].includes(job.kind)), [], 'nothing left to do')
    assert.equal(postMortemsFor(model, 'cy'), 1, 'done once')
  })

  test('SIGTERM while a post-mortem waits on the model: the server exits within its grace, and a later engram maintain does the work at once', async () => {
    hangingFor.add('dee')
    const server = await start()
    const bob = await connect(server, BOB)
    await failThreeTimes(bob, 'dee')
    await bob.getPrompt({ name: 'primed_context', arguments: { message: 'Next question' } })
    await waitFor('the post-mortem to reach the model', () => postMortemsFor(model, 'dee') === 1)
    const stopping = performance.now()
    assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
    // The drain is immediate (no request in flight); the grace is 5 s, well inside the model's 60 s timeout.
    assert.ok(performance.now() - stopping < 15_000, `stopped in ${Math.round(performance.now() - stopping)} ms`)
    assert.match(rulesOf('bob'), RULE, 'the offline work was done before the model was asked')
    assert.ok(!lessonsOf('bob').includes(lessonFor('dee')))
    await bob.close().catch(() => {})

    hangingFor.delete('dee')
    // Handed back due now, not left under its 15-minute lease.
    const jobs = await maintain()
    assert.equal(jobs.find((job) => job.kind === 'error-learner' && job.session === 'mcp:bob')?.status, 'done', JSON.stringify(jobs))
    assert.ok(lessonsOf('bob').includes(lessonFor('dee')), lessonsOf('bob'))
    assert.equal(postMortemsFor(model, 'dee'), 2, 'asked once more, by the later process')
  })
})
