/**
 * Active forgetting through the agent's path (decision 0030): knowledge and procedures that
 * stopped mattering leave the index for `archive/forgotten/` once a month — whichever process's
 * `maintain()` looks first — and exactly those: what was recalled, what a person protected, what is
 * tagged [IMPORTANT] stay. Each can be restored; a second run changes nothing; the act is recorded
 * in the owner's own log only.
 */
import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import type { EngramTool } from '../src/tools/tool.ts'

const DAY = 86_400_000
const tool = (tools: EngramTool[], name: string): EngramTool => tools.find((candidate) => candidate.name === name) as EngramTool

test('monthly forgetting archives exactly the unprotected low-activity memories, restorably, once a month, in the owner\'s log only', async (t) => {
  const temp = makeTempHome('engram-forgetting-')
  t.after(temp.cleanup)
  // The CLI below runs on the real clock: the simulated days end today.
  const start = Date.now() - 160 * DAY
  const clock = new ManualClock(new Date(start))
  // No embedder: with a handful of memories a vector KNN returns (and so counts as recalled) every one.
  const open = (): Promise<Mind> => createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
  let mind = await open()
  t.after(() => mind.close())

  // Day 0: Ada's agent writes what it learned; a person protects one file by hand.
  const session = mind.session('day-0', { user: 'ada' })
  const turn = await session.begin('Please keep notes on our infrastructure.')
  const write = tool(turn.tools, 'write_memory_file')
  for (const [path, content] of [
    ['knowledge/vpn-port.md', '# Staging VPN\nThe staging VPN listens on port 1194.\n'],
    ['knowledge/billing-limit.md', '# Billing API\nThe billing API rate-limits at 50 requests per minute.\n'],
    ['knowledge/fridays.md', '# Deploys\n[IMPORTANT] Never deploy the billing service on a Friday.\n'],
    ['procedures/flaky-restore.md', '# Restore staging\n1. stop the app\n2. restore the snapshot\n'],
  ] as const) {
    const written = await write.execute({ path, content })
    assert.notEqual(written.isError, true, written.text)
  }
  const report = tool(turn.tools, 'report_procedure_outcome')
  for (let i = 0; i < 3; i++) assert.notEqual((await report.execute({ procedure: 'flaky-restore', success: false, note: 'the snapshot was stale' })).isError, true)
  await session.end(turn, 'Noted.')
  const adaTree = join(temp.home, 'agents', mind.agent, 'users', 'ada')
  writeFileSync(join(adaTree, 'knowledge', 'oncall.md'), '---\nprotected: true\n---\n# On-call\nBen is on call for billing.\n')
  await mind.maintain()

  // Day 100: the billing limit is recalled; the rest is not.
  clock.set(new Date(start + 100 * DAY))
  const asked = mind.session('day-100', { user: 'ada' })
  const question = await asked.begin('What was the billing API rate limit again?')
  const found = await tool(question.tools, 'search_memory').execute({ query: 'billing API rate limit requests per minute' })
  assert.match(found.text, /billing-limit\.md/)
  await asked.end(question, '50 requests per minute.')

  // Day 160: the monthly run is due.
  clock.set(new Date(start + 160 * DAY))
  let out = ''
  const io = { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env: temp.env, cwd: temp.project, isTTY: false }
  await mind.close()
  assert.equal(await runCli(['consolidate', 'monthly', '--dry-run', '--home', temp.home, '--json'], io), 0, out)
  const dry = JSON.parse(out) as { data: { forgotten: Array<{ path: string }>; protected: number; active: number } }
  assert.deepEqual(dry.data.forgotten.map((item) => item.path).sort(), ['users/ada/knowledge/vpn-port.md', 'users/ada/procedures/flaky-restore.md'])
  assert.equal(dry.data.protected, 2, 'oncall (protected: true) and fridays ([IMPORTANT])')
  assert.ok(existsSync(join(adaTree, 'knowledge', 'vpn-port.md')), 'a dry run changes nothing')

  mind = await open()
  const done = await mind.maintain()
  const job = done.jobs.find((outcome) => outcome.kind === 'consolidation-monthly')
  assert.equal(job?.status, 'done', JSON.stringify(done.jobs))
  for (const [gone, archived] of [
    ['knowledge/vpn-port.md', 'knowledge/vpn-port.md'],
    ['procedures/flaky-restore.md', 'procedure/flaky-restore.md'],
  ] as const) {
    assert.ok(!existsSync(join(adaTree, gone)), `${gone} left the live tree`)
    assert.ok(existsSync(join(adaTree, 'archive', 'forgotten', archived)), `${gone} is in archive/forgotten/`)
  }
  for (const kept of ['knowledge/billing-limit.md', 'knowledge/fridays.md', 'knowledge/oncall.md']) assert.ok(existsSync(join(adaTree, kept)), `${kept} stays`)
  const later = mind.session('day-160', { user: 'ada' })
  const next = await later.begin('Which port does the staging VPN use?')
  const search = tool(next.tools, 'search_memory')
  assert.doesNotMatch((await search.execute({ query: 'staging VPN port' })).text, /vpn-port\.md/, 'out of the index')
  await later.end(next, 'I no longer have that.')

  assert.equal((await mind.history('knowledge/vpn-port.md', { user: 'ada' })).state, 'forgotten', 'its history says where it is')

  // Recorded in Ada's log with its reason, never in the agent's own (which every session reads).
  const adaLog = JSON.stringify(await mind.backend.owned('user:ada').activity.read({ types: ['memory_write'] }))
  assert.match(adaLog, /monthly forgetting: unaccessed for 160 days/)
  assert.doesNotMatch(JSON.stringify(await mind.backend.activity.read({})), /vpn-port/)

  // Once a month: another process's maintain, and a forced run, change nothing more.
  await mind.close()
  mind = await open()
  assert.equal((await mind.maintain()).jobs.filter((outcome) => outcome.kind === 'consolidation-monthly').length, 0, 'not queued twice in a month')
  const again = await mind.consolidate('monthly')
  assert.equal(again.forgotten.length, 0)

  // Every archived memory restores, and is found again.
  for (const path of ['knowledge/vpn-port.md', 'procedures/flaky-restore.md']) await mind.restore(path, { user: 'ada' })
  assert.ok(existsSync(join(adaTree, 'knowledge', 'vpn-port.md')))
  const back = await tool(mind.agentTools({ sessionId: 'day-161', user: 'ada' }), 'search_memory').execute({ query: 'staging VPN port' })
  assert.match(back.text, /vpn-port\.md/)

  // Another user sees none of it, before or after.
  const bob = await tool(mind.agentTools({ sessionId: 'bob', user: 'bob' }), 'search_memory').execute({ query: 'staging VPN port' })
  assert.doesNotMatch(bob.text, /vpn-port/)
})
