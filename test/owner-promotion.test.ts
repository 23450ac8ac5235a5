/**
 * Promotion (decision 0017): what a session with a user writes is that user's, unless the writer
 * hands it to the agent or to everyone on purpose. In copilot mode a promotion — a memorized rule
 * or a memory file — waits for that user's yes, shown to them only; once accepted it reaches every
 * user. In autopilot it is written at once.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { ManualClock } from '../src/core/clock.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import type { EngramTool } from '../src/tools/tool.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

function tool(tools: readonly EngramTool[], name: string): EngramTool {
  const found = tools.find((candidate) => candidate.name === name)
  assert.ok(found, name)
  return found
}

test('copilot: a promotion waits for the asking user\'s yes; accepted, it reaches every user', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'memory.mode': 'copilot' } })
  t.after(() => mind.close())

  const ada = mind.session('ada-chat', { user: 'ada' })
  const turn = await ada.begin('Please keep the deploy checklist for everyone.')
  const written = await tool(turn.tools, 'write_memory_file').execute({ path: 'knowledge/deploy-checklist.md', content: '# Deploy checklist\n- run the migrations first\n', owner: 'agent' })
  assert.equal(written.isError, undefined, written.text)
  assert.match(written.text, /^Not written yet: knowledge\/deploy-checklist\.md would be yours, seen with every user, so it waits for the user's confirmation \(id \d+/)
  assert.equal(existsSync(join(mind.layout.knowledgeDir, 'deploy-checklist.md')), false, 'nothing written yet')
  const memorized = await tool(turn.tools, 'memorize').execute({ entries: [{ text: 'Run the migrations before every deploy', kind: 'always', owner: 'agent' }] })
  assert.match(memorized.text, /waiting for the user's confirmation \(copilot mode: promotion to agent\)/)
  const own = await tool(turn.tools, 'memorize').execute({ entries: [{ text: 'Ada deploys on Fridays', kind: 'lesson' }] })
  assert.match(own.text, /^saved \[lesson, global\]/, 'her own memory needs no confirmation (high confidence)')
  await ada.end(turn, 'I will keep it once you confirm.')
  await mind.idle()

  // The confirmations are ada's: bob and the agent alone see none.
  const pending = await mind.pendingConfirmations({ user: 'ada' })
  assert.deepEqual(
    pending.map((item) => item.document?.path ?? item.engram?.text),
    ['knowledge/deploy-checklist.md', 'Run the migrations before every deploy'],
  )
  assert.deepEqual(await mind.pendingConfirmations({ user: 'bob' }), [])
  assert.deepEqual(await mind.pendingConfirmations(), [])
  await assert.rejects(mind.confirm({ accept: pending.map((item) => item.id), user: 'bob' }), /No pending confirmation has the id/)

  // Ada says yes through the CLI (Anton's answer form), in another process.
  const { stdout } = await run(process.execPath, [bin, 'confirm', '--user', 'ada', '--answer', 'y', '--json'], { env: { ...tmp.env, ENGRAM_HOME: tmp.home, ENGRAM_MEMORY_MODE: 'copilot' }, cwd: root })
  const answered = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { ok: boolean; data: { saved: number; problems: unknown[] } }
  assert.equal(answered.ok, true, stdout)
  assert.deepEqual([answered.data.saved, answered.data.problems], [2, []])
  assert.match(readFileSync(join(mind.layout.knowledgeDir, 'deploy-checklist.md'), 'utf8'), /run the migrations first/)
  assert.match(readFileSync(join(mind.layout.globalMemoryDir, 'rules.md'), 'utf8'), /Run the migrations before every deploy/)
  assert.deepEqual(await mind.pendingConfirmations({ user: 'ada' }), [])

  // Now the agent's: bob's session sees both; ada's own lesson stays hers.
  await mind.reindex()
  const bob = mind.session('bob-chat', { user: 'bob' })
  const bobTurn = await bob.begin('How do we deploy?')
  assert.match(bobTurn.systemParts.memory, /Run the migrations before every deploy/)
  assert.doesNotMatch(bobTurn.system, /Ada deploys on Fridays/)
  const found = await tool(bobTurn.tools, 'search_memory').execute({ query: 'deploy checklist migrations' })
  assert.match(found.text, /source: knowledge\/deploy-checklist\.md/)
  assert.doesNotMatch(found.text, /Fridays/)
  await bob.end(bobTurn, 'Migrations first.')
})

test('autopilot: a promotion is written at once, where the owner says', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const mind = await openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock: new ManualClock('2026-03-02T09:00:00Z') })
  t.after(() => mind.close())
  const session = mind.session('ada-chat', { user: 'ada' })
  const turn = await session.begin('Share the office wifi name with everyone.')
  const shared = await tool(turn.tools, 'write_memory_file').execute({ path: 'knowledge/office.md', content: 'The office wifi is called Lighthouse.', owner: 'shared' })
  assert.match(shared.text, /^Wrote shared\/knowledge\/office\.md \(\d+ characters, shared with every agent of this home\)/)
  assert.ok(existsSync(join(tmp.home, 'shared/knowledge/office.md')))
  const mine = await tool(turn.tools, 'write_memory_file').execute({ path: 'knowledge/office.md', content: 'My desk is by the window.' })
  assert.match(mine.text, /^Wrote users\/ada\/knowledge\/office\.md .*only ada's/)
  // The short path reads her own first; the shared one is there under shared/.
  assert.match((await tool(turn.tools, 'read_memory_file').execute({ path: 'knowledge/office.md' })).text, /desk is by the window/)
  assert.match((await tool(turn.tools, 'read_memory_file').execute({ path: 'shared/knowledge/office.md' })).text, /Lighthouse/)
  const conflicting = await tool(turn.tools, 'write_memory_file').execute({ path: 'shared/knowledge/office.md', content: 'x', owner: 'user' })
  assert.equal(conflicting.isError, true)
  assert.match(conflicting.text, /is shared memory, but the write asked for owner user:ada/)
  await session.end(turn, 'Done.')
})
