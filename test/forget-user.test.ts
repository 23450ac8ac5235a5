/**
 * Erasure and export per user (decision 0023), through the public paths: a user's
 * secret planted through every write path of two agents (conversation, memorize of each kind and
 * scope, write_memory_file, episodes and resolutions at the session boundary, a copilot
 * confirmation, a journal of a streamed reply, stored turns), exported with `engram export`, then
 * erased with `engram forget --user … --purge` — after which no file of the home or the project
 * holds the secret (the database included, byte for byte) and no read path finds the user, while
 * another user's memory is untouched.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { UserExportReport } from '../src/memory/forgetting/export-user.ts'
import type { ToolResult } from '../src/tools/tool.ts'

const SECRET = 'zebra7741'
const OTHER = 'okapi5512'

/** Every file under a folder (absolute paths). */
function allFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? allFiles(path) : [path]
  })
}

/** Files whose bytes hold `needle`. */
function filesHolding(dirs: string[], needle: string): string[] {
  return dirs.flatMap(allFiles).filter((path) => statSync(path).isFile() && readFileSync(path).includes(needle))
}

describe('engram export --user, then engram forget --user --purge', () => {
  let tmp: TempHome
  let mind: Mind
  let second: Mind
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  let exportDir: string

  async function cli(args: string[]): Promise<{ code: number; json: { ok: boolean; data?: unknown; error?: { code: string; message: string; fix?: string } } }> {
    let out = ''
    const code = await runCli([...args, '--home', tmp.home, '--project', tmp.project, '--json'], {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: () => true },
      env: tmp.env,
      cwd: tmp.home,
      isTTY: false,
    })
    return { code, json: JSON.parse(out.trim().split('\n').pop() ?? '{}') }
  }
  async function tool(m: Mind, sessionId: string, user: string | undefined, name: string, input: unknown): Promise<ToolResult> {
    const turn = await m.session(sessionId, user === undefined ? {} : { user }).begin(`Please use ${name}.`)
    const result = await (turn.tools.find((candidate) => candidate.name === name) as { execute(input: unknown): Promise<ToolResult> }).execute(input)
    assert.ok(!result.isError, `${name}: ${result.text}`)
    return result
  }

  before(async () => {
    tmp = makeTempHome()
    mkdirSync(tmp.project, { recursive: true })
    exportDir = join(tmp.home, '..', 'ada-export')
    const open = (agent: string, settings: Record<string, unknown> = {}) =>
      createMind({ home: tmp.home, project: tmp.project, agent, env: tmp.env, ignoreConfigFile: true, clock, embedder: null, settings })
    mind = await open('default')
    second = await open('second', { 'memory.mode': 'copilot' })

    for (const [user, secret] of [['ada', SECRET], ['bob', OTHER]] as const) {
      // A conversation, its turns, its episode and a resolution at the boundary.
      const session = mind.session(`chat-${user}`, { user })
      const turn = await session.begin(`My locker code is ${secret}, remember it.`)
      await session.end(turn, `Noted: your locker code is ${secret}.\nresolved: locker code ${secret} recorded`)
      await mind.sessions.end(`chat-${user}`)
      // Memorize of every kind, global and project scope.
      await tool(mind, `chat-${user}`, user, 'memorize', {
        entries: [
          { text: `Never read the locker code ${secret} aloud`, kind: 'never' },
          { text: `The locker code is ${secret}`, kind: 'lesson', topic: 'lockers' },
          { text: `Locker: ${secret}`, kind: 'profile' },
          { text: `In this project the locker is ${secret}`, kind: 'lesson', scope: 'project' },
        ],
      })
      await tool(mind, `chat-${user}`, user, 'write_memory_file', { path: 'knowledge/locker.md', content: `# Locker\nCode ${secret}.\n` })
      await tool(mind, `chat-${user}`, user, 'write_memory_file', { path: 'knowledge/locker.md', content: `# Locker\nCode ${secret}, changed.\n` })
      await tool(mind, `chat-${user}`, user, 'write_memory_file', { path: 'project/topics/locker.md', content: `Project locker ${secret}.\n` })
      // The second agent: a conversation, and a promotion waiting for confirmation (copilot).
      const other = await tool(second, `second-${user}`, user, 'memorize', { entries: [{ text: `Everyone's locker code is ${secret}`, kind: 'lesson', owner: 'agent' }] })
      assert.match(other.text, /waiting for the user's confirmation/)
    }
    // A journal of a reply to ada that was being streamed.
    const journal = mind.journals.open({ trigger: 'chat', from: 'ada', sessionId: 'chat-ada', turn: 1 })
    journal.writeText(`Your code is ${SECRET}`)
    journal.flush()
    await mind.idle()
    await second.idle()
  })
  after(async () => {
    await second.close()
    await mind.close()
    tmp.cleanup()
  })

  test('the secret is everywhere before', () => {
    const holding = filesHolding([tmp.home, tmp.project], SECRET).map((path) => path.slice(tmp.home.length + 1))
    for (const expected of ['agents/default/users/ada/memory/rules.md', 'agents/default/users/ada/knowledge/locker.md', 'shared/users/ada.md', 'shared/resolutions.jsonl', 'engram.db']) {
      assert.ok(holding.some((path) => path.startsWith(expected)), `${expected} in ${holding.join(', ')}`)
    }
    assert.ok(holding.some((path) => path.includes('/journal/streams/')))
    assert.ok(holding.some((path) => path.includes('.engram/users/ada/memory')), 'the project tree')
  })

  test('export writes everything ada owns as readable files, and refuses a folder that is not empty', async () => {
    // A named pipe and a link out of the home in ada's tree: listed as not copied, never read (decision 0025).
    const knowledge = join(tmp.home, 'agents/default/users/ada/knowledge')
    execFileSync('mkfifo', [join(knowledge, 'pipe.md')])
    const canary = join(tmp.home, '..', 'outside-canary.md')
    writeFileSync(canary, 'canary quagga3391\n')
    symlinkSync(canary, join(knowledge, 'outside.md'))
    const exported = await cli(['export', '--user', 'ada', exportDir])
    assert.equal(exported.code, 0, JSON.stringify(exported.json))
    const report = exported.json.data as UserExportReport
    assert.deepEqual(
      report.skipped.map((item) => `${item.path}: ${item.reason}`).sort(),
      ['agents/default/files/knowledge/outside.md: a symbolic link (not followed)', 'agents/default/files/knowledge/pipe.md: a named pipe'],
    )
    assert.equal(filesHolding([exportDir], 'quagga3391').length, 0, 'nothing from outside the home')
    const counts = report.counts
    assert.ok(counts.files > 5 && counts.conversations === 2 && counts.messages >= 4 && counts.turns >= 2 && counts.confirmations === 1 && counts.journals === 1 && counts.resolutions === 1, JSON.stringify(counts))
    assert.ok(counts.profileFiles >= 1 && counts.projectFiles >= 1, JSON.stringify(counts))
    const read = (rel: string) => readFileSync(join(exportDir, rel), 'utf8')
    const [message] = read('agents/default/conversations/chat-ada.messages.jsonl').trim().split('\n').map((line) => JSON.parse(line))
    assert.deepEqual([message.role, message.content.includes(SECRET), typeof message.at, message.seq], ['user', true, 'string', 1])
    assert.match(read('profile/ada.md'), new RegExp(`Locker: ${SECRET}`))
    assert.match(read('agents/default/files/memory/rules.md'), new RegExp(SECRET))
    assert.match(read('agents/default/files/knowledge/locker.md'), /changed/)
    assert.ok(readdirSync(join(exportDir, 'agents/default/files/archive/versions/knowledge')).length === 1, 'the earlier version too')
    assert.match(read('agents/default/turns.jsonl'), /"provenance"/)
    assert.match(read('agents/second/confirmations.jsonl'), new RegExp(`"status":"pending".*${SECRET}|${SECRET}.*"status":"pending"`))
    assert.match(read('resolutions.jsonl'), new RegExp(SECRET))
    assert.match(read('README.md'), /Everything engram kept for ada/)
    assert.match(read('README.md'), /Not copied \(2\): .*pipe\.md — a named pipe/)
    assert.ok(JSON.parse(read('manifest.json')).files.includes('resolutions.jsonl'))
    assert.equal(filesHolding([exportDir], OTHER).length, 0, "nothing of bob's")

    const again = await cli(['export', '--user', 'ada', exportDir])
    assert.equal(again.code, 3)
    assert.match(again.json.error?.fix ?? '', /--force/)
    const inside = await cli(['export', '--user', 'ada', join(tmp.home, 'out')])
    assert.equal(inside.code, 3, 'an export inside the home would be memory again')
  })

  test('forget --user without --purge is refused with the fix; with --purge nothing of ada is found by any path', async () => {
    const refused = await cli(['forget', '--user', 'ada'])
    assert.equal(refused.code, 3)
    assert.match(refused.json.error?.fix ?? '', /--purge/)
    assert.ok(filesHolding([tmp.home], SECRET).length > 0, 'refused: nothing was touched')

    const erased = await cli(['forget', '--user', 'ada', '--purge'])
    assert.equal(erased.code, 0, JSON.stringify(erased.json))
    const report = erased.json.data as { erased: Record<string, number>; agents: string[] }
    assert.deepEqual(report.agents, ['default', 'second'])
    for (const kind of ['trees', 'files', 'profileFiles', 'projectFiles', 'conversations', 'messages', 'indexUnits', 'sessions', 'turns', 'counters', 'confirmations', 'resolutions', 'journals']) {
      assert.ok((report.erased[kind] ?? 0) > 0, `${kind}: ${JSON.stringify(report.erased)}`)
    }
    assert.equal(report.erased.trees, 2, 'both agents')

    // No file of the home or the project holds the secret: not the trees, the profile, the
    // registry, the journals — and not the database or its log, byte for byte.
    assert.deepEqual(filesHolding([tmp.home, tmp.project], SECRET), [])
    // Bob is untouched.
    assert.ok(filesHolding([tmp.home], OTHER).some((path) => path.endsWith('shared/users/bob.md')))

    // The stores know nothing of ada.
    assert.ok(!(await mind.backend.users()).includes('ada'))
    assert.ok(!(await second.backend.users()).includes('ada'))
    assert.deepEqual((await mind.backend.context.listConversations()).filter((c) => c.user === 'ada'), [])
    assert.deepEqual(await mind.backend.confirmations.ofUser('ada'), [])
    assert.deepEqual(await mind.backend.lifecycle.recentTurns('second', 'ada', 10), [])
    assert.equal(await mind.backend.documents.read('user', 'ada'), null)
    assert.ok(!existsSync(join(tmp.project, '.engram/users/ada')))
    // Nor do the names of the locks her documents were written under.
    assert.deepEqual(
      readdirSync(join(tmp.home, '.locks')).filter((name) => /users?_ada(_|-)/.test(name)),
      [],
    )
    assert.doesNotMatch(readFileSync(join(tmp.home, 'shared/resolutions.jsonl'), 'utf8'), /"user":"ada"/)

    // No read path finds ada, for ada herself, bob or the agent.
    for (const user of ['ada', 'bob', undefined]) {
      // Recall first: the probe's own search below is logged with its query.
      const recalled = await mind.scope(user).recall(SECRET, { daysBack: 30 })
      assert.doesNotMatch(JSON.stringify(recalled), new RegExp(SECRET), `recall of ${user ?? 'the agent'}`)
      const turn = await mind.session(user === undefined ? 'probe' : `probe-${user}`, user === undefined ? {} : { user }).begin('What is my locker code?')
      const shown = [turn.system, turn.systemParts.memory, JSON.stringify(turn.messages.slice(0, -1))].join('\n')
      assert.doesNotMatch(shown, new RegExp(SECRET), `prompt of ${user ?? 'the agent'}`)
      const search = await (turn.tools.find((t) => t.name === 'search_memory') as { execute(input: unknown): Promise<ToolResult> }).execute({ query: `locker ${SECRET}` })
      assert.doesNotMatch(search.text.replace(new RegExp(`"locker ${SECRET}"`), ''), new RegExp(SECRET), `search_memory of ${user ?? 'the agent'}`)
    }
    const searched = await cli(['search', `locker ${SECRET}`, '--user', 'ada'])
    assert.equal(searched.code, 0)
    assert.doesNotMatch(JSON.stringify((searched.json.data as { hits: unknown[] }).hits), new RegExp(SECRET))

    // The erasure is logged in the agent's own log: counts and a fingerprint, never the user or their words.
    const [event] = (await mind.backend.activity.read({ types: ['memory_write'] })).filter((e) => e.meta?.action === 'erase-user')
    assert.ok(event, 'logged')
    assert.match(String(event.meta?.user), /^sha256:[0-9a-f]{16}$/)
    assert.doesNotMatch(JSON.stringify(event), /ada|zebra/)

    // Bob's own search still finds his.
    const bob = await cli(['search', `locker ${OTHER}`, '--user', 'bob'])
    assert.match(JSON.stringify(bob.json.data), new RegExp(OTHER))

    // Ada comes back to her old session in this same process: it starts afresh, it does not fail.
    const back = mind.session('chat-ada', { user: 'ada' })
    const backTurn = await back.begin('Hello again.')
    await back.end(backTurn, 'Welcome back.')
    assert.deepEqual(backTurn.messages.map((message) => message.content), ['Hello again.'], 'nothing of before')

    // The probe and the return were new conversations of ada's: erasing again takes exactly those, then nothing.
    await mind.idle()
    const twice = await cli(['forget', '--user', 'ada', '--purge'])
    assert.equal((twice.json.data as { erased: { conversations: number } }).erased.conversations, 2)
    const thrice = await cli(['forget', '--user', 'ada', '--purge'])
    assert.equal((thrice.json.data as { nothing: boolean }).nothing, true)
  })
})
