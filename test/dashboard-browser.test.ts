// @slow: drives a real Chromium (scripts/run.sh test installs it)
/**
 * The dashboard of `engram serve` in a real headless Chromium (decision 0038): a home with two users,
 * memories of every kind, a conversation folded into summaries, a confirmation waiting, a forgotten
 * memory and a memory carrying markup meant to run; the real server over a socket, opened as a
 * person opens the printed address (`?token=`, then the cookie). Each page is opened, screenshot
 * into test-output/screenshots/ and checked for what a person sees on it; the buttons are clicked
 * (through the page's own script, the CSP on); no stored text ever runs as script.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { type ServerType, serve } from '@hono/node-server'
import type { Locator, Page } from 'playwright-core'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { launchBrowser, screenshot, shownText, shownTexts, type TestBrowser, typeAddress } from './support/browser.ts'

const ADMIN = 'admin-token-browser-0123456789'
const ADA = 'ada-token-browser-0123456789ab'
const BOB = 'bob-token-browser-0123456789ab'
const TOKENS = `${ADMIN}=admin, ${ADA}=default:ada, ${BOB}=default:bob`

/** The markup a hostile user pasted; stored as text, it must show as text and never run. */
const HOSTILE = 'Pasted from the gannet wiki: <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=1"> there'
const FORGOTTEN = 'Ada keeps her tea notes in the kestrel wiki'
/** Waits in ada's confirmation queue: a promotion of her memory to the agent's (copilot mode). */
const PROMOTED = 'The pelican staging database is read-only on weekends'
const CONVERSATION = 'ada-heron-chat'

/**
 * The home: ada and bob with memories of each kind (rules, lessons with a topic, profile facts,
 * a knowledge file), the agent's own rule, ada's conversation compacted into summaries (a small
 * context budget), one confirmation of ada's waiting, one lesson of ada's forgotten.
 */
