/**
 * The dashboard's pages for reading memory (decision 0038) through `app.request()` on a temp home with
 * two users: memories listed, searched and opened (frontmatter, entries, saved versions); "why"
 * for a message and for a past turn; conversations and their summary DAG down to the messages.
 * Memory text is escaped wherever it appears, and Ada's token never shows Bob's memories: not by
 * ?user=, not by a path, not by a conversation or turn id.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { hasCompactor } from '../src/memory/context/provider.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'

const ADA = 'ada-token-0123456789abcdef'
const BOB = 'bob-token-0123456789abcdef'
const ADMIN = 'admin-token-0123456789abcd'
const TOKENS = `${ADA}=default:ada, ${BOB}=default:bob, ${ADMIN}=admin`

/** Bob's secret: no page Ada's token opens may contain it. */
const BOB_SECRET = 'Zanzibar'
const HOSTILE = 'Orion templates: beware <script>alert(1)</script> and <img src=x onerror=alert(1)> in user input'

type App = ReturnType<typeof createServeApp>

interface Page {
  status: number
  text: string
  headers: Headers
}

async function get(app: App, path: string, token?: string): Promise<Page> {
  const headers: Record<string, string> = { host: '127.0.0.1:7477' }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  const response = await app.request(path, { headers })
  return { status: response.status, text: await response.text(), headers: response.headers }
}

