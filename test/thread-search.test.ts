// @slow: drives PostgreSQL, and `engram mcp` in child processes
/**
 * Search returns threads too (decision 0080): a search_memory query that asks for order, change or
 * the whole story lists the viewer's thread turns first, in time order, dated, each naming its thread;
 * then the ordinary hits. Through `createMind` → `mind.session(id, { user })` (a new Session per turn,
 * three sittings days apart, two users), the session's own tools, and `engram mcp` driven by the
 * official MCP client in a child process, on the embedded backend and on PostgreSQL. Any other query
 * is the retriever's ranking, unchanged.
 */
import assert from 'node:assert/strict'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ManualClock } from '../src/core/clock.ts'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { createMind } from '../src/index.ts'
import { internalsOf } from '../src/mind-internals.ts'
import { searchMemory } from '../src/tools/agent-tools.ts'
import { type MemorySearchHit, memorySearchHitOf } from '../src/tools/search-memory-tool.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { ADA, BOB, call, TOKENS } from './support/serve-app.ts'

const DAY = 86_400_000
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

/** What Ada says in each of three sittings, days apart: the sourdough comes back each time, among other things. */
const SITTINGS: ReadonlyArray<readonly string[]> = [
  ['I started a sourdough starter with rye flour today.', 'Also my bike needs a new chain before the weekend ride.'],
  ['The sourdough starter doubled overnight, so I baked my first loaf.', 'The garden tomatoes are finally turning red.'],
  ['My sourdough came out dense, I think the oven was too cool.', 'I booked the dentist for Thursday.'],
]
const STORY = SITTINGS.map((said) => said[0] as string)
const DAYS = ['2026-03-02', '2026-03-05', '2026-03-08']

type Hit = MemorySearchHit & { ref: string }
type ToolOutcome = { text: string; data?: unknown; isError?: boolean }

/** The thread's turns listed first, in time order, dated and marked; the rest are ordinary hits, none twice. */
function assertStoryFirst(text: string, hits: Hit[]): void {
  const story = hits.slice(0, STORY.length)
  assert.deepEqual(story.map((hit) => hit.text), STORY, text)
  assert.deepEqual(story.map((hit) => [hit.kind, hit.thread, hit.createdAt?.slice(0, 10)]), DAYS.map((day) => ['message', 'sourdough', day]))
  assert.ok(hits.slice(STORY.length).every((hit) => hit.thread === undefined), 'only the thread turns name the thread')
  assert.equal(new Set(hits.map((hit) => hit.id)).size, hits.length, 'no hit twice')
  assert.ok(hits.length <= 10, 'within the limit')
  assert.match(text, /for "[^"]*" \(the turns of the thread "sourdough" first, in time order; then best first\):/)
  const at = STORY.map((said, i) => text.indexOf(`[message ${DAYS[i]}, thread sourdough] ${said}`))
  assert.ok(at.every((i) => i >= 0), text)
  assert.deepEqual([...at].sort((a, b) => a - b), at, 'printed in time order')
}

type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

