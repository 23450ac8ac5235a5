/**
 * Procedure version retention over versions the real path made (`createMind` → a user's session →
 * write_memory_file and repeated report_procedure_outcome calls; the agent's procedures through
 * the one write path): the 5 newest versions stay, the older move to
 * `archive/forgotten/versions/procedure/` under their names, history still lists the kept ones
 * with their reasons, a second run moves nothing, and a purge removes every copy.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { parseFrontmatter } from '../../core/frontmatter.ts'
import { openMindInternals } from '../../mind-internals.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import type { EngramTool } from '../../tools/tool.ts'
import { retainProcedureVersions } from './version-retention.ts'

const MINUTE = 60_000
const tool = (tools: EngramTool[], name: string): EngramTool => {
  const found = tools.find((candidate) => candidate.name === name)
  assert.ok(found, name)
  return found
}

test('7 versions of a procedure: 5 kept, 2 moved to archive/forgotten/versions/, history lists the kept ones, a second run moves nothing, purge removes all', async (t) => {
  const temp = makeTempHome('engram-retention-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, reindexOnOpen: false })
  t.after(() => mind.close())

  // Ada's agent writes a procedure and reports seven outcomes: each report rewrites it, saving the previous version.
  const session = mind.session('ops-1', { user: 'ada' })
  const turn = await session.begin('Please keep a procedure for restoring staging.')
  const written = await tool(turn.tools, 'write_memory_file').execute({ path: 'procedures/restore-staging.md', content: '# Restore staging\n1. stop the app\n2. restore the snapshot\n' })
  assert.notEqual(written.isError, true, written.text)
  for (let n = 1; n <= 7; n++) {
    clock.advance(MINUTE)
    const reported = await tool(turn.tools, 'report_procedure_outcome').execute({ procedure: 'restore-staging', success: n % 2 === 0, note: `run ${n}` })
    assert.notEqual(reported.isError, true, reported.text)
  }
  await session.end(turn, 'Noted.')
  // The agent's own procedure, with fewer versions than are kept.
  for (let n = 1; n <= 4; n++) {
    clock.advance(MINUTE)
    await mind.backend.documents.write('procedure', 'deploy', { description: 'How to deploy', version: n }, `${n}. build\n`, { reason: `revision ${n}` })
  }
  // A procedure forgotten since: its versions are its history, and are kept the same way.
  for (let n = 1; n <= 7; n++) {
    clock.advance(MINUTE)
    await mind.backend.documents.write('procedure', 'old-runbook', { description: 'The old runbook' }, `revision ${n}\n`, { reason: `revision ${n}` })
  }
  await mind.forget('procedures/old-runbook.md')

  const ada = mind.backend.owned('user:ada').documents
  const before = await ada.versions('procedure', 'restore-staging')
  assert.equal(before.length, 7)
  const tree = join(temp.home, 'agents', 'default', 'users', 'ada', 'archive')
  const deps = { backend: mind.backend, layout: mind.layout }

  const dry = await retainProcedureVersions(deps, { dryRun: true })
  const runbook = await mind.backend.documents.versions('procedure', 'old-runbook')
  assert.equal(runbook.length, 6)
  assert.deepEqual(dry.procedures.map(({ path, kept, moved }) => ({ path, kept, moved })), [
    { path: 'procedures/old-runbook.md', kept: 5, moved: runbook.slice(5).map((version) => version.path) },
    { path: 'users/ada/procedures/restore-staging.md', kept: 5, moved: before.slice(5).map((version) => version.path) },
  ])
  assert.equal((await ada.versions('procedure', 'restore-staging')).length, 7, 'a dry run moves nothing')

  clock.advance(MINUTE)
  const run = await retainProcedureVersions(deps)
  assert.deepEqual([run.keep, run.moved, run.problems], [5, 3, []])
  assert.deepEqual(run.procedures[0]?.moved, [runbook[5]?.path.replace('/archive/versions/', '/archive/forgotten/versions/')])
  const retained = run.procedures[1]
  assert.equal(retained?.kept, 5)
  // Same names, now under archive/forgotten/versions/procedure/: the two oldest.
  assert.deepEqual(
    retained?.moved.map((path) => path.split('/').pop()),
    before.slice(5).map((version) => version.path.split('/').pop()),
  )
  for (const path of retained?.moved ?? []) {
    assert.match(path, /^agents\/default\/users\/ada\/archive\/forgotten\/versions\/procedure\/restore-staging\./)
    assert.ok(existsSync(join(temp.home, path)), path)
  }
  assert.deepEqual(await ada.versions('procedure', 'restore-staging'), before.slice(0, 5), 'the five newest stay where they were')
  const counts = (retained?.moved ?? []).map((path) => parseFrontmatter(readFileSync(join(temp.home, path), 'utf8')).frontmatter.failure_count ?? 0)
  assert.deepEqual(counts, [1, 0], 'the procedure after the first run, and as first written, bytes as they were')
  assert.equal((await mind.backend.documents.versions('procedure', 'deploy')).length, 3, "the agent's procedure keeps its three")

  // History still lists the five kept versions, each with why it was replaced, and says where the older went.
  const history = await mind.history('procedures/restore-staging.md', { user: 'ada' })
  assert.equal(history.state, 'live')
  assert.deepEqual(
    history.versions.map((version) => version.path),
    before.slice(0, 5).map((version) => version.path),
  )
  assert.deepEqual(
    history.versions.map((version) => version.reason),
    ['outcome: failure — run 7', 'outcome: success — run 6', 'outcome: failure — run 5', 'outcome: success — run 4', 'outcome: failure — run 3'],
  )
  assert.deepEqual(
    history.retired?.map((version) => [version.path, version.reason]),
    [
      [retained?.moved[0], 'outcome: success — run 2'],
      [retained?.moved[1], 'outcome: failure — run 1'],
    ],
  )

  // Idempotent.
  const again = await retainProcedureVersions(deps)
  assert.deepEqual([again.moved, again.procedures], [0, []])

  // A purge (decision 0023) removes the live procedure, the kept versions and the moved ones, and their log lines.
  await mind.forget('procedures/restore-staging.md', { user: 'ada', purge: true })
  const left = (folder: string): string[] => (existsSync(join(tree, folder)) ? readdirSync(join(tree, folder)).filter((name) => name.startsWith('restore-staging.')) : [])
  assert.deepEqual(left('versions/procedure'), [])
  assert.deepEqual(left('forgotten/versions/procedure'), [])
  assert.doesNotMatch(readFileSync(join(tree, 'versions', 'versions.jsonl'), 'utf8'), /restore-staging/)
  assert.ok(!existsSync(join(temp.home, 'agents', 'default', 'users', 'ada', 'procedures', 'restore-staging.md')))
})
