/**
 * The dashboard's writes (decision 0071) through `app.request()`, on both backends: each answers the
 * address of its "what changed" page, whose before and after are read back from the store; undo
 * swaps them; an edited profile fact's old value is archived; a user's token is refused the agent's
 * memory (why) and another user's (not found), and an administrator acts as the memory's owner.
 * The browser side — the forms, the keyboard, the session — is test/dashboard-edit.test.ts.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { type MindInternals, openMindInternals } from '../src/mind-internals.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { ADA, ADMIN, type App, assertError, assertOk, BOB, call, TOKENS } from './support/serve-app.ts'

type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

/** One side of a "what changed" page: its state and the memory's text, as the page says them. */
interface Side {
  state: string
  text: string | undefined
}

async function page(app: App, path: string, token: string): Promise<{ status: number; text: string }> {
  const response = await app.request(path, { headers: { host: '127.0.0.1:7477', authorization: `Bearer ${token}` } })
  return { status: response.status, text: await response.text() }
}

/** The before and after of the "what changed" page at `next`. */
async function changed(app: App, next: string, token: string): Promise<{ before: Side; after: Side; query: URLSearchParams }> {
  const shown = await page(app, next, token)
  assert.equal(shown.status, 200, shown.text)
  const at = { before: shown.text.indexOf('data-testid="before"'), after: shown.text.indexOf('data-testid="after"') }
  assert.ok(at.before > 0 && at.after > at.before, shown.text)
  const side = (part: string): Side => ({ state: /data-state="(\w+)"/.exec(part)?.[1] ?? '', text: /data-testid="side-text">([^<]*)</.exec(part)?.[1] })
  return { before: side(shown.text.slice(at.before, at.after)), after: side(shown.text.slice(at.after)), query: new URL(next, 'http://x').searchParams }
}

