/**
 * Adding a memory kind is one entry of the registry (decision 0060, docs/adding-a-memory-kind.md).
 * A `goal` kind, filed in `goals/` like knowledge, is registered before the library is loaded, and
 * then — with no other change — is written by the agent, indexed (search_memory finds it), primed
 * (it reaches the next session's prompt through the related channel), forgotten (forget_memory and
 * monthly forgetting archive it, restore brings it back) and counted (`engram status`, the
 * dashboard's counts, the export report), all through `createMind` → `session` → tools, on the
 * embedded backend and on PostgreSQL.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { type DocKind, registerMemoryKind } from '../src/core/memory-kinds.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import type { Turn } from '../src/session/turn.ts'
import type { ToolResult } from '../src/tools/tool.ts'

/*
 * Registered before the modules that derive their lists of kinds are imported (hence the dynamic
 * imports below): a kind registered later is refused, as the last test shows.
 */
registerMemoryKind('goal', {
  home: 'tree',
  folder: 'goals',
  shared: false,
  unit: 'goal',
  primedBy: 'related',
  forgetting: 'knowledge',
  versionsKept: null,
  agentWritable: true,
  count: { key: 'goals', label: 'goals', in: ['status', 'dashboard', 'export'] },
})
const { openMindInternals } = await import('../src/mind-internals.ts')
const { runCli } = await import('../src/interfaces/cli/run-cli.ts')
const { growthOf, ownCounts } = await import('../src/interfaces/http/dashboard/ops-data.ts')
const { createServeApp } = await import('../src/interfaces/http/app.ts')
const { parseCredentials } = await import('../src/interfaces/http/credentials.ts')
const { dropSchema, freshSchema, onPostgres } = await import('../src/storage/postgres/test-support/test-database.ts')

const DAY = 86_400_000
const GOAL = 'goal' as DocKind

async function call(turn: Turn, name: string, input: unknown): Promise<ToolResult> {
  const tool = turn.tools.find((candidate) => candidate.name === name)
  assert.ok(tool, `${name} is one of turn.tools`)
  const result = await tool.execute(input)
  assert.notEqual(result.isError, true, result.text)
  return result
}

/** A count under a key the types do not know: a kind registered at run time is not in the registry's types. */
function countOf(counts: object, key: string): unknown {
  return (counts as Record<string, unknown>)[key]
}

type Hit = { id: string; kind: string; text: string; ref: string }
async function goalHits(turn: Turn, query: string): Promise<Hit[]> {
  const result = await call(turn, 'search_memory', { query })
  return (result.data as { hits: Hit[] }).hits.filter((hit) => hit.kind === 'goal')
}

type Target = { backend: 'embedded' } | { backend: 'postgres'; url: string }

