// @slow: drives a real Chromium (scripts/run.sh test installs it)
/**
 * Changing memory from the dashboard (decision 0071), in a real headless Chromium against the real
 * server over a socket, opened as a person opens it (`?token=`, then the session cookie). Each
 * write — edit, forget, restore, add, correct a profile fact, undo — is driven through the page's
 * own forms and buttons (the CSP on, no inline script), as an administrator and as a user's token;
 * each result is checked where it matters: the memory API's search with the user's viewer, and the
 * prompt of the next turn of a new session with that user. A user's token is refused the agent's
 * and another user's memories, and a write from another site is refused.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { type ServerType, serve } from '@hono/node-server'
import type { BrowserContext, Locator, Page } from 'playwright-core'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { launchBrowser, screenshot, shownText, shownTexts, type TestBrowser } from './support/browser.ts'

const ADMIN = 'admin-token-edit-0123456789abc'
const ADA = 'ada-token-edit-0123456789abcde'
const BOB = 'bob-token-edit-0123456789abcde'
const TOKENS = `${ADMIN}=admin, ${ADA}=default:ada, ${BOB}=default:bob`

const ADA_LESSON = 'The heron cache must be flushed after every schema migration'
const ADA_LESSON_EDITED = 'The heron cache must be flushed and warmed after every schema migration'
const ADA_ROLE = 'Role: billing export maintainer'
const ADA_ROLE_CORRECTED = 'Role: ledger platform lead'
const ADA_RULE = 'Answer Ada with metric units'
const ADA_RULE_EDITED = 'Answer Ada with imperial units'
const ADA_TIMEZONE = 'Timezone: CET'
const ADA_TIMEZONE_CORRECTED = 'Timezone: JST'
const ADA_NOTES = 'Ada keeps her kestrel notes in the green folder'
const ADA_ADDED = 'Ada reviews the gannet pipeline every Monday'
const BOB_LESSON = 'Bob deploys the walrus service on Thursdays'
const BOB_ADDED = 'Bob wants the osprey report as a spreadsheet'
const AGENT_RULE = 'Deploys need two approvals'
const AGENT_LESSON = 'The pelican build runs nightly at two'
const AGENT_ADDED = 'The cormorant mirror is read-only during backups'

async function buildHome(mind: MindInternals): Promise<void> {
  const entry = (text: string, kind: 'always' | 'lesson' | 'profile', owner?: `user:${string}`) => ({ text, kind, scope: 'global' as const, confidence: 'high' as const, source: 'user' as const, ...(owner ? { owner } : {}) })
  const report = await mind.encode([
    entry(ADA_LESSON, 'lesson', 'user:ada'),
    entry(ADA_ROLE, 'profile', 'user:ada'),
    entry(ADA_RULE, 'always', 'user:ada'),
    entry(ADA_TIMEZONE, 'profile', 'user:ada'),
    entry(ADA_NOTES, 'lesson', 'user:ada'),
    entry(BOB_LESSON, 'lesson', 'user:bob'),
    entry(AGENT_RULE, 'always'),
    entry(AGENT_LESSON, 'lesson'),
  ])
  assert.equal(report.saved.length, 8, JSON.stringify(report))
}

describe('changing memory from the dashboard, in a real browser', () => {
  let temp: TempHome
  let mind: MindInternals
  let server: ServerType
  let address: string
  let chromium: TestBrowser
  let turns = 0

  before(async () => {
    temp = makeTempHome('engram-edit-')
    mind = await openMindInternals({ home: temp.home, env: temp.env })
    await buildHome(mind)
    const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    const info = await new Promise<AddressInfo>((done) => {
      server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, done)
    })
    address = `http://127.0.0.1:${info.port}`
    chromium = await launchBrowser({ deadlineMs: 150_000 })
  })

  after(async () => {
    await chromium?.close()
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()))
    await mind?.close()
    temp?.cleanup()
  })

  /** A new browser signed in with `token`, as a person opens the printed address. */
  async function signIn(token: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const opened = await chromium.newPage()
    const first = await opened.page.goto(`${address}/?token=${token}`)
    assert.equal(first?.status(), 200)
    return opened
  }

  /**
   * Open `path` at the browser's place (decision 0051), where the session is: the address of the
   * page the browser is on names it. (Typed addresses go through the landing page, which
   * dashboard-credential.test.ts covers.)
   */
  async function go(page: Page, path: string) {
    const base = /^\/engram-\d+-[A-Za-z0-9_-]+/.exec(new URL(page.url()).pathname)?.[0]
    assert.ok(base, `the browser is at its place: ${page.url()}`)
    const response = await page.goto(`${address}${base}${path}`)
    assert.ok(response)
    return response
  }

  async function open(page: Page, path: string): Promise<void> {
    const response = await go(page, path)
    assert.equal(response.status(), 200, `${path}: ${await shownText(page.locator('main'), { timeout: 1000 }).catch(() => '')}`)
  }

  /** Submit with `control` (a click, or Enter on a focused button) and wait for the "what changed" page; an error shown instead fails the test. */
  async function submitAndSee(page: Page, control: Locator, how: 'click' | 'keyboard' = 'click', action = /\/edit\/changed\?action=(added|edited|corrected|forgotten|restored)&/): Promise<void> {
    const changed = page.waitForURL(action)
    if (how === 'click') await control.click()
    else await page.keyboard.press('Enter')
    const outcome = await Promise.race([changed.then(() => 'changed'), page.locator('.result.warn').waitFor().then(() => 'error')])
    if (outcome === 'error') assert.fail(`the write failed: ${await shownText(page.locator('.result.warn'))}`)
    await page.getByTestId('change').waitFor()
  }

  /** The before and after of the "what changed" page, as shown. */
  async function change(page: Page): Promise<{ before: string; after: string; beforeState: string | null; afterState: string | null }> {
    const before = page.getByTestId('before')
    const after = page.getByTestId('after')
    return { before: await shownText(before), after: await shownText(after), beforeState: await before.getAttribute('data-state'), afterState: await after.getAttribute('data-state') }
  }

  /**
   * What the agent knows for `user` now: the memory API's search with that user's viewer, and the
   * system prompt of the first turn of a new session with them. Each of `present` is in both, none
   * of `absent` in either.
   */
  async function assertKnows(user: string | undefined, query: string, present: string[], absent: string[]): Promise<void> {
    const scope = user !== undefined ? { user } : {}
    const found = (await mind.memories.search(query, { ...scope, limit: 20 })).map((hit) => hit.text)
    const turn = await mind.session(`edit-check-${++turns}`, scope).begin(query)
    for (const text of present) {
      assert.ok(found.some((hit) => hit.includes(text)), `search for ${user ?? 'the agent'} finds "${text}": ${found.join(' | ')}`)
      assert.ok(turn.system.includes(text), `the next turn's prompt for ${user ?? 'the agent'} holds "${text}":\n${turn.system}`)
    }
    for (const text of absent) {
      assert.ok(!found.some((hit) => hit.includes(text)), `search for ${user ?? 'the agent'} no longer finds "${text}": ${found.join(' | ')}`)
      assert.ok(!turn.system.includes(text), `the next turn's prompt for ${user ?? 'the agent'} no longer holds "${text}"`)
    }
  }

  const row = (page: Page, text: string) => page.getByTestId('edit-row').filter({ hasText: text })

  describe('as an administrator', () => {
    let page: Page
    let context: BrowserContext
    let problems: string[]
    before(async () => {
      ;({ page, context, problems } = await signIn(ADMIN))
    })
    after(async () => {
      await context?.close()
    })

    test("edit a user's lesson: the new text is recalled, the old one is in the archive", async () => {
      await open(page, '/edit?user=ada')
      await screenshot(page, 'edit-list-admin-ada')
      await row(page, ADA_LESSON).getByRole('link', { name: /^Edit/ }).click()
      await page.getByTestId('edit-form').waitFor()
      assert.equal(await shownText(page.getByTestId('edit-owner')), 'ada')
      await page.getByLabel('New text').fill(ADA_LESSON_EDITED)
      await screenshot(page, 'edit-form')
      await submitAndSee(page, page.getByRole('button', { name: 'Save', exact: true }))
      await screenshot(page, 'edit-what-changed')
      const shown = await change(page)
      assert.match(shown.before, new RegExp(ADA_LESSON))
      assert.equal(shown.beforeState, 'archived')
      assert.match(shown.after, new RegExp(ADA_LESSON_EDITED))
      assert.equal(shown.afterState, 'live')
      await assertKnows('ada', 'heron cache flushed schema migration', [ADA_LESSON_EDITED], [ADA_LESSON])
      assert.deepEqual(problems, [])
    })

    test("restore from the archive brings the edited lesson's old text back", async () => {
      await open(page, '/archive?user=ada')
      const archived = page.getByTestId('archive-row').filter({ hasText: ADA_LESSON }).filter({ hasNotText: 'warmed' })
      assert.equal(await archived.count(), 1, await shownText(page.locator('main')))
      await submitAndSee(page, archived.getByRole('button', { name: 'Restore' }))
      await screenshot(page, 'restore-what-changed')
      const shown = await change(page)
      assert.equal(shown.afterState, 'live')
      assert.match(shown.after, new RegExp(ADA_LESSON))
      await assertKnows('ada', 'heron cache flushed schema migration', [ADA_LESSON, ADA_LESSON_EDITED], [])
      assert.deepEqual(problems, [])
    })

    test("correct a user's profile fact, then undo it", async () => {
      await open(page, '/edit?user=ada')
      await row(page, ADA_ROLE).getByRole('link', { name: /^Edit/ }).click()
      assert.equal(await shownText(page.locator('main h2')), 'Correct a profile fact')
      await page.getByLabel('Corrected fact').fill(ADA_ROLE_CORRECTED)
      await submitAndSee(page, page.getByRole('button', { name: 'Save the correction' }))
      await screenshot(page, 'profile-correction-what-changed')
      assert.match(await shownText(page.getByTestId('change-summary')), /^A profile fact was corrected/)
      const shown = await change(page)
      assert.match(shown.before, new RegExp(ADA_ROLE))
      assert.equal(shown.beforeState, 'archived', 'the old value is kept in the archive, restorable')
      assert.match(shown.after, new RegExp(ADA_ROLE_CORRECTED))
      await assertKnows('ada', 'what is her role', [ADA_ROLE_CORRECTED], [ADA_ROLE])

      // Undo: the correction goes to the archive, the old value comes back.
      await submitAndSee(page, page.getByRole('button', { name: 'Undo this change' }), 'click', /action=undone&/)
      const undone = await change(page)
      assert.match(undone.after, new RegExp(ADA_ROLE))
      assert.equal(undone.afterState, 'live')
      assert.equal(undone.beforeState, 'archived')
      await assertKnows('ada', 'what is her role', [ADA_ROLE], [ADA_ROLE_CORRECTED])
      assert.deepEqual(problems, [])
    })

    test("forget the agent's lesson, then restore it from the archive", async () => {
      await open(page, '/edit')
      await submitAndSee(page, row(page, AGENT_LESSON).getByRole('button', { name: /^Forget/ }))
      const shown = await change(page)
      assert.equal(shown.beforeState, 'archived')
      assert.equal(shown.afterState, 'absent')
      await assertKnows(undefined, 'pelican build nightly', [], [AGENT_LESSON])
      await assertKnows('bob', 'pelican build nightly', [], [AGENT_LESSON])

      await open(page, '/archive')
      await submitAndSee(page, page.getByTestId('archive-row').filter({ hasText: AGENT_LESSON }).getByRole('button', { name: 'Restore' }))
      assert.equal((await change(page)).afterState, 'live')
      await assertKnows(undefined, 'pelican build nightly', [AGENT_LESSON], [])
      await assertKnows('bob', 'pelican build nightly', [AGENT_LESSON], [])
      assert.deepEqual(problems, [])
    })

    test('add a memory for a user and one for the agent', async () => {
      await open(page, '/edit')
      const form = page.getByTestId('add-form')
      await form.getByLabel('For', { exact: true }).selectOption('bob')
      await form.getByLabel('Kind', { exact: true }).selectOption('always')
      await form.getByLabel('Text', { exact: true }).fill(BOB_ADDED)
      await submitAndSee(page, form.getByRole('button', { name: 'Add' }))
      const shown = await change(page)
      assert.equal(shown.beforeState, 'absent')
      assert.match(shown.after, new RegExp(BOB_ADDED))
      assert.match(shown.after, /bob/)
      await assertKnows('bob', 'osprey report spreadsheet', [BOB_ADDED], [])
      await assertKnows('ada', 'osprey report spreadsheet', [], [BOB_ADDED])

      await open(page, '/edit')
      await form.getByLabel('Text', { exact: true }).fill(AGENT_ADDED)
      await submitAndSee(page, form.getByRole('button', { name: 'Add' }))
      assert.match((await change(page)).after, /the agent/)
      await assertKnows('ada', 'cormorant mirror backups', [AGENT_ADDED], [])
      await assertKnows(undefined, 'cormorant mirror backups', [AGENT_ADDED], [])
      assert.deepEqual(problems, [])
    })
  })

  describe("as a user's token", () => {
    let page: Page
    let context: BrowserContext
    let problems: string[]
    before(async () => {
      ;({ page, context, problems } = await signIn(ADA))
    })
    after(async () => {
      await context?.close()
    })

    test('edit her own rule, by keyboard', async () => {
      await open(page, '/edit')
      await screenshot(page, 'edit-list-as-ada')
      const texts = (await shownTexts(page.getByTestId('edit-row-text'))).join('\n')
      assert.match(texts, new RegExp(AGENT_RULE), "the agent's memory is listed")
      assert.doesNotMatch(texts, /walrus|osprey/, "nothing of bob's")
      // The agent's memories have no controls for her; her own do.
      assert.equal(await row(page, AGENT_RULE).getByRole('link').count(), 0)
      assert.match(await shownText(row(page, AGENT_RULE)), /an administrator changes it/)

      await row(page, ADA_RULE).getByRole('link', { name: /^Edit/ }).focus()
      await page.keyboard.press('Enter')
      await page.getByTestId('edit-form').waitFor()
      await page.getByLabel('New text').focus()
      await page.keyboard.press('Control+A')
      await page.keyboard.type(ADA_RULE_EDITED)
      await page.keyboard.press('Tab')
      assert.equal(await page.getByRole('button', { name: 'Save', exact: true }).evaluate((button) => button === button.ownerDocument.activeElement), true, 'Tab reaches the Save button')
      await submitAndSee(page, page.getByRole('button', { name: 'Save', exact: true }), 'keyboard')
      const shown = await change(page)
      assert.match(shown.before, /metric units/)
      assert.match(shown.after, /imperial units/)
      await assertKnows('ada', 'which units for Ada', [ADA_RULE_EDITED], [ADA_RULE])
      assert.deepEqual(problems, [])
    })

    test('correct her own profile fact', async () => {
      await open(page, '/edit')
      await row(page, ADA_TIMEZONE).getByRole('link', { name: /^Edit/ }).click()
      await page.getByLabel('Corrected fact').fill(ADA_TIMEZONE_CORRECTED)
      await submitAndSee(page, page.getByRole('button', { name: 'Save the correction' }))
      const shown = await change(page)
      assert.match(shown.before, /CET/)
      assert.match(shown.after, /JST/)
      await assertKnows('ada', 'what timezone is Ada in', [ADA_TIMEZONE_CORRECTED], [ADA_TIMEZONE])
      assert.deepEqual(problems, [])
    })

    test('forget her own lesson with a reason, then restore it from the archive', async () => {
      await open(page, '/edit')
      await row(page, ADA_NOTES).getByRole('link', { name: /^Edit/ }).click()
      await page.getByLabel('Why forget it').fill('moved to the wiki')
      await submitAndSee(page, page.getByRole('button', { name: 'Forget this memory' }))
      const shown = await change(page)
      assert.equal(shown.beforeState, 'archived')
      assert.match(shown.before, /moved to the wiki/)
      await assertKnows('ada', 'kestrel notes green folder', [], [ADA_NOTES])

      await open(page, '/archive')
      await submitAndSee(page, page.getByTestId('archive-row').filter({ hasText: ADA_NOTES }).getByRole('button', { name: 'Restore' }))
      assert.equal((await change(page)).afterState, 'live')
      await assertKnows('ada', 'kestrel notes green folder', [ADA_NOTES], [])
      assert.deepEqual(problems, [])
    })

    test('add a memory of her own', async () => {
      await open(page, '/edit')
      const form = page.getByTestId('add-form')
      assert.equal(await form.getByLabel('For', { exact: true }).count(), 0, 'no choice of owner: her own')
      await form.getByLabel('Text', { exact: true }).fill(ADA_ADDED)
      await submitAndSee(page, form.getByRole('button', { name: 'Add' }))
      assert.match((await change(page)).after, /ada/)
      await assertKnows('ada', 'gannet pipeline Monday', [ADA_ADDED], [])
      await assertKnows('bob', 'gannet pipeline Monday', [], [ADA_ADDED])

      // The same again: the gate has it already; the page says so beside the button, as an alert.
      await open(page, '/edit')
      await form.getByLabel('Text', { exact: true }).fill(ADA_ADDED)
      await form.getByRole('button', { name: 'Add' }).click()
      const alert = form.getByRole('alert')
      await alert.waitFor()
      assert.match(await shownText(alert), /already remembered\. Fix: edit the memory that says it/)
      assert.match(page.url(), /\/edit$/, 'nothing changed, so no "what changed" page')
      await screenshot(page, 'add-refused-as-ada')
      // That refusal is the one error answer the page got, and expected.
      const refusal = problems.findIndex((problem) => /POST \S+\/edit\/add answered 400$/.test(problem))
      assert.ok(refusal >= 0, problems.join('\n'))
      problems.splice(refusal, 1)
      assert.deepEqual(problems, [])
    })

    test("the agent's and another user's memories are refused, with why", async () => {
      const agentRule = (await mind.memories.getAll({})).memories.find((memory) => memory.text === AGENT_RULE)
      const bobLesson = (await mind.memories.getAll({ user: 'bob' })).memories.find((memory) => memory.text === BOB_LESSON)
      assert.ok(agentRule && bobLesson)
      // The edit page of the agent's rule is a refusal page.
      const refused = await go(page, `/edit/memory?id=${agentRule.id}`)
      assert.equal(refused.status(), 403)
      assert.match(await shownText(page.getByTestId('error')), /the agent's own memory\. The token of user ada changes only ada's own memories/)
      await screenshot(page, 'edit-refused-as-ada')
      // The writes themselves, posted from her page with her session.
      await open(page, '/edit')
      const post = (path: string, body: unknown): Promise<{ status: number; body: { error: { message: string; fix: string } } }> =>
        page.evaluate(
          async ({ url, json }) => {
            const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json), credentials: 'same-origin' })
            return { status: response.status, body: (await response.json()) as { error: { message: string; fix: string } } }
          },
          { url: `${new URL(page.url()).pathname.replace(/\/edit$/, '')}${path}`, json: body },
        )
      const editAgent = await post('/edit/update', { id: agentRule.id, text: 'Deploys need no approvals' })
      assert.equal(editAgent.status, 403)
      assert.match(editAgent.body.error.message, /agent's own memory/)
      assert.match(editAgent.body.error.fix, /administrator/)
      const forgetAgent = await post('/edit/forget', { id: agentRule.id })
      assert.equal(forgetAgent.status, 403)
      const editBob = await post('/edit/update', { id: bobLesson.id, text: 'Bob deploys on Fridays' })
      assert.equal(editBob.status, 404, "another user's memory is not hers to learn of")
      assert.match(editBob.body.error.message, /No memory has the id/)
      const addForBob = await post('/edit/add', { text: 'Bob likes tea', kind: 'lesson', user: 'bob' })
      assert.equal(addForBob.status, 403)
      assert.match(addForBob.body.error.message, /acts for user "ada" and cannot act for "bob"/)
      // Nothing changed.
      await assertKnows('ada', 'deploys approvals', [AGENT_RULE], ['Deploys need no approvals'])
      await assertKnows('bob', 'walrus service deploys', [BOB_LESSON], ['Bob deploys on Fridays', 'Bob likes tea'])
    })

    test('a write from another site, or without the session, is refused', async () => {
      const cookies = await context.cookies()
      const session = cookies.find((cookie) => cookie.path.startsWith('/engram-'))
      assert.ok(session, JSON.stringify(cookies.map((cookie) => cookie.path)))
      const own = (await mind.memories.getAll({ user: 'ada' })).memories.find((memory) => memory.text === ADA_ADDED)
      assert.ok(own)
      const url = `${address}${session.path}/edit/update`
      const body = JSON.stringify({ id: own.id, text: 'Ada reviews nothing' })
      const cookie = `${session.name}=${session.value}`
      // A page on another site posting with her cookie (as if the browser sent it).
      const crossSite = await fetch(url, { method: 'POST', headers: { cookie, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }, body })
      assert.equal(crossSite.status, 403)
      assert.match(((await crossSite.json()) as { error: { message: string } }).error.message, /Cross-site requests may not change this memory/)
      // What an HTML form on another site can send: not JSON.
      const form = await fetch(url, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `id=${own.id}&text=Ada+reviews+nothing` })
      assert.equal(form.status, 415)
      // No session at all.
      const anonymous = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      assert.equal(anonymous.status, 401)
      await assertKnows('ada', 'gannet pipeline Monday', [ADA_ADDED], ['Ada reviews nothing'])
    })
  })
})
