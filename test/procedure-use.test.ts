/**
 * What counts as a use of a procedure (decision 0047),
 * through the agent's path: `createMind` → `mind.session(id, { user })` with a new Session object
 * every turn, two users, a restart between turns, and months on a clock the test moves.
 *
 * A procedure shown in a turn is credited a use (one access of its index unit, what monthly
 * forgetting counts) when the session bears it out — the agent opens it, or what it does carries
 * the procedure's name or one of its steps — in that turn or the next, whichever stage matched it.
 * An unrelated procedure the index finds is not shown; one shown by an incidental match and not
 * followed counts for nothing.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { z } from 'zod'
import { parseFrontmatter } from '../src/core/frontmatter.ts'
import { ManualClock } from '../src/core/clock.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import type { Turn } from '../src/session/turn.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import { AGENT_TOOL_NAMES } from '../src/tools/agent-tools.ts'
import { creditFollowedProcedures } from '../src/memory/procedures/use-crediting.ts'
import { call } from './support/tool-calls.ts'

const MINUTE = 60_000
const DAY = 86_400_000
const PROCEDURES = {
  'deploy-staging': '# Deploy staging [deploy-staging]\n\n1. Run the test suite with npm test\n2. Build the image with kamal build\n3. Run kamal deploy -d staging\n4. Check the health page\n',
  'restart-ingest': '# Restart the ingest worker [restart-ingest]\n\n1. Stop the ingest worker\n2. Clear the stuck queue\n3. Start the worker again and watch the logs\n',
  'rotate-ftp': '# Rotate the FTP password\n\n1. Generate a new password for the partner FTP account\n2. Update the vault entry\n3. Email the partner the new password\n',
}
const path = (slug: string): string => `agents/default/procedures/${slug}.md`

/** The host's own tool: a shell that does what it is told. */
const shell: ToolDefinition<{ command: string }> = {
  name: 'shell',
  description: 'Run a shell command.',
  inputSchema: z.object({ command: z.string() }),
  async run({ command }) {
    return { text: `ran: ${command}` }
  },
}

function open(tmp: TempHome, clock: ManualClock): Promise<MindInternals> {
  return openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, settings: { 'jobs.eager': false } })
}

/** The agent writes the three procedures with its own tool, for every user. */
async function writeProcedures(mind: MindInternals): Promise<void> {
  const tools = mind.agentTools({ sessionId: 'notes' })
  for (const [slug, content] of Object.entries(PROCEDURES)) {
    const written = await call(tools, 'write_memory_file', { path: `procedures/${slug}.md`, content, owner: 'agent' })
    assert.notEqual(written.isError, true, written.text)
  }
  await mind.indexed()
}

/** One turn of a stateless host: a new Session object, the agent's calls through it, its reply. */
async function turn(mind: MindInternals, clock: ManualClock, sessionId: string, user: string, message: string, calls: Array<[string, unknown]>, reply: string): Promise<Turn> {
  const session = mind.session(sessionId, { user, tools: [shell] })
  const begun = await session.begin(message)
  for (const [name, input] of calls) assert.notEqual((await session.execute(name, input)).isError, true, `${name} ${JSON.stringify(input)}`)
  await session.end(begun, reply)
  clock.advance(MINUTE)
  return begun
}

const shownProcedures = (begun: Turn): string[] => begun.provenance.primed.filter((item) => item.kind === 'procedure').map((item) => item.source)

/** Recalls of a procedure: the access counts of its index units. */
async function uses(mind: MindInternals, source: string): Promise<number> {
  const ids = [...(await mind.backend.index.hashes(source)).keys()]
  assert.ok(ids.length > 0, `${source} is indexed`)
  return (await mind.backend.index.get(ids)).reduce((sum, unit) => sum + unit.accessCount, 0)
}

/** The credits recorded in one owner's log. */
async function credits(mind: MindInternals, owner: `user:${string}` | 'agent'): Promise<Array<Record<string, unknown>>> {
  const records = await mind.backend.owned(owner).activity.read({ types: ['memory_write'] })
  return records.filter((record) => record.meta?.origin === 'procedure_use').map((record) => record.meta as Record<string, unknown>)
}

