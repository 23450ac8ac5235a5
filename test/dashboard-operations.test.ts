/**
 * The dashboard's operations pages (decision 0038) through `createServeApp(...).request()` on a temp
 * home with users ada and bob: the overview's counts and pictures (growth by kind, recall latency
 * from the turns' recorded timing, what was recalled most), the activity timeline, consolidation
 * runs after monthly forgetting on a simulated clock, the archive and the confirmations queue —
 * each showing what the home holds, changing after a restore or an accept through the /v1 routes
 * the buttons post to, every memory text escaped, and ada's token never showing bob's memories.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const ADA = 'ada-token-ops-0123456789abcdef'
const BOB = 'bob-token-ops-0123456789abcdef'
const AGENT = 'agent-token-ops-0123456789abcd'
const ADMIN = 'admin-token-ops-0123456789abcd'
const TOKENS = `${ADA}=default:ada, ${BOB}=default:bob, ${AGENT}=default, ${ADMIN}=admin`

const DAY = 86_400_000
const HOSTILE = 'The gannet wiki said <script>alert(1)</script> and <img src=x onerror=alert(1)> about deploys'
const ADA_FORGOTTEN = 'Ada keeps her tea notes in the kestrel wiki'
const BOB_FORGOTTEN = 'Bob keeps his coffee notes in the marmot wiki'
const ADA_PROMOTED = 'The pelican staging database is read-only on weekends'
const BOB_PROMOTED = 'The walrus queue drains every night at three'

type App = ReturnType<typeof createServeApp>

async function get(app: App, path: string, token?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { host: '127.0.0.1:7477' }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  const response = await app.request(path, { headers })
  return { status: response.status, text: await response.text() }
}

async function post(app: App, path: string, token: string, body: unknown): Promise<{ status: number; json: { ok: boolean } & Record<string, unknown> }> {
  const response = await app.request(path, { method: 'POST', headers: { host: '127.0.0.1:7477', authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, json: (await response.json()) as { ok: boolean } & Record<string, unknown> }
}

/** Decodes the few entities `hono/html` writes, to read an attribute back as the browser would. */
function unescapeAttribute(value: string): string {
  return value.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')
}

/** The buttons of a page: where each posts and the JSON body it sends (as /assets/dashboard.js reads them). */
function buttons(html: string, testid: string): Array<{ post: string; body: Record<string, unknown> }> {
  const found: Array<{ post: string; body: Record<string, unknown> }> = []
  for (const match of html.matchAll(/<button\b[^>]*>/g)) {
    const tag = match[0]
    if (!tag.includes(`data-testid="${testid}"`)) continue
    const post = /data-post="([^"]*)"/.exec(tag)?.[1]
    const body = /data-body="([^"]*)"/.exec(tag)?.[1]
    assert.ok(post !== undefined && body !== undefined, tag)
    found.push({ post: unescapeAttribute(post), body: JSON.parse(unescapeAttribute(body)) as Record<string, unknown> })
  }
  return found
}

function count(html: string, testid: string): number {
  return html.split(`data-testid="${testid}"`).length - 1
}

/** A chart's figure of a page. */
function figure(html: string, testid: string): string {
  return new RegExp(`<figure class="chart" data-testid="${testid}">.*?</figure>`, 's').exec(html)?.[0] ?? ''
}

/** No stored text reaches the page as markup. */
function assertEscaped(html: string): void {
  assert.doesNotMatch(html, /<script>alert\(1\)<\/script>/)
  assert.doesNotMatch(html, /<img src=x onerror/)
}