async function post(app: App, path: string, token: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await app.request(path, { method: 'POST', headers: { host: '127.0.0.1:7477', authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const answer = (await response.json()) as Record<string, unknown>
  assert.equal(response.status, 200, JSON.stringify(answer))
  return answer
}

/** How many times `testid` appears as a data-testid in a page. */
function count(page: Page, testid: string): number {
  return page.text.split(`data-testid="${testid}"`).length - 1
}

/** No raw markup of the hostile memory anywhere in the page. */
function assertEscaped(page: Page): void {
  assert.ok(!page.text.includes('<script>alert(1)</script>'), 'a script tag from memory reached the page')
  assert.ok(!page.text.includes('<img src=x'), 'an img tag from memory reached the page')
  assert.ok(!/<script(?![^>]*src="\/assets\/dashboard\.js")/.test(page.text), 'the only script is the dashboard\'s own file')
}

/** A refusal rendered as a page, without the data. */
function assertRefused(page: Page, status: number): void {
  assert.equal(page.status, status, page.text.slice(0, 500))
  assert.match(page.headers.get('content-type') ?? '', /text\/html/)
  assert.equal(count(page, 'error'), 1)
  assert.match(page.text, /<b>Fix:<\/b>/)
  assert.ok(!page.text.includes(BOB_SECRET), 'a refusal shows none of the data')
}

describe('dashboard: reading memory', () => {
  let temp: TempHome
  let mind: MindInternals
  let app: App
  let adaConversation: number
  let bobConversation: number

  async function turn(token: string, session: string, message: string, reply: string): Promise<void> {
    const begun = (await post(app, '/v1/turns/begin', token, { session, message })) as { turn: { number: number } }
    await post(app, '/v1/turns/end', token, { session, turn: begun.turn.number, reply })
    await mind.idle()
  }

  before(async () => {
    temp = makeTempHome()
    // A small window, so that Ada's conversation is compacted into summaries (extractive: no model).
    mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, settings: { 'context.budget': 256, 'context.freshTail': 2, 'context.leafChunk': 2 } })
    app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })

    await post(app, '/v1/memorize', ADA, {
      entries: [
        { text: 'The Orion staging deploy needs the VPN token refreshed every Monday.', kind: 'lesson' },
        { text: 'Always run the Orion smoke tests before a release', kind: 'always' },
        { text: HOSTILE, kind: 'lesson' },
      ],
    })
    await post(app, '/v1/memorize', BOB, {
      entries: [
        { text: `The ${BOB_SECRET} vault code is kept in the blue binder.`, kind: 'lesson' },
        { text: `Never mention the ${BOB_SECRET} project to other users`, kind: 'never' },
      ],
    })
    // A knowledge file of Ada's, written twice: the first version is saved in the archive.
    const write = mind.agentTools({ sessionId: 'ada-notes', user: 'ada' }).find((tool) => tool.name === 'write_memory_file')
    assert.ok(write)
    for (const content of ['---\ntitle: Orion cluster\n---\n# Orion\nThe Orion cluster has 3 nodes.\n', '---\ntitle: Orion cluster, upgraded\n---\n# Orion\nThe Orion cluster has 5 nodes since the upgrade.\n']) {
      const written = await write.execute({ path: 'knowledge/orion.md', content })
      assert.equal(written.isError, undefined, written.text)
    }
    const bobWrite = mind.agentTools({ sessionId: 'bob-notes', user: 'bob' }).find((tool) => tool.name === 'write_memory_file')
    const bobWritten = await bobWrite?.execute({ path: 'knowledge/vault.md', content: `# Vault\nThe ${BOB_SECRET} vault is in the basement.\n` })
    assert.equal(bobWritten?.isError, undefined, bobWritten?.text)

    for (let i = 1; i <= 8; i++) {
      await turn(ADA, 'ada-chat', `Turn ${i}: tell me about the Orion deploy, step ${i}, and the VPN token rotation that goes with it.`, `Step ${i} of the Orion deploy: check the VPN token, run the smoke tests, then promote the build to staging and watch the dashboards for a while.`)
    }
    await turn(BOB, 'bob-chat', `What is the ${BOB_SECRET} vault code?`, `It is in the blue binder of ${BOB_SECRET}.`)
    // Summaries over summaries: fold the whole window as far as it goes.
    assert.ok(hasCompactor(mind.context))
    await mind.context.compact({ sessionId: 'ada-chat', agent: mind.agent, user: 'ada' }, { mode: 'full' })
    await mind.indexed()
    adaConversation = (await mind.backend.context.findConversation('ada-chat', mind.agent))?.id ?? -1
    bobConversation = (await mind.backend.context.findConversation('bob-chat', mind.agent))?.id ?? -1
    assert.ok(adaConversation > 0 && bobConversation > 0)
  })
  after(async () => {
    await mind.close()
    temp.cleanup()
  })

  test('memories: a user sees their own, escaped, never another user\'s', async () => {
    const page = await get(app, '/memories', ADA)
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    assert.ok(count(page, 'memory-row') >= 3, page.text)
    assert.match(page.text, /VPN token refreshed every Monday/)
    assert.match(page.text, /Orion smoke tests/)
    assert.match(page.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    assert.match(page.text, /&lt;img src=x onerror=alert\(1\)&gt;/)
    assertEscaped(page)
    assert.ok(!page.text.includes(BOB_SECRET))
    // No user picker for a user's token: it says whose view this is.
    assert.equal(count(page, 'user-select'), 0)
    assert.equal(count(page, 'view-of'), 1)

    // Filters by kind, and search.
    const rules = await get(app, '/memories?kind=rule', ADA)
    assert.match(rules.text, /Orion smoke tests/)
    assert.ok(!rules.text.includes('refreshed every Monday'))
    const found = await get(app, '/memories?q=VPN%20token%20Monday', ADA)
    assert.equal(found.status, 200)
    assert.match(found.text, /refreshed every Monday/)
    const notFound = await get(app, `/memories?q=${BOB_SECRET}%20vault%20code`, ADA)
    assert.equal(notFound.status, 200)
    assert.ok(!notFound.text.includes('blue binder'), 'Bob\'s lesson in Ada\'s search')
    const hostile = await get(app, '/memories?q=templates%20script%20alert', ADA)
    assert.match(hostile.text, /&lt;script&gt;/)
    assertEscaped(hostile)
    assert.equal((await get(app, '/memories?kind=opinion', ADA)).status, 400)
  })

  test('memories: naming another user is a 403 page for a user\'s token, an administrator may', async () => {
    assertRefused(await get(app, '/memories?user=bob', ADA), 403)
    assertRefused(await get(app, `/memories?user=bob&q=${BOB_SECRET}`, ADA), 403)
    const admin = await get(app, '/memories?user=bob', ADMIN)
    assert.equal(admin.status, 200)
    assert.match(admin.text, new RegExp(`${BOB_SECRET} vault code`))
    assert.ok(!admin.text.includes('refreshed every Monday'), 'Bob\'s view holds none of Ada\'s')
    // The administrator picks among the home's users.
    assert.equal(count(admin, 'user-select'), 1)
    assert.match(admin.text, /<option value="ada">ada<\/option>/)
    assert.match(admin.text, /<option value="bob" selected>bob<\/option>/)
    // Without a user, the agent's own view: no user's memories.
    const agentView = await get(app, '/memories', ADMIN)
    assert.ok(!agentView.text.includes(BOB_SECRET) && !agentView.text.includes('refreshed every Monday'))
  })

  test('a memory file: entries, frontmatter and saved versions; another user\'s path and paths outside memory are refused', async () => {
    const lessons = await get(app, '/memories/file?path=users/ada/memory/lessons.md', ADA)
    assert.equal(lessons.status, 200, lessons.text)
    assert.ok(count(lessons, 'entry') >= 2)
    assert.match(lessons.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    assertEscaped(lessons)
    assert.match(lessons.text, /data-testid="file-owner">user ada</)

    const knowledge = await get(app, '/memories/file?path=users/ada/knowledge/orion.md', ADA)
    assert.equal(knowledge.status, 200, knowledge.text)
    assert.match(knowledge.text, /data-testid="frontmatter-field"><th>title<\/th><td class="text">Orion cluster, upgraded<\/td>/)
    assert.match(knowledge.text, /5 nodes since the upgrade/)
    assert.equal(count(knowledge, 'history'), 1)
    assert.equal(count(knowledge, 'version'), 1, 'the first text was saved as a version')
    // The saved version opens too, and holds the old text.
    const versionPath = /data-testid="version"><td>[^<]*<\/td><td><a href="\/memories\/file\?path=([^"&]+)"/.exec(knowledge.text)?.[1]
    assert.ok(versionPath, knowledge.text)
    const version = await get(app, `/memories/file?path=${versionPath}`, ADA)
    assert.equal(version.status, 200)
    assert.match(version.text, /3 nodes/)

    // The file links of the listing open.
    const listing = await get(app, '/memories?kind=knowledge', ADA)
    const link = /data-testid="file-link"/.test(listing.text) ? /href="(\/memories\/file\?path=[^"]+)" data-testid="file-link"/.exec(listing.text)?.[1] : undefined
    assert.ok(link, listing.text)
    assert.equal((await get(app, link.replaceAll('&amp;', '&'), ADA)).status, 200)

    // Bob's files: by path, by his own tree's alias, or with ?user=.
    assertRefused(await get(app, '/memories/file?path=users/bob/knowledge/vault.md', ADA), 403)
    assertRefused(await get(app, '/memories/file?path=agents/default/users/bob/memory/lessons.md', ADA), 403)
    assertRefused(await get(app, '/memories/file?path=knowledge/vault.md&user=bob', ADA), 403)
    // Outside the memory.
    assertRefused(await get(app, '/memories/file?path=../../etc/passwd', ADA), 400)
    assertRefused(await get(app, '/memories/file?path=/etc/passwd', ADA), 400)
    assertRefused(await get(app, '/memories/file?path=knowledge/none.md', ADA), 404)
    // An administrator opens Bob's file as Bob's view.
    const asAdmin = await get(app, '/memories/file?path=users/bob/knowledge/vault.md&user=bob', ADMIN)
    assert.equal(asAdmin.status, 200)
    assert.match(asAdmin.text, /in the basement/)
  })

  test('why: what priming would inject, with sources, scores and channel budgets', async () => {
    const form = await get(app, '/why', ADA)
    assert.equal(form.status, 200)
    assert.equal(count(form, 'why-form'), 1)
    assert.equal(count(form, 'why-result'), 0)

    const page = await get(app, `/why?message=${encodeURIComponent('How do I refresh the VPN token for the Orion staging deploy?')}`, ADA)
    assert.equal(page.status, 200, page.text)
    assert.ok(count(page, 'provenance-item') >= 1, page.text)
    assert.match(page.text, /data-channel="related" data-kind="lesson"/)
    assert.match(page.text, /data-testid="provenance-source">users\/ada\/memory\/lessons\.md</)
    // The reason in words, the score terms behind a toggle (issue 30).
    assert.match(page.text, /data-testid="provenance-why"><span data-testid="provenance-reason">[A-Z][^<]+\.<\/span><details data-testid="score-terms"><summary>score terms<\/summary><dl class="terms"><dt>score \(all terms together\)<\/dt><dd>[\d.]+<\/dd><dt>lexical/)
    assert.match(page.text, /data-testid="provenance-text"><div class="md"><p>The Orion staging deploy needs the VPN token refreshed every Monday\.</)
    assert.equal(count(page, 'channel-budget'), 4)
    assert.match(page.text, /data-channel="related"><td>related[\s\S]*?data-testid="channel-used">[1-9]\d*<\/td><td data-testid="channel-limit">\d+</)
    assert.match(page.text, /data-testid="priming-budget">\d+</)
    // Looking is not recalling: the lesson's access count is unchanged.
    const lesson = /data-testid="provenance-source">users\/ada\/memory\/lessons\.md<\/a> <span class="muted">([^<]+)</.exec(page.text)?.[1]
    assert.ok(lesson, page.text)
    const accessesBefore = (await mind.backend.index.get([lesson]))[0]?.accessCount
    await get(app, `/why?message=${encodeURIComponent('How do I refresh the VPN token for the Orion staging deploy?')}`, ADA)
    assert.equal((await mind.backend.index.get([lesson]))[0]?.accessCount, accessesBefore)
    assert.ok(!page.text.includes(BOB_SECRET))

    // The hostile lesson is recalled; its markup reaches the page as text (the prompt's own escaping, then the page's).
    const hostile = await get(app, `/why?message=${encodeURIComponent('Orion templates: beware of script tags in user input')}`, ADA)
    assert.match(hostile.text, /data-testid="primed-text">[\s\S]*Orion templates: beware &amp;lt;script&gt;alert\(1\)&amp;lt;\/script&gt;/)
    assertEscaped(hostile)

    // Bob's memories never come up for Ada, and she may not ask as Bob.
    const probing = await get(app, `/why?message=${encodeURIComponent(`${BOB_SECRET} vault code binder`)}`, ADA)
    assert.equal(probing.status, 200)
    assert.ok(!probing.text.includes('blue binder'))
    assertRefused(await get(app, `/why?message=vault&user=bob`, ADA), 403)
    const asAdmin = await get(app, `/why?message=${encodeURIComponent(`${BOB_SECRET} vault code binder`)}&user=bob`, ADMIN)
    assert.match(asAdmin.text, /blue binder/)
  })

  test('conversations: a user sees their own, with the summary DAG down to the messages and each turn\'s why', async () => {
    const list = await get(app, '/conversations', ADA)
    assert.equal(list.status, 200)
    assert.equal(count(list, 'conversation-row'), 1)
    assert.match(list.text, /data-session="ada-chat"/)
    assert.ok(!list.text.includes('bob-chat'))
    assert.match(list.text, /data-testid="message-count">16</)
    const admin = await get(app, '/conversations', ADMIN)
    assert.equal(count(admin, 'conversation-row'), 2)

    const page = await get(app, `/conversations/${adaConversation}`, ADA)
    assert.equal(page.status, 200, page.text)
    assert.match(page.text, /data-testid="session-id">ada-chat</)
    // Summaries over summaries over messages, as nested details.
    assert.ok(count(page, 'dag-node') >= 3, page.text)
    assert.match(page.text, /data-testid="dag-node" data-summary-id="[^"]+" data-depth="[1-9]" data-kind="condensed"[\s\S]*?<details[^>]*data-depth="0" data-kind="leaf"[\s\S]*?data-testid="message"/)
    // Every stored message is reachable from the DAG.
    assert.equal(count(page, 'message'), 16)
    assert.match(page.text, /Turn 1: tell me about the Orion deploy/)
    assert.ok(count(page, 'turn-link') >= 8)
    assert.equal(count(page, 'turn'), 8)

    const turn = await get(app, '/turns/ada-chat/8', ADA)
    assert.equal(turn.status, 200, turn.text)
    assert.match(turn.text, /Turn 8: tell me about the Orion deploy/)
    assert.equal(count(turn, 'channel-budget'), 4)
    assert.ok(count(turn, 'provenance-item') >= 1, turn.text)
    assert.ok(count(turn, 'turn-summary') >= 1, 'the turn saw summaries of the earlier ones')

    // Bob's conversation and turns do not exist for Ada.
    assertRefused(await get(app, `/conversations/${bobConversation}`, ADA), 404)
    assertRefused(await get(app, `/conversations/${bobConversation}?user=bob`, ADA), 403)
    assertRefused(await get(app, '/turns/bob-chat/1', ADA), 404)
    assertRefused(await get(app, '/turns/ada-chat/99', ADA), 404)
    const bobsTurn = await get(app, '/turns/bob-chat/1', ADMIN)
    assert.equal(bobsTurn.status, 200)
    assert.match(bobsTurn.text, /vault code/)
  })
})

