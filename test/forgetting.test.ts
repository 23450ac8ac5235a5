/**
 * Forgetting one memory on request (decision 0023), the way an agent does it:
 * `createMind` → `mind.session(id, { user })` → `turn.tools` (forget_memory, search_memory,
 * read_memory_file) → the next turn's prompt; and the way a person does it: `mind.restore`,
 * `mind.forget(…, { purge: true })`. Forgetting moves and flags; only a purge deletes, and logs it.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import type { Turn } from '../src/session/turn.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolResult } from '../src/tools/tool.ts'

type Hit = { id: string; kind: string; text: string; ref: string }

describe('forget_memory in a session, restore and purge', () => {
  let tmp: TempHome
  let mind: MindInternals
  const clock = new ManualClock('2026-03-02T09:00:00Z')

  before(async () => {
    tmp = makeTempHome()
    mkdirSync(tmp.project, { recursive: true })
    mind = await openMindInternals({ home: tmp.home, project: tmp.project, env: tmp.env, ignoreConfigFile: true, clock, embedder: null })
  })
  after(async () => {
    await mind.close()
    tmp.cleanup()
  })

  async function turnOf(user: string | undefined, message = 'Hello again.'): Promise<Turn> {
    return mind.session(user === undefined ? 'agent-chat' : `chat-${user}`, user === undefined ? {} : { user }).begin(message)
  }
  async function call(turn: Turn, name: string, input: unknown): Promise<ToolResult> {
    const tool = turn.tools.find((candidate) => candidate.name === name)
    assert.ok(tool, `${name} is one of turn.tools`)
    return tool.execute(input)
  }
  /** Memories that match (conversation messages aside: the user's own words stay in the conversation). */
  async function search(turn: Turn, query: string): Promise<Hit[]> {
    const result = await call(turn, 'search_memory', { query })
    assert.ok(!result.isError, result.text)
    return (result.data as { hits: Hit[] }).hits.filter((hit) => hit.kind !== 'message')
  }
  const home = (rel: string): string => readFileSync(join(tmp.home, rel), 'utf8')

  test('a rule forgotten by its text as search_memory shows it leaves search and the prompt; restore brings it back', async () => {
    let turn = await turnOf('ada', 'Please remember my style rules.')
    const saved = await call(turn, 'memorize', { entries: [{ text: 'Use tabs for indentation', kind: 'never' }, { text: 'Write tests first', kind: 'always' }] })
    assert.ok(!saved.isError, saved.text)
    turn = await turnOf('ada')
    const [hit] = await search(turn, 'tabs indentation')
    assert.equal(hit?.text, 'Never: Use tabs for indentation')
    assert.match(turn.systemParts.memory, /Use tabs for indentation/)

    const forgot = await call(turn, 'forget_memory', { target: hit.text, reason: 'the user changed their mind' })
    assert.ok(!forgot.isError, forgot.text)
    assert.match(forgot.text, /^Forgot users\/ada\/memory\/rules\.md#[0-9a-f]{16} \("Never: Use tabs for indentation"\): moved to users\/ada\/archive\/forgotten\/rules\.md/)
    assert.deepEqual((await search(turn, 'tabs indentation')).filter((h) => h.kind === 'rule'), [], 'out of the index at once')
    const live = home('agents/default/users/ada/memory/rules.md')
    assert.doesNotMatch(live, /tabs/)
    assert.match(live, /Write tests first/, 'the other rule stays')
    const archived = home('agents/default/users/ada/archive/forgotten/rules.md')
    assert.match(archived, /^# Forgotten rules\n\n- Use tabs for indentation <!-- .*kind:never forgotten_at:2026-03-02T09:00:00\.000Z forgotten_from:users\/ada\/memory\/rules\.md reason:the_user_changed_their_mind -->\n$/)
    const read = await call(turn, 'read_memory_file', { path: 'archive/forgotten/rules.md' })
    assert.match(read.text, /Use tabs/, 'the agent can still read what it forgot, in its archive')

    turn = await turnOf('ada')
    assert.doesNotMatch(turn.systemParts.memory, /tabs/, 'gone from the next prompt')
    assert.match(turn.systemParts.memory, /Write tests first/)

    const [event] = await mind.scope('ada').view.own.activity.read({ types: ['memory_write'], limit: 1 })
    assert.equal(event?.meta?.action, 'forget')
    assert.doesNotMatch(JSON.stringify(event), /tabs/, 'the log names the memory by path, not by its text')

    const restored = await mind.restore('Never: Use tabs for indentation', { user: 'ada' })
    assert.equal(restored.action, 'restored')
    assert.match(home('agents/default/users/ada/memory/rules.md'), /## Never\n- Use tabs for indentation <!-- (?!.*forgotten)/)
    assert.doesNotMatch(home('agents/default/users/ada/archive/forgotten/rules.md'), /tabs/)
    turn = await turnOf('ada')
    assert.equal((await search(turn, 'tabs indentation'))[0]?.text, 'Never: Use tabs for indentation', 'back in the index')
    assert.match(turn.systemParts.memory, /Use tabs for indentation/)
  })

  test('a lesson forgotten by the id search_memory returned leaves its topic file too', async () => {
    const turn = await turnOf('ada', 'Note what we learned about CI.')
    await call(turn, 'memorize', { entries: [{ text: 'The CI runner has only two cores', kind: 'lesson', topic: 'ci' }] })
    assert.match(home('agents/default/users/ada/memory/topics/ci.md'), /two cores/)
    const [hit] = (await search(turn, 'CI runner cores')).filter((h) => h.kind === 'lesson')
    assert.ok(hit)
    const forgot = await call(turn, 'forget_memory', { target: hit.id })
    assert.ok(!forgot.isError, forgot.text)
    assert.doesNotMatch(home('agents/default/users/ada/memory/lessons.md'), /two cores/)
    assert.doesNotMatch(home('agents/default/users/ada/memory/topics/ci.md'), /two cores/, 'the cross-filed copy goes too')
    await mind.reindex()
    assert.deepEqual(await search(turn, 'CI runner cores'), [], 'not back as topic text after a reindex')
  })

  test('an archive that is a named pipe: forget answers what is wrong and how to fix it, never blocks, and keeps the memory', async () => {
    let turn = await turnOf('cy', 'Please remember this.')
    await call(turn, 'memorize', { entries: [{ text: 'Answer in French', kind: 'always' }] })
    const archive = join(tmp.home, 'agents/default/users/cy/archive/forgotten')
    mkdirSync(archive, { recursive: true })
    execFileSync('mkfifo', [join(archive, 'rules.md')])
    turn = await turnOf('cy')
    const forgot = await call(turn, 'forget_memory', { target: 'Always: Answer in French' })
    assert.equal(forgot.isError, true)
    assert.match(forgot.text, /archive\/forgotten\/rules\.md: it is a named pipe, not a file[\s\S]*Move or remove what is at that path/)
    assert.match(home('agents/default/users/cy/memory/rules.md'), /Answer in French/, 'the rule is still live')
    unlinkSync(join(archive, 'rules.md'))
    const again = await call(turn, 'forget_memory', { target: 'Always: Answer in French' })
    assert.ok(!again.isError, again.text)
  })

  test('project memory is forgotten into the owner\'s archive in the home, and restored into the project', async () => {
    const turn = await turnOf('ada', 'Note this about the project.')
    await call(turn, 'memorize', { entries: [{ text: 'This repo builds with make release', kind: 'lesson', scope: 'project', topic: 'build' }] })
    await call(turn, 'write_memory_file', { path: 'project/topics/layout.md', content: 'Sources live in lib/, not src/.\n' })
    const lessons = join(tmp.project, '.engram/users/ada/memory/lessons.md')
    assert.match(readFileSync(lessons, 'utf8'), /make release/)
    const forgot = await call(turn, 'forget_memory', { target: 'This repo builds with make release' })
    assert.ok(!forgot.isError, forgot.text)
    assert.match(forgot.text, /users\/ada\/project\/lessons\.md#[0-9a-f]{16} .*moved to users\/ada\/archive\/forgotten\/project\/lessons\.md/)
    assert.doesNotMatch(readFileSync(lessons, 'utf8'), /make release/)
    assert.doesNotMatch(readFileSync(join(tmp.project, '.engram/users/ada/memory/topics/build.md'), 'utf8'), /make release/)
    const topic = await call(turn, 'forget_memory', { target: 'project/topics/layout.md' })
    assert.ok(!topic.isError, topic.text)
    assert.ok(existsSync(join(tmp.home, 'agents/default/users/ada/archive/forgotten/project/topics/layout.md')))
    assert.deepEqual(await search(turn, 'sources lib'), [])

    await mind.restore('users/ada/archive/forgotten/project/topics/layout.md', { user: 'ada' })
    await mind.restore('This repo builds with make release', { user: 'ada' })
    assert.match(readFileSync(lessons, 'utf8'), /make release/)
    assert.match(readFileSync(join(tmp.project, '.engram/users/ada/memory/topics/layout.md'), 'utf8'), /lib\//)
  })

  test('a knowledge file moves to the archive and back; the session reads its own file first', async () => {
    let turn = await turnOf('ada')
    const wrote = await call(turn, 'write_memory_file', { path: 'knowledge/tea.md', content: '# Tea\nAda drinks green tea at 4 pm.\n' })
    assert.ok(!wrote.isError, wrote.text)
    assert.equal((await search(turn, 'green tea')).length > 0, true)
    const forgot = await call(turn, 'forget_memory', { target: 'knowledge/tea.md' })
    assert.ok(!forgot.isError, forgot.text)
    assert.equal((forgot.data as { archive: string }).archive, 'users/ada/archive/forgotten/knowledge/tea.md')
    assert.ok(!existsSync(join(tmp.home, 'agents/default/users/ada/knowledge/tea.md')))
    assert.ok(existsSync(join(tmp.home, 'agents/default/users/ada/archive/forgotten/knowledge/tea.md')))
    assert.deepEqual(await search(turn, 'green tea'), [])
    assert.equal((await call(turn, 'read_memory_file', { path: 'knowledge/tea.md' })).isError, true)
    await mind.reindex()
    assert.deepEqual(await search(turn, 'green tea'), [], 'an archived file is not indexed again')

    await mind.restore('knowledge/tea.md', { user: 'ada' })
    turn = await turnOf('ada')
    assert.match((await call(turn, 'read_memory_file', { path: 'knowledge/tea.md' })).text, /green tea/)
    assert.ok((await search(turn, 'green tea')).length > 0)
  })

  test("a user's session cannot forget the agent's or another user's memory; the agent's own view can forget the agent's", async () => {
    await mind.encode([{ text: 'Answer in English unless asked otherwise', kind: 'always', scope: 'global', confidence: 'high', source: 'user' }])
    await mind.indexed()
    const bobTurn = await turnOf('bob')
    await call(bobTurn, 'memorize', { entries: [{ text: 'Bob is allergic to nuts', kind: 'profile' }] })

    const adaTurn = await turnOf('ada')
    const refused = await call(adaTurn, 'forget_memory', { target: 'Always: Answer in English unless asked otherwise' })
    assert.equal(refused.isError, true)
    assert.equal((refused.data as { code: string }).code, 'access_denied')
    assert.match(refused.text, /the agent's own memory; a session with ada cannot forget it\.\nFix: .*engram forget/)
    assert.match(refused.text, /`engram forget "Always: Answer in English unless asked otherwise"`/, 'the command quotes the text once')
    const [agentRule] = (await search(await turnOf(undefined), 'answer English')).filter((hit) => hit.kind === 'rule')
    const byId = await call(adaTurn, 'forget_memory', { target: `memory/rules.md#${agentRule?.id.split('#')[1]}` })
    assert.equal((byId.data as { code: string }).code, 'access_denied', "the agent's rule by its id, though ada has a rules.md of her own")
    const other = await call(adaTurn, 'forget_memory', { target: 'users/bob/memory/rules.md#0123456789abcdef' })
    assert.equal((other.data as { code: string }).code, 'access_denied')
    const unknown = await call(adaTurn, 'forget_memory', { target: 'Bob is allergic to nuts' })
    assert.equal((unknown.data as { code: string }).code, 'not_found', "another user's memory is not even seen")
    const episode = await call(adaTurn, 'forget_memory', { target: 'episodes/2026-03-02.md' })
    assert.equal((episode.data as { code: string }).code, 'invalid_argument')
    assert.match(episode.text, /record of what happened/)
    const bad = await call(adaTurn, 'forget_memory', {})
    assert.equal(bad.isError, true)
    assert.match(bad.text, /target[\s\S]*Fix:/)

    const agentTurn = await turnOf(undefined)
    const forgot = await call(agentTurn, 'forget_memory', { target: 'Answer in English unless asked otherwise' })
    assert.ok(!forgot.isError, forgot.text)
    assert.match(home('agents/default/archive/forgotten/rules.md'), /Answer in English/)
  })

  test('purge deletes the memory and its archived copies for real, and logs it without its text', async () => {
    const turn = await turnOf('ada')
    await call(turn, 'memorize', { entries: [{ text: 'Ada earns 120k', kind: 'profile' }, { text: 'Ada prefers short answers', kind: 'lesson' }] })
    await call(turn, 'write_memory_file', { path: 'knowledge/salary.md', content: 'Salary notes: 120k.\n' })
    await call(turn, 'write_memory_file', { path: 'knowledge/salary.md', content: 'Salary notes: 125k.\n' })
    await call(turn, 'forget_memory', { target: 'knowledge/salary.md' })
    await call(turn, 'forget_memory', { target: 'Ada prefers short answers' })

    await assert.rejects(mind.forget('knowledge/salary.md', { user: 'ada' }), { code: 'not_found' }, 'already forgotten: nothing live')
    const file = await mind.forget('knowledge/salary.md', { user: 'ada', purge: true })
    assert.equal(file.action, 'purged')
    assert.equal(file.deleted, 2, 'the archived copy and the saved version')
    const lesson = await mind.forget('Ada prefers short answers', { user: 'ada', purge: true })
    assert.equal(lesson.deleted, 1)
    await assert.rejects(mind.restore('Ada prefers short answers', { user: 'ada' }), { code: 'not_found' })

    const userTree = join(tmp.home, 'agents/default/users/ada')
    const everything = [readFileSync(join(userTree, 'archive/forgotten/lessons.md'), 'utf8'), readFileSync(join(userTree, 'memory/lessons.md'), 'utf8')].join('\n')
    assert.doesNotMatch(everything, /short answers/)
    assert.ok(!existsSync(join(userTree, 'archive/forgotten/knowledge/salary.md')))
    const purges = (await mind.scope('ada').view.own.activity.read({ types: ['memory_write'] })).filter((event) => event.meta?.action === 'purge')
    assert.equal(purges.length, 2)
    assert.doesNotMatch(JSON.stringify(purges), /120k|125k|short answers/)
  })
})

describe('engram search / forget / restore from the command line', () => {
  let tmp: TempHome
  before(() => {
    tmp = makeTempHome()
  })
  after(() => tmp.cleanup())

  async function engram(args: string[]): Promise<{ code: number; out: string; json: { ok: boolean; data?: unknown; error?: { code: string; message?: string; fix?: string } } }> {
    let out = ''
    const code = await runCli([...args, '--home', tmp.home], { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env: tmp.env, cwd: tmp.home, isTTY: false })
    let json = { ok: false }
    try {
      json = JSON.parse(out.trim().split('\n').pop() ?? '')
    } catch {
      // human output
    }
    return { code, out, json }
  }

  test('search runs the hybrid search with sources; forget moves a memory out of it; restore brings it back; --purge deletes', async () => {
    assert.equal((await engram(['remember', 'Deploy only from the release branch', '--kind', 'always'])).code, 0)
    assert.equal((await engram(['remember', 'Ada deploys on Tuesdays', '--kind', 'lesson', '--user', 'ada'])).code, 0)

    const found = await engram(['search', 'deploy release branch', '--kinds', 'rule,lesson', '--limit', '5', '--json'])
    assert.equal(found.code, 0, found.out)
    const hits = (found.json.data as { hits: Array<{ id: string; kind: string; text: string; ref: string }> }).hits
    assert.deepEqual(hits.map((hit) => [hit.kind, hit.text, hit.ref]), [['rule', 'Always: Deploy only from the release branch', 'memory/rules.md']], "the agent's own view: not ada's lesson")
    const human = await engram(['search', 'deploys Tuesdays', '--user', 'ada', '--human'])
    assert.match(human.out, /1\. \[lesson 20\d\d-\d\d-\d\d\] Ada deploys on Tuesdays\n {3}source: users\/ada\/memory\/lessons\.md/)
    const badKinds = await engram(['search', 'x', '--kinds', 'rules'])
    assert.equal(badKinds.code, 3)
    assert.match(badKinds.json.error?.message ?? '', /^--kinds must be one of: message, summary, .* \(not "rules"\)\.$/)
    assert.equal(badKinds.json.error?.fix, 'did you mean --kinds rule?')

    const forgot = await engram(['forget', hits[0]?.id ?? '', '--reason', 'we release from main now', '--human'])
    assert.equal(forgot.code, 0, forgot.out)
    assert.match(forgot.out, /^Forgot memory\/rules\.md#([0-9a-f]{16}) \("Always: Deploy only from the release branch"\): moved to archive\/forgotten\/rules\.md, out of the index\.\nBring it back with: engram restore "archive\/forgotten\/rules\.md#\1"\n$/)
    assert.deepEqual((await engram(['search', 'deploy release branch', '--kinds', 'rule', '--json'])).json.data, { query: 'deploy release branch', hits: [] })
    const notAda = await engram(['forget', 'Ada deploys on Tuesdays'])
    assert.equal(notAda.code, 3, "the agent's own view does not reach ada's memory")

    const restore = /engram restore (".*")/.exec(forgot.out)?.[1] ?? ''
    const restored = await engram(['restore', JSON.parse(restore)])
    assert.equal(restored.code, 0, restored.out)
    assert.equal(((await engram(['search', 'deploy release branch', '--kinds', 'rule', '--json'])).json.data as { hits: unknown[] }).hits.length, 1, 'back in the index')

    const refused = await engram(['forget'])
    assert.equal(refused.code, 3)
    const purged = await engram(['forget', 'Ada deploys on Tuesdays', '--user', 'ada', '--purge'])
    assert.equal(purged.code, 0, purged.out)
    assert.equal((purged.json.data as { action: string; deleted: number }).action, 'purged')
    assert.doesNotMatch(readFileSync(join(tmp.home, 'agents/default/users/ada/memory/lessons.md'), 'utf8'), /Tuesdays/)
    assert.equal((await engram(['restore', 'Ada deploys on Tuesdays', '--user', 'ada'])).code, 3, 'nothing left to restore')
  })
})
