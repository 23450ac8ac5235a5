// @slow: drives a real Chromium (scripts/run.sh test installs it)
/**
 * The dashboard's browser credential stays with its own server (decision 0051), in a
 * real Chromium against the real `engram serve` in a child process: with no tokens configured and
 * with tokens. The person opens the printed address (or theirs with ?token=); the same browser then
 * visits an unrelated server on another 127.0.0.1 port, which records every header it gets. That
 * server must receive nothing of engram's (cookies are not scoped by port, so a cookie at Path=/
 * went to every service on the loopback, and it was the administrator's token itself); whatever the
 * browser holds must not work against /v1 from a program; an open server's printed address does
 * not make an administrator; the 303 that strips ?token= and the pages say Referrer-Policy:
 * no-referrer; and the dashboard's own pages and buttons (Restore, Accept) keep working.
 *
 * The cookie's Path is its only fence (cookies ignore ports), so the unrelated server also sends
 * the browser to its own port at every place an attacker could compute (the old `/engram-<port>`)
 * and must get no cookie; the real place is not a function of the port (two tokens, two places),
 * no answer to a request without the token names it, and typed addresses still reach the
 * dashboard through the landing page, which reads the place from this origin's localStorage.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { BrowserContext, Locator, Page, Response } from 'playwright-core'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { launchBrowser, screenshot, shownText, shownTexts, type TestBrowser } from './support/browser.ts'
import { type ServeProcess, startServe } from './support/serve-process.ts'

const ADMIN = 'admin-token-credential-0123456789'
const ADA = 'ada-token-credential-0123456789ab'
const TOKENS = `${ADMIN}=admin, ${ADA}=default:ada`

const AGENT_FORGOTTEN = 'The agent keeps the osprey runbook in the blue binder'
const ADA_FORGOTTEN = 'Ada keeps her kestrel notes in the green folder'
const AGENT_PENDING = 'The pelican staging database is read-only on weekends'
const ADA_PENDING = 'Ada prefers the heron dashboard in dark mode'
const ADA_SECRET = 'Ada stores the vault code under the marmot rug'

/** One request the unrelated server received. */
interface Recorded {
  url: string
  headers: IncomingHttpHeaders
}