test('a deploy request shows [deploy-staging], not the unrelated rotate-ftp; it is credited when followed, in its turn or the next — a new Session per turn, a new process between turns', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  let mind = await open(tmp, clock)
  await writeProcedures(mind)

  // Ada asks by keyword; the agent does what the procedure says.
  const deploy = await turn(mind, clock, 'ada-ops', 'ada', 'Please [deploy-staging] the new release to the staging server.', [
    ['shell', { command: 'npm test' }],
    ['shell', { command: 'kamal deploy -d staging' }],
  ], 'The tests passed and the release is live on staging.')
  const shown = shownProcedures(deploy)
  assert.ok(shown.includes(path('deploy-staging')), JSON.stringify(deploy.provenance.primed))
  assert.equal(deploy.provenance.primed.find((item) => item.source === path('deploy-staging'))?.why.stage, 'keyword')
  assert.ok(!shown.includes(path('rotate-ftp')), `the unrelated rotate-ftp is not shown: ${JSON.stringify(deploy.provenance.primed)}`)
  // Neither as a procedure nor as a related memory (the recent-activity lines name the writes of all three).
  const recalled = deploy.systemParts.primed.split('\n### ').filter((section) => !section.startsWith('Recent activity'))
  assert.doesNotMatch(recalled.join('\n'), /rotate-ftp|FTP password/)
  // Credited at the end of the turn, without waiting for the boundary.
  assert.equal(await uses(mind, path('deploy-staging')), 1, 'followed: one use')
  assert.equal(await uses(mind, path('rotate-ftp')), 0)
  assert.equal(await uses(mind, path('restart-ingest')), 0)
  const [credit] = await credits(mind, 'user:ada')
  assert.deepEqual([credit?.path, credit?.session, credit?.turn], [path('deploy-staging'), 'ada-ops', 1])
  assert.match(String(credit?.reason), /deploy|kamal|npm/)

  // Bob is shown restart-ingest by its words; the agent only says it will look. Nothing is credited yet…
  const asked = await turn(mind, clock, 'bob-ops', 'bob', 'The ingest is stuck again, can you restart it?', [], 'Let me look into it.')
  assert.ok(shownProcedures(asked).includes(path('restart-ingest')), JSON.stringify(asked.provenance.primed))
  assert.equal(await uses(mind, path('restart-ingest')), 0, 'shown and not followed: no use')

  // …until his next turn, in another process, follows it: the agent opens the procedure and runs its first step.
  await mind.close()
  mind = await open(tmp, clock)
  t.after(() => mind.close())
  await turn(mind, clock, 'bob-ops', 'bob', 'Go ahead.', [
    ['read_memory_file', { path: 'procedures/restart-ingest.md' }],
    ['shell', { command: 'systemctl stop ingest-worker' }],
  ], 'Stopped the worker; clearing the queue next.')
  assert.equal(await uses(mind, path('restart-ingest')), 1, 'the next turn bore it out')
  const bobCredits = await credits(mind, 'user:bob')
  assert.deepEqual(bobCredits.map((record) => [record.path, record.turn]), [[path('restart-ingest'), 1]])
  assert.match(String(bobCredits[0]?.reason), /read_memory_file/)
  // Each user's log holds only their own session's credits; the agent's log, read by every session, none.
  assert.ok(!JSON.stringify(await credits(mind, 'user:ada')).includes('bob-ops'))
  assert.deepEqual(await credits(mind, 'agent'), [])

  // Once: the boundary looks at the whole period again and credits nothing twice.
  clock.advance(11 * MINUTE)
  const report = await mind.maintain()
  const outcomes = report.jobs.filter((job) => job.kind === 'procedure-outcomes')
  assert.equal(outcomes.length, 2, JSON.stringify(report.jobs))
  for (const job of outcomes) assert.equal(job.result?.used, 0, JSON.stringify(job))
  assert.equal(await uses(mind, path('deploy-staging')), 1)
  assert.equal(await uses(mind, path('restart-ingest')), 1)
  assert.equal(await uses(mind, path('rotate-ftp')), 0)
})

