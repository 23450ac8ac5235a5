/**
 * Daily consolidation through the agent's path (decision 0030): files written without the seed's
 * frontmatter get the fields they lack once a day, whichever process's `maintain()` looks first;
 * fields present are never changed, a file whose frontmatter cannot be read is left byte for byte,
 * and the old file is kept in archive/versions/.
 */
import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { runCli } from '../src/interfaces/cli/run-cli.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('legacy migration gives hand-written knowledge and procedures without frontmatter the seed\'s, once a day, keeping their text, and leaves files with a frontmatter of their own or an unreadable one as they are', async (t) => {
  const temp = makeTempHome('engram-daily-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const open = (): Promise<Mind> => createMind({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
  let mind = await open()
  t.after(() => mind.close())
  const agentTree = join(temp.home, 'agents', mind.agent)
  const adaTree = join(agentTree, 'users', 'ada')
  for (const dir of [join(agentTree, 'knowledge'), join(agentTree, 'procedures'), join(adaTree, 'knowledge')]) mkdirSync(dir, { recursive: true })
  writeFileSync(join(agentTree, 'knowledge', 'tea.md'), '# Green tea\nBrew at 80 °C for two minutes.\n')
  writeFileSync(join(agentTree, 'procedures', 'deploy.md'), '# Deploy the billing service\n1. run the migrations\n2. ship\n')
  writeFileSync(join(adaTree, 'knowledge', 'vpn.md'), '---\nconfidence: 0.9\n---\nThe staging VPN listens on port 1194.\n')
  const broken = '---\nconfidence: [unclosed\n---\nA file whose frontmatter cannot be read.\n'
  writeFileSync(join(agentTree, 'knowledge', 'broken.md'), broken)
  // Ada has memory of this agent (her tree exists through a session).
  const session = mind.session('s', { user: 'ada' })
  await session.end(await session.begin('hello'), 'hi')

  let out = ''
  const io = { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env: temp.env, cwd: temp.project, isTTY: false }
  assert.equal(await runCli(['consolidate', 'daily', '--dry-run', '--home', temp.home, '--json'], io), 0, out)
  const dry = JSON.parse(out) as { data: { migrated: Array<{ path: string; added: string[] }> } }
  // vpn.md has a frontmatter of its own: left as its author wrote it.
  assert.deepEqual(dry.data.migrated.map((item) => item.path).sort(), ['knowledge/tea.md', 'procedures/deploy.md'])
  assert.equal(readFileSync(join(agentTree, 'knowledge', 'tea.md'), 'utf8'), '# Green tea\nBrew at 80 °C for two minutes.\n', 'a dry run writes nothing')

  const report = await mind.maintain()
  assert.equal(report.jobs.find((job) => job.kind === 'consolidation-daily')?.status, 'done', JSON.stringify(report.jobs))
  const tea = await mind.backend.documents.read('knowledge', 'tea')
  assert.equal(tea?.frontmatter.version, 1)
  assert.equal(tea?.frontmatter.confidence, 0.5, 'nothing validated it')
  assert.equal(tea?.frontmatter.auto_consolidated, false)
  assert.match(String(tea?.frontmatter.created_at), /^\d{4}-\d\d-\d\dT/)
  assert.equal(tea?.body.trim(), '# Green tea\nBrew at 80 °C for two minutes.')
  const deploy = await mind.backend.documents.read('procedure', 'deploy')
  assert.deepEqual([deploy?.frontmatter.description, deploy?.frontmatter.success_count, deploy?.frontmatter.failure_count, deploy?.frontmatter.protected], ['Deploy the billing service', 0, 0, false])
  assert.equal(readFileSync(join(adaTree, 'knowledge', 'vpn.md'), 'utf8'), '---\nconfidence: 0.9\n---\nThe staging VPN listens on port 1194.\n', 'a file with its own frontmatter is left as written')
  // The text of a migrated file is kept as it was, under the new block.
  assert.ok(readFileSync(join(agentTree, 'knowledge', 'tea.md'), 'utf8').endsWith('---\n# Green tea\nBrew at 80 °C for two minutes.\n'))
  assert.equal(readFileSync(join(agentTree, 'knowledge', 'broken.md'), 'utf8'), broken, 'unreadable frontmatter is left byte for byte')
  assert.ok(readdirSync(join(agentTree, 'archive', 'versions', 'knowledge')).some((name) => name.startsWith('tea.')), 'the old file is kept')
  const found = await mind.retriever.search('green tea brew', { limit: 3, recordAccess: false })
  assert.ok(found.hits.some((hit) => hit.unit.source.endsWith('knowledge/tea.md')), 'still found after the rewrite')

  // How it changed and why: engram history, for its owner only.
  const history = await mind.history('knowledge/tea.md')
  assert.equal(history.state, 'live')
  assert.equal(history.lineage.version, 1)
  assert.match(history.versions[0]?.reason ?? '', /legacy migration: added created_at/)
  out = ''
  assert.equal(await runCli(['history', 'knowledge/tea.md', '--home', temp.home, '--human'], io), 0, out)
  assert.match(out, /knowledge\/tea\.md — live \(version: 1/)
  assert.match(out, /legacy migration: added/)
  await assert.rejects(mind.history('users/ada/knowledge/vpn.md', { user: 'bob' }), /another user|access|denied/i)
  await assert.rejects(mind.history('memory/rules.md'), /history is kept for knowledge and procedure documents|name one/)

  // Once a day: another process the same day queues nothing; the next day there is nothing to migrate.
  await mind.close()
  mind = await open()
  assert.equal((await mind.maintain()).jobs.filter((job) => job.kind === 'consolidation-daily').length, 0)
  clock.advanceDays(1)
  assert.equal((await mind.maintain()).jobs.find((job) => job.kind === 'consolidation-daily')?.status, 'skipped')
})
