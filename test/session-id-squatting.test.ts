/**
 * Session ids the interfaces derive for a user cannot be taken by another (decision
 * 0054). Carol's MCP connection works on `mcp:carol`, the HTTP API's tools on
 * `http:carol`; a session id belongs to whoever opens it first, so Bob beginning a turn there
 * would lock Carol out of her own conversation. Refused, before anything is stored, through every
 * path: `engram serve` in a child process (HTTP /v1/turns/begin, and the official MCP client over
 * HTTP for Carol's side), `engram mcp --session` over stdio, and the library (`createMind` →
 * `mind.session(id, { user })`, a new Session per turn) on both backends.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { EngramError } from '../src/core/errors.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

const CAROL = 'carol-token-0123456789abcdef'
const BOB = 'bob-token-0123456789abcdef'
const AGENT = 'agent-token-0123456789abcd'
const ADMIN = 'admin-token-0123456789abcd'
const TOKENS = `${CAROL}=default:carol, ${BOB}=default:bob, ${AGENT}=default, ${ADMIN}=admin`

type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean }
const textOf = (result: CallResult): string => result.content.map((part) => part.text ?? '').join('\n')

// biome-ignore lint/suspicious/noExplicitAny: the answers are JSON of many shapes; each check reads the fields it needs.
type Json = any

/** Refused as the reserved id of another user, saying whose it is. */
function isReservedRefusal(error: unknown): boolean {
  return EngramError.is(error) && error.code === 'access_denied' && /is the id engram's (MCP|HTTP) interface uses for/.test(error.message)
}

describe('engram serve: Bob cannot begin turns in the session ids derived for Carol', () => {
  let temp: TempHome
  let server: ServeProcess
  const post = async (token: string, path: string, body: unknown): Promise<{ status: number; body: Json }> => {
    const response = await fetch(`${server.address}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: response.status, body: await response.json() }
  }
  before(async () => {
    temp = makeTempHome('engram-squat-serve-')
    // The memory tool is among every agent tool (mcp.tools: all), not the essential set.
    server = await startServe({ home: temp.home, env: { ...temp.env, ENGRAM_SERVE_TOKENS: TOKENS, ENGRAM_MCP_TOOLS: 'all' }, killAfterMs: 240_000 })
  })
  after(async () => {
    await server.stop()
    temp.cleanup()
  })

  test('403 before anything is stored; Carol\'s MCP memory tool and her HTTP turns work afterwards', async () => {
    const attempts: Array<[string, string]> = [
      [BOB, 'mcp:carol'],
      [BOB, 'http:carol'],
      // The ids of the agent alone (engram mcp without --user, the API's agent token).
      [BOB, 'mcp'],
      [BOB, 'http'],
      // The agent's own token is no user, so Carol's ids are not its either.
      [AGENT, 'mcp:carol'],
      [AGENT, 'http:carol'],
    ]
    for (const [token, session] of attempts) {
      const answer = await post(token, '/v1/turns/begin', { session, message: 'zqsquatted please remember my parcel code 4471' })
      assert.equal(answer.status, 403, `${session}: ${JSON.stringify(answer.body)}`)
      assert.equal(answer.body.error.code, 'access_denied')
      assert.match(answer.body.error.message, new RegExp(`Session "${session}" is the id engram's (MCP|HTTP) interface uses for`))
      assert.match(answer.body.error.fix, /session id of your own/)
    }
    // What priming would inject for such a session is refused too.
    assert.equal((await post(BOB, '/v1/recall', { message: 'parcel code', session: 'mcp:carol' })).status, 403)

    // Nothing of the refused turns was stored: neither Bob nor the agent finds the message.
    for (const token of [BOB, AGENT]) {
      const found = await post(token, '/v1/search', { query: 'zqsquatted parcel' })
      assert.equal(found.status, 200, JSON.stringify(found.body))
      assert.doesNotMatch(JSON.stringify(found.body.hits), /zqsquatted/)
    }

    // Carol's own MCP connection (the official client over HTTP) works on mcp:carol.
    const transport = new StreamableHTTPClientTransport(new URL(`${server.address}/mcp`), { requestInit: { headers: { authorization: `Bearer ${CAROL}` } } })
    const carol = new Client({ name: 'engram-test', version: '1.0.0' })
    await carol.connect(transport)
    try {
      const status = (await carol.callTool({ name: 'memory', arguments: { action: 'status' } })) as CallResult
      assert.equal(status.isError, undefined, textOf(status))
      assert.match(textOf(status), /^0 messages/)
      // Her HTTP turns in both of her ids, and an administrator acting for her.
      for (const [token, session] of [[CAROL, 'mcp:carol'], [CAROL, 'http:carol'], [ADMIN, 'http:carol']] as const) {
        const begun = await post(token, '/v1/turns/begin', { session, message: `zqcarol my locker is 12 (${session})`, ...(token === ADMIN ? { user: 'carol' } : {}) })
        assert.equal(begun.status, 200, `${session}: ${JSON.stringify(begun.body)}`)
        assert.equal(begun.body.turn.sessionId, session)
      }
      const after = (await carol.callTool({ name: 'memory', arguments: { action: 'status' } })) as CallResult
      assert.equal(after.isError, undefined, textOf(after))
      assert.match(textOf(after), /^1 messages/, 'her MCP conversation holds the turn she began over HTTP in mcp:carol')
      const searched = (await carol.callTool({ name: 'memory', arguments: { action: 'search', query: 'zqcarol locker' } })) as CallResult
      assert.equal(searched.isError, undefined, textOf(searched))
      assert.match(textOf(searched), /my locker is 12/)
    } finally {
      await carol.close()
    }

    // Bob's own derived id is his.
    assert.equal((await post(BOB, '/v1/turns/begin', { session: 'mcp:bob', message: 'hello' })).status, 200)
  })
})