function threadSearchSuite(target: Target): void {
  test(`search_memory lists a gathering query's thread turns first, in time order, for its user only, over the library, \`engram mcp\`, \`/v1/search\` and \`engram search\` (${target.backend})`, async (t) => {
    const temp = makeTempHome('engram-thread-search-')
    t.after(temp.cleanup)
    const schema = freshSchema()
    // The child processes and the command line open the same store: the environment names it.
    const env = target.backend === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : temp.env
    if (target.backend === 'postgres') t.after(() => dropSchema(target.url, schema))
    const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'))
    const mind = await createMind({ home: temp.home, env, ignoreConfigFile: true, clock, embedder: null })
    let open = true
    t.after(async () => {
      if (open) await mind.close()
    })

    for (const [i, said] of SITTINGS.entries()) {
      clock.set(Date.parse('2026-03-02T09:00:00Z') + i * 3 * DAY)
      for (const message of said) {
        const turn = await mind.session(`kitchen-${i}`, { user: 'ada' }).begin(message)
        await mind.session(`kitchen-${i}`, { user: 'ada' }).end(turn, 'Noted.')
        clock.advance(60_000)
      }
      // Bob bakes too, in one sitting: his words are his, and Ada's thread is not his to read.
      const bobs = await mind.session(`bakery-${i}`, { user: 'bob' }).begin(`My sourdough rye loaf number ${i + 1} is in the oven.`)
      await mind.session(`bakery-${i}`, { user: 'bob' }).end(bobs, 'Enjoy it.')
      await mind.sessions.end(`kitchen-${i}`)
      await mind.sessions.end(`bakery-${i}`)
      await mind.maintain()
      await mind.idle()
    }
    const internals = internalsOf(mind)
    const adaDocs = internals.backend.owned('user:ada').documents
    assert.ok(await adaDocs.read('thread', 'sourdough'), `Ada's sourdough thread; threads: ${JSON.stringify(await adaDocs.slugs('thread'))}`)

    clock.advance(DAY)
    const searchIn = async (sessionId: string, user: string, message: string, query: string, limit?: number): Promise<{ outcome: ToolOutcome; hits: Hit[]; messageId: number }> => {
      const turn = await mind.session(sessionId, { user }).begin(message)
      const tool = turn.tools.find((candidate) => candidate.name === 'search_memory')
      assert.ok(tool)
      const outcome = (await tool.execute({ query, ...(limit !== undefined ? { limit } : {}) })) as ToolOutcome
      assert.ok(!outcome.isError, outcome.text)
      await mind.session(sessionId, { user }).end(turn, 'Here is what I found.')
      return { outcome, hits: (outcome.data as { hits: Hit[] }).hits, messageId: turn.messageId }
    }

    // (1) Through the session's own tools: an order, what was said across sessions and how the subject
    // changed (named between "how did" and the verb) all list the story first.
    for (const query of ['In what order did I do things with my sourdough?', 'Across our conversations, what did I say about my sourdough?', 'How did my sourdough develop?']) {
      const { outcome, hits } = await searchIn('kitchen-ask', 'ada', 'Let me look back at my baking.', query)
      assertStoryFirst(outcome.text, hits)
    }
    // A limit shorter than the story lists its beginning, and says how much more there is.
    const cut = await searchIn('kitchen-ask', 'ada', 'And the start of it?', 'In what order did I do things with my sourdough?', 2)
    assert.deepEqual(cut.hits.map((hit) => [hit.text, hit.thread, hit.threadTurns]), STORY.slice(0, 2).map((said) => [said, 'sourdough', 3]))
    assert.match(cut.outcome.text, /\(the turns of the thread "sourdough" first, in time order \(2 of 3; a larger limit lists more\); then best first\):/)

    // (3) Bob asks the same: Ada's thread is not in his view, nor are her turns.
    const bob = await searchIn('bakery-ask', 'bob', 'Let me look back at my baking.', 'In what order did I do things with my sourdough?')
    assert.ok(bob.hits.every((hit) => hit.thread === undefined && !STORY.includes(hit.text)), JSON.stringify(bob.hits))
    assert.ok(bob.hits.some((hit) => /My sourdough rye loaf/.test(hit.text)), 'his own turns are found')

    // (4) A query that does not gather is the retriever's ranking as it is: the same hits, in the same
    // order, with the same scores — with the thread in place and with it archived.
    const viewer = { agent: internals.agent, user: 'ada' }
    const plain = 'Which flour did I use for the sourdough starter?'
    const turn = await mind.session('kitchen-plain', { user: 'ada' }).begin('A quick question about my starter.')
    const ranked = async (): Promise<MemorySearchHit[]> => (await internals.retriever.search(plain, { viewer, limit: 10, excludeMessageIds: [turn.messageId], recordAccess: false })).hits.map(memorySearchHitOf)
    const expected = await ranked()
    const tool = turn.tools.find((candidate) => candidate.name === 'search_memory')
    assert.ok(tool)
    const shown = (await tool.execute({ query: plain })) as ToolOutcome
    assert.deepEqual((shown.data as { hits: Hit[] }).hits.map(({ ref: _ref, ...hit }) => hit), expected)
    assert.match(shown.text, /\(best first\):/)
    await mind.session('kitchen-plain', { user: 'ada' }).end(turn, 'Rye.')
    const withThread = await searchMemory(internals, viewer, plain, { limit: 10, recordAccess: false })
    // A "how did …" that asks about a feeling, not a change ("progress" after a possessive is a noun):
    // the ordinary search, the thread in place.
    const feeling = 'How did you feel about my progress with the sourdough?'
    assert.deepEqual(await searchMemory(internals, viewer, feeling, { limit: 10, recordAccess: false }), (await internals.retriever.search(feeling, { viewer, limit: 10, recordAccess: false })).hits.map(memorySearchHitOf))
    await adaDocs.archive('thread', 'sourdough', 'forgotten')
    const withoutThread = await searchMemory(internals, viewer, plain, { limit: 10, recordAccess: false })
    // Without the thread, a gathering query is the ordinary search too.
    const story = 'In what order did I do things with my sourdough?'
    assert.deepEqual(await searchMemory(internals, viewer, story, { limit: 10, recordAccess: false }), (await internals.retriever.search(story, { viewer, limit: 10, recordAccess: false })).hits.map(memorySearchHitOf))
    await adaDocs.restore('thread', 'sourdough', 'forgotten')
    assert.deepEqual(withThread, withoutThread)
    assert.ok(withThread.length > 0 && withThread.every((hit) => hit.thread === undefined))
    // A kinds filter without messages lists no turn.
    assert.ok((await searchMemory(internals, viewer, story, { limit: 10, kinds: ['lesson'], recordAccess: false })).every((hit) => hit.kind === 'lesson'))

    // The HTTP API's search is the same tool: Ada's token lists her story first, Bob's does not see it.
    const app = createServeApp({ mind: internals, credentials: parseCredentials(TOKENS) })
    const overHttp = await call(app, 'POST', '/v1/search', { token: ADA, body: { query: story } })
    assert.equal(overHttp.status, 200, JSON.stringify(overHttp.body))
    assert.deepEqual((overHttp.body.hits as Hit[]).slice(0, STORY.length).map((hit) => [hit.text, hit.thread]), STORY.map((said) => [said, 'sourdough']))
    const bobOverHttp = await call(app, 'GET', `/v1/search?query=${encodeURIComponent(story)}`, { token: BOB })
    assert.ok((bobOverHttp.body.hits as Hit[]).every((hit) => hit.thread === undefined && !STORY.includes(hit.text)), JSON.stringify(bobOverHttp.body))

    await mind.close()
    open = false

    // `engram search` on the command line, a person looking: the same story first.
    let out = ''
    const code = await runCli(['search', story, '--user', 'ada', '--home', temp.home, '--json'], { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env, cwd: temp.home, isTTY: false })
    assert.equal(code, 0, out)
    const printed = JSON.parse(out.trim().split('\n').pop() ?? '{}').data.hits as Hit[]
    assert.deepEqual(printed.slice(0, STORY.length).map((hit) => [hit.text, hit.thread]), STORY.map((said) => [said, 'sourdough']))

    // (2) `engram mcp` in a child process, the official client, one connection per user.
    const connect = async (user: string): Promise<Client> => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', temp.home, '--user', user], env, cwd: root, stderr: 'pipe' })
      const client = new Client({ name: 'engram-thread-search-test', version: '1.0.0' })
      await client.connect(transport)
      t.after(() => client.close())
      return client
    }
    const callSearch = async (client: Client, query: string): Promise<{ text: string; hits: Hit[] }> => {
      const result = (await client.callTool({ name: 'search_memory', arguments: { query } })) as { content: Array<{ text?: string }>; isError?: boolean; structuredContent?: { hits: Hit[] } }
      const text = result.content.map((part) => part.text ?? '').join('\n')
      assert.ok(!result.isError, text)
      return { text, hits: result.structuredContent?.hits ?? [] }
    }
    const adaOverMcp = await callSearch(await connect('ada'), 'Tell me the order in which I did things with my sourdough.')
    assertStoryFirst(adaOverMcp.text, adaOverMcp.hits)
    const bobOverMcp = await callSearch(await connect('bob'), 'Tell me the order in which I did things with my sourdough.')
    assert.ok(bobOverMcp.hits.length > 0 && bobOverMcp.hits.every((hit) => hit.thread === undefined && !STORY.includes(hit.text)), bobOverMcp.text)
    assert.doesNotMatch(bobOverMcp.text, /thread/)
  })
}

threadSearchSuite({ backend: 'embedded' })
onPostgres('search_memory lists a gathering query\'s thread turns first', (url) => threadSearchSuite({ backend: 'postgres', url }))