async function buildHome(mind: MindInternals): Promise<void> {
  const report = await mind.encode([
    { text: 'Answer Ada with metric units', kind: 'always', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: 'Never page Ada before 9am', kind: 'never', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: 'The heron cache must be flushed after a schema migration', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada', topic: 'heron' },
    { text: 'Role: billing export maintainer', kind: 'profile', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: FORGOTTEN, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: HOSTILE, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
    { text: 'Bob deploys the walrus service on Thursdays', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob', topic: 'walrus' },
    { text: 'Always answer Bob in French', kind: 'always', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
    { text: 'Role: on-call lead for the osprey cluster', kind: 'profile', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
    { text: 'Deploys need two approvals', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
  ])
  assert.equal(report.saved.length, 10, JSON.stringify(report))
  const adaTools = mind.agentTools({ sessionId: 'setup-ada', user: 'ada' })
  const bobTools = mind.agentTools({ sessionId: 'setup-bob', user: 'bob' })
  const write = async (tools: typeof adaTools, path: string, content: string) => {
    const written = await tools.find((tool) => tool.name === 'write_memory_file')!.execute({ path, content })
    assert.equal(written.isError, undefined, written.text)
  }
  await write(adaTools, 'knowledge/billing-export.md', '# Billing export\nThe billing export runs nightly at 02:00 and writes to the ledger bucket.\n')
  await write(bobTools, 'knowledge/osprey-cluster.md', '# Osprey cluster\nThe osprey cluster has twelve nodes in the north hall.\n')

  const forgotten = await mind.forget(FORGOTTEN, { user: 'ada' })
  assert.equal(forgotten.action, 'forgotten')

  // Ada's conversation: enough turns for the small budget to fold the older ones into summaries.
  const ada = mind.session(CONVERSATION, { user: 'ada' })
  for (let i = 1; i <= 8; i++) {
    const turn = await ada.begin(`Question ${i}: what happens to the heron cache after schema migration ${i}?`)
    if (i === 8) {
      const memorize = turn.tools.find((tool) => tool.name === 'memorize')!
      const queued = await memorize.execute({ entries: [{ text: PROMOTED, kind: 'lesson', owner: 'agent' }] })
      assert.match(queued.text, /waiting for the user's confirmation/)
    }
    await ada.end(turn, `Answer ${i}: flush the heron cache after migration ${i}; the billing export then reads fresh rows.`)
    // A person takes longer to answer than the background compaction the turn queued (decision
    // 0043: past the threshold, compaction runs between turns), so the next turn sees its summaries.
    await mind.idle()
  }
  const bob = mind.session('bob-walrus-chat', { user: 'bob' })
  const turn = await bob.begin('When do we deploy the walrus service?')
  await bob.end(turn, 'On Thursdays, as you told me.')
  await mind.idle()
  // The day's first maintenance runs daily consolidation, as engram serve's schedule does (offline:
  // what needs a model is reported pending).
  await mind.maintain()
  const stats = await mind.context.stats({ sessionId: CONVERSATION, agent: mind.agent, user: 'ada' })
  assert.ok(stats.summaries > 0, `the conversation was compacted: ${JSON.stringify(stats)}`)
  assert.equal((await mind.pendingConfirmations({ user: 'ada' })).length, 1)
}

describe('the dashboard in a real browser', () => {
  let temp: TempHome
  let mind: MindInternals
  let server: ServerType
  let address: string
  let chromium: TestBrowser
  /** The administrator's page (cookie from the address with ?token=) and what went wrong in it. */
  let admin: Page
  let adminProblems: string[]

  before(async () => {
    temp = makeTempHome('engram-browser-')
    mind = await openMindInternals({
      home: temp.home,
      env: temp.env,
      settings: { 'memory.mode': 'copilot', 'context.budget': 256, 'context.freshTail': 2, 'context.leafChunk': 2, 'context.threshold': 0.1 },
    })
    await buildHome(mind)
    const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
    const info = await new Promise<AddressInfo>((done) => {
      server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, done)
    })
    address = `http://127.0.0.1:${info.port}`
    chromium = await launchBrowser({ deadlineMs: 90_000 })
    const opened = await chromium.newPage()
    admin = opened.page
    adminProblems = opened.problems
    // As a person opens the printed address: the token moves into a cookie, out of the address bar.
    const first = await admin.goto(`${address}/?token=${ADMIN}`)
    assert.equal(first?.status(), 200)
    assert.equal(new URL(admin.url()).search, '', 'the token left the address bar')
  })

  after(async () => {
    await chromium?.close()
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()))
    await mind?.close()
    temp?.cleanup()
  })

  /**
   * Type `path` into the address bar: a landing page (it names no place, decision 0051) whose
   * script goes on to the page at the browser's place; the answer there is returned.
   */
  function typed(page: Page, path: string) {
    return typeAddress(page, `${address}${path}`)
  }

  /** Open `path`, expect 200, screenshot it as `name`; nothing stored may have run as script. */
  async function visit(page: Page, path: string, name: string): Promise<void> {
    const response = await typed(page, path)
    assert.equal(response.status(), 200, `${path}: ${await shownText(page.locator('body'), { timeout: 1000 }).catch(() => '')}`)
    await screenshot(page, name)
    await assertNotPwned(page, path)
  }

  /** Click a button of the page's script (it POSTs to /v1 and reloads), and wait for the reload; the error it shows fails the test. */
  async function clickAndReload(page: Page, button: Locator): Promise<void> {
    const reloaded = page.waitForEvent('load')
    await button.click()
    const outcome = await Promise.race([reloaded.then(() => 'reloaded'), page.locator('.result.warn').waitFor().then(() => 'error')])
    if (outcome === 'error') assert.fail(`the action failed: ${await shownText(page.locator('.result.warn'))}`)
  }

  /**
   * The overview's pictures as a person sees them: every kind of the growth legend has a bar of its
   * own, none drawn over another; the latency axis's labels differ and sit inside the picture; the
   * recalled memories are named by what they say, not by a log reference.
   */
  async function assertPicturesReadable(page: Page): Promise<void> {
    const growth = page.getByTestId('chart-growth')
    const legend = (await shownText(growth.locator('.legend'))).split(/\s*■\s*/).map((name) => name.trim()).filter(Boolean)
    const boxes: Array<{ kind: string; x: number; y: number; width: number; height: number }> = []
    for (const kind of legend) {
      const box = await growth.locator(`g[data-series="${kind}"] rect`).first().boundingBox()
      assert.ok(box && box.width > 2 && box.height > 2, `${kind} is drawn where it can be seen`)
      boxes.push({ kind, ...box })
    }
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) assert.ok(a.x + a.width <= b.x + 0.5 || b.x + b.width <= a.x + 0.5 || a.y + a.height <= b.y || b.y + b.height <= a.y, `${a.kind} and ${b.kind} do not cover each other`)
    }
    const latency = page.getByTestId('chart-latency')
    const svg = await latency.locator('svg').boundingBox()
    const ticks = latency.getByTestId('x-tick')
    const labels = await ticks.allTextContents()
    assert.ok(labels.length >= 2, labels.join(', '))
    assert.equal(new Set(labels).size, labels.length, `each label once: ${labels.join(', ')}`)
    for (let i = 0; i < labels.length; i++) {
      const box = await ticks.nth(i).boundingBox()
      assert.ok(svg && box && box.x >= svg.x - 0.5 && box.x + box.width <= svg.x + svg.width + 0.5, `label ${labels[i]} inside the picture`)
    }
    const recalled = await page.getByTestId('chart-recalled').locator('svg text').allTextContents()
    assert.ok(!recalled.some((label) => /\.jsonl#L\d+$/.test(label)), `named by what they say: ${recalled.join(' | ')}`)
    assert.ok(recalled.some((label) => label.startsWith('activity: ')), 'an activity line is among them, by its words')
  }

  async function assertNotPwned(page: Page, where: string): Promise<void> {
    assert.equal(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned), undefined, `${where}: stored markup ran as script`)
  }

  test('the overview shows the counts, the pictures and who is viewing', async () => {
    await visit(admin, '/', 'overview-browse')
    assert.match(await shownText(admin.getByTestId('viewer')), /administrator/)
    assert.equal(await shownText(admin.getByTestId('count-conversations').locator('b')), '2')
    assert.equal(await shownText(admin.getByTestId('count-messages').locator('b')), '18')
    for (const chart of ['chart-growth', 'chart-latency', 'chart-recalled']) {
      assert.equal(await admin.getByTestId(chart).locator('svg').count(), 1, `${chart} is drawn`)
    }
    // The whole mind's confirmations: ada's promotion waits in her queue, and is counted here.
    assert.equal(await shownText(admin.getByTestId('count-confirmations').locator('b')), '1')
    assert.match(await shownText(admin.getByTestId('confirmation-queues')), /agent 0 · ada 1 · bob 0/)
    await assertPicturesReadable(admin)
    // Ada's own numbers, picked by the administrator.
    await admin.getByTestId('user-picker').getByTestId('user-select').selectOption('ada')
    await admin.getByTestId('user-picker').getByRole('button').click()
    await admin.waitForURL(/user=ada/)
    await screenshot(admin, 'overview-ada')
    assert.equal(await shownText(admin.getByTestId('count-knowledge').locator('b')), '1')
    assert.equal(await shownText(admin.getByTestId('count-confirmations').locator('b')), '1')
    assert.equal(await shownText(admin.getByTestId('count-profile').locator('b')), '1', 'her profile fact, in users/ada.md')
    await assertPicturesReadable(admin)
    await assertNotPwned(admin, '/?user=ada')
    assert.deepEqual(adminProblems, [])
  })

  test('memories: a search finds a memory, and markup in a memory shows as text', async () => {
    await visit(admin, '/memories?user=ada', 'memories-ada')
    const texts = await shownTexts(admin.getByTestId('memory-text'))
    assert.ok(texts.some((text) => text.includes('heron cache must be flushed')), texts.join('\n'))
    assert.ok(!texts.some((text) => text.includes('walrus')), "bob's memories are not in ada's view")
    assert.ok(!texts.some((text) => text.includes('kestrel')), 'a forgotten memory is out of the list')
    // The hostile memory is shown as the characters it holds, and nothing of it became an element.
    assert.ok(texts.some((text) => text.includes('<script>window.__pwned=1</script>') && text.includes('<img src=x onerror="window.__pwned=1">')), texts.join('\n'))
    assert.equal(await admin.locator('main script, main img').count(), 0)

    // Its file: the entries of ada's lessons, the markup again as text.
    await admin.getByTestId('memory-row').filter({ hasText: 'gannet wiki' }).getByTestId('file-link').click()
    await admin.getByTestId('entries').waitFor()
    await screenshot(admin, 'memory-file-ada-lessons')
    assert.equal(await shownText(admin.getByTestId('file-path')), 'users/ada/memory/lessons.md')
    assert.ok((await shownTexts(admin.getByTestId('entry'))).some((entry) => entry.includes('<img src=x onerror="window.__pwned=1">')))
    assert.equal(await admin.locator('main script, main img').count(), 0)
    await assertNotPwned(admin, 'the lessons file')
    // What the dashboard writes itself is text, not markdown: a command as code, no backticks.
    const history = await shownText(admin.getByTestId('history'))
    assert.match(history, /engram restore brings one back/)
    assert.ok(!history.includes('`'), history)

    await admin.goto(`${address}/memories?user=ada`)
    await admin.getByTestId('memory-filter').locator('input[name=q]').fill('billing export ledger')
    await admin.getByTestId('memory-filter').getByRole('button').click()
    await admin.waitForURL(/q=billing/)
    await screenshot(admin, 'memories-search')
    const hits = await shownTexts(admin.getByTestId('memory-text'))
    assert.ok(hits.some((text) => text.includes('ledger bucket')), hits.join('\n'))
    await assertNotPwned(admin, 'search')
    assert.deepEqual(adminProblems, [])
  })

  test('why: what a message would recall, each item with its source; a past turn shows what it was given', async () => {
    await visit(admin, '/why', 'why-form')
    await admin.getByTestId('why-message').fill('What did we learn about the heron cache and the gannet wiki?')
    await admin.getByTestId('why-form').getByTestId('user-select').selectOption('ada')
    await admin.getByTestId('why-form').getByRole('button').click()
    await admin.getByTestId('why-result').waitFor()
    await screenshot(admin, 'why-result')
    await assertNotPwned(admin, '/why result')
    const items = admin.getByTestId('provenance-item')
    assert.ok((await items.count()) > 0, 'something was injected')
    const sources = await shownTexts(admin.getByTestId('provenance-source'))
    assert.ok(sources.includes('users/ada/memory/lessons.md'), `ada's lessons are a source: ${sources.join(', ')}`)
    assert.ok(!sources.some((source) => source.includes('bob')), "nothing of bob's")
    assert.ok((await admin.getByTestId('channel-budget').count()) >= 4, 'each channel with its budget')
    // Her conversation brings every message at one low score: past the first of each channel they
    // fold into one line with their count, and open to every one of them.
    const injected = Number(/^(\d+) items injected/.exec(await shownText(admin.getByTestId('provenance-count')))?.[1])
    assert.equal(await items.count(), injected, 'every item is on the page')
    const listed = await admin.getByTestId('provenance').getByTestId('provenance-item').count()
    assert.ok(listed <= 15 + 5 + 10 + 15 && listed < injected, `${listed} listed of ${injected}`)
    const more = admin.getByTestId('provenance-more')
    assert.match(await shownText(more.locator(':scope > summary')), new RegExp(`^${injected - listed} more, lower scored or older \\(`))
    assert.equal(await more.getByTestId('provenance-item').first().isVisible(), false, 'folded')
    await more.locator(':scope > summary').click()
    assert.equal(await more.getByTestId('provenance-item').count(), injected - listed)
    assert.equal(await more.getByTestId('provenance-item').last().isVisible(), true, 'and reachable')
    const related = (await shownTexts(admin.locator('[data-testid=provenance] [data-testid=provenance-item][data-channel=related] [data-testid=provenance-score]'))).map(Number)
    const folded = (await shownTexts(more.locator('[data-testid=provenance-item][data-channel=related] [data-testid=provenance-score]'))).map(Number)
    assert.ok(folded.length > 0 && Math.max(...folded) <= Math.min(...related), 'what folds scored no higher than what is listed')
    // Activity items say what happened, not only where it is written.
    for (const text of await shownTexts(admin.locator('[data-testid=provenance-item][data-channel=activity] [data-testid=provenance-text]').filter({ visible: true }))) {
      assert.match(text, /^(memory written|message received|reply sent|used a tool)/, text)
    }
    await screenshot(admin, 'why-result-more')
    // The hostile lesson reaches the prompt through engram's one escaping rule ("<" as "&lt;"), and
    // the page shows exactly those characters, as the model reads them; nothing runs.
    await admin.getByText('The injected text, as the model reads it').click()
    const primed = await shownText(admin.getByTestId('primed-text'))
    assert.ok(primed.includes('&lt;script>window.__pwned=1&lt;/script> and &lt;img src=x onerror="window.__pwned=1">'), primed)
    await assertNotPwned(admin, '/why primed text')

    // A past turn of ada's conversation, opened from the conversation's list of turns.
    await visit(admin, `/turns/${CONVERSATION}/8`, 'turn-why')
    assert.match(await shownText(admin.getByTestId('message').first()), /Question 8/)
    const turnSources = await shownTexts(admin.getByTestId('provenance-item'))
    assert.ok(turnSources.length > 0, 'the turn was given something')
    assert.ok((await admin.getByTestId('turn-summary').count()) > 0, 'the turn saw summaries of the older turns')
    assert.deepEqual(adminProblems, [])
  })

  test('conversations: opening the summaries reveals the original messages', async () => {
    await visit(admin, '/conversations', 'conversations')
    const row = admin.locator(`[data-testid=conversation-row][data-session="${CONVERSATION}"]`)
    assert.equal(await shownText(row.getByTestId('message-count')), '16')
    assert.equal(await admin.locator('[data-testid=conversation-row][data-session="bob-walrus-chat"]').count(), 1, "the administrator sees bob's conversation too")
    await row.getByRole('link', { name: CONVERSATION }).click()
    await admin.getByTestId('dag').waitFor()
    await screenshot(admin, 'conversation-closed')
    assert.ok((await admin.getByTestId('dag-node').count()) > 0, 'the older turns are summaries')
    const original = admin.getByTestId('message').filter({ hasText: 'Question 1: what happens to the heron cache' })
    assert.equal(await original.isVisible(), false, 'folded into a summary, the first message is not shown')
    // Open every summary around it, outermost first, as a person clicks down the tree.
    const around = admin.locator('details[data-testid=dag-node]').filter({ has: original })
    const depth = await around.count()
    assert.ok(depth > 0)
    for (let i = 0; i < depth; i++) await around.nth(i).locator(':scope > summary').click()
    assert.equal(await original.isVisible(), true, 'the original message, word for word')
    assert.match(await shownText(original), /Question 1: what happens to the heron cache after schema migration 1\?/)
    await screenshot(admin, 'conversation-expanded')
    // Its turn links to what it was given.
    await original.getByTestId('turn-link').click()
    await admin.waitForURL(new RegExp(`/turns/${CONVERSATION}/1$`))
    assert.match(await shownText(admin.getByTestId('message').first()), /Question 1/)
    assert.deepEqual(adminProblems, [])
  })

  test('activity and consolidation: the timeline of a user and the runs', async () => {
    await visit(admin, '/activity?user=ada', 'activity-ada')
    const rows = (await shownTexts(admin.getByTestId('activity-row'))).join('\n')
    assert.match(rows, /Question 8: what happens to the heron cache/)
    assert.doesNotMatch(rows, /walrus/, "bob's activity is not in ada's")
    assert.ok(rows.includes('<script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=1">'), 'the hostile memory written, shown as text')
    // Filtered to memory writes: the forgetting of ada's lesson, by its file.
    await admin.getByTestId('activity-type').selectOption('memory_write')
    await admin.getByTestId('activity-filter').getByRole('button').click()
    await admin.waitForURL(/type=memory_write/)
    await screenshot(admin, 'activity-ada-memory-writes')
    const writes = await shownTexts(admin.getByTestId('activity-row'))
    assert.ok(writes.length > 0 && writes.every((row) => !/Question \d/.test(row)), writes.join('\n'))
    assert.match(writes.join('\n'), /lessons\.md/)
    await assertNotPwned(admin, '/activity filtered')

    await visit(admin, '/consolidation', 'consolidation')
    const daily = admin.locator('[data-testid=consolidation-run][data-period=daily]')
    assert.equal(await daily.count(), 1, 'the day\'s first maintenance ran daily consolidation')
    assert.match(await shownText(daily), /skipped[\s\S]*nothing to consolidate/, 'offline and without episodes: nothing to learn, and it says so')
    // Each count said in words: the monthly run looked at the memory files and kept those in use.
    const monthly = admin.locator('[data-testid=consolidation-run][data-period=monthly]')
    assert.match(await shownText(monthly.getByTestId('run-counts')), /nothing changed\s*Looked at and left as it was:\s*\d+ memory files? still in use: kept/)
    assert.doesNotMatch(await shownText(admin.getByTestId('consolidation-table')), /\bactive \d/)
    assert.match(await shownText(admin.getByTestId('consolidation-listed')), /record nothing when they change nothing, so such a run is not listed/)
    assert.deepEqual(adminProblems, [])
  })

  test('archive: Restore brings a forgotten memory back', async () => {
    await visit(admin, '/archive', 'archive-browse')
    const row = admin.getByTestId('archive-row').filter({ hasText: FORGOTTEN })
    assert.equal(await row.count(), 1, await shownText(admin.locator('main')))
    assert.match(await shownText(row), /user ada/)
    await clickAndReload(admin, row.getByTestId('restore-button'))
    await screenshot(admin, 'archive-after-restore')
    assert.equal(await admin.getByTestId('archive-row').filter({ hasText: FORGOTTEN }).count(), 0, 'gone from the archive')
    await visit(admin, '/memories?user=ada&q=kestrel+tea+notes', 'memories-restored')
    assert.ok((await shownTexts(admin.getByTestId('memory-text'))).some((text) => text.includes(FORGOTTEN)), 'found again')
    assert.deepEqual(adminProblems, [])
  })

  test('confirmations: Accept saves the memory and takes it off the queue', async () => {
    await visit(admin, '/confirmations', 'confirmations-agent')
    assert.equal(await admin.getByTestId('confirmations-empty').count(), 1, "the agent's own queue is empty; ada's is hers")
    await visit(admin, '/confirmations?user=ada', 'confirmations-ada')
    const row = admin.getByTestId('confirmation-row').filter({ hasText: PROMOTED })
    assert.equal(await row.count(), 1, await shownText(admin.locator('main')))
    await visit(admin, '/memories?q=pelican+staging+weekends', 'memories-before-accept')
    assert.ok(!(await shownTexts(admin.getByTestId('memory-text'))).some((text) => text.includes(PROMOTED)), 'not saved before the yes')

    await admin.goto(`${address}/confirmations?user=ada`)
    await clickAndReload(admin, admin.getByTestId('confirmation-row').filter({ hasText: PROMOTED }).getByTestId('accept-button'))
    await screenshot(admin, 'confirmations-after-accept')
    assert.equal(await admin.getByTestId('confirmation-row').count(), 0)
    assert.equal(await admin.getByTestId('confirmations-empty').count(), 1)
    // Promoted to the agent: found in the agent's own view.
    await visit(admin, '/memories?q=pelican+staging+weekends', 'memories-after-accept')
    const hits = admin.getByTestId('memory-row').filter({ hasText: PROMOTED })
    assert.equal(await hits.count(), 1)
    assert.equal(await hits.getAttribute('data-owner'), 'agent')
    assert.deepEqual(adminProblems, [])
  })

  test("ada's token sees ada's memories and not bob's", async () => {
    const { context, page, problems } = await chromium.newPage()
    try {
      await page.goto(`${address}/?token=${ADA}`)
      assert.match(await shownText(page.getByTestId('viewer')), /user ada/)
      await visit(page, '/memories', 'memories-as-ada')
      const texts = (await shownTexts(page.getByTestId('memory-text'))).join('\n')
      assert.match(texts, /heron cache must be flushed/)
      assert.match(texts, /Deploys need two approvals/, "the agent's own memory reaches every user")
      assert.doesNotMatch(texts, /walrus|osprey|French/, "nothing of bob's")
      const searched = await typed(page, '/memories?q=walrus+Thursdays')
      assert.equal(searched.status(), 200)
      assert.doesNotMatch(await shownText(page.locator('main')), /Bob deploys/)
      // Her own queue, archive and activity; bob's never.
      await visit(page, '/confirmations', 'confirmations-as-ada')
      assert.equal(await shownText(page.getByTestId('viewing')), "ada's queue")
      await visit(page, '/activity', 'activity-as-ada')
      const activity = await shownText(page.locator('main'))
      assert.match(activity, /heron cache/)
      assert.doesNotMatch(activity, /walrus|osprey|French/)
      await visit(page, '/conversations', 'conversations-as-ada')
      assert.deepEqual(await page.getByTestId('conversation-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-session'))), [CONVERSATION])
      const bobs = await typed(page, '/activity?user=bob')
      assert.equal(bobs.status(), 403)
      assert.doesNotMatch(await shownText(page.locator('main')), /walrus/)
      // Naming bob in the address is refused, as the API refuses it.
      const refused = await typed(page, '/memories?user=bob')
      assert.equal(refused.status(), 403)
      assert.doesNotMatch(await shownText(page.locator('main')), /walrus|osprey/)
      await screenshot(page, 'memories-as-ada-naming-bob')
      assert.deepEqual(problems, [])
    } finally {
      await context.close()
    }
  })
})
