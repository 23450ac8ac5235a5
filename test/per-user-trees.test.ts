/**
 * Per-user trees are first-class (decision 0046), through the path a host takes: `createMind` →
 * `mind.session(id, { user })`, a new Session per turn, two users (ada and bob) and the agent's own
 * sessions. On both backends (embedded, and PostgreSQL in a fresh schema).
 *
 * - `[[links]]` in ada's notes resolve in her tree (before the agent's note of the same name, never
 *   to bob's), so the linked note is reached through the graph; a note that only resembles the best
 *   hit is not lifted above it. Bob sees none of it.
 * - A heartbeat writes into each user's log only that user's sessions; the agent's log, which every
 *   session reads, names no user's session.
 * - A profile fact saved for ada is forgotten by its text, by its id and by path through
 *   mind.forget, the forget_memory tool, the CLI and the HTTP API; it leaves her memory context and
 *   search; restore brings it back. Bob's profile is never touched, and bob cannot forget hers.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { createMind, type Mind } from '../src/mind.ts'
import type { InjectedMemory } from '../src/memory/priming/prime.ts'
import { openPostgres } from '../src/storage/postgres/connection.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import type { Turn } from '../src/session/turn.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import { ADA, assertError, assertOk, BOB, call as http, TOKENS } from './support/serve-app.ts'
import { call } from './support/tool-calls.ts'

type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

const QUESTION = 'Project Falcon billing queue Kafka'
const FALCON = '# Project Falcon\nProject Falcon moves the billing queue to Kafka next spring. Ask [[falcon-owner]] before changing retention, partitions or consumer groups.\n'
/** Ada's note the link names: not one word of the question. */
const ADA_OWNER = '# Owner\nPriya Raman decides every schema change; reach her on the payments channel.\n'
/** Shares most of FALCON's words but only one of the question's: similarity, no evidence. */
const CLEANUP = '# Spring cleanup\nAsk before changing retention, partitions or consumer groups next spring: the old project folders move to cold storage.\n'
const AGENT_OWNER = '# Owner\nJonas Weber runs the agent fleet rota.\n'
const BOB_OWNER = '# Owner\nZed Quill keeps the quokka enclosure keys.\n'

async function dropSchema(url: string, schema: string): Promise<void> {
  const handle = await openPostgres({ url, schema })
  try {
    await handle.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await handle.close()
  }
}

function related(turn: Turn): InjectedMemory[] {
  return turn.provenance.primed.filter((item) => item.channel === 'related')
}

