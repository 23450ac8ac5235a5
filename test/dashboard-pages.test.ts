// @slow: drives a real Chromium (scripts/run.sh test installs it)
/**
 * The dashboard read by a person (issue 30, decision 0072), in a real headless Chromium: the
 * overview, a user's page, a turn's "why" and the archive, each screenshot into
 * test-output/screenshots/ (overview.png, user-page.png, why-page.png, archive.png) and checked for
 * what it must show — on a home that lived 160 simulated days: memories of every kind, a profile
 * fact replaced, a lesson forgotten on request and a knowledge file by monthly forgetting, episodes
 * summarised offline, and turns. Memory text is rendered markdown (no raw "# Title", no stored
 * markup run), reasons are words with the score terms behind a closed toggle, degraded output is
 * said once, counts read "1 memory", and a user's token never opens another user's page.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { type ServerType, serve } from '@hono/node-server'
import type { Page } from 'playwright-core'
import { ManualClock } from '../src/core/clock.ts'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { type MindInternals, openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { launchBrowser, screenshot, shownText, shownTexts, type TestBrowser, typeAddress } from './support/browser.ts'

const ADMIN = 'admin-token-pages-0123456789ab'
const ADA = 'ada-token-pages-0123456789abcd'
const BOB = 'bob-token-pages-0123456789abcd'
const TOKENS = `${ADMIN}=admin, ${ADA}=default:ada, ${BOB}=default:bob`

const DAY = 86_400_000
const MINUTE = 60_000
const FORGOTTEN = 'Ada keeps her tea notes in the kestrel wiki'
const FORGET_REASON = 'Ada asked to drop it'
/** Markdown with markup meant to run and a link meant to run script: shown as text, never run. */
const HOSTILE_NOTE = '# Gannet notes\n\nPasted: <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=1">; [click me](javascript:window.__pwned=1) or [the wiki](https://gannet.example/wiki).\n'

/** A count said with the wrong number: "1 memories", "1 rules", "1 items"… */
const WRONG_PLURAL = /(?<![\d.])1 (memories|rules|lessons|facts|items|messages|summaries|entries|tokens|events|days|results|changes|turns|files|versions|episodes|procedures|sections|users|conversations|times)\b/
/** A markdown heading shown as its raw characters. */
const RAW_HEADING = /(^|\n)\s*#{1,6} \S/

/**
 * Day 0: ada's and bob's memories of each kind, ada's knowledge file no one will recall, a lesson
 * of ada's forgotten on request. Day 160: monthly forgetting takes the knowledge file; ada's profile
 * fact is replaced; she writes a knowledge file and a procedure and has two conversations, which
 * become episodes summarised without a model (none is configured).
 */