test('a turn that never ended is credited at the session\'s boundary, in a later process', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  let mind = await open(tmp, clock)
  await writeProcedures(mind)
  const session = mind.session('ada-ops', { user: 'ada', tools: [shell] })
  const begun = await session.begin('Please [deploy-staging] the new release.')
  assert.ok(shownProcedures(begun).includes(path('deploy-staging')))
  await session.execute('shell', { command: 'kamal build && kamal deploy -d staging' })
  // The process dies before the turn's end.
  await mind.close()
  clock.advance(11 * MINUTE)
  mind = await open(tmp, clock)
  t.after(() => mind.close())
  const report = await mind.maintain()
  const job = report.jobs.find((outcome) => outcome.kind === 'procedure-outcomes')
  assert.equal(job?.result?.used, 1, JSON.stringify(report.jobs))
  assert.equal(await uses(mind, path('deploy-staging')), 1)
})

test('a turn\'s end and the boundary job, in two processes at the same moment, credit one showing once', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const first = await open(tmp, clock)
  t.after(() => first.close())
  await writeProcedures(first)
  const session = first.session('ada-ops', { user: 'ada', tools: [shell] })
  const begun = await session.begin('Please [deploy-staging] the new release.')
  assert.ok(shownProcedures(begun).includes(path('deploy-staging')))
  await session.execute('shell', { command: 'kamal build && kamal deploy -d staging' })
  // The turn ends late, just as another process finds the session idle and runs its boundary.
  clock.advance(11 * MINUTE)
  const second = await open(tmp, clock)
  t.after(() => second.close())
  let [, report] = await Promise.all([session.end(begun, 'Deployed to staging.'), second.maintain()])
  if (!report.jobs.some((job) => job.kind === 'procedure-outcomes')) {
    // The turn's end touched the session before the other process looked: it was not idle yet, and
    // its boundary comes at the next idle period. Credited again there, the showing still counts once.
    clock.advance(11 * MINUTE)
    report = await second.maintain()
  }
  assert.ok(report.jobs.some((job) => job.kind === 'procedure-outcomes'), JSON.stringify(report.jobs))
  await Promise.all([first.close(), second.close()])
  // Read in a third process: each of the two may keep what it read itself.
  const third = await open(tmp, clock)
  t.after(() => third.close())
  assert.equal(await uses(third, path('deploy-staging')), 1, 'one showing, one use')
  assert.deepEqual((await credits(third, 'user:ada')).map((record) => [record.path, record.turn]), [[path('deploy-staging'), 1]])
})

test('two credit runs of one session at once (a turn\'s end and the boundary job of another process) credit a showing once: they take the session\'s lock', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await open(tmp, clock)
  t.after(() => mind.close())
  await writeProcedures(mind)
  const session = mind.session('ada-ops', { user: 'ada', tools: [shell] })
  const begun = await session.begin('Please [deploy-staging] the new release.')
  assert.ok(shownProcedures(begun).includes(path('deploy-staging')))
  await session.execute('shell', { command: 'kamal build && kamal deploy -d staging' })
  // The two runs a turn's end and a boundary make, started together, as two processes would.
  const deps = { agent: 'default', lifecycle: mind.backend.lifecycle, index: mind.backend.index, clock, ignoredTools: AGENT_TOOL_NAMES, locks: mind.backend.locks }
  const input = { session: 'ada-ops', user: 'ada', log: mind.backend.owned('user:ada').activity }
  const runs = await Promise.all([creditFollowedProcedures(deps, { ...input, from: { turn: 1 } }), creditFollowedProcedures(deps, { ...input, from: { since: '2026-03-02T08:00:00Z' } })])
  assert.deepEqual(runs.map((run) => run.credited.length).sort(), [0, 1], JSON.stringify(runs))
  assert.equal(await uses(mind, path('deploy-staging')), 1)
  assert.equal((await credits(mind, 'user:ada')).length, 1)
})