function goalSuite(target: Target): void {
  test(`a goal kind registered once is indexed, primed, forgotten and counted (${target.backend})`, async (t) => {
    const temp = makeTempHome('engram-goal-kind-')
    t.after(temp.cleanup)
    const schema = freshSchema()
    const env = target.backend === 'postgres' ? { ...temp.env, ENGRAM_DATABASE_URL: target.url, ENGRAM_DATABASE_SCHEMA: schema } : temp.env
    const start = Date.now() - 160 * DAY
    const clock = new ManualClock(new Date(start))
    // No embedder: recall by words alone, so what is found is what the words match.
    const mind = await openMindInternals({ home: temp.home, env, ignoreConfigFile: true, clock, embedder: null })
    t.after(() => mind.close())
    // After the mind is closed (it writes its pending access counts as it closes).
    if (target.backend === 'postgres') t.after(() => dropSchema(target.url, schema))
    const agentTree = `agents/${mind.agent}`
    const ada = mind.backend.owned('user:ada').documents
    const agent = mind.backend.documents
    const archived = async (documents: typeof ada): Promise<string[]> => ((await documents.archivedPaths?.()) ?? []).filter((path) => path.includes('/archive/forgotten/goal/'))

    // Written by the agent: Ada's goal in her tree, a team goal in the agent's own.
    const first = mind.session('goals-day-0', { user: 'ada' })
    let turn = await first.begin('Please note my goal for this quarter.')
    await call(turn, 'write_memory_file', { path: 'goals/billing-v2.md', content: '# Billing v2\nShip the billing service v2 before the March release freeze.\n' })
    await first.end(turn, 'Noted.')
    const stored = await ada.read(GOAL, 'billing-v2')
    assert.equal(stored?.path, `${agentTree}/users/ada/goals/billing-v2.md`, "filed in goals/ of Ada's tree, read back through the document store as a goal")
    assert.equal(typeof stored?.frontmatter.created_at, 'string', 'written with the frontmatter of a dated document')
    if (target.backend === 'embedded') assert.ok(existsSync(join(temp.home, ...stored.path.split('/'))), 'a file of the home')
    const team = mind.session('goals-team')
    turn = await team.begin('Record the team goal.')
    await call(turn, 'write_memory_file', { path: 'goals/onboarding.md', content: '# Onboarding\nCut the onboarding checklist of new hires to one page.\n' })
    await team.end(turn, 'Recorded.')

    // Indexed: search_memory finds it as a goal unit.
    const asked = mind.session('goals-day-1', { user: 'ada' })
    turn = await asked.begin('What is my goal for the billing service release freeze?')
    const [hit] = await goalHits(turn, 'billing service release freeze')
    assert.equal(hit?.kind, 'goal')
    assert.match(hit?.ref ?? '', /users\/ada\/goals\/billing-v2\.md/)

    // Primed: the same turn's prompt holds it, recalled through the channel its entry names.
    const primed = turn.provenance.primed.filter((item) => item.kind === 'goal')
    assert.ok(primed.length > 0, JSON.stringify(turn.provenance.primed.map((item) => [item.channel, item.kind, item.id])))
    assert.ok(primed.every((item) => item.channel === 'related'))
    assert.match(turn.systemParts.primed, /billing service v2 before the March release freeze/)
    await asked.end(turn, 'Before the March freeze.')

    // Counted: engram status (its JSON and its table), the dashboard's counts of Ada's memory, the export report.
    // Status counts every owner's memory (decision 0073): the agent's goal and Ada's, each under its owner.
    const memory = (await mind.status()).memory
    assert.equal(countOf(memory, 'goals'), 2, "every owner's goals")
    assert.deepEqual(
      memory.byOwner.map((counts) => [counts.owner, countOf(counts, 'goals')]),
      [
        ['agent', 1],
        ['shared', 0],
        ['user:ada', 1],
      ],
    )
    let out = ''
    const io = { stdout: { write: (text: string) => (out += text) }, stderr: { write: () => true }, env, cwd: temp.project, isTTY: false }
    assert.equal(await runCli(['status', '--home', temp.home, '--json'], io), 0, out)
    assert.equal((JSON.parse(out) as { data: { memory: Record<string, unknown> } }).data.memory.goals, 2)
    out = ''
    assert.equal(await runCli(['status', '--home', temp.home, '--human'], io), 0, out)
    assert.match(out, /goals\s+2/)
    assert.match(out, /user ada\s+.*1 goal\b/)
    assert.equal(countOf(await ownCounts(mind, 'ada'), 'goals'), 1, "Ada's own goal")
    const grown = (await mind.backend.owned('user:ada').activity.read({ types: ['memory_write'] })).map((record) => growthOf(record)).filter((growth) => growth?.kind === 'goal')
    assert.deepEqual(grown.map((growth) => growth?.path), ['users/ada/goals/billing-v2.md'], "the dashboard's growth chart has a goal series")
    const admin = 'admin-token-goals-0123456789ab'
    const userPage = await createServeApp({ mind, credentials: parseCredentials(`${admin}=admin`) }).request('/users/ada', { headers: { host: '127.0.0.1:7477', authorization: `Bearer ${admin}` } })
    assert.match(await userPage.text(), /<h3 id="kind-goal">Goals <span class="muted">\(1 goal\)<\/span><\/h3>[\s\S]*billing service v2/, "Ada's page lists her goal under its kind")
    const exportDir = join(temp.project, '..', 'export')
    out = ''
    assert.equal(await runCli(['export', exportDir, '--home', temp.home, '--json'], io), 0, out)
    assert.equal(countOf((JSON.parse(out) as { data: { counts: object } }).data.counts, 'goals'), 2, 'both goals exported')
    assert.ok(existsSync(join(exportDir, 'agents', mind.agent, 'users', 'ada', 'goals', 'billing-v2.md')))

    // Forgotten by monthly forgetting, judged by the knowledge rules its entry names: the team goal,
    // never recalled in 160 days, goes to the archive (restorable); Ada's, recalled on day 100, stays.
    clock.set(new Date(start + 100 * DAY))
    const recalled = mind.session('goals-day-100', { user: 'ada' })
    turn = await recalled.begin('Remind me of my billing goal.')
    assert.equal((await goalHits(turn, 'billing service release freeze')).length, 1)
    await recalled.end(turn, 'Before the March freeze.')
    clock.set(new Date(start + 160 * DAY))
    const done = await mind.maintain()
    assert.equal(done.jobs.find((outcome) => outcome.kind === 'consolidation-monthly')?.status, 'done', JSON.stringify(done.jobs))
    assert.equal(await agent.read(GOAL, 'onboarding'), null, 'out of the live tree')
    assert.deepEqual(await archived(agent), [`${agentTree}/archive/forgotten/goal/onboarding.md`])
    const records = (await mind.backend.activity.read({ types: ['memory_write'] })).map((record) => JSON.stringify(record))
    assert.ok(
      records.some((record) => record.includes('goals/onboarding.md') && record.includes('monthly forgetting: unaccessed for 160 days')),
      'recorded as monthly forgetting',
    )
    assert.notEqual(await ada.read(GOAL, 'billing-v2'), null, "Ada's goal, recalled, stays")
    await mind.restore('goals/onboarding.md')
    assert.notEqual(await agent.read(GOAL, 'onboarding'), null, 'restorable')

    // Forgotten on request: forget_memory archives it out of search; restore brings it back.
    const forgetting = mind.session('goals-day-160', { user: 'ada' })
    turn = await forgetting.begin('Drop my billing goal, please.')
    await call(turn, 'forget_memory', { target: 'goals/billing-v2.md', reason: 'the release moved' })
    assert.deepEqual(await archived(ada), [`${agentTree}/users/ada/archive/forgotten/goal/billing-v2.md`], 'archived by kind, as knowledge is')
    assert.equal(await ada.read(GOAL, 'billing-v2'), null)
    assert.deepEqual(await goalHits(turn, 'billing service release freeze'), [], 'out of the index')
    await forgetting.end(turn, 'Dropped.')
    await mind.restore('goals/billing-v2.md', { user: 'ada' })
    assert.notEqual(await ada.read(GOAL, 'billing-v2'), null, 'restored')
  })
}

goalSuite({ backend: 'embedded' })
onPostgres('a goal kind registered once is indexed, primed, forgotten and counted', (url) => goalSuite({ backend: 'postgres', url }))

test('the registry refuses a kind or folder that is taken, and any kind once lists were derived from it', () => {
  const spec = { home: 'tree', folder: 'plans', shared: false, unit: 'plan', primedBy: null, forgetting: null, versionsKept: null, agentWritable: false, count: null } as const
  assert.throws(() => registerMemoryKind('goal', spec), /the kind exists/)
  assert.throws(() => registerMemoryKind('notes', { ...spec, folder: 'knowledge' }), /the folder "knowledge" is the knowledge kind's/)
  assert.throws(() => registerMemoryKind('notes', { ...spec, unit: 'knowledge' }), /the unit kind "knowledge" is the knowledge kind's/)
  assert.throws(() => registerMemoryKind('plan', spec), /lists of kinds were already derived/)
})