async function buildHome(mind: MindInternals, clock: ManualClock, start: number): Promise<void> {
  const report = await mind.encode([
    { text: 'Answer Ada with metric units', kind: 'always', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: 'The heron cache must be flushed after a schema migration', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada', topic: 'heron' },
    { text: 'Role: billing export maintainer', kind: 'profile', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: FORGOTTEN, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: 'Bob deploys the walrus service on Thursdays', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
    { text: 'Role: on-call lead for the osprey cluster', kind: 'profile', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
  ])
  assert.equal(report.saved.length, 6, JSON.stringify(report))
  const write = async (user: string, path: string, content: string) => {
    const tool = mind.agentTools({ sessionId: `setup-${user}`, user }).find((candidate) => candidate.name === 'write_memory_file')
    const written = await tool?.execute({ path, content })
    assert.notEqual(written?.isError, true, written?.text)
  }
  await write('ada', 'knowledge/kestrel-port.md', '# Kestrel VPN\nThe kestrel VPN listens on port 1194.\n')
  await write('bob', 'knowledge/osprey-cluster.md', '# Osprey cluster\nThe osprey cluster has twelve nodes.\n')
  assert.equal((await mind.forget(FORGOTTEN, { user: 'ada', reason: FORGET_REASON })).action, 'forgotten')

  clock.set(new Date(start + 160 * DAY))
  const maintained = await mind.maintain()
  assert.equal(maintained.jobs.find((job) => job.kind === 'consolidation-monthly')?.status, 'done', JSON.stringify(maintained.jobs))

  await write('ada', 'knowledge/billing-export.md', '# Billing export\n\nThe **billing export** runs nightly at `02:00`.\n\n- writes to the ledger bucket\n- retries twice on HTTP 429\n')
  await write('ada', 'knowledge/gannet-notes.md', HOSTILE_NOTE)
  await write('ada', 'procedures/restore-staging.md', '# Restore staging\n\n1. stop the app\n2. restore the snapshot\n')
  assert.equal((await mind.encode([{ text: 'Role: billing export lead', kind: 'profile', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' }])).saved.length, 1)
  for (const [session, topic] of [
    ['ada-mon', 'invoice export'],
    ['ada-tue', 'invoice archive'],
  ] as const) {
    const chat = mind.session(session, { user: 'ada' })
    let turn = await chat.begin(`The ${topic} of the billing export failed with HTTP 429.`)
    await chat.end(turn, `The billing API rate-limits the ${topic}; batch the calls.`)
    clock.advance(2 * MINUTE)
    turn = await chat.begin(`Batching fixed the ${topic}.`)
    await chat.end(turn, 'Glad it works.')
    clock.advance(15 * MINUTE)
    // Past the idle time, maintenance writes the session's episode (extractive: no model is configured).
    await mind.maintain()
  }
  const bob = mind.session('bob-walrus', { user: 'bob' })
  const turn = await bob.begin('When do we deploy the walrus service?')
  await bob.end(turn, 'On Thursdays.')
  await mind.idle()
}

describe('the dashboard read by a person, in a real browser', () => {
  let temp: TempHome
  let mind: MindInternals
  let server: ServerType
  let address: string
  let chromium: TestBrowser
  let admin: Page
  let adminProblems: string[]

  before(async () => {
    temp = makeTempHome('engram-pages-')
    const start = Date.now() - 170 * DAY
    const clock = new ManualClock(new Date(start))
    // No embedder: with a handful of memories a vector search returns (and counts as recalled) every one.
    mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
    await buildHome(mind, clock, start)
    const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    const info = await new Promise<AddressInfo>((done) => {
      server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, done)
    })
    address = `http://127.0.0.1:${info.port}`
    // Another browser test file of the same run may be writing its pictures: the folder is not emptied.
    chromium = await launchBrowser({ deadlineMs: 120_000 })
    const opened = await chromium.newPage()
    admin = opened.page
    adminProblems = opened.problems
    assert.equal((await admin.goto(`${address}/?token=${ADMIN}`))?.status(), 200)
  })

  after(async () => {
    await chromium?.close()
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()))
    await mind?.close()
    temp?.cleanup()
  })

  const typed = (page: Page, path: string) => typeAddress(page, `${address}${path}`)

  /** What every page read by a person must be: counts in the right number, no raw heading marks, nothing stored run as script. */
  async function assertReadable(page: Page, where: string): Promise<void> {
    const text = await shownText(page.locator('main'))
    assert.doesNotMatch(text, WRONG_PLURAL, `${where}: a count in the wrong number`)
    assert.doesNotMatch(text, RAW_HEADING, `${where}: markdown shown raw`)
    assert.equal(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned), undefined, `${where}: stored markup ran as script`)
    assert.equal(await page.locator('main script, main img, main a[href^="javascript:"]').count(), 0, `${where}: stored markup became an element`)
    // Landmarks and a way past the navigation: a screen reader lists them, a keyboard user skips.
    assert.equal(await page.getByRole('navigation', { name: 'Dashboard pages' }).count(), 1)
    assert.equal(await page.getByRole('main').count(), 1)
    assert.equal(await page.getByRole('link', { name: "Skip to the page's content" }).count(), 1)
  }

  test('the overview links to each user page, and reads as a person reads', async () => {
    const response = await typed(admin, '/')
    assert.equal(response.status(), 200)
    await screenshot(admin, 'overview')
    await assertReadable(admin, 'overview')
    assert.deepEqual(await shownTexts(admin.getByTestId('user-page-link')), ['ada', 'bob'])
    // The recalled picture names memories by their words, not their markdown.
    const labels = await admin.getByTestId('chart-recalled').locator('svg text').allTextContents()
    assert.ok(!labels.some((label) => /: #/.test(label)), labels.join(' | '))
    // Keyboard: the first Tab reaches the skip link, which takes the focus to the page's content.
    await admin.keyboard.press('Tab')
    assert.equal(await shownText(admin.locator(':focus')), "Skip to the page's content")
    await admin.keyboard.press('Enter')
    assert.equal(await admin.locator(':focus').getAttribute('id'), 'content')
    assert.deepEqual(adminProblems, [])
  })

  test("a user page: what the agent knows about ada, by kind, with her turns and what she lost", async () => {
    await typed(admin, '/')
    await admin.getByTestId('user-page-link').filter({ hasText: 'ada' }).click()
    await admin.waitForURL(/\/users\/ada$/)
    await admin.getByTestId('user-turns').waitFor()
    await screenshot(admin, 'user-page')
    await assertReadable(admin, 'user page')
    assert.equal(await shownText(admin.getByRole('heading', { level: 2 })), 'User ada')
    const section = (kind: string) => admin.locator(`[data-testid=user-section][data-kind=${kind}]`)
    // Grouped by kind, each a heading a screen reader lists, each memory with its date and source.
    assert.deepEqual(await shownTexts(section('profile').getByTestId('profile-fact')), ['Role: billing export lead'])
    assert.match(await shownText(section('rule')), /Always: Answer Ada with metric units/)
    assert.match(await shownText(section('lesson')), /The heron cache must be flushed after a schema migration/)
    assert.doesNotMatch(await shownText(section('lesson')), /kestrel/, 'a forgotten lesson is not among what the agent knows')
    const knowledge = section('knowledge').getByTestId('user-memory').filter({ hasText: 'runs nightly' })
    assert.equal(await knowledge.locator('.md-heading strong', { hasText: 'Billing export' }).count(), 1, 'the heading rendered, not "# Billing export"')
    assert.equal(await knowledge.locator('li').count(), 2, 'its list rendered as a list')
    assert.match(await shownText(knowledge), /\d{4}-\d{2}-\d{2}[\s\S]*users\/ada\/knowledge\/billing-export\.md/)
    assert.match(await shownText(section('procedure')), /restore the snapshot/)
    // The hostile note: its markup as text, its script link no link, its web link a link.
    const hostile = section('knowledge').getByTestId('user-memory').filter({ hasText: 'Gannet notes' })
    assert.match(await shownText(hostile), /<script>window\.__pwned=1<\/script>/)
    assert.equal(await hostile.locator('a[href="https://gannet.example/wiki"]').count(), 1)
    // Episodes summarised without a model: said once for the section, not on each of the two.
    const episodes = section('episode')
    assert.equal(await episodes.getByTestId('user-memory').count(), 2)
    assert.equal(await episodes.getByTestId('degraded-notice').count(), 1)
    assert.match(await shownText(episodes.getByTestId('degraded-notice')), /^Both are degraded: extractive summary \(no LLM summary: no LLM configured/)
    assert.doesNotMatch(await shownText(admin.locator('main')), /Extractive summary \(no LLM summary/)
    // Recent turns, each linking to what it was given and why.
    const turns = admin.getByTestId('user-turn')
    assert.equal(await turns.count(), 4)
    assert.ok((await shownTexts(admin.getByTestId('turn-why-link'))).includes('why: turn 1 of ada-mon'))
    // What was forgotten (when and why) and what was superseded (when, and by what).
    const forgotten = admin.getByTestId('user-forgotten')
    const monthly = forgotten.filter({ hasText: 'Kestrel VPN' })
    assert.match(await shownText(monthly.getByTestId('forgotten-at')), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/)
    assert.match(await shownText(monthly.getByTestId('forgotten-why')), /^forgotten: monthly forgetting: unaccessed for \d+ days/)
    assert.match(await shownText(forgotten.filter({ hasText: FORGOTTEN }).getByTestId('forgotten-why')), new RegExp(`forgotten: ${FORGET_REASON}$`))
    const superseded = admin.getByTestId('user-superseded').filter({ hasText: 'Role: billing export maintainer' })
    assert.match(await shownText(superseded), /\d{4}-\d{2}-\d{2} \d{2}:\d{2}\s+Role: billing export lead/)
    assert.doesNotMatch(await shownText(admin.locator('main')), /walrus|osprey/, "nothing of bob's")
    // The page leads to where these memories are changed, in ada's view.
    assert.match((await admin.getByTestId('user-edit-link').getAttribute('href')) ?? '', /\/edit\?user=ada$/)
    // Each source opens: the profile's file among them.
    await section('profile').getByTestId('profile-source').click()
    await admin.getByTestId('file-path').waitFor()
    assert.match(await shownText(admin.locator('main')), /Role: billing export lead/)
    assert.deepEqual(adminProblems, [])
  })

  test("a turn's why page: each memory's reason in words, its score terms behind a closed toggle", async () => {
    await typed(admin, '/users/ada')
    await admin.getByTestId('turn-why-link').filter({ hasText: 'why: turn 1 of ada-mon' }).click()
    await admin.waitForURL(/\/turns\/ada-mon\/1$/)
    await admin.getByTestId('provenance').waitFor()
    await screenshot(admin, 'why-page')
    await assertReadable(admin, 'why page')
    const item = admin.locator('[data-testid=provenance-item][data-channel=related][data-kind=knowledge]').filter({ hasText: 'runs nightly' })
    assert.equal(await item.count(), 1, await shownText(admin.getByTestId('provenance')))
    assert.equal(await item.locator('.md-heading strong', { hasText: 'Billing export' }).count(), 1)
    assert.match(await shownText(item.getByTestId('provenance-reason')), /^Shares (most|some) of its words with the message/)
    const terms = item.getByTestId('score-terms')
    assert.equal(await terms.getAttribute('open'), null, 'closed until asked')
    assert.equal(await terms.locator('dl').isVisible(), false)
    // Opened from the keyboard, as a person without a mouse would.
    await terms.locator('summary').focus()
    await admin.keyboard.press('Enter')
    const shown = await shownText(terms.locator('dl'))
    for (const term of ['lexical', 'dense', 'fused', 'information', 'history']) assert.match(shown, new RegExp(`^${term}: `, 'm'), shown)
    // The user is named with a link to their page.
    await admin.getByTestId('user-link').click()
    await admin.waitForURL(/\/users\/ada$/)
    // A search on the Memories page says why each hit was found the same way.
    await typed(admin, '/memories?user=ada&q=billing+export+ledger')
    await assertReadable(admin, 'memories search')
    const hit = admin.getByTestId('memory-row').filter({ hasText: 'runs nightly' })
    assert.match(await shownText(hit.getByTestId('provenance-reason')), /^Shares (most|some) (of its )?words with the search/)
    assert.equal(await hit.getByTestId('score-terms').getAttribute('open'), null)
    assert.deepEqual(adminProblems, [])
  })

  test('the archive: each forgotten row with its date and reason, monthly forgetting included', async () => {
    await typed(admin, '/archive')
    await screenshot(admin, 'archive')
    await assertReadable(admin, 'archive')
    const monthly = admin.getByTestId('archive-row').filter({ hasText: 'kestrel VPN listens' })
    assert.equal(await monthly.count(), 1, await shownText(admin.locator('main')))
    assert.match(await shownText(monthly.getByTestId('archive-when')), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/)
    assert.match(await shownText(monthly.getByTestId('archive-reason')), /^monthly forgetting: unaccessed for \d+ days/)
    const asked = admin.getByTestId('archive-row').filter({ hasText: FORGOTTEN })
    assert.match(await shownText(asked.getByTestId('archive-when')), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/)
    assert.equal(await shownText(asked.getByTestId('archive-reason')), FORGET_REASON, 'the reason as it was given, spaces and all')
    // Every Restore button says what it restores.
    for (const label of await admin.getByTestId('restore-button').evaluateAll((buttons) => buttons.map((button) => button.getAttribute('aria-label')))) {
      assert.match(String(label), /^Restore \S+ \S+/)
    }
    assert.deepEqual(adminProblems, [])
  })

  test('an episode file says once that its sections were summarised without a model', async () => {
    await typed(admin, '/users/ada')
    await admin.locator('[data-testid=user-section][data-kind=episode]').getByTestId('user-memory-source').first().click()
    await admin.getByTestId('file-body').waitFor()
    await screenshot(admin, 'episode-file')
    await assertReadable(admin, 'episode file')
    assert.equal(await admin.getByTestId('degraded-notice').count(), 1)
    assert.doesNotMatch(await shownText(admin.getByTestId('file-body')), /Extractive summary|<!-- episode/)
    assert.deepEqual(adminProblems, [])
  })

  test("a user's token opens its own page and is refused another user's", async () => {
    const { context, page, problems } = await chromium.newPage()
    try {
      await page.goto(`${address}/?token=${ADA}`)
      assert.deepEqual(await shownTexts(page.getByTestId('user-page-link')), ["ada's page"])
      const own = await typed(page, '/users/ada')
      assert.equal(own.status(), 200)
      assert.match(await shownText(page.locator('main')), /Role: billing export lead/)
      const bobs = await typed(page, '/users/bob')
      assert.equal(bobs.status(), 404, 'answered as a page that does not exist')
      assert.doesNotMatch(await shownText(page.locator('main')), /walrus|osprey/)
      assert.equal(await page.getByTestId('error').getAttribute('data-code'), 'not_found')
      assert.deepEqual(problems, [])
    } finally {
      await context.close()
    }
    // Without a browser too: bob's token on ada's page, and the administrator on a user who does not exist.
    for (const [token, path] of [
      [BOB, '/users/ada'],
      [ADA, '/users/bob'],
      [ADMIN, '/users/nobody'],
    ] as const) {
      const response = await fetch(`${address}${path}`, { headers: { authorization: `Bearer ${token}` } })
      const text = await response.text()
      assert.equal(response.status, 404, `${path}: ${text.slice(0, 200)}`)
      assert.doesNotMatch(text, /billing export lead|walrus|osprey/)
    }
  })
})