test('months later: a procedure asked for by keyword and followed every month is kept; one shown only by an incidental match, and one never shown, are forgotten', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const start = Date.parse('2026-01-05T09:00:00Z')
  const clock = new ManualClock(start)
  const mind = await open(tmp, clock)
  t.after(() => mind.close())
  await writeProcedures(mind)
  await mind.maintain()

  for (let month = 1; month <= 10; month++) {
    clock.set(start + month * 30 * DAY)
    // Ada names restart-ingest; the agent opens it and walks her through it. No host tool runs,
    // so outcome tracking has nothing to count: only the use says it mattered.
    const followed = await turn(mind, clock, `ada-${month}`, 'ada', 'The ingest is stuck. [restart-ingest] please.', [['read_memory_file', { path: 'procedures/restart-ingest.md' }]], 'Stop the ingest worker, clear the stuck queue, then start the worker again.')
    assert.equal(followed.provenance.primed.find((item) => item.source === path('restart-ingest'))?.why.stage, 'keyword')
    // Bob's request shares one word with rotate-ftp: shown, an incidental match, never followed —
    // and the successful call of that turn is no success of rotate-ftp's.
    const incidental = await turn(mind, clock, `bob-${month}`, 'bob', 'Could you change the password field label on the login form?', [['shell', { command: "sed -i 's/Password/Passphrase/' login-form.html" }]], 'Done: the label now reads "Passphrase".')
    if (month === 1) assert.ok(shownProcedures(incidental).includes(path('rotate-ftp')), JSON.stringify(incidental.provenance.primed))
    clock.advance(11 * MINUTE)
    await mind.maintain()
  }

  const agentTree = join(tmp.home, 'agents', 'default')
  assert.ok(existsSync(join(agentTree, 'procedures', 'restart-ingest.md')), 'followed every month: kept')
  assert.equal(await uses(mind, path('restart-ingest')), 10)
  for (const gone of ['rotate-ftp', 'deploy-staging']) {
    assert.ok(!existsSync(join(agentTree, 'procedures', `${gone}.md`)), `${gone} was forgotten`)
    assert.ok(existsSync(join(agentTree, 'archive', 'forgotten', 'procedure', `${gone}.md`)), `${gone} is in archive/forgotten/`)
  }
  const rotate = readFileSync(join(agentTree, 'archive', 'forgotten', 'procedure', 'rotate-ftp.md'), 'utf8')
  assert.match(rotate, /success_count: 0/, 'no outcome was counted for the incidental match either')
  // Why, in the log of its owner (the agent): unused, with no use counted.
  const forgotten = (await mind.backend.owned('agent').activity.read({ types: ['memory_write'] })).map((record) => JSON.stringify(record)).filter((text) => /monthly forgetting/.test(text))
  assert.ok(forgotten.some((text) => /rotate-ftp/.test(text) && /0 uses/.test(text)), forgotten.join('\n'))
})