/** An unrelated web server on another loopback port that keeps the headers of every request. */
async function startRecorder(): Promise<{ server: Server; address: string; requests: Recorded[] }> {
  const requests: Recorded[] = []
  const server = createServer((request, response) => {
    requests.push({ url: request.url ?? '', headers: request.headers })
    // The attack: a page of this service sends the browser on to this service's own port at the
    // place engram's cookie might have (`/go?to=/engram-7477/`), where the browser sends whatever
    // cookie it holds for that path, whichever port set it.
    const to = new URL(request.url ?? '/', 'http://recorder').searchParams.get('to')
    if (to?.startsWith('/') && !to.startsWith('//')) {
      response.writeHead(302, { location: to })
      response.end()
      return
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end('<!doctype html><title>another service</title><p>another service on this machine</p>')
  })
  const info = await new Promise<AddressInfo>((done) => server.listen(0, '127.0.0.1', () => done(server.address() as AddressInfo)))
  return { server, address: `http://127.0.0.1:${info.port}`, requests }
}

/**
 * A home in copilot mode: memories of the agent, of ada and of bob; one of the agent's and one of
 * ada's forgotten (for Restore); one confirmation waiting in the agent's queue and one in ada's.
 */
async function buildHome(temp: TempHome): Promise<void> {
  const mind = await openMindInternals({ home: temp.home, env: temp.env, settings: { 'memory.mode': 'copilot' } })
  try {
    const report = await mind.encode([
      { text: 'Deploys need two approvals', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
      { text: AGENT_FORGOTTEN, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user' },
      { text: ADA_SECRET, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
      { text: ADA_FORGOTTEN, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
      { text: 'Bob deploys the walrus service on Thursdays', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
    ])
    assert.equal(report.saved.length, 5, JSON.stringify(report))
    assert.equal((await mind.forget(AGENT_FORGOTTEN)).action, 'forgotten')
    assert.equal((await mind.forget(ADA_FORGOTTEN, { user: 'ada' })).action, 'forgotten')
    await mind.backend.confirmations.enqueue({ text: AGENT_PENDING, kind: 'lesson', scope: 'global', confidence: 'medium', source: 'llm', owner: 'agent' }, 'copilot mode: confidence medium')
    await mind.backend.confirmations.enqueue({ text: ADA_PENDING, kind: 'lesson', scope: 'global', confidence: 'medium', source: 'llm', owner: 'user:ada' }, 'copilot mode: confidence medium', 'ada')
    await mind.idle()
  } finally {
    await mind.close()
  }
}

/** `engram serve` on `temp`'s home in copilot mode (the printed dashboard address read from its line). */
async function startEngram(temp: TempHome, tokens?: string): Promise<ServeProcess> {
  return startServe({ home: temp.home, env: { ...temp.env, ENGRAM_MEMORY_MODE: 'copilot', ...(tokens !== undefined ? { ENGRAM_SERVE_TOKENS: tokens } : {}) } })
}

/**
 * Open `url` (an address with ?token=) as a person does: the first answer is a 303 that drops the
 * token and says Referrer-Policy: no-referrer; the page then shows without the token in the address.
 */
async function openWithToken(page: Page, url: string): Promise<Response> {
  const response = await page.goto(url)
  assert.ok(response, url)
  assert.equal(response.status(), 200, await shownText(page.locator('body')).catch(() => ''))
  const chain: Response[] = []
  for (let request = response.request().redirectedFrom(); request; request = request.redirectedFrom()) {
    const redirect = await request.response()
    if (redirect) chain.unshift(redirect)
  }
  const exchange = chain[0]
  assert.ok(exchange, 'the address with ?token= was answered by a redirect')
  assert.equal(exchange.status(), 303)
  assert.equal(exchange.headers()['referrer-policy'], 'no-referrer', 'the 303 that strips ?token= sends no referrer on')
  assert.ok(!(exchange.headers().location ?? '').includes('token='), exchange.headers().location)
  assert.equal(new URL(page.url()).searchParams.get('token'), null, 'the token left the address bar')
  assert.equal(response.headers()['referrer-policy'], 'no-referrer', 'the page sends no referrer on either')
  return response
}

/** The place the browser's page is at (`/engram-<port>-<id>`), from its address. */
function placeOfPage(page: Page): string {
  const place = /^\/engram-\d+-[A-Za-z0-9_-]{22}(?=\/|$)/.exec(new URL(page.url()).pathname)?.[0]
  assert.ok(place, `the page is at a place: ${page.url()}`)
  return place
}

/**
 * Type `path` of `address` into the address bar: the server answers a landing page that names no
 * place (it cannot tell who asks), whose script finds the place in this origin's localStorage and
 * goes there. The answer of the page at the place is returned.
 */
async function typed(page: Page, address: string, path: string): Promise<Response> {
  const atPlace = page.waitForResponse((response) => response.request().isNavigationRequest() && response.frame() === page.mainFrame() && /^\/engram-\d+-/.test(new URL(response.url()).pathname))
  const landing = await page.goto(`${address}${path}`)
  assert.equal(landing?.status(), 200, path)
  assert.equal(landing?.headers().location, undefined)
  // (Its body is gone once the script has moved on; assertPlaceUnrevealed reads it as a program.)
  assert.match(landing.headers()['content-security-policy'] ?? '', /script-src 'self'/, 'the landing page')
  const response = await atPlace
  await page.waitForLoadState('load')
  assert.equal(new URL(page.url()).pathname.replace(/^\/engram-\d+-[A-Za-z0-9_-]{22}/, ''), new URL(path, address).pathname, 'the same page, at the place')
  return response
}

/** Open a dashboard page at `path` of `address` as a person types it, expect 200 and no-referrer; screenshot it. */
async function visit(page: Page, address: string, path: string, name: string): Promise<void> {
  const response = await typed(page, address, path)
  assert.equal(response.status(), 200, `${path}: ${await shownText(page.locator('body')).catch(() => '')}`)
  assert.equal(response.headers()['referrer-policy'], 'no-referrer', path)
  await screenshot(page, name)
}

/**
 * The harvest of decision 0058: the unrelated server sends the browser to its own port at every
 * place of engram's an attacker can compute from engram's port (the place was `/engram-<port>`),
 * and must receive no cookie there. `place`, the real one, is not among them.
 */
async function harvestAtGuessedPlaces(page: Page, recorder: { address: string; requests: Recorded[] }, engram: string, place: string): Promise<void> {
  const port = new URL(engram).port
  const guesses = [`/engram-${port}`, `/engram-${port}/`, `/engram-${port}/memories`, `/engram-${port}-/`, `/engram-${port}-${port}/`]
  assert.ok(!guesses.some((guess) => guess.startsWith(`${place}/`) || guess === place), 'the real place is not derived from the port')
  const before = recorder.requests.length
  for (const guess of guesses) {
    const response = await page.goto(`${recorder.address}/go?to=${encodeURIComponent(guess)}`)
    assert.equal(response?.status(), 200)
    assert.equal(new URL(page.url()).pathname, guess.split('?')[0], 'the browser followed the unrelated server to its own port at the guessed place')
    // The unrelated origin cannot read engram's origin's storage either.
    assert.equal(await page.evaluate(() => localStorage.length), 0, "another port reads nothing of engram's localStorage")
  }
  const received = recorder.requests.slice(before).filter((request) => !request.url.startsWith('/go?') && request.url !== '/favicon.ico')
  assert.equal(received.length, guesses.length, received.map((request) => request.url).join(', '))
  for (const request of received) assert.equal(request.headers.cookie, undefined, `${request.url} received engram's cookie: ${request.headers.cookie}`)
}

/** A program without a credential (curl, another service) asks for the dashboard's addresses: no answer names the place. */
async function assertPlaceUnrevealed(engram: string, place: string): Promise<void> {
  // `/engram-<port>-<id>`: the id is base64url, which may itself hold a '-', so it starts after the port's.
  const id = place.slice(place.indexOf('-', '/engram-'.length) + 1)
  assert.equal(id.length, 22, place)
  for (const path of ['/', '/memories', '/archive?user=ada', '/confirmations', '/assets/engram-landing.js', '/assets/dashboard.js', `/engram-${new URL(engram).port}/`, '/v1/export']) {
    for (const headers of [{}, { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none', 'upgrade-insecure-requests': '1' }, { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'same-site' }]) {
      const answer = await fetch(`${engram}${path}`, { headers, redirect: 'manual' })
      const body = await answer.text()
      assert.ok(!(answer.headers.get('location') ?? '').includes(id), `${path} redirects to the place`)
      assert.ok(!body.includes(id), `${path} names the place in its body`)
      assert.ok(![...answer.headers.values()].some((value) => value.includes(id)), `${path} names the place in a header`)
    }
  }
}

/** Click a button of the page's script (it POSTs to the API and reloads); the error it shows fails the test. */
async function clickAndReload(page: Page, button: Locator): Promise<void> {
  const reloaded = page.waitForEvent('load')
  await button.click()
  const outcome = await Promise.race([reloaded.then(() => 'reloaded'), page.locator('.result.warn').waitFor().then(() => 'error')])
  if (outcome === 'error') assert.fail(`the action failed: ${await shownText(page.locator('.result.warn'))}`)
}

/**
 * The same browser visits the unrelated server at a few addresses (its root, and the paths the
 * dashboard and the API use on engram); no request may carry a cookie or anything of `secrets`.
 */
async function visitUnrelated(page: Page, recorder: { address: string; requests: Recorded[] }, secrets: string[]): Promise<void> {
  const before = recorder.requests.length
  for (const path of ['/', '/memories', '/v1/export', '/archive?user=ada']) {
    const response = await page.goto(`${recorder.address}${path}`)
    assert.equal(response?.status(), 200)
  }
  const received = recorder.requests.slice(before)
  assert.ok(received.length >= 4, `the unrelated server was visited: ${received.map((request) => request.url).join(', ')}`)
  for (const request of received) {
    assert.equal(request.headers.cookie, undefined, `${request.url} received a cookie from engram's browser session: ${request.headers.cookie}`)
    assert.equal(request.headers.authorization, undefined)
    const all = JSON.stringify(request.headers)
    for (const secret of secrets) assert.ok(!all.includes(secret), `${request.url} received a credential of engram's`)
  }
}

/**
 * Everything the browser holds for engram, replayed from a program: no cookie value is a bearer
 * token of /v1, and sent back as a cookie to /v1 it does not take the whole export.
 */
async function assertHoldsNoApiCredential(context: BrowserContext, engram: string): Promise<void> {
  const cookies = await context.cookies()
  assert.ok(cookies.length > 0, 'the browser holds a session of the dashboard')
  for (const cookie of cookies) {
    const asBearer = await fetch(`${engram}/v1/export`, { headers: { authorization: `Bearer ${cookie.value}` } })
    assert.equal(asBearer.status, 401, `the browser's cookie ${cookie.name} works as a bearer token`)
    await asBearer.body?.cancel()
    const asCookie = await fetch(`${engram}/v1/export`, { headers: { cookie: `${cookie.name}=${cookie.value}` } })
    assert.notEqual(asCookie.status, 200, `the browser's cookie ${cookie.name} replayed to /v1/export took the export`)
    await asCookie.body?.cancel()
  }
}

describe("the dashboard's browser credential stays with its own server", { timeout: 240_000 }, () => {
  let chromium: TestBrowser
  let recorder: Awaited<ReturnType<typeof startRecorder>>

  before(async () => {
    // dashboard-browser.test.ts empties the screenshot folder; this file may run beside it.
    chromium = await launchBrowser({ deadlineMs: 220_000 })
    recorder = await startRecorder()
  })

  after(async () => {
    await chromium?.close()
    await new Promise<void>((done) => (recorder ? recorder.server.close(() => done()) : done()))
  })

  test('no tokens configured: the printed address reaches no other service, is no bearer token and no administrator; Restore and Accept work', async (t) => {
    const temp = makeTempHome('engram-credential-open-')
    t.after(() => temp.cleanup())
    await buildHome(temp)
    const engram = await startEngram(temp)
    t.after(async () => void (await engram.stop()))
    const { context, page, problems } = await chromium.newPage()
    t.after(() => context.close())

    const printed = engram.dashboard
    assert.match(printed, /^http:\/\/127\.0\.0\.1:\d+\//)
    const printedToken = new URL(printed).searchParams.get('token')
    await openWithToken(page, printed)
    await screenshot(page, 'credential-open-overview')
    assert.match(await shownText(page.getByTestId('viewer')), /the agent alone/, 'the printed address does not make an administrator')

    const place = placeOfPage(page)
    await visitUnrelated(page, recorder, printedToken ? [printedToken] : [])
    await harvestAtGuessedPlaces(page, recorder, engram.address, place)
    await assertPlaceUnrevealed(engram.address, place)
    await assertHoldsNoApiCredential(context, engram.address)
    if (printedToken) {
      const asBearer = await fetch(`${engram.address}/v1/export`, { headers: { authorization: `Bearer ${printedToken}` } })
      assert.equal(asBearer.status, 401, "the printed address's token is not a bearer token of the API")
      await asBearer.body?.cancel()
    }
    // Another user's memory is not the printed address's to see.
    const named = await typed(page, engram.address, '/memories?user=ada')
    assert.equal(named.status(), 403)
    assert.doesNotMatch(await shownText(page.locator('main')), /marmot rug/)

    // The pages and their buttons still work: Restore the agent's forgotten memory, Accept its confirmation.
    await visit(page, engram.address, '/archive', 'credential-open-archive')
    const forgotten = page.getByTestId('archive-row').filter({ hasText: AGENT_FORGOTTEN })
    assert.equal(await forgotten.count(), 1, await shownText(page.locator('main')))
    await clickAndReload(page, forgotten.getByTestId('restore-button'))
    assert.equal(await page.getByTestId('archive-row').filter({ hasText: AGENT_FORGOTTEN }).count(), 0, 'gone from the archive')
    await visit(page, engram.address, '/memories?q=osprey+runbook+binder', 'credential-open-restored')
    assert.ok((await shownTexts(page.getByTestId('memory-text'))).some((text) => text.includes(AGENT_FORGOTTEN)), 'found again')

    await visit(page, engram.address, '/confirmations', 'credential-open-confirmations')
    await clickAndReload(page, page.getByTestId('confirmation-row').filter({ hasText: AGENT_PENDING }).getByTestId('accept-button'))
    assert.equal(await page.getByTestId('confirmation-row').filter({ hasText: AGENT_PENDING }).count(), 0)
    await visit(page, engram.address, '/memories?q=pelican+staging+weekends', 'credential-open-accepted')
    assert.ok((await shownTexts(page.getByTestId('memory-text'))).some((text) => text.includes(AGENT_PENDING)), 'saved after the yes')

    // After all that, the unrelated server still gets nothing.
    await visitUnrelated(page, recorder, printedToken ? [printedToken] : [])
    assert.deepEqual(problems, [])
  })

  test("with tokens: an administrator's and a user's browser reach no other service and hold no bearer token; the pages work", async (t) => {
    const temp = makeTempHome('engram-credential-tokens-')
    t.after(() => temp.cleanup())
    await buildHome(temp)
    const engram = await startEngram(temp, TOKENS)
    t.after(async () => void (await engram.stop()))
    assert.equal(new URL(engram.dashboard).searchParams.get('token'), null, 'with tokens configured, the printed address carries none')

    const admin = await chromium.newPage()
    t.after(() => admin.context.close())
    await openWithToken(admin.page, `${engram.address}/?token=${ADMIN}`)
    assert.match(await shownText(admin.page.getByTestId('viewer')), /administrator/)
    const adminPlace = placeOfPage(admin.page)
    await visitUnrelated(admin.page, recorder, [ADMIN, ADA])
    await harvestAtGuessedPlaces(admin.page, recorder, engram.address, adminPlace)
    await assertPlaceUnrevealed(engram.address, adminPlace)
    await assertHoldsNoApiCredential(admin.context, engram.address)
    // The session at the place, replayed by a program that learned nothing but the port, is refused.
    const [adminCookie] = await admin.context.cookies()
    assert.equal(adminCookie?.path, adminPlace, "the cookie's Path is the place")
    const replayed = await fetch(`${engram.address}/engram-${new URL(engram.address).port}/memories?user=ada`, { headers: { cookie: `${adminCookie?.name}=${adminCookie?.value}` } })
    assert.notEqual(replayed.status, 200, 'the old place serves no page for the session')
    assert.doesNotMatch(await replayed.text(), /marmot rug/)

    // The administrator's pages, through the addresses a person types, and the buttons.
    await visit(admin.page, engram.address, '/archive?user=ada', 'credential-admin-archive')
    const forgotten = admin.page.getByTestId('archive-row').filter({ hasText: ADA_FORGOTTEN })
    assert.equal(await forgotten.count(), 1, await shownText(admin.page.locator('main')))
    await clickAndReload(admin.page, forgotten.getByTestId('restore-button'))
    assert.equal(await admin.page.getByTestId('archive-row').filter({ hasText: ADA_FORGOTTEN }).count(), 0)
    await visit(admin.page, engram.address, '/memories?user=ada&q=kestrel+notes+folder', 'credential-admin-restored')
    assert.ok((await shownTexts(admin.page.getByTestId('memory-text'))).some((text) => text.includes(ADA_FORGOTTEN)), 'found again')
    await visit(admin.page, engram.address, '/confirmations?user=ada', 'credential-admin-confirmations')
    await clickAndReload(admin.page, admin.page.getByTestId('confirmation-row').filter({ hasText: ADA_PENDING }).getByTestId('accept-button'))
    assert.equal(await admin.page.getByTestId('confirmation-row').filter({ hasText: ADA_PENDING }).count(), 0)
    // The navigation's links keep to the session.
    await admin.page.getByRole('link', { name: 'Memories' }).click()
    await admin.page.waitForLoadState('load')
    assert.match(await shownText(admin.page.getByTestId('viewer')), /administrator/)
    await visitUnrelated(admin.page, recorder, [ADMIN, ADA])
    assert.deepEqual(admin.problems, [])

    // Ada's own browser: her view, nothing of it sent elsewhere, nothing replayable.
    const ada = await chromium.newPage()
    t.after(() => ada.context.close())
    await openWithToken(ada.page, `${engram.address}/memories?token=${ADA}`)
    assert.match(await shownText(ada.page.getByTestId('viewer')), /user ada/)
    assert.match((await shownTexts(ada.page.getByTestId('memory-text'))).join('\n'), /marmot rug/)
    const adaPlace = placeOfPage(ada.page)
    assert.notEqual(adaPlace, adminPlace, 'the place is not a function of the port: each token has its own')
    await visitUnrelated(ada.page, recorder, [ADMIN, ADA])
    await harvestAtGuessedPlaces(ada.page, recorder, engram.address, adaPlace)
    // A typed address reaches her dashboard through the landing page.
    await visit(ada.page, engram.address, '/activity', 'credential-ada-activity')
    assert.match(await shownText(ada.page.getByTestId('viewer')), /user ada/)
    await assertHoldsNoApiCredential(ada.context, engram.address)
    assert.deepEqual(ada.problems, [])

    // A browser that opened nothing has no credential: a typed address stays on the landing page,
    // which asks for the printed address; the administrator's place, if it knew it, is 401.
    const stranger = await chromium.newPage()
    t.after(() => stranger.context.close())
    const landing = await stranger.page.goto(`${engram.address}/memories`)
    assert.equal(landing?.status(), 200)
    assert.match(await shownText(stranger.page.getByTestId('landing')), /open the address engram serve printed/)
    assert.equal(new URL(stranger.page.url()).pathname, '/memories')
    const refused = await stranger.page.goto(`${engram.address}${adminPlace}/memories`)
    assert.equal(refused?.status(), 401)
  })
})