describe('the dashboard: overview, activity, consolidation, archive, confirmations', () => {
  let temp: TempHome
  let mind: MindInternals
  let app: App
  const start = Date.now() - 170 * DAY
  const clock = new ManualClock(new Date(start))

  before(async () => {
    temp = makeTempHome('engram-dash-ops-')
    // No embedder: a handful of memories would all come back from a vector search, and count as recalled.
    mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, settings: { 'memory.mode': 'copilot' } })
    app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })

    const report = await mind.encode([
      { text: HOSTILE, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
      { text: 'Answer Ada with metric units', kind: 'always', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
      { text: 'Role: gannet wiki editor', kind: 'profile', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
      { text: ADA_FORGOTTEN, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:ada' },
      { text: 'Bob deploys the walrus service on Thursdays', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
      { text: BOB_FORGOTTEN, kind: 'lesson', scope: 'global', confidence: 'high', source: 'user', owner: 'user:bob' },
    ])
    assert.equal(report.saved.length, 6, JSON.stringify(report))
    assert.equal((await mind.forget(ADA_FORGOTTEN, { user: 'ada' })).action, 'forgotten')
    assert.equal((await mind.forget(BOB_FORGOTTEN, { user: 'bob' })).action, 'forgotten')

    // Day 0: each writes a knowledge file no one will recall again (monthly forgetting takes it).
    for (const [user, path, content] of [
      ['ada', 'knowledge/kestrel-port.md', '# Kestrel VPN\nThe kestrel VPN listens on port 1194.\n'],
      ['bob', 'knowledge/marmot-port.md', '# Marmot VPN\nThe marmot VPN listens on port 51820.\n'],
    ] as const) {
      const write = mind.agentTools({ sessionId: `setup-${user}`, user }).find((tool) => tool.name === 'write_memory_file')
      const written = await write?.execute({ path, content })
      assert.notEqual(written?.isError, true, written?.text)
    }

    // Turns through the API: their priming is timed and stored; ada's last one queues a promotion.
    for (const [token, session, message] of [
      [ADA, 'ada-chat', 'What do we know about the gannet wiki and deploys?'],
      [ADA, 'ada-chat', 'Remind me what the gannet wiki said about deploys.'],
      [BOB, 'bob-chat', 'When does Bob deploy the walrus service?'],
    ] as const) {
      const begun = await post(app, '/v1/turns/begin', token, { session, message })
      assert.equal(begun.status, 200, JSON.stringify(begun.json))
      const turn = begun.json.turn as { number: number }
      assert.equal((await post(app, '/v1/turns/end', token, { session, turn: turn.number, reply: 'Noted.' })).status, 200)
    }
    for (const [user, text] of [
      ['ada', ADA_PROMOTED],
      ['bob', BOB_PROMOTED],
    ] as const) {
      const memorize = mind.agentTools({ sessionId: `promote-${user}`, user }).find((tool) => tool.name === 'memorize')
      const queued = await memorize?.execute({ entries: [{ text, kind: 'lesson', owner: 'agent' }] })
      assert.match(queued?.text ?? '', /waiting for the user's confirmation/)
    }
    await mind.idle()
  })

  after(async () => {
    await mind?.close()
    temp?.cleanup()
  })

  test("the overview shows ada her own counts and pictures, escaped, and nothing of bob's", async () => {
    const page = await get(app, '/', ADA)
    assert.equal(page.status, 200, page.text)
    assert.match(page.text, /data-testid="viewing">user ada</)
    assert.match(page.text, /data-testid="count-lessons"><b>1<\/b>lesson</, 'her hostile lesson; the forgotten one is not counted (and one is "1 lesson")')
    assert.match(page.text, /data-testid="count-rules"><b>1<\/b>rule</)
    assert.match(page.text, /data-testid="count-knowledge"><b>1<\/b>knowledge/)
    assert.match(page.text, /data-testid="count-confirmations"><b>1<\/b>confirmation waiting/)
    // Her profile fact lives in her one profile (users/ada.md), not in a profile.md of her tree: counted.
    assert.match(page.text, /data-testid="count-profile"><b>1<\/b>profile fact</)
    for (const chart of ['chart-growth', 'chart-latency', 'chart-recalled']) {
      assert.match(page.text, new RegExp(`<figure class="chart" data-testid="${chart}">`), chart)
      assert.match(page.text, new RegExp(`data-testid="${chart}-table"`), `${chart} has its table of numbers`)
      assert.match(page.text, new RegExp(`data-testid="${chart}-x-label"`), `${chart} labels its axes`)
    }
    assert.match(page.text, /<svg viewBox/)
    // Growth: her lessons, rule and knowledge file, by kind; latency: her two timed turns.
    assert.match(page.text, /data-series="lesson"/)
    assert.match(page.text, /data-series="knowledge"/)
    // Every kind of the legend is drawn where it can be seen: a bar of its own on the day (one day here:
    // profile 1 and knowledge 1 would be one dot on a line chart, the later hiding the earlier).
    const growth = figure(page.text, 'chart-growth')
    const kinds = [...growth.matchAll(/<g data-series="([^"]+)">(.*?)<\/g>/gs)]
    assert.deepEqual(kinds.map((kind) => kind[1]).sort(), ['knowledge', 'lesson', 'profile', 'rule'])
    for (const [, kind, drawn] of kinds) assert.match(drawn ?? '', /<rect [^>]*data-testid="bar"><title>[^<]*: 1 on /, `${kind} has its bar`)
    assert.match(growth, /<td>\d{4}-\d{2}-\d{2}<\/td>(<td>1<\/td>){4}/, 'the table: one of each kind on the day')
    // Latency: the turns by number, each label once and inside the picture; the table says when each began.
    const latency = figure(page.text, 'chart-latency')
    const ticks = [...latency.matchAll(/<text x="([\d.]+)" [^>]*text-anchor="(\w+)" data-testid="x-tick">([^<]*)</g)]
    assert.deepEqual(ticks.map((tick) => tick[3]), ['1', '2'], 'turn numbers, not the same minute twice')
    assert.deepEqual(ticks.map((tick) => tick[2]), ['start', 'end'], 'the first and last label are anchored inside the picture')
    assert.match(latency, /<tr><td>turn 1 · \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}<\/td>/)
    assert.match(page.text, /2 of the latest 2 turns; priming p50 [\d.]+ ms/)
    const latencyTable = /data-testid="chart-latency-table">.*?<\/details>/s.exec(page.text)?.[0] ?? ''
    assert.equal((latencyTable.match(/<tr><td>/g) ?? []).length, 2, 'one row per timed turn')
    // Recalled most: the hostile lesson was primed into her turns, shown as text.
    assert.match(page.text, /lesson: The gannet wiki said &lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    // An activity line recalled is shown by what it says (its event and text), its reference beside it.
    const recalled = figure(page.text, 'chart-recalled')
    const activity = [...recalled.matchAll(/<tr><td class="text">(activity: [^<]*)<\/td><td>\d+<\/td><td class="text muted">([^<]*)</g)]
    assert.ok(activity.length > 0, recalled)
    for (const [, label, detail] of activity) {
      assert.doesNotMatch(label ?? '', /\.jsonl#L\d+$/, 'not a bare reference')
      assert.match(label ?? '', /^activity: (memory written|message received|reply sent|used a tool)/)
      assert.match(detail ?? '', /activity\/\d{4}-\d{2}-\d{2}\.jsonl#L\d+/, 'the reference as secondary text')
    }
    assertEscaped(page.text)
    for (const secret of ['walrus', 'marmot', BOB_PROMOTED]) assert.ok(!page.text.includes(secret), `ada's overview shows nothing of bob's: ${secret}`)
  })

  test("naming another user is a 403 page for a user's token and the open server; an administrator picks any user", async () => {
    for (const path of ['/', '/activity', '/consolidation', '/archive', '/confirmations']) {
      const denied = await get(app, `${path}?user=bob`, ADA)
      assert.equal(denied.status, 403, path)
      assert.match(denied.text, /data-testid="denied"/)
      assert.ok(!denied.text.includes('walrus'), path)
    }
    const admin = await get(app, '/?user=bob', ADMIN)
    assert.equal(admin.status, 200)
    assert.match(admin.text, /data-testid="viewing">user bob</)
    assert.match(admin.text, /data-testid="user-select"/)
    assert.match(admin.text, /<option value="bob" selected>bob<\/option>/)
    const whole = await get(app, '/', ADMIN)
    assert.match(whole.text, /data-testid="count-users"><b>2<\/b>users/)
    // The whole mind waits on every queue: ada's and bob's promotions, the agent's own queue empty.
    assert.match(whole.text, /data-testid="count-confirmations"><b>2<\/b>confirmations waiting, in every queue<div class="muted" data-testid="confirmation-queues">agent 0 · ada 1 · bob 1</)
    assert.match((await get(app, '/', AGENT)).text, /data-testid="count-confirmations"><b>2<\/b>/, "the agent's token sees the whole mind's count too")
    assert.match(whole.text, /3 of the latest 3 turns/, "every owner's turns: ada's two and bob's one")

    const open = createServeApp({ mind, credentials: parseCredentials('') })
    const own = await get(open, '/')
    assert.equal(own.status, 200)
    assert.match(own.text, /data-testid="viewing">the agent alone</)
    assert.ok(!own.text.includes('gannet') && !own.text.includes('walrus'), "the agent's own pictures show no user's memories")
    assert.equal((await get(open, '/archive?user=ada')).status, 403)
  })

  test("the activity timeline shows ada's events newest first, filtered by kind and day, escaped, none of bob's", async () => {
    const page = await get(app, '/activity', ADA)
    assert.equal(page.status, 200)
    assert.ok(count(page.text, 'activity-row') > 0)
    assert.match(page.text, /The gannet wiki said &lt;script&gt;alert\(1\)&lt;\/script&gt; and &lt;img src=x onerror=alert\(1\)&gt;/)
    assertEscaped(page.text)
    assert.ok(!page.text.includes('walrus') && !page.text.includes('marmot'), "none of bob's events")
    const rows = [...page.text.matchAll(/data-testid="activity-row"[^>]*>\s*<td class="muted">([^<]+)</g)].map((match) => match[1] ?? '')
    assert.deepEqual(rows, [...rows].sort().reverse(), 'newest first')

    const writes = await get(app, '/activity?type=memory_write', ADA)
    assert.ok(count(writes.text, 'activity-row') > 0)
    assert.equal(count(writes.text, 'activity-row'), (writes.text.match(/data-type="memory_write"/g) ?? []).length, 'only the kind asked for')
    const day = new Date(start).toISOString().slice(0, 10)
    assert.ok(count((await get(app, `/activity?day=${day}`, ADA)).text, 'activity-row') > 0)
    assert.match((await get(app, '/activity?day=1999-01-01', ADA)).text, /data-testid="activity-empty"/)
    assert.match((await get(app, '/activity?type=nonsense', ADA)).text, /data-testid="activity-ignored"/)
  })

  test("the archive shows ada's forgotten lesson with a Restore button; restoring it (the dashboard's restore, decision 0071) takes it off the page", async () => {
    const page = await get(app, '/archive', ADA)
    assert.equal(page.status, 200)
    assert.ok(page.text.includes(ADA_FORGOTTEN))
    assert.ok(!page.text.includes(BOB_FORGOTTEN), "bob's archive is not ada's")
    const restores = buttons(page.text, 'restore-button')
    assert.equal(restores.length, 1)
    const [restore] = restores
    assert.equal(restore?.post, '/edit/restore')
    assert.equal(restore?.body.user, undefined, "ada's own token names no user")
    const done = await post(app, restore?.post ?? '', ADA, restore?.body)
    assert.equal(done.status, 200, JSON.stringify(done.json))
    assert.match(String((done.json as { next?: unknown }).next), /^\/edit\/changed\?action=restored&/, 'and goes on to what changed')
    const after = await get(app, '/archive', ADA)
    assert.ok(!after.text.includes(ADA_FORGOTTEN))
    assert.match(after.text, /data-testid="archive-empty"/)

    // An administrator sees bob's archive by picking bob; the button then names him.
    const admin = await get(app, '/archive?user=bob', ADMIN)
    assert.ok(admin.text.includes(BOB_FORGOTTEN))
    assert.deepEqual(buttons(admin.text, 'restore-button')[0]?.body.user, 'bob')
  })

  test("the confirmations queue shows ada's promotion with Accept/Reject; accepting it through the API empties her queue", async () => {
    const page = await get(app, '/confirmations', ADA)
    assert.equal(page.status, 200)
    assert.ok(page.text.includes(ADA_PROMOTED))
    assert.ok(!page.text.includes(BOB_PROMOTED), "bob's queue is not ada's")
    assert.equal(count(page.text, 'confirmation-row'), 1)
    assert.equal(buttons(page.text, 'reject-button').length, 1)
    const [accept] = buttons(page.text, 'accept-button')
    assert.match(accept?.post ?? '', /^\/v1\/confirmations\/[^/]+\/accept$/)
    assert.deepEqual(accept?.body, {})
    const done = await post(app, accept?.post ?? '', ADA, accept?.body)
    assert.equal(done.status, 200, JSON.stringify(done.json))
    assert.match((await get(app, '/confirmations', ADA)).text, /data-testid="confirmations-empty"/)

    // An administrator answers bob's queue: the buttons name him.
    const admin = await get(app, '/confirmations?user=bob', ADMIN)
    assert.ok(admin.text.includes(BOB_PROMOTED))
    assert.deepEqual(buttons(admin.text, 'reject-button')[0]?.body, { user: 'bob' })
  })

  test('a monthly consolidation run appears with what it forgot: ada sees her change only, the administrator the totals', async () => {
    assert.match((await get(app, '/consolidation', ADA)).text, /data-testid="consolidation-empty"|data-testid="consolidation-run"/)
    clock.set(new Date(start + 160 * DAY))
    const report = await mind.maintain()
    const monthly = report.jobs.find((job) => job.kind === 'consolidation-monthly')
    assert.equal(monthly?.status, 'done', JSON.stringify(report.jobs))

    const page = await get(app, '/consolidation', ADA)
    assert.equal(page.status, 200)
    assert.match(page.text, /data-testid="consolidation-run" data-period="monthly" data-status="done"/)
    assert.match(page.text, /<b>forgot<\/b> <code>users\/ada\/knowledge\/kestrel-port\.md<\/code>/)
    assert.ok(!page.text.includes('marmot'), "bob's forgotten file is not in ada's view of the run")
    assert.ok(!/4 memory files forgotten/.test(page.text), 'the totals of every user are not shown to a user')
    // The weekly run of the same maintenance compressed ada's old episode day: recorded in her log, listed under it.
    assert.match(page.text, /data-testid="consolidation-run" data-period="weekly" data-status="done"/)
    assert.match(page.text, /<b>compressed<\/b> <code>users\/ada\/episodes\/[\d-]+\.md<\/code> — <span class="text">compressed \d+ → \d+ bytes; the full text stays in archive\/versions\/</)

    const admin = await get(app, '/consolidation', ADMIN)
    // Each count in words: what the run changed, then what it looked at and left. Two notes and two
    // episode days (compressed by the week's run, unrecalled for 160 days: the seed forgets episodes too).
    assert.match(admin.text, /<li>4 memory files forgotten: unused too long, moved to the archive \(restorable\)<\/li>/)
    assert.doesNotMatch(admin.text, /\b(active|protected|forgotten) \d/, 'no bare "active 2"')
    assert.match(admin.text, /data-testid="consolidation-listed">Listed: every run of the schedule/)
    assert.doesNotMatch(admin.text, /or now with engram consolidate daily/)
    assert.ok(admin.text.includes('kestrel-port.md') && admin.text.includes('marmot-port.md'), 'the administrator sees every owner\'s changes')

    // What monthly forgetting archived is in ada's archive, restorable.
    const archive = await get(app, '/archive', ADA)
    assert.ok(archive.text.includes('The kestrel VPN listens on port 1194.'))
    const restore = buttons(archive.text, 'restore-button').find((button) => String(button.body.target).includes('kestrel-port'))
    assert.ok(restore, archive.text)
    assert.equal((await post(app, '/v1/restore', ADA, restore.body)).status, 200)
    assert.ok(!(await get(app, '/archive', ADA)).text.includes('kestrel-port'))

    // The growth picture counts the forgetting (and the restore) on their days.
    const overview = await get(app, '/', ADA)
    assert.match(overview.text, /data-series="knowledge"/)
  })
})