test('a procedure written with write_memory_file gets the seed\'s frontmatter; the writer\'s fields are kept, a track record it claims is refused', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await open(tmp, clock)
  t.after(() => mind.close())
  const session = mind.session('ada-notes', { user: 'ada' })
  const begun = await session.begin('Write down how we restore staging.')
  const file = join(tmp.home, 'agents', 'default', 'users', 'ada', 'procedures', 'restore-staging.md')
  const frontmatter = () => parseFrontmatter(readFileSync(file, 'utf8')).frontmatter

  const given = '---\ndescription: Restore the staging database from last night\'s snapshot\ntags: [staging, database]\nconfidence: 0.5\n---\n# Restore staging\n\n1. Stop the app\n2. Load the snapshot\n'
  const written = await call(begun.tools, 'write_memory_file', { path: 'procedures/restore-staging.md', content: given })
  assert.notEqual(written.isError, true, written.text)
  const first = frontmatter()
  assert.equal(first.description, "Restore the staging database from last night's snapshot", 'the writer\'s description is kept')
  assert.deepEqual(first.tags, ['staging', 'database'], 'and its own fields')
  assert.deepEqual([first.confidence, first.success_count, first.failure_count, first.version, first.protected, first.auto_distilled], [0.5, 0, 0, 1, false, false])
  assert.equal(first.created_at, '2026-03-02T09:00:00.000Z')
  assert.equal(first.updated_at, '2026-03-02T09:00:00.000Z')

  // A track record the writer claims is refused, and nothing is written.
  const claimed = await call(begun.tools, 'write_memory_file', { path: 'procedures/boasting.md', content: '---\nsuccess_count: 12\n---\n# Boasting\n' })
  assert.equal(claimed.isError, true)
  assert.match(claimed.text, /success_count/)

  // An outcome, then a rewrite: the counts stay, the version follows, the dates say when.
  assert.notEqual((await call(begun.tools, 'report_procedure_outcome', { procedure: 'restore-staging', success: true })).isError, true)
  clock.advance(DAY)
  const rewrite = await call(begun.tools, 'write_memory_file', { path: 'procedures/restore-staging.md', content: '# Restore staging\n\n1. Stop the app\n2. Load the snapshot\n3. Start the app\n' })
  assert.notEqual(rewrite.isError, true, rewrite.text)
  const second = frontmatter()
  assert.deepEqual([second.success_count, second.failure_count, second.confidence, second.version], [1, 0, 1, 2])
  assert.equal(second.description, "Restore the staging database from last night's snapshot")
  assert.equal(second.created_at, '2026-03-02T09:00:00.000Z')
  assert.equal(second.updated_at, '2026-03-03T09:00:00.000Z')

  // Without any frontmatter, its title is its description.
  assert.notEqual((await call(begun.tools, 'write_memory_file', { path: 'procedures/rotate-logs.md', content: '# Rotate the logs\n\n1. gzip yesterday\'s log\n' })).isError, true)
  const plain = parseFrontmatter(readFileSync(join(tmp.home, 'agents', 'default', 'users', 'ada', 'procedures', 'rotate-logs.md'), 'utf8')).frontmatter
  assert.deepEqual([plain.description, plain.confidence, plain.success_count, plain.failure_count, plain.version, plain.protected], ['Rotate the logs', 0.5, 0, 0, 1, false])
  await session.end(begun, 'Written.')
  // Bob sees none of it.
  assert.equal(await mind.scope('bob').procedures.get('restore-staging'), null)
})

test('skills share the channel and the rule: a skill shown is credited when recall_skill loads it, not for being shown', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await open(tmp, clock)
  t.after(() => mind.close())
  await mind.skills.save({ label: 'csv_summary', name: 'Summarise a CSV', whenToUse: 'When asked to summarise a CSV file', declarative: '1. Load it\n2. Describe columns\n' })
  await mind.reindex()
  const source = 'agents/default/skills/csv_summary/declarative.md'
  const isShown = (begun: Turn): boolean => begun.provenance.primed.some((item) => item.kind === 'skill' && item.channel === 'skills')

  const ignored = await turn(mind, clock, 'ada-data', 'ada', 'Can you summarise this CSV file for me?', [], 'Not now, sorry.')
  assert.ok(isShown(ignored), JSON.stringify(ignored.provenance.primed))
  assert.equal(await uses(mind, source), 0, 'shown, not loaded: no use')
  const loaded = await turn(mind, clock, 'bob-data', 'bob', 'Please summarise the sales CSV file.', [['recall_skill', { label: 'csv_summary' }]], 'Here is the summary.')
  assert.ok(isShown(loaded))
  assert.equal(await uses(mind, source), 1, 'loaded with recall_skill: one use')
  assert.match(String((await credits(mind, 'user:bob'))[0]?.reason), /recall_skill/)
})
