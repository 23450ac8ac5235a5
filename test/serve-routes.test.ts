/**
 * The rest of `engram serve`'s API (decision 0038) through `app.request()` on temp homes with two
 * users, ada and bob: recall (what priming injects, and why), the memory context, a past turn's
 * provenance, confirmations, forget and restore, export, erasing a user, and the OpenAPI document — each proving
 * that ada's token never reads or changes bob's memories, by naming him or by guessing ids; bad
 * bodies 400 with the fix; no token 401. Then the browser's token: ?token= becomes a session of
 * this server's own place (decision 0051), never a bearer token or a cookie the API reads.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { after, before, describe, test } from 'node:test'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials, withDashboardToken } from '../src/interfaces/http/credentials.ts'
import { openApiPath } from '../src/interfaces/http/openapi.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { ADA, ADMIN, AGENT, type App, assertError, openServeHome, type ServeHome, assertOk, BOB, call, type Json, TOKENS } from './support/serve-app.ts'

const ADA_LESSON = 'The Orion staging deploy needs the VPN token refreshed every Monday.'
const BOB_LESSON = 'The Orion billing export runs on the Lyra cluster after midnight.'
const ADA_RULE = 'Answer Ada with short bullet points about Orion.'

async function memorize(app: App, token: string, text: string, kind: string): Promise<void> {
  const saved = assertOk(await call(app, 'POST', '/v1/memorize', { token, body: { entries: [{ text, kind }] } }))
  assert.equal(saved.report.saved.length, 1, JSON.stringify(saved.report))
}

describe('engram serve: recall, context, turns, forget, restore, export', () => {
  let home: ServeHome
  let mind: MindInternals
  let app: App
  before(async () => {
    home = await openServeHome()
    ;({ mind, app } = home)
    await memorize(app, ADA, ADA_LESSON, 'lesson')
    await memorize(app, ADA, ADA_RULE, 'always')
    await memorize(app, BOB, BOB_LESSON, 'lesson')
  })
  after(() => home.close())

  test('every new route wants a token', async () => {
    for (const [method, path, body] of [
      ['POST', '/v1/recall', { message: 'Orion' }],
      ['GET', '/v1/context'],
      ['GET', '/v1/turns/ada-1/1'],
      ['GET', '/v1/confirmations'],
      ['POST', '/v1/confirmations/1/accept', {}],
      ['POST', '/v1/confirmations/1/reject', {}],
      ['POST', '/v1/forget', { target: ADA_LESSON }],
      ['POST', '/v1/restore', { target: ADA_LESSON }],
      ['GET', '/v1/export'],
    ] as const) {
      assertError(await call(app, method, path, body !== undefined ? { body } : {}), 401, 'unauthorized')
      assertError(await call(app, method, path, { token: 'not-a-token-of-this-server', ...(body !== undefined ? { body } : {}) }), 401, 'unauthorized')
    }
  })

  test("recall shows what priming injects for the token's user, with sources and score terms; never another user's", async () => {
    const ada = assertOk(await call(app, 'POST', '/v1/recall', { token: ADA, body: { message: 'How does the Orion staging deploy work with the VPN token?' } }))
    assert.equal(ada.user, 'ada')
    assert.match(ada.recall.text, /VPN token refreshed/)
    const item = ada.recall.injected.find((entry: Json) => entry.channel === 'related' && String(entry.source).includes('users/ada'))
    assert.ok(item, JSON.stringify(ada.recall.injected))
    assert.ok(Object.keys(item.why).length > 0, 'an injected memory says why it was recalled')
    assert.equal(typeof ada.recall.budget, 'number')
    assert.equal(typeof ada.recall.shares.related, 'number')
    assert.doesNotMatch(JSON.stringify(ada.recall), /Lyra cluster/)

    const bob = assertOk(await call(app, 'POST', '/v1/recall', { token: BOB, body: { message: 'How does the Orion staging deploy work with the VPN token?' } }))
    assert.doesNotMatch(JSON.stringify(bob.recall), /VPN token refreshed/)
    assertError(await call(app, 'POST', '/v1/recall', { token: BOB, body: { message: 'Orion VPN', user: 'ada' } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/recall', { token: AGENT, body: { message: 'Orion VPN', user: 'ada' } }), 403, 'access_denied')
    // An administrator may look as ada.
    const admin = assertOk(await call(app, 'POST', '/v1/recall', { token: ADMIN, body: { message: 'How does the Orion staging deploy work with the VPN token?', user: 'ada' } }))
    assert.match(admin.recall.text, /VPN token refreshed/)

    // inspect: the same look, and what it shows is not counted as accessed.
    const id = String(item.id)
    const [before] = await mind.backend.index.get([id])
    const looked = assertOk(await call(app, 'POST', '/v1/recall', { token: ADA, body: { message: 'How does the Orion staging deploy work with the VPN token?', inspect: true } }))
    assert.ok(looked.recall.injected.some((entry: Json) => entry.id === id))
    const [afterLook] = await mind.backend.index.get([id])
    assert.equal(afterLook?.accessCount, before?.accessCount, 'a look is not an access')
    assertError(await call(app, 'POST', '/v1/recall', { token: ADA, body: { message: 'Orion', inspect: 'yes' } }), 400, 'invalid_argument')

    assertError(await call(app, 'POST', '/v1/recall', { token: ADA, body: { session: 'x' } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/recall', { token: ADA, body: { message: '' } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/recall', { token: ADA, raw: '"just a string"' }), 400, 'invalid_argument')
  })

  test("the memory context is the token's user's: her rule and lessons, not bob's", async () => {
    const ada = assertOk(await call(app, 'GET', '/v1/context', { token: ADA }))
    assert.match(ada.context.text, /short bullet points about Orion/)
    assert.ok(Array.isArray(ada.context.sections) && Array.isArray(ada.state.sections))
    const bob = assertOk(await call(app, 'GET', '/v1/context', { token: BOB }))
    assert.doesNotMatch(bob.context.text, /short bullet points/)
    assertError(await call(app, 'GET', '/v1/context?user=ada', { token: BOB }), 403, 'access_denied')
    const admin = assertOk(await call(app, 'GET', '/v1/context?user=ada', { token: ADMIN }))
    assert.match(admin.context.text, /short bullet points about Orion/)
    assertError(await call(app, 'GET', `/v1/context?user=${'x'.repeat(300)}`, { token: ADMIN }), 400, 'invalid_argument')
  })

  test("a past turn's provenance is its user's only; another user's is 404, naming her 403", async () => {
    const begun = assertOk(await call(app, 'POST', '/v1/turns/begin', { token: ADA, body: { session: 'ada-s1', message: 'Remind me about the Orion staging deploy and the VPN token.' } }))
    const number = begun.turn.number as number
    const stored = assertOk(await call(app, 'GET', `/v1/turns/ada-s1/${number}`, { token: ADA }))
    assert.equal(stored.turn.sessionId, 'ada-s1')
    assert.equal(stored.turn.user, 'ada')
    assert.equal(stored.turn.number, number)
    assert.ok(stored.turn.provenance && Array.isArray(stored.turn.provenance.primed))
    assert.ok(JSON.stringify(stored.turn.provenance).includes('users/ada'), 'the provenance names where the primed memory came from')

    assertError(await call(app, 'GET', `/v1/turns/ada-s1/${number}`, { token: BOB }), 404, 'not_found')
    assertError(await call(app, 'GET', `/v1/turns/ada-s1/${number}`, { token: AGENT }), 404, 'not_found')
    assertError(await call(app, 'GET', `/v1/turns/ada-s1/${number}?user=ada`, { token: BOB }), 403, 'access_denied')
    assertOk(await call(app, 'GET', `/v1/turns/ada-s1/${number}?user=ada`, { token: ADMIN }))
    assertError(await call(app, 'GET', '/v1/turns/ada-s1/99', { token: ADA }), 404, 'not_found')
    assertError(await call(app, 'GET', '/v1/turns/ada-s1/0', { token: ADA }), 400, 'invalid_argument')
    assertError(await call(app, 'GET', '/v1/turns/ada-s1/first', { token: ADA }), 400, 'invalid_argument')

    // Recall within ada's session is bob's to ask for neither.
    assertError(await call(app, 'POST', '/v1/recall', { token: BOB, body: { message: 'Orion', session: 'ada-s1' } }), 403, 'access_denied')
    assertOk(await call(app, 'POST', '/v1/recall', { token: ADA, body: { message: 'Orion', session: 'ada-s1' } }))
  })

  test("forget and restore act on the token's user's memories only", async () => {
    // Bob cannot forget ada's lesson: not by its text, not by naming her.
    assertError(await call(app, 'POST', '/v1/forget', { token: BOB, body: { target: ADA_LESSON } }), 404, 'not_found')
    assertError(await call(app, 'POST', '/v1/forget', { token: BOB, body: { target: ADA_LESSON, user: 'ada' } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/forget', { token: ADA, body: {} }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/forget', { token: ADA, body: { target: ADA_LESSON, purge: 'yes' } }), 400, 'invalid_argument')

    const forgotten = assertOk(await call(app, 'POST', '/v1/forget', { token: ADA, body: { target: ADA_LESSON, reason: 'the VPN is gone' } }))
    assert.equal(forgotten.forgotten.action, 'forgotten')
    assert.match(forgotten.forgotten.path, /users\/ada\//)
    assert.match(forgotten.forgotten.archive, /archive\/forgotten/)
    const searched = assertOk(await call(app, 'POST', '/v1/search', { token: ADA, body: { query: 'Orion VPN token refreshed' } }))
    assert.ok(!JSON.stringify(searched.hits).includes('VPN token refreshed'), 'a forgotten memory is out of search')

    // Bob cannot restore it either, by text, by the path the forget reported, or by naming her.
    assertError(await call(app, 'POST', '/v1/restore', { token: BOB, body: { target: ADA_LESSON } }), 404, 'not_found')
    assertError(await call(app, 'POST', '/v1/restore', { token: BOB, body: { target: forgotten.forgotten.path } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/restore', { token: BOB, body: { target: ADA_LESSON, user: 'ada' } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/restore', { token: ADA, body: { target: '' } }), 400, 'invalid_argument')

    const restored = assertOk(await call(app, 'POST', '/v1/restore', { token: ADA, body: { target: ADA_LESSON } }))
    assert.equal(restored.restored.action, 'restored')
    const again = assertOk(await call(app, 'POST', '/v1/search', { token: ADA, body: { query: 'Orion VPN token refreshed' } }))
    assert.ok(JSON.stringify(again.hits).includes('VPN token refreshed'), 'a restored memory is found again')

    // Purge deletes for real: nothing left to restore.
    await memorize(app, ADA, 'Ada keeps a spare Orion laptop charger in the blue drawer.', 'lesson')
    const purged = assertOk(await call(app, 'POST', '/v1/forget', { token: ADA, body: { target: 'Ada keeps a spare Orion laptop charger in the blue drawer.', purge: true } }))
    assert.equal(purged.forgotten.action, 'purged')
    assertError(await call(app, 'POST', '/v1/restore', { token: ADA, body: { target: 'Ada keeps a spare Orion laptop charger in the blue drawer.' } }), 404, 'not_found')
  })

  test("export gives a user's token that user's files only; the whole tree is an administrator's", async () => {
    const ada = assertOk(await call(app, 'GET', '/v1/export', { token: ADA }))
    assert.equal(ada.user, 'ada')
    assert.ok(Array.isArray(ada.files) && ada.files.length > 0)
    const adaText = JSON.stringify(ada.files)
    assert.match(adaText, /short bullet points about Orion/)
    assert.doesNotMatch(adaText, /Lyra cluster/)
    assert.ok(ada.files.every((file: Json) => typeof file.path === 'string' && !file.path.startsWith('/') && typeof file.content === 'string'))
    assert.equal(typeof ada.report.counts.files, 'number')
    assert.equal(ada.report.dir, undefined, 'the scratch folder of the server is not shown')

    assertError(await call(app, 'GET', '/v1/export?user=ada', { token: BOB }), 403, 'access_denied')
    // The agent-alone credential may not take the whole tree (it holds every user's memories).
    assertError(await call(app, 'GET', '/v1/export', { token: AGENT }), 403, 'access_denied')

    const whole = assertOk(await call(app, 'GET', '/v1/export', { token: ADMIN }))
    assert.equal(whole.user, null)
    const wholeText = JSON.stringify(whole.files)
    assert.match(wholeText, /short bullet points about Orion/)
    assert.match(wholeText, /Lyra cluster/)
    assert.ok(whole.files.some((file: Json) => file.path === 'manifest.json'))
    const bob = assertOk(await call(app, 'GET', '/v1/export?user=bob', { token: ADMIN }))
    assert.match(JSON.stringify(bob.files), /Lyra cluster/)
    assert.doesNotMatch(JSON.stringify(bob.files), /short bullet points/)
  })
})

describe('engram serve: a large export', () => {
  test('streams one file at a time, parses whole, and leaves no scratch folder, read to the end or abandoned', async () => {
    const { mind, app, close } = await openServeHome()
    try {
      for (let i = 0; i < 150; i++) await mind.backend.documents.write('knowledge', `topic-${i}`, { confidence: 0.8 }, `# Topic ${i}\n\n${'A durable fact about the Orion system. '.repeat(200)}\n`)
      const scratches = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith('engram-serve-export-'))
      const before = scratches()
      const request = () => app.request('/v1/export', { headers: { host: '127.0.0.1:7477', authorization: `Bearer ${ADMIN}` } })

      const response = await request()
      assert.equal(response.status, 200)
      assert.match(response.headers.get('content-type') ?? '', /application\/json/)
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      const chunks: Uint8Array[] = []
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        chunks.push(value)
      }
      assert.ok(chunks.length > 150, `one chunk per file, not the whole export at once (${chunks.length} chunks)`)
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      assert.equal(body.ok, true)
      assert.equal(body.user, null)
      const topics = body.files.filter((file: Json) => /topic-\d+\.md$/.test(file.path))
      assert.equal(topics.length, 150)
      assert.ok(topics.every((file: Json) => file.content.includes('A durable fact about the Orion system.')))
      assert.deepEqual(body.files.map((file: Json) => file.path), [...body.files.map((file: Json) => file.path)].sort())
      assert.deepEqual(scratches(), before, 'read to the end: the scratch folder is gone')

      // A client that goes away after the first files: the scratch folder goes too.
      const abandoned = (await request()).body as ReadableStream<Uint8Array>
      const partial = abandoned.getReader()
      await partial.read()
      await partial.read()
      await partial.cancel()
      for (let wait = 0; wait < 50 && scratches().length > before.length; wait++) await new Promise((resolve) => setTimeout(resolve, 20))
      assert.deepEqual(scratches(), before, 'abandoned: the scratch folder is gone')
    } finally {
      await close()
    }
  })
})

describe('engram serve: erasing a user', () => {
  let home: ServeHome
  let mind: MindInternals
  let app: App
  before(async () => {
    home = await openServeHome()
    ;({ mind, app } = home)
    await memorize(app, ADA, ADA_LESSON, 'lesson')
    await memorize(app, BOB, BOB_LESSON, 'lesson')
    // A conversation of bob's too: his words are in the context store and the index.
    const begun = assertOk(await call(app, 'POST', '/v1/turns/begin', { token: BOB, body: { session: 'bob-1', message: 'The Lyra cluster password rotates on Fridays.' } }))
    assertOk(await call(app, 'POST', '/v1/turns/end', { token: BOB, body: { session: 'bob-1', turn: begun.turn.number, reply: 'Noted: Lyra rotates on Fridays.' } }))
    await mind.idle()
  })
  after(() => home.close())

  test("only an administrator erases a user, with the explicit purge; then nothing of theirs is found, and ada's memories stay", async () => {
    assertError(await call(app, 'POST', '/v1/users/bob/erase', { body: { purge: true } }), 401, 'unauthorized')
    for (const token of [ADA, BOB, AGENT]) assertError(await call(app, 'POST', '/v1/users/bob/erase', { token, body: { purge: true } }), 403, 'access_denied')
    assertError(await call(app, 'POST', '/v1/users/bob/erase', { token: ADMIN, body: {} }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/users/bob/erase', { token: ADMIN, body: { purge: false } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/users/%20/erase', { token: ADMIN, body: { purge: true } }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', '/v1/users/a%07b/erase', { token: ADMIN, body: { purge: true } }), 400, 'invalid_argument')
    // A user id is any text (it is never a path): one that looks like a path is a user with nothing.
    const pathLike = assertOk(await call(app, 'POST', '/v1/users/..%2F..%2Fshared/erase', { token: ADMIN, body: { purge: true } }))
    assert.equal(pathLike.nothing, true)
    const beforeErase = assertOk(await call(app, 'POST', '/v1/search', { token: BOB, body: { query: 'Lyra cluster' } }))
    assert.match(JSON.stringify(beforeErase.hits), /Lyra cluster/, 'refused erasures erased nothing')

    const erased = assertOk(await call(app, 'POST', '/v1/users/bob/erase', { token: ADMIN, body: { purge: true } }))
    assert.equal(erased.user, 'bob')
    assert.equal(erased.nothing, false)
    assert.ok(erased.erased.indexUnits > 0, JSON.stringify(erased.erased))

    // Every read path of bob's: search, recall, the memory context, his export.
    const searched = assertOk(await call(app, 'POST', '/v1/search', { token: BOB, body: { query: 'Lyra cluster billing export password' } }))
    assert.doesNotMatch(JSON.stringify(searched.hits), /Lyra/)
    const recalled = assertOk(await call(app, 'POST', '/v1/recall', { token: BOB, body: { message: 'What runs on the Lyra cluster, and when does its password rotate?' } }))
    assert.doesNotMatch(JSON.stringify(recalled.recall), /Lyra cluster|rotates on Fridays/)
    const context = assertOk(await call(app, 'GET', '/v1/context', { token: BOB }))
    assert.doesNotMatch(JSON.stringify(context), /Lyra/)
    const exported = assertOk(await call(app, 'GET', '/v1/export?user=bob', { token: ADMIN }))
    assert.doesNotMatch(JSON.stringify(exported.files), /Lyra/)
    // Ada's memories are hers as before.
    const ada = assertOk(await call(app, 'POST', '/v1/search', { token: ADA, body: { query: 'Orion VPN token refreshed' } }))
    assert.match(JSON.stringify(ada.hits), /VPN token refreshed/)

    // Again: nothing left, said so.
    const again = assertOk(await call(app, 'POST', '/v1/users/bob/erase', { token: ADMIN, body: { purge: true } }))
    assert.equal(again.nothing, true)
  })
})

describe('engram serve: confirmations', () => {
  let home: ServeHome
  let app: App
  before(async () => {
    home = await openServeHome({ 'memory.mode': 'copilot' })
    app = home.app
  })
  after(() => home.close())

  async function pendingOf(token: string, query = ''): Promise<Json[]> {
    return assertOk(await call(app, 'GET', `/v1/confirmations${query}`, { token })).pending
  }

  test("each user lists, accepts and rejects their own pending memories; another user's ids are 404", async () => {
    for (const [token, text] of [
      [ADA, 'Ada prefers the Orion reports as PDF files.'],
      [ADA, 'Ada wants the Orion meeting moved to Thursdays.'],
      [BOB, 'Bob reviews the Lyra dashboards every Friday.'],
    ] as const) {
      // A user's session handing a memory to the agent waits for that user's yes in copilot mode.
      const answer = assertOk(await call(app, 'POST', '/v1/memorize', { token, body: { entries: [{ text, kind: 'lesson', owner: 'agent' }] } }))
      assert.equal(answer.report.pending.length, 1, `copilot mode holds it: ${JSON.stringify(answer.report)}`)
    }
    const adas = await pendingOf(ADA)
    assert.equal(adas.length, 2)
    assert.ok(adas.every((item) => item.engram.text.startsWith('Ada')))
    const bobs = await pendingOf(BOB)
    assert.equal(bobs.length, 1)
    const bobId = bobs[0].id as string
    assertError(await call(app, 'GET', '/v1/confirmations?user=bob', { token: ADA }), 403, 'access_denied')
    assert.equal((await pendingOf(ADMIN, '?user=bob')).length, 1)
    // The agent's own queue holds none of theirs.
    assert.equal((await pendingOf(AGENT)).length, 0)

    // Ada guesses bob's id: as unknown as any other, and his memory still waits.
    assertError(await call(app, 'POST', `/v1/confirmations/${bobId}/accept`, { token: ADA, body: {} }), 404, 'not_found')
    assertError(await call(app, 'POST', `/v1/confirmations/${bobId}/reject`, { token: ADA, body: {} }), 404, 'not_found')
    assertError(await call(app, 'POST', `/v1/confirmations/${bobId}/reject`, { token: ADA, body: { user: 'bob' } }), 403, 'access_denied')
    assertError(await call(app, 'POST', `/v1/confirmations/${bobId}/accept`, { token: AGENT, body: {} }), 404, 'not_found')
    assert.equal((await pendingOf(BOB)).length, 1)
    // Bad bodies: not an object, a user that is not a string.
    assertError(await call(app, 'POST', `/v1/confirmations/${adas[0].id}/accept`, { token: ADA, raw: '[]' }), 400, 'invalid_argument')
    assertError(await call(app, 'POST', `/v1/confirmations/${adas[0].id}/accept`, { token: ADA, body: { user: 7 } }), 400, 'invalid_argument')

    const pdf = adas.find((item) => item.engram.text.includes('PDF'))
    const meeting = adas.find((item) => item.engram.text.includes('Thursdays'))
    const accepted = assertOk(await call(app, 'POST', `/v1/confirmations/${pdf.id}/accept`, { token: ADA, body: {} }))
    assert.equal(accepted.saved, 1)
    const rejected = assertOk(await call(app, 'POST', `/v1/confirmations/${meeting.id}/reject`, { token: ADA, body: {} }))
    assert.equal(rejected.rejected, 1)
    assert.equal((await pendingOf(ADA)).length, 0)
    assertError(await call(app, 'POST', `/v1/confirmations/${pdf.id}/accept`, { token: ADA, body: {} }), 404, 'not_found')

    const found = assertOk(await call(app, 'POST', '/v1/search', { token: ADA, body: { query: 'Orion reports PDF' } }))
    assert.ok(JSON.stringify(found.hits).includes('PDF files'), 'the accepted memory is saved')
    const meetings = assertOk(await call(app, 'POST', '/v1/search', { token: ADA, body: { query: 'Orion meeting Thursdays' } }))
    assert.ok(!JSON.stringify(meetings.hits).includes('Thursdays'), 'the rejected one is not')

    // The administrator answers for bob.
    const forBob = assertOk(await call(app, 'POST', `/v1/confirmations/${bobId}/accept`, { token: ADMIN, body: { user: 'bob' } }))
    assert.equal(forBob.saved, 1)
    assert.equal((await pendingOf(BOB)).length, 0)
  })
})

describe('engram serve: the OpenAPI document', () => {
  test('lists every /v1 route the app serves, and only those, with request schemas from zod and the error shape', async (t) => {
    const temp = makeTempHome()
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    t.after(async () => {
      await mind.close()
      temp.cleanup()
    })
    const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    // Served without a token: it holds no memory.
    const response = await app.request('/v1/openapi.json', { headers: { host: '127.0.0.1:7477' } })
    assert.equal(response.status, 200)
    const document = (await response.json()) as Json
    assert.equal(document.openapi, '3.1.0')

    // Routes as Hono registered them (middleware is method ALL); the dashboard and /mcp are not the JSON API.
    const served = new Set(app.routes.filter((route) => route.method !== 'ALL' && route.path.startsWith('/v1/')).map((route) => `${route.method.toLowerCase()} ${openApiPath(route.path)}`))
    const documented = new Set(Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`)))
    assert.deepEqual([...documented].sort(), [...served].sort())
    for (const expected of [
      'post /v1/recall',
      'get /v1/context',
      'get /v1/turns/{session}/{turn}',
      'get /v1/confirmations',
      'post /v1/confirmations/{id}/accept',
      'post /v1/confirmations/{id}/reject',
      'post /v1/forget',
      'post /v1/restore',
      'get /v1/export',
      'get /v1/openapi.json',
      'post /v1/memorize',
      'get /v1/search',
    ]) {
      assert.ok(documented.has(expected), `${expected} is documented`)
    }

    const paths = document.paths as Json
    // The tools' own schemas: memorize's entries, forget_memory's target with its description.
    assert.equal(paths['/v1/memorize'].post.requestBody.content['application/json'].schema.properties.entries.type, 'array')
    assert.match(paths['/v1/forget'].post.requestBody.content['application/json'].schema.properties.target.description, /search_memory shows it/)
    assert.deepEqual(paths['/v1/recall'].post.requestBody.content['application/json'].schema.required, ['message'])
    assert.deepEqual(
      paths['/v1/turns/{session}/{turn}'].get.parameters.map((parameter: Json) => `${parameter.in}:${parameter.name}:${parameter.required}`),
      ['path:session:true', 'path:turn:true', 'query:user:false'],
    )
    assert.deepEqual(
      paths['/v1/search'].get.parameters.filter((parameter: Json) => parameter.required).map((parameter: Json) => parameter.name),
      ['query'],
    )
    // The error shape, referenced by every operation.
    assert.deepEqual(document.components.schemas.Error.properties.error.required, ['code', 'message', 'fix'])
    assert.equal(paths['/v1/forget'].post.responses['400'].$ref, '#/components/responses/Error400')
    assert.ok(document.components.responses.Error400)
    assert.deepEqual(paths['/v1/health'].get.security, [])
    assert.equal(paths['/v1/export'].get.security, undefined, 'other routes need the document-wide credentials')
  })
})

describe('engram serve: the browser token', () => {
  /** The `name=value` of a Set-Cookie header. */
  const cookiePair = (setCookie: string) => setCookie.split(';')[0] ?? ''

  test("?token= becomes a session cookie at this server's own path, a 303 there without the token and no referrer; the session works on the dashboard only", async (t) => {
    const temp = makeTempHome()
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    t.after(async () => {
      await mind.close()
      temp.cleanup()
    })
    const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    await memorize(app, ADA, ADA_RULE, 'always')

    const opened = await app.request(`/?token=${ADA}&page=2`, { headers: { host: '127.0.0.1:7477' } })
    assert.equal(opened.status, 303)
    assert.equal(opened.headers.get('referrer-policy'), 'no-referrer')
    const location = opened.headers.get('location') ?? ''
    assert.ok(!location.includes(ADA), 'the token leaves the address bar')
    // The place: this port and an id no other service can compute from it (a MAC under the token's key).
    const place = /^(\/engram-7477-[A-Za-z0-9_-]{22})\/\?page=2$/.exec(location)?.[1] ?? ''
    assert.ok(place, `the dashboard at this credential's own place: ${location}`)
    const setCookie = opened.headers.get('set-cookie') ?? ''
    assert.match(setCookie, /^engram_session=/)
    assert.ok(!setCookie.includes(ADA), 'the cookie is not the token')
    assert.match(setCookie, /HttpOnly/i)
    assert.match(setCookie, /SameSite=Strict/i)
    assert.ok(setCookie.includes(`Path=${place};`) || setCookie.endsWith(`Path=${place}`), `sent to this place only, not to every service on the host: ${setCookie}`)
    // Every process with the same tokens agrees on it; another token has another place.
    const reopened = await createServeApp({ mind, credentials: parseCredentials(TOKENS) }).request(`/memories?token=${ADA}`, { headers: { host: '127.0.0.1:7477' } })
    assert.equal(reopened.headers.get('location'), `${place}/memories`)
    const admins = await app.request(`/?token=${ADMIN}`, { headers: { host: '127.0.0.1:7477' } })
    assert.ok(!(admins.headers.get('location') ?? '').startsWith(place), "another token's place is another")
    const session = cookiePair(setCookie)
    const value = session.slice(session.indexOf('=') + 1)

    // At its place the session acts for ada: her page, and the dashboard's POSTs.
    const page = await app.request(`${place}/memories`, { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(page.status, 200)
    const html = await page.text()
    assert.match(html, /viewing as user ada/)
    assert.ok(html.includes(`href="${place}/memories"`), 'its links stay at the place')
    assert.ok(html.includes(`src="${place}/assets/dashboard.js"`))
    assert.ok(html.includes(`<meta name="engram-place" content="${place}">`), "the place named for the page's script")
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer')
    const refused = await app.request(`${place}/memories?user=bob`, { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(refused.status, 403, "ada's session cannot name bob")
    const posted = await app.request(`${place}/v1/search`, { method: 'POST', headers: { host: '127.0.0.1:7477', cookie: session, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, body: JSON.stringify({ query: 'short bullet points Orion' }) })
    assert.equal(posted.status, 200)

    // A request that carries it elsewhere (a browser never sends it there) is held to the same
    // rule: a page, or a POST from this server's own page.
    const unplaced = await app.request('/memories', { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(unplaced.status, 200)
    assert.match(await unplaced.text(), /viewing as user ada/)
    const fromPage = await app.request('/v1/search', { method: 'POST', headers: { host: '127.0.0.1:7477', cookie: session, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, body: JSON.stringify({ query: 'short bullet points Orion' }) })
    assert.equal(fromPage.status, 200)
    assertError(await call(app, 'POST', '/v1/search', { headers: { cookie: session }, body: { query: 'Orion' } }), 401, 'unauthorized')
    // Never a read of the API, as a cookie or a bearer; not at another port's place; not forged.
    assertError(await call(app, 'GET', '/v1/context', { headers: { cookie: session } }), 401, 'unauthorized')
    assertError(await call(app, 'GET', '/v1/export', { token: value }), 401, 'unauthorized')
    const exportAtPlace = await app.request(`${place}/v1/export`, { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(exportAtPlace.status, 404)
    assert.equal(((await exportAtPlace.json()) as Json).error.code, 'not_found')
    const elsewhere = await app.request(`${place.replace('7477', '7478')}/memories`, { headers: { host: '127.0.0.1:7478', cookie: session } })
    assert.equal(elsewhere.status, 401, "a session is its server's place's only")
    const guessed = await app.request(`/engram-7477-${'A'.repeat(22)}/memories`, { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(guessed.status, 401, "a session is its own place's only")
    assert.ok(!(await guessed.text()).includes(place), 'and the answer does not name the place')
    const forged = await app.request(`${place}/memories`, { headers: { host: '127.0.0.1:7477', cookie: `engram_session=${value.slice(0, -2)}xx` } })
    assert.equal(forged.status, 401)
    // Nothing of it lives in a process: another server of this home with the same tokens (a
    // restart, a second process) takes the session; one without ada's token does not.
    const restarted = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    const again = await restarted.request(`${place}/memories`, { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(again.status, 200)
    assert.match(await again.text(), /viewing as user ada/)
    const revoked = createServeApp({ mind, credentials: parseCredentials(`${BOB}=default:bob, ${ADMIN}=admin`) })
    assert.equal((await revoked.request(`${place}/memories`, { headers: { host: '127.0.0.1:7477', cookie: session } })).status, 401, 'a session ends with its token')
    // The token itself is still a program's bearer token, and the old cookie is read nowhere.
    assert.equal(assertOk(await call(app, 'GET', '/v1/context', { token: ADA })).user, 'ada')
    assertError(await call(app, 'GET', '/v1/context', { headers: { cookie: `engram_token=${ADA}` } }), 401, 'unauthorized')

    const invalid = await app.request('/?token=not-a-token-of-this-server', { headers: { host: '127.0.0.1:7477' } })
    assert.equal(invalid.status, 401)
    assert.equal(invalid.headers.get('set-cookie'), null)
    assert.equal(((await invalid.json()) as Json).error.code, 'unauthorized')
  })

  test("a browser navigating to a page gets the landing page, which names no place; programs are answered where they ask", async (t) => {
    const temp = makeTempHome()
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    t.after(async () => {
      await mind.close()
      temp.cleanup()
    })
    const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    const place = (await app.request(`/?token=${ADA}`, { headers: { host: '127.0.0.1:7477' } })).headers.get('location')?.replace(/\/$/, '') ?? ''
    assert.match(place, /^\/engram-7477-[A-Za-z0-9_-]{22}$/)
    // The server cannot tell whose place to send a browser to without naming it to whoever asks:
    // the landing page's script finds it in the browser's own storage of this origin.
    const navigation = await app.request('/memories?q=orion', { headers: { host: '127.0.0.1:7477', 'sec-fetch-mode': 'navigate' } })
    assert.equal(navigation.status, 200)
    assert.equal(navigation.headers.get('location'), null)
    assert.match(navigation.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    const landing = await navigation.text()
    assert.match(landing, /src="\/assets\/engram-landing\.js"/)
    assert.match(landing, /open the address <code>engram serve<\/code> printed/)
    assert.ok(!landing.includes(place), 'the landing page names no place')
    const script = await app.request('/assets/engram-landing.js', { headers: { host: '127.0.0.1:7477' } })
    assert.equal(script.status, 200, 'served without a credential: it carries none')
    assert.ok(!(await script.text()).includes(place))
    // On plain http away from loopback a browser sends no Sec-Fetch-Mode, but says Upgrade-Insecure-Requests.
    const plain = await app.request('/activity', { headers: { host: 'memory.example:7477', 'upgrade-insecure-requests': '1' } })
    assert.equal(plain.status, 200)
    assert.equal(plain.headers.get('location'), null)
    assert.match(await plain.text(), /engram-landing\.js/)
    // A program asking for a page without a credential is refused, naming no place either.
    const curl = await app.request('/memories', { headers: { host: '127.0.0.1:7477' } })
    assert.equal(curl.status, 401)
    assert.equal(curl.headers.get('location'), null)
    assert.ok(!(await curl.text()).includes(place))
    const program = await app.request('/memories', { headers: { host: '127.0.0.1:7477', authorization: `Bearer ${ADA}` } })
    assert.equal(program.status, 200)
    assert.match(await program.text(), /href="\/memories"/, 'a program reading a page gets it as it is')
    // The API is never redirected.
    assertError(await call(app, 'GET', '/v1/context', { headers: { 'sec-fetch-mode': 'navigate' } }), 401, 'unauthorized')
  })

  test("an open server's dashboard token is no bearer token and no administrator; a wrong bearer is 401", async (t) => {
    const temp = makeTempHome()
    const mind = await openMindInternals({ home: temp.home, env: temp.env })
    t.after(async () => {
      await mind.close()
      temp.cleanup()
    })
    const run = 'run-token-0123456789abcdefgh'
    const app = createServeApp({ mind, credentials: withDashboardToken(parseCredentials(undefined), run, { agent: mind.agent, user: undefined, admin: false }) })
    assertError(await call(app, 'GET', '/v1/context', { token: 'wrong-bearer-0123456789abcdef' }), 401, 'unauthorized')
    // Nothing at all: the agent alone, which may not take the whole export.
    assertError(await call(app, 'GET', '/v1/export'), 403, 'access_denied')
    assertError(await call(app, 'GET', '/v1/export', { token: run }), 401, 'unauthorized')

    const opened = await app.request(`/?token=${run}`, { headers: { host: '127.0.0.1:7477' } })
    assert.equal(opened.status, 303)
    const place = opened.headers.get('location')?.replace(/\/$/, '') ?? ''
    const session = cookiePair(opened.headers.get('set-cookie') ?? '')
    const page = await app.request(`${place}/`, { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(page.status, 200)
    assert.match(await page.text(), /viewing as the agent alone/)
    const named = await app.request(`${place}/memories?user=ada`, { headers: { host: '127.0.0.1:7477', cookie: session } })
    assert.equal(named.status, 403, 'the printed address makes no administrator')
    // A stale or foreign session at the place of an open server is as no session: the agent alone.
    const stale = await app.request(`${place}/`, { headers: { host: '127.0.0.1:7477', cookie: 'engram_session=stale.0.signature' } })
    assert.equal(stale.status, 200)
  })
})