describe('dashboard: reading memory on an open loopback server', () => {
  test('the agent\'s own memory only; naming a user is refused', async (t) => {
    const temp = makeTempHome()
    const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true })
    t.after(async () => {
      await mind.close()
      temp.cleanup()
    })
    const app = createServeApp({ mind })
    const empty = await get(app, '/memories')
    assert.equal(empty.status, 200)
    assert.equal(count(empty, 'empty'), 1, 'an empty home says how memories arrive')
    assert.equal(count(await get(app, '/conversations'), 'empty'), 1)

    await mind.encode([{ text: 'The build cache of Orion lives on the second disk.', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user' }])
    await mind.scope('ada').encoder.encode([{ text: 'Ada keeps her Orion notes in a paper notebook.', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user' }])
    await mind.indexed()
    const page = await get(app, '/memories')
    assert.match(page.text, /second disk/)
    assert.ok(!page.text.includes('paper notebook'))
    assertRefused(await get(app, '/memories?user=ada'), 403)
    assertRefused(await get(app, '/memories/file?path=users/ada/memory/lessons.md'), 403)
  })
})

describe('dashboard: a listing larger than a page', () => {
  test("shows the first page of the viewer's own, says there are more, and never another user's", async () => {
    const temp = makeTempHome()
    const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true })
    try {
      const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
      // Bob's lessons first: rowids before Ada's, so a listing that filtered after reading would meet them first.
      for (const [token, who, total] of [[BOB, BOB_SECRET, 340], [ADA, 'Ada', 320]] as const) {
        for (let start = 0; start < total; start += 50) {
          const entries = Array.from({ length: Math.min(50, total - start) }, (_, i) => ({ text: `${who} lesson number ${start + i}: the build step ${start + i} takes ${i + 3} minutes`, kind: 'lesson' }))
          await post(app, '/v1/memorize', token, { entries })
        }
      }
      await mind.indexed()
      const ada = await get(app, '/memories', ADA)
      assert.equal(ada.status, 200)
      assert.equal(count(ada, 'memory-row'), 300)
      assert.match(ada.text, /data-testid="count">300\+ \(the first 300/)
      assert.ok(!ada.text.includes(BOB_SECRET), "a page of Ada's never holds Bob's")
      const adaRules = await get(app, '/memories?kind=always', ADA)
      assert.equal(count(adaRules, 'memory-row'), 0)
      const bob = await get(app, '/memories', BOB)
      assert.equal(count(bob, 'memory-row'), 300)
      assert.ok(!/Ada lesson number/.test(bob.text), "a page of Bob's never holds Ada's")
    } finally {
      await mind.close()
      temp.cleanup()
    }
  })
})