describe('engram mcp: --session naming another user\'s derived id', () => {
  test('is refused at start with the reason; Carol\'s own connection then works', async () => {
    const temp = makeTempHome('engram-squat-stdio-')
    try {
      const refused = spawnSync(process.execPath, [bin, 'mcp', '--home', temp.home, '--user', 'bob', '--session', 'mcp:carol'], { env: temp.env, cwd: root, input: '', encoding: 'utf8', timeout: 60_000 })
      assert.notEqual(refused.status, 0)
      // The CLI's error envelope, as for any failure to start (no protocol was served).
      const envelope = JSON.parse(refused.stdout) as { ok: boolean; error: { code: string; message: string } }
      assert.equal(envelope.ok, false)
      assert.equal(envelope.error.code, 'access_denied')
      assert.match(envelope.error.message, /Session "mcp:carol" is the id engram's MCP interface uses for user "carol"; user "bob" cannot open it/)

      const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', temp.home, '--user', 'carol'], env: { ...temp.env, ENGRAM_MCP_TOOLS: 'all' }, cwd: root, stderr: 'pipe' })
      const carol = new Client({ name: 'engram-test', version: '1.0.0' })
      await carol.connect(transport)
      try {
        const saved = (await carol.callTool({ name: 'memory', arguments: { action: 'status' } })) as CallResult
        assert.equal(saved.isError, undefined, textOf(saved))
      } finally {
        await carol.close()
      }
    } finally {
      temp.cleanup()
    }
  })
})

/** The library path on one backend: `env` opens the home on it. */
async function libraryScenario(temp: TempHome, env: Record<string, string>): Promise<void> {
  const mind = await openMindInternals({ home: temp.home, env, ignoreConfigFile: true })
  try {
    assert.equal(mind.backend.name === 'postgres', env.ENGRAM_DATABASE_URL !== undefined)
    // A new Session object per attempt, as a host makes one per turn.
    const refusals: Array<[string, string | undefined]> = [
      ['mcp:carol', 'bob'],
      ['http:carol', 'bob'],
      ['mcp', 'bob'],
      ['mcp:carol', undefined],
    ]
    for (const [id, user] of refusals) {
      const options = user !== undefined ? { user } : {}
      await assert.rejects(mind.session(id, options).begin('zqsquatted remember parcel 4471'), isReservedRefusal, `${id} as ${user}`)
      await assert.rejects(mind.session(id, options).beginCalls(), isReservedRefusal)
      await assert.rejects(mind.session(id, options).close(), isReservedRefusal)
      const call = await mind.session(id, options).execute('memory', { action: 'status' })
      assert.equal(call.isError, true)
      assert.match(call.text, /is the id engram's (MCP|HTTP) interface uses for/)
      await assert.rejects(mind.context.append({ sessionId: id, agent: mind.agent, ...options }, [{ role: 'user', content: 'zqsquatted' }]), isReservedRefusal)
    }
    // Nothing was stored under Carol's id: no session record, no conversation.
    assert.equal(await mind.sessions.get('mcp:carol'), null)
    assert.equal(await mind.backend.context.findConversation('mcp:carol', mind.agent), null)

    // Carol's own turns there, each on a new Session object, and her memory tool over it.
    const first = await mind.session('mcp:carol', { user: 'carol' }).begin('zqcarol my locker is 12')
    assert.equal(first.number, 1)
    const second = await mind.session('mcp:carol', { user: 'carol' }).begin('and my desk is 7')
    assert.equal(second.number, 2)
    const status = await mind.session('mcp:carol', { user: 'carol' }).execute('memory', { action: 'status' })
    assert.equal(status.isError, undefined, status.text)
    assert.match(status.text, /^2 messages/)
    assert.equal((await mind.sessions.get('mcp:carol'))?.user, 'carol')
    // Bob still cannot, now that it exists.
    await assert.rejects(mind.session('mcp:carol', { user: 'bob' }).begin('hi'), isReservedRefusal)
    // Ids of any other form are anyone's, first come (decision 0017).
    assert.equal((await mind.session('bob-notes', { user: 'bob' }).begin('hello')).number, 1)
  } finally {
    await mind.close()
  }
}

describe('the library: mind.session(id, { user }) on an id derived for another user', () => {
  test('on the embedded home: refused before anything is stored; Carol\'s own turns work', async (t) => {
    const temp = makeTempHome('engram-squat-lib-')
    t.after(temp.cleanup)
    await libraryScenario(temp, temp.env)
  })

  onPostgres('refused before anything is stored', (url) => {
    test('on PostgreSQL: refused before anything is stored; Carol\'s own turns work', async (t) => {
      const temp = makeTempHome('engram-squat-lib-pg-')
      t.after(temp.cleanup)
      await libraryScenario(temp, { ...temp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: freshSchema() })
    })
  })
})