function trees(target: Target): void {
  describe(`per-user trees are first-class (${target.backend})`, () => {
    let tmp: TempHome
    let mind: Mind
    let env: Record<string, string>
    const schema = freshSchema()
    const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'))

    /** One turn in a new Session object, as a stateless host runs it. */
    async function turn(sessionId: string, user: string | undefined, message: string, act?: (begun: Turn) => Promise<void>): Promise<Turn> {
      const session = mind.session(sessionId, user === undefined ? {} : { user })
      const begun = await session.begin(message)
      if (act) await act(begun)
      clock.advance(5_000)
      await session.end(begun, 'Done.')
      await mind.idle()
      await mind.indexed()
      clock.advance(5_000)
      return begun
    }

    async function write(begun: Turn, path: string, content: string): Promise<void> {
      const written = await call(begun.tools, 'write_memory_file', { path, content })
      assert.equal(written.isError, undefined, written.text)
    }

    async function engram(args: string[]): Promise<{ code: number; out: string }> {
      let out = ''
      const code = await runCli([...args, '--home', tmp.home, '--json'], { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env, cwd: tmp.home, isTTY: false })
      return { code, out }
    }

    before(async () => {
      tmp = makeTempHome()
      env = target.backend === 'postgres' ? { ...tmp.env, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : tmp.env
      mind = await createMind({ home: tmp.home, env, ignoreConfigFile: true, clock })
      assert.equal(mind.backend.name, target.backend)
    })
    after(async () => {
      await mind?.close()
      tmp?.cleanup()
      if (target.backend === 'postgres') await dropSchema(target.url, schema)
    })

    test("[[links]] in a user's notes resolve in her tree; a merely similar note is not lifted above the linked one; bob sees none of it", async () => {
      await turn('agent-notes', undefined, 'Keep a note about the fleet rota.', (begun) => write(begun, 'knowledge/falcon-owner.md', AGENT_OWNER))
      await turn('ada-notes', 'ada', 'Let me write down the Falcon notes.', async (begun) => {
        await write(begun, 'knowledge/falcon.md', FALCON)
        await write(begun, 'knowledge/falcon-owner.md', ADA_OWNER)
        await write(begun, 'knowledge/spring-cleanup.md', CLEANUP)
      })
      await turn('bob-notes', 'bob', 'A note of mine.', (begun) => write(begun, 'knowledge/falcon-owner.md', BOB_OWNER))

      const asked = await turn('ada-ask', 'ada', QUESTION)
      const items = related(asked)
      const find = (suffix: string): InjectedMemory | undefined => items.find((item) => item.source.endsWith(suffix))
      const owner = find('/users/ada/knowledge/falcon-owner.md')
      const cleanup = find('/users/ada/knowledge/spring-cleanup.md')
      assert.ok(owner, `the linked note is primed: ${JSON.stringify(items.map((item) => item.source))}`)
      assert.ok(cleanup)
      assert.equal(owner.why.lexical, 0, 'it shares no word with the question')
      assert.ok(Number(owner.why.graph) > 0, 'it is reached through the graph')
      assert.ok(Number(owner.why.score) > Number(cleanup.why.score), `the linked note ranks above the merely similar one: ${JSON.stringify([owner.why, cleanup.why])}`)
      const agentOwner = find('agents/default/knowledge/falcon-owner.md')
      if (agentOwner) assert.ok(Number(agentOwner.why.score) < Number(owner.why.score), "the link named ada's note, not the agent's of the same name")
      assert.match(asked.system, /Priya Raman/)
      assert.doesNotMatch(asked.system, /Zed Quill|quokka/, "bob's note of the same name is not ada's to reach")

      // search_memory ranks them the same way.
      const searched = (await call(asked.tools, 'search_memory', { query: QUESTION, limit: 10 })).text
      const at = (name: string): number => searched.indexOf(`users/ada/knowledge/${name}`)
      assert.ok(at('falcon-owner.md') >= 0 && at('falcon-owner.md') < at('spring-cleanup.md'), searched)

      // A note she writes by hand into her tree, picked up by a reindex, links by path in her tree.
      if (target.backend === 'embedded') {
        const knowledge = join(tmp.home, 'agents', mind.agent, 'users', 'ada', 'knowledge')
        writeFileSync(join(knowledge, 'kafka-cutover.md'), '# Kafka cutover\nThe Kafka cutover window is Sunday night; see [[knowledge/cutover-contacts]].\n')
        writeFileSync(join(knowledge, 'cutover-contacts.md'), '# Contacts\nOla Nordmann holds the pager that night.\n')
        await mind.reindex()
        const cutover = await turn('ada-cutover', 'ada', 'When is the Kafka cutover window?')
        const contacts = related(cutover).find((item) => item.source.endsWith('/users/ada/knowledge/cutover-contacts.md'))
        assert.ok(contacts && Number(contacts.why.graph) > 0 && contacts.why.lexical === 0, JSON.stringify(related(cutover).map((item) => [item.source, item.why])))
      }

      // Bob asks the same: nothing of ada's notes, and his own note is reached by no link.
      const bob = await turn('bob-ask', 'bob', QUESTION)
      for (const seen of [bob.system, JSON.stringify(bob.provenance), (await call(bob.tools, 'search_memory', { query: `${QUESTION} owner schema cutover`, limit: 50 })).text]) {
        assert.doesNotMatch(seen, /Priya|Raman|Nordmann|spring cleanup|users\/ada/i)
      }
      for (const item of related(bob)) assert.equal(Number(item.why.graph ?? 0) > 0 && item.source.includes('/users/ada/'), false)
    })

    test("a heartbeat names each user's sessions in that user's log only, and the agent's log names none of them", async () => {
      // The sessions of the test before end as idle ones do (no heartbeat line).
      clock.advance(11 * 60_000)
      await mind.maintain()
      await turn('mon', 'ada', 'Morning check of the Falcon queue.')
      await turn('tue', 'bob', 'Evening check of the rota.')
      await turn('cron-sweep', undefined, 'Nightly sweep.')
      await mind.heartbeat()
      clock.advance(60_000)
      const beat = await mind.heartbeat()
      assert.ok(['mon', 'tue', 'cron-sweep'].every((id) => beat.closed.some((entry) => entry.session === id)), JSON.stringify(beat.closed))

      const ends = async (owner: 'agent' | 'user:ada' | 'user:bob'): Promise<string[]> =>
        (await (owner === 'agent' ? mind.backend.activity : mind.backend.owned(owner).activity).read()).filter((record) => record.type === 'heartbeat_end').map((record) => record.summary ?? '')
      const ada = (await ends('user:ada')).join('\n')
      const bob = (await ends('user:bob')).join('\n')
      const agent = (await ends('agent')).join('\n')
      assert.match(ada, /closed 1 session\(s\): mon\b/)
      assert.match(bob, /closed 1 session\(s\): tue\b/)
      assert.match(agent, /cron-sweep/)
      assert.doesNotMatch(ada, /\btue\b|cron-sweep/)
      assert.doesNotMatch(bob, /\bmon\b|cron-sweep/)
      assert.doesNotMatch(agent, /\bmon\b|\btue\b/)

      // What bob's next turn is primed with names his session, never ada's.
      const next = await turn('tue', 'bob', 'What happened recently?')
      assert.match(next.system, /HB: closed 1 session\(s\): tue/)
      assert.doesNotMatch(next.system, /HB:[^\n]*\bmon\b/)
      for (const item of next.provenance.primed) assert.ok(!item.source.includes('users/ada'), item.source)
      const adaNext = await turn('mon', 'ada', 'What happened recently?')
      assert.match(adaNext.system, /HB: closed 1 session\(s\): mon/)
      assert.doesNotMatch(adaNext.system, /HB:[^\n]*\btue\b/)
    })

    test('a profile fact is forgotten by text, id and path through mind.forget, forget_memory, the CLI and HTTP, and restored', async () => {
      await turn('ada-profile', 'ada', 'A few things about me.', async (begun) => {
        const updated = await call(begun.tools, 'memory', { action: 'profile_update', content: '- Home city: Lisbon\n- Favourite tea: oolong\n- Pet: a tortoise named Zeno\n' })
        assert.equal(updated.isError, undefined, updated.text)
        const saved = await call(begun.tools, 'memorize', { entries: [{ text: 'Editor: vim with no plugins', kind: 'profile' }] })
        assert.equal(saved.isError, undefined, saved.text)
      })
      await turn('bob-profile', 'bob', 'About me.', async (begun) => {
        assert.equal((await call(begun.tools, 'memorize', { entries: [{ text: 'Home city: Lisbon', kind: 'profile' }] })).isError, undefined)
      })
      const adaView = { agent: mind.agent, user: 'ada' }
      const facts = async (): Promise<string[]> => (await mind.retriever.search('Home city Lisbon tea oolong tortoise Zeno editor vim', { viewer: adaView, kinds: ['user'], limit: 20, recordAccess: false })).hits.map((hit) => hit.unit.text)
      // Her memory context: the part of the prompt that holds her profile (priming's recent activity keeps the record of what was said).
      const context = async (): Promise<string> => (await mind.session('ada-context', { user: 'ada' }).begin('Hello again.')).systemParts.memory
      const bobProfile = async (): Promise<string> => (await mind.backend.documents.read('user', 'bob'))?.body ?? ''
      assert.deepEqual((await facts()).sort(), ['Editor: vim with no plugins', 'Favourite tea: oolong', 'Home city: Lisbon', 'Pet: a tortoise named Zeno'], 'one unit per fact')

      // By text, through mind.forget: out of her context and search; bob's same fact stays.
      const byText = await mind.forget('Home city: Lisbon', { user: 'ada' })
      assert.equal(byText.action, 'forgotten')
      assert.match(byText.path, /^users\/ada\.md#[0-9a-f]{16}$/)
      assert.ok(!(await facts()).includes('Home city: Lisbon'))
      assert.doesNotMatch(await context(), /Home city: Lisbon/)
      assert.match(await bobProfile(), /Home city: Lisbon/)
      await mind.restore('Home city: Lisbon', { user: 'ada' })
      assert.ok((await facts()).includes('Home city: Lisbon'))
      assert.match(await context(), /Home city: Lisbon/)
      // Forgotten again, and restored by the archived copy's path the outcome named.
      const again = await mind.forget(byText.path, { user: 'ada' })
      assert.equal(again.archive, 'users/ada/archive/forgotten/profile.md')
      await mind.restore(`${again.archive}#${byText.path.split('#')[1]}`, { user: 'ada' })
      assert.match(await context(), /Home city: Lisbon/)

      // By id (as search gives it), through the forget_memory tool; bob cannot name it.
      const hit = (await mind.retriever.search('tea oolong', { viewer: adaView, kinds: ['user'], recordAccess: false })).hits[0]
      assert.equal(hit?.unit.text, 'Favourite tea: oolong')
      const id = hit.unit.id
      await assert.rejects(mind.forget(id, { user: 'bob' }), /another user's memory/)
      await turn('ada-forget', 'ada', 'Please forget my tea preference.', async (begun) => {
        const result = await call(begun.tools, 'forget_memory', { target: id, reason: 'she changed her mind' })
        assert.equal(result.isError, undefined, result.text)
        assert.match(result.text, /Favourite tea: oolong/)
      })
      assert.ok(!(await facts()).includes('Favourite tea: oolong'))
      assert.doesNotMatch(await context(), /oolong/)
      await mind.restore(id, { user: 'ada' })
      assert.ok((await facts()).includes('Favourite tea: oolong'))

      // Through the CLI, by text; restored by the path it reported.
      const cliForget = await engram(['forget', 'Pet: a tortoise named Zeno', '--user', 'ada'])
      assert.equal(cliForget.code, 0, cliForget.out)
      const path = (JSON.parse(cliForget.out.trim().split('\n').pop() ?? '{}') as { data?: { path?: string } }).data?.path
      assert.match(path ?? '', /^users\/ada\.md#/)
      assert.ok(!(await facts()).includes('Pet: a tortoise named Zeno'))
      assert.doesNotMatch(await context(), /Zeno/)
      const cliRestore = await engram(['restore', path as string, '--user', 'ada'])
      assert.equal(cliRestore.code, 0, cliRestore.out)
      assert.match(await context(), /Pet: a tortoise named Zeno/)

      // Through the HTTP API with ada's token; bob's token cannot reach it.
      const app = createServeApp({ mind, credentials: parseCredentials(TOKENS) })
      assertError(await http(app, 'POST', '/v1/forget', { token: BOB, body: { target: 'Editor: vim with no plugins' } }), 404, 'not_found')
      const viaHttp = assertOk(await http(app, 'POST', '/v1/forget', { token: ADA, body: { target: 'Editor: vim with no plugins' } }))
      assert.equal(viaHttp.forgotten.action, 'forgotten')
      assert.ok(!(await facts()).includes('Editor: vim with no plugins'))
      assert.doesNotMatch(await context(), /Editor: vim/)
      assertOk(await http(app, 'POST', '/v1/restore', { token: ADA, body: { target: 'Editor: vim with no plugins' } }))
      assert.ok((await facts()).includes('Editor: vim with no plugins'))
      assert.match(await context(), /Editor: vim with no plugins/)

      // The whole profile, by its path; restored whole.
      await mind.forget('users/ada.md', { user: 'ada' })
      assert.deepEqual(await facts(), [])
      assert.doesNotMatch(await context(), /Lisbon|oolong|Zeno|vim/)
      await mind.restore('users/ada.md', { user: 'ada' })
      assert.equal((await facts()).length, 4)
      assert.match(await bobProfile(), /Home city: Lisbon/, "bob's profile was never touched")
    })
  })
}

trees({ backend: 'embedded' })
onPostgres('per-user trees are first-class', (url) => trees({ backend: 'postgres', url }))