function editRoutesSuite(target: Target): void {
  describe(`the dashboard's writes answer what changed, with its undo (${target.backend})`, () => {
    let temp: TempHome
    let mind: MindInternals
    let app: App
    const schema = freshSchema()

    before(async () => {
      temp = makeTempHome()
      const env = target.backend === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : temp.env
      mind = await openMindInternals({ home: temp.home, env })
      app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
      const report = await mind.encode([
        { text: 'Deploys need two approvals', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
        { text: 'Bob parks the pelican boat at the marina', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
      ])
      assert.equal(report.saved.length, 2)
    })
    after(async () => {
      await mind.close()
      if (target.backend === 'postgres') await dropSchema(target.url, schema)
      temp.cleanup()
    })

    const searchTexts = async (user: string, query: string, about: RegExp) => (await mind.memories.search(query, { user, limit: 20 })).map((hit) => hit.text).filter((text) => about.test(text))

    test("ada adds, edits and undoes her edit; each page reads both sides from the store", async () => {
      const added = assertOk(await call(app, 'POST', '/edit/add', { token: ADA, body: { text: 'Ada takes her tea without sugar', kind: 'lesson' } }))
      const first = await changed(app, added.next, ADA)
      assert.deepEqual(first.before, { state: 'absent', text: undefined })
      assert.deepEqual(first.after, { state: 'live', text: 'Ada takes her tea without sugar' })
      const id = first.query.get('after') as string

      const edited = assertOk(await call(app, 'POST', '/edit/update', { token: ADA, body: { id, text: 'Ada takes her tea with honey' } }))
      const edit = await changed(app, edited.next, ADA)
      assert.equal(edit.query.get('action'), 'edited')
      assert.deepEqual(edit.before, { state: 'archived', text: 'Ada takes her tea without sugar' })
      assert.deepEqual(edit.after, { state: 'live', text: 'Ada takes her tea with honey' })
      assert.deepEqual(await searchTexts('ada', 'tea honey sugar', /tea/), ['Ada takes her tea with honey'])

      const undone = assertOk(await call(app, 'POST', '/edit/undo', { token: ADA, body: { before: edit.query.get('before'), after: edit.query.get('after') } }))
      const undo = await changed(app, undone.next, ADA)
      assert.equal(undo.query.get('action'), 'undone')
      assert.deepEqual(undo.before, { state: 'archived', text: 'Ada takes her tea with honey' })
      assert.deepEqual(undo.after, { state: 'live', text: 'Ada takes her tea without sugar' })
      assert.deepEqual(await searchTexts('ada', 'tea honey sugar', /tea/), ['Ada takes her tea without sugar'])
    })

    test("an administrator adds ada's profile fact; she corrects it, and the old value waits in the archive", async () => {
      const added = assertOk(await call(app, 'POST', '/edit/add', { token: ADMIN, body: { text: 'City: Lisbon', kind: 'profile', user: 'ada' } }))
      assert.match(added.next, /&user=ada$/)
      const id = (await changed(app, added.next, ADMIN)).query.get('after') as string
      assert.equal((await mind.memories.get(id, { user: 'ada' })).owner, 'user:ada')

      const corrected = assertOk(await call(app, 'POST', '/edit/update', { token: ADA, body: { id, text: 'City: Porto' } }))
      const shown = await changed(app, corrected.next, ADA)
      assert.equal(shown.query.get('action'), 'corrected')
      assert.deepEqual(shown.before, { state: 'archived', text: 'City: Lisbon' })
      assert.deepEqual(shown.after, { state: 'live', text: 'City: Porto' })
      const profile = (await mind.memories.getAll({ user: 'ada', kinds: ['profile'] })).memories.map((memory) => memory.text)
      assert.deepEqual(profile, ['City: Porto'])

      // Restored from the archive (as the archive page's button does), the old value takes its key's place again.
      const restored = assertOk(await call(app, 'POST', '/edit/restore', { token: ADA, body: { id } }))
      assert.deepEqual((await changed(app, restored.next, ADA)).after, { state: 'live', text: 'City: Lisbon' })
      assert.deepEqual((await mind.memories.getAll({ user: 'ada', kinds: ['profile'] })).memories.map((memory) => memory.text), ['City: Lisbon'])
    })

    test("a user's token is refused the agent's memory with why, and another user's as not found; an administrator acts as the owner", async () => {
      const rule = (await mind.memories.getAll({})).memories.find((memory) => memory.text === 'Deploys need two approvals')
      const boat = (await mind.memories.getAll({ user: 'bob' })).memories.find((memory) => memory.text.includes('pelican boat'))
      assert.ok(rule && boat)
      const denied = await call(app, 'POST', '/edit/update', { token: ADA, body: { id: rule.id, text: 'Deploys need no approval' } })
      assertError(denied, 403, 'access_denied')
      assert.match(denied.body.error.message, /the agent's own memory/)
      assertError(await call(app, 'POST', '/edit/forget', { token: ADA, body: { id: boat.id } }), 404, 'not_found')
      assertError(await call(app, 'POST', '/edit/forget', { token: BOB, body: { id: rule.id } }), 403, 'access_denied')
      assert.equal((await page(app, `/edit/memory?id=${encodeURIComponent(rule.id)}`, ADA)).status, 403)
      const list = await page(app, '/edit', ADA)
      assert.ok(list.text.includes('Deploys need two approvals') && !list.text.includes('pelican boat'))

      // The administrator forgets bob's lesson from ada's view: it is done as bob, in bob's archive.
      const forgotten = assertOk(await call(app, 'POST', '/edit/forget', { token: ADMIN, body: { id: boat.id, user: 'ada', reason: 'sold the boat' } }))
      assert.match(forgotten.next, /&user=bob$/)
      const shown = await changed(app, forgotten.next, ADMIN)
      assert.deepEqual(shown.before, { state: 'archived', text: 'Bob parks the pelican boat at the marina' })
      assert.equal(shown.after.state, 'absent')
      assert.deepEqual(await searchTexts('bob', 'pelican boat marina', /pelican/), [])
      // Logged as forgetting is: in bob's own activity log, with the reason given.
      const writes = (await mind.scope('bob').view.own.activity.read()).filter((event) => event.type === 'memory_write' && event.meta?.action === 'forget')
      assert.deepEqual(
        writes.map((event) => [event.meta?.owner, event.meta?.reason]),
        [['user:bob', 'sold the boat']],
      )
    })
  })
}

editRoutesSuite({ backend: 'embedded' })
onPostgres("the dashboard's writes", (url) => editRoutesSuite({ backend: 'postgres', url }))
