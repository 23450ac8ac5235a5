/**
 * The HTTP API of `engram serve` (decision 0038) through `app.request()` on a temp home:
 * every route, bad bodies answered 400 with the fix, bearer tokens (missing or wrong: 401), one
 * user's token naming another (403) and never seeing their memories, an administrator naming a
 * user, an oversized body (413), a cross-site POST refused; then the real `engram serve` in a child
 * process: a request, SIGTERM, exit 0, the memorized lesson there after reopening the home.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { checkBind, parseCredentials } from '../src/interfaces/http/credentials.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { ADA, ADMIN, AGENT, type App, assertError, openServeHome, type ServeHome, BOB, call, TOKENS } from './support/serve-app.ts'
import { startServe } from './support/serve-process.ts'

describe('engram serve: the HTTP API with tokens', () => {
  let home: ServeHome
  let app: App
  before(async () => {
    home = await openServeHome()
    app = home.app
  })
  after(() => home.close())

  test('health needs no token', async () => {
    const answer = await call(app, 'GET', '/v1/health')
    assert.equal(answer.status, 200)
    assert.equal(answer.body.ok, true)
  })

  test('a missing or wrong token is 401 with the fix', async () => {
    assertError(await call(app, 'GET', '/v1/status'), 401, 'unauthorized')
    assertError(await call(app, 'GET', '/v1/search?query=deploy', { token: 'not-a-token-of-this-server' }), 401, 'unauthorized')
    const response = await app.request('/v1/status', { headers: { host: '127.0.0.1' } })
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/)
  })

  test('a turn begins and ends for the token\'s user', async () => {
    const begun = await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 'ada-1', message: 'What do you remember about the Orion deploy?' } })
    assert.equal(begun.status, 200, JSON.stringify(begun.body))
    const turn = begun.body.turn
    assert.equal(turn.sessionId, 'ada-1')
    assert.equal(turn.user, 'ada')
    assert.equal(turn.number, 1)
    assert.equal(typeof turn.system, 'string')
    assert.ok(Array.isArray(turn.messages) && turn.messages.at(-1)?.content.includes('Orion'))
    assert.ok(turn.provenance && Array.isArray(turn.provenance.primed))
    assert.ok(turn.tools.some((tool: { name: string; inputSchema: unknown }) => tool.name === 'memorize' && typeof tool.inputSchema === 'object'))

    const ended = await call(app, 'POST', '/v1/turns/end', { token: ADA, body: { session: 'ada-1', turn: turn.number, reply: 'Nothing yet.' } })
    assert.equal(ended.status, 200, JSON.stringify(ended.body))
    assert.equal(ended.body.messageIds.length, 1)
    // Copilot confirmations travel with the turn over HTTP too (none wait in autopilot mode).
    assert.deepEqual([turn.confirmations, ended.body.confirmations], [[], []])
    assertError(await call(app, 'POST', '/v1/turns/end', { token: ADA, body: { session: 'ada-1', turn: turn.number, reply: 'Again.' } }), 400, 'invalid_argument')
    // Bob can neither end Ada's turn nor continue her conversation.
    assertError(await call(app, 'POST', '/v1/turns/end', { token: BOB, body: { session: 'ada-1', turn: 1, reply: 'x' } }), 404, 'not_found')
    assertError(await call(app, 'POST', '/v1/turns/begin', { token: BOB, body: { session: 'ada-1', message: 'hello' } }), 403, 'access_denied')
  })

  test('a compact turn leaves out the provenance and the system parts, which stay readable by the turn', async () => {
    const full = await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 'ada-compact', message: 'What was decided about the Orion deploy?' } })
    const compact = await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 'ada-compact', message: 'And who decided it?', compact: true } })
    assert.equal(compact.status, 200, JSON.stringify(compact.body))
    const turn = compact.body.turn
    assert.equal(turn.number, full.body.turn.number + 1)
    assert.equal(turn.provenance, undefined)
    assert.equal(turn.systemParts, undefined)
    // What a host calls its model with is all there: the prompt, the conversation, the tools, what waits for the user.
    assert.deepEqual(Object.keys(full.body.turn).filter((key) => key !== 'provenance' && key !== 'systemParts'), Object.keys(turn))
    assert.ok(turn.system.length > 0 && turn.messages.at(-1)?.content === 'And who decided it?')
    assert.deepEqual(turn.tools.map((tool: { name: string }) => tool.name), full.body.turn.tools.map((tool: { name: string }) => tool.name))
    // The provenance was stored with the turn all the same.
    const stored = await call(app, 'GET', `/v1/turns/ada-compact/${turn.number}`, { token: ADA })
    assert.equal(stored.status, 200, JSON.stringify(stored.body))
    assert.ok(Array.isArray(stored.body.turn.provenance.primed))
    assertError(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 'ada-compact', message: 'x', compact: 'yes' } }), 400, 'invalid_argument')
  })

  test('memorize and search act for the token\'s user; naming another user is refused', async () => {
    const saved = await call(app, 'POST', '/v1/memorize', { token: ADA, body: { entries: [{ text: 'The Orion staging deploy needs the VPN token refreshed every Monday.', kind: 'lesson' }] } })
    assert.equal(saved.status, 200, JSON.stringify(saved.body))
    assert.equal(saved.body.report.saved.length, 1)

    const found = await call(app, 'POST', '/v1/search', { token: ADA, body: { query: 'Orion VPN token', kinds: ['lesson'] } })
    assert.equal(found.status, 200, JSON.stringify(found.body))
    assert.ok(found.body.hits.some((hit: { text: string }) => hit.text.includes('Orion staging deploy')))
    const byGet = await call(app, 'GET', '/v1/search?query=Orion%20VPN&kinds=lesson&limit=5', { token: ADA })
    assert.equal(byGet.status, 200, JSON.stringify(byGet.body))
    assert.ok(byGet.body.hits.length > 0)

    // Bob's search never returns Ada's lesson, and his token may not name her.
    const bobs = await call(app, 'POST', '/v1/search', { token: BOB, body: { query: 'Orion VPN token' } })
    assert.equal(bobs.status, 200)
    assert.ok(!JSON.stringify(bobs.body.hits).includes('Orion staging deploy'))
    assertError(await call(app, 'POST', '/v1/search', { token: BOB, body: { query: 'Orion VPN token', user: 'ada' } }), 403, 'access_denied')
    assertError(await call(app, 'GET', '/v1/search?query=Orion&user=ada', { token: BOB }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/memorize', { token: BOB, body: { user: 'ada', entries: [{ text: 'Ada likes tea with lemon every afternoon.', kind: 'lesson' }] } }), 403, 'access_denied')
    // The agent's own token (no user) may not name a user either.
    assertError(await call(app, 'POST', '/v1/search', { token: AGENT, body: { query: 'Orion', user: 'ada' } }), 403, 'access_denied')

    // An administrator may.
    const asAdmin = await call(app, 'POST', '/v1/search', { token: ADMIN, body: { query: 'Orion VPN token', user: 'ada' } })
    assert.equal(asAdmin.status, 200, JSON.stringify(asAdmin.body))
    assert.ok(asAdmin.body.hits.some((hit: { text: string }) => hit.text.includes('Orion staging deploy')))
  })

  test('bad bodies are 400 with the fix', async () => {
    assertError(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { message: 'no session' } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/turns/end', { token: ADA, body: { session: 's', turn: 0, reply: 'x' } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/memorize', { token: ADA, body: { entries: [{ text: 'x', kind: 'opinion' }] } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/search', { token: ADA, body: { limit: 5 } }), 400, 'invalid_argument')
    assertError(await call(app, 'GET', '/v1/search?query=x&limit=500', { token: ADA }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/search', { token: ADA, raw: '{"query": ' }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/search', { token: ADA, raw: '[1, 2]' }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/turns/end', { token: ADA, body: { session: 'never-begun', turn: 1, reply: 'x' } }), 404, 'not_found')
    const notJson = await call(app, 'POST', '/v1/search', { token: ADA, raw: 'query=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    assert.equal(notJson.status, 415)
    assertError(await call(app, 'GET', '/v1/nothing-here', { token: ADA }), 404, 'not_found')
  })

  test('an oversized body is 413', async () => {
    const big = 'x'.repeat(1_100_000)
    assertError(await call(app, 'POST', '/v1/memorize', { token: ADA, raw: JSON.stringify({ entries: [{ text: big, kind: 'lesson' }] }) }), 413, 'limit_exceeded')
  })

  test("a tool's refusal is answered with the tool's own code, message and fix, not its text parsed (decision 0062)", async () => {
    const small = await openServeHome({ 'limits.toolInputChars': 500 })
    try {
      const answer = await call(small.app, 'POST', '/v1/memorize', { token: ADA, body: { entries: [{ text: 'y'.repeat(1_000), kind: 'lesson' }] } })
      assertError(answer, 413, 'limit_exceeded')
      assert.match(answer.body.error.message, /^memorize was called with an input of .* over the limit of 500 \(limits\.toolInputChars\)\.$/)
      assert.match(answer.body.error.fix, /ENGRAM_MAX_TOOL_INPUT_CHARS/)
    } finally {
      await small.close()
    }
  })

  test('a cross-site POST is refused', async () => {
    const body = { entries: [{ text: 'A page on another site wrote this lesson.', kind: 'lesson' }] }
    assertError(await call(app, 'POST', '/v1/memorize', { token: ADA, body, headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/memorize', { token: ADA, body, headers: { origin: 'https://evil.example' } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/memorize', { token: ADA, body, headers: { 'sec-fetch-site': 'same-site' } }), 403, 'access_denied')
    // Same origin passes.
    const same = await call(app, 'POST', '/v1/search', { token: ADA, body: { query: 'Orion' }, headers: { origin: 'http://127.0.0.1:7477', 'sec-fetch-site': 'same-origin' } })
    assert.equal(same.status, 200, JSON.stringify(same.body))
  })

  test('status is the agent\'s and an administrator\'s, not one user\'s', async () => {
    const status = await call(app, 'GET', '/v1/status', { token: ADMIN })
    assert.equal(status.status, 200, JSON.stringify(status.body))
    assert.equal(status.body.ok, true)
    assert.ok(status.body.status)
    assert.equal((await call(app, 'GET', '/v1/status', { token: AGENT })).status, 200)
    assertError(await call(app, 'GET', '/v1/status', { token: ADA }), 403, 'access_denied')
  })
})

describe('engram serve: loopback without tokens', () => {
  test('requests act as the agent alone, under a loopback Host only, and may not name a user', async (t) => {
    const temp = makeTempHome()
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    t.after(async () => {
      await mind.close()
      temp.cleanup()
    })
    const app = createServeApp({ mind })
    const saved = await call(app, 'POST', '/v1/memorize', { body: { entries: [{ text: 'The build cache of Orion lives on the second disk.', kind: 'lesson' }] } })
    assert.equal(saved.status, 200, JSON.stringify(saved.body))
    assert.equal((await call(app, 'GET', '/v1/search?query=Orion%20build%20cache')).body.hits.length > 0, true)
    assertError(await call(app, 'POST', '/v1/search', { body: { query: 'Orion', user: 'ada' } }), 403, 'access_denied')
    // A DNS name rebound to 127.0.0.1 is not loopback.
    assertError(await call(app, 'GET', '/v1/status', { headers: { host: 'attacker.example:7477' } }), 403, 'access_denied')
    assert.equal((await call(app, 'GET', '/v1/status', { headers: { host: 'localhost:7477' } })).status, 200)
  })

  test('a non-loopback bind without tokens is refused with the fix; bad token settings are named', () => {
    assert.throws(() => checkBind('0.0.0.0', parseCredentials(undefined)), (error: Error & { code?: string; fix?: string }) => error.code === 'config_invalid' && /serve\.tokens/.test(error.fix ?? ''))
    assert.doesNotThrow(() => checkBind('0.0.0.0', parseCredentials(TOKENS)))
    assert.doesNotThrow(() => checkBind('::1', parseCredentials(undefined)))
    assert.throws(() => parseCredentials('short=admin'), /shorter than 16/)
    assert.throws(() => parseCredentials('no-equals-sign-in-this-entry'), /not TOKEN=WHO/)
  })
})

test('`engram serve` serves, stops on SIGTERM with exit 0, and what it stored is there after reopening', async (t) => {
  const temp = makeTempHome()
  t.after(() => temp.cleanup())
  const server = await startServe({ home: temp.home, env: temp.env, killAfterMs: 60_000 })
  const { address } = server
  assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/)
  // With no tokens configured, the --json start-up line says so, as the human line does.
  assert.equal(server.started.tokens, 'none')
  assert.match(String(server.started.note), /no tokens: a request without one acts as the agent alone.*serve\.tokens/)
  const response = await fetch(`${address}/v1/memorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ entries: [{ text: 'The nightly Orion backup must finish before six in the morning.', kind: 'lesson' }] }),
  })
  const body = (await response.json()) as { ok: boolean }
  assert.equal(response.status, 200, JSON.stringify(body))
  assert.equal(await server.stop('SIGTERM'), 0, server.stderr())
  assert.match(server.stderr(), /stopped \(SIGTERM\)/)

  const mind = await openMindInternals({ home: temp.home, env: temp.env })
  try {
    const found = await mind.retriever.search('Orion nightly backup', { limit: 5, viewer: mind.scope().viewer, recordAccess: false })
    assert.ok(found.hits.some((hit) => hit.unit.text.includes('nightly Orion backup')), JSON.stringify(found.hits.map((hit) => hit.unit.text)))
  } finally {
    await mind.close()
  }
})

test('`engram serve --json` with tokens configured says so at start, with no note of an open server', async (t) => {
  const temp = makeTempHome()
  t.after(() => temp.cleanup())
  const server = await startServe({ home: temp.home, env: { ...temp.env, ENGRAM_SERVE_TOKENS: TOKENS }, killAfterMs: 60_000 })
  t.after(() => server.stop('SIGKILL'))
  assert.equal(server.started.tokens, 'configured')
  assert.equal(server.started.note, undefined)
})
