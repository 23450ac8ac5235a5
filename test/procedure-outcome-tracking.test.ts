/**
 * Automatic outcome tracking of procedures (seed 003, "Success/Failure Tracking": framework
 * auto-tracking) through the agent's path: `createMind` → `mind.session(id)` → begin / execute /
 * end, with the agent's procedures written by the agent itself. At a session's boundary (idle, or
 * its explicit end), each procedure priming showed and the agent did not report is counted a
 * success or a failure from the session's tool calls and the user's next message — in the
 * procedure's own owner's file, once, recorded in the session owner's log — or left alone when
 * nothing says how it went.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { z } from 'zod'
import { ManualClock } from '../src/core/clock.ts'
import type { Procedure } from '../src/memory/procedures/procedure-store.ts'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import type { Turn } from '../src/session/turn.ts'
import { makeTempHome, type TempHome } from '../src/testing/temp-home.ts'
import type { ToolDefinition } from '../src/tools/dispatcher.ts'
import { call } from './support/tool-calls.ts'

const MINUTE = 60_000
const AGENT_PROCEDURE = 'agents/default/procedures/deploy-billing.md'
const ADA_PROCEDURE = 'agents/default/users/ada/procedures/deploy-billing.md'
const PROCEDURE_TEXT = '# Deploy the billing service\n1. Run the pending database migrations.\n2. Deploy the billing service with the deploy tool.\n'

/** The agent's own tool: a deploy that fails while a migration is pending. */
const deploy: ToolDefinition<{ service: string }> = {
  name: 'deploy',
  description: 'Deploy a service.',
  inputSchema: z.object({ service: z.string() }),
  async run({ service }) {
    if (service.includes('pending')) throw new Error('migration 0042 is pending')
    return { text: `deployed ${service}` }
  },
}

function open(tmp: TempHome, clock: ManualClock): Promise<MindInternals> {
  // No model: the tracking is offline. No embedder: the procedure is matched by its words.
  return openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true, clock, embedder: null })
}

/** The agent writes a procedure with its own tool (in the user's tree when it works for a user). */
async function writeProcedure(mind: MindInternals, user?: string): Promise<void> {
  const tools = mind.agentTools({ sessionId: 'notes', ...(user !== undefined ? { user } : {}) })
  const written = await call(tools, 'write_memory_file', { path: 'procedures/deploy-billing.md', content: PROCEDURE_TEXT })
  assert.notEqual(written.isError, true, written.text)
}

/**
 * One turn of a stateless host: a new Session object every turn, the agent's tool calls through
 * the session, the reply. Returns the turn (its provenance says what priming showed).
 */
async function turn(mind: MindInternals, clock: ManualClock, sessionId: string, user: string | undefined, message: string, calls: Array<[string, unknown]> = []): Promise<Turn> {
  const session = mind.session(sessionId, { ...(user !== undefined ? { user } : {}), tools: [deploy] })
  const begun = await session.begin(message)
  for (const [name, input] of calls) await session.execute(name, input)
  await session.end(begun, 'Done.')
  clock.advance(MINUTE)
  return begun
}

const shown = (begun: Turn): string[] => begun.provenance.primed.filter((item) => item.kind === 'procedure').map((item) => item.source)

async function counts(mind: MindInternals, user?: string): Promise<[number, number]> {
  const procedure = await (user === undefined ? mind.procedures : mind.scope(user).procedures).get('deploy-billing')
  assert.ok(procedure, 'the procedure exists')
  return [procedure.successCount, procedure.failureCount]
}

/** The note of a procedure's last counted outcome. */
const lastNote = (procedure: Procedure | null): string | undefined => (procedure?.frontmatter.last_outcome as { note?: string } | undefined)?.note

/** What the tracker recorded in one owner's log. */
async function tracked(mind: MindInternals, owner: 'agent' | `user:${string}`): Promise<Array<Record<string, unknown>>> {
  const records = await mind.backend.owned(owner).activity.read({ types: ['memory_write'] })
  return records.filter((record) => record.meta?.origin === 'procedure_outcome_tracking').map((record) => record.meta as Record<string, unknown>)
}

test('a failed tool call after a procedure was shown counts one failure on the agent\'s procedure at the idle boundary — a new Session every turn, a restart before maintain, once', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  let mind = await open(tmp, clock)
  await writeProcedure(mind)
  await mind.indexed()

  const first = await turn(mind, clock, 'ops', 'ada', 'Deploy the billing service to production, please.', [['deploy', { service: 'billing (migration pending)' }]])
  assert.ok(shown(first).includes(AGENT_PROCEDURE), `priming showed the procedure: ${JSON.stringify(first.provenance.primed)}`)
  await turn(mind, clock, 'ops', 'ada', 'Who should I ask about it?')
  await mind.close()

  // Another process, after the session went idle.
  clock.advance(11 * MINUTE)
  mind = await open(tmp, clock)
  t.after(() => mind.close())
  const report = await mind.maintain()
  const job = report.jobs.find((outcome) => outcome.kind === 'procedure-outcomes')
  assert.equal(job?.status, 'done', JSON.stringify(report.jobs))
  assert.equal(job?.session, 'ops')
  assert.deepEqual([job?.result?.shown, job?.result?.failure, job?.result?.success], [1, 1, 0])
  assert.deepEqual(await counts(mind), [0, 1])
  const procedure = await mind.procedures.get('deploy-billing')
  assert.equal(lastNote(procedure), 'auto: deploy failed in the turn it was shown in or the next')
  assert.equal(procedure?.confidence, 0)

  // Recorded in the log of the session's owner (ada), not in the agent's, which every session reads.
  const adaLog = await tracked(mind, 'user:ada')
  assert.equal(adaLog.length, 1)
  assert.deepEqual([adaLog[0]?.procedure, adaLog[0]?.owner, adaLog[0]?.success, adaLog[0]?.session], ['deploy-billing', 'agent', false, 'ops'])
  assert.ok(((adaLog[0]?.turns ?? []) as number[]).includes(1), 'shown in the turn whose call failed')
  assert.deepEqual(await tracked(mind, 'agent'), [])
  assert.equal((await mind.sessions.get('ops'))?.status, 'closed', 'the record of the boundary\'s work does not reopen the session')

  // Once: a second maintain has nothing to do, and the job run again (a retry after a crash) counts nothing more.
  assert.deepEqual((await mind.maintain()).jobs, [])
  const [queued] = await mind.backend.lifecycle.jobs('default', { kind: 'procedure-outcomes' })
  assert.ok(queued)
  await mind.backend.lifecycle.enqueue({ agent: 'default', kind: 'procedure-outcomes', key: 'procedure-outcomes:retry', payload: queued.payload, runAfter: clock.now().toISOString() })
  const again = (await mind.maintain()).jobs.find((outcome) => outcome.kind === 'procedure-outcomes')
  assert.deepEqual([again?.status, again?.result?.already], ['skipped', 1])
  assert.deepEqual(await counts(mind), [0, 1])
  assert.equal((await tracked(mind, 'user:ada')).length, 1)
})

test('clean tool calls count a success when the session ends; a complaint in the next message counts a failure; no tool call counts nothing', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await open(tmp, clock)
  t.after(() => mind.close())
  await writeProcedure(mind)
  await mind.indexed()

  const deployed = await turn(mind, clock, 'bob-ops', 'bob', 'Deploy the billing service to production, please.', [['deploy', { service: 'billing' }]])
  assert.ok(shown(deployed).includes(AGENT_PROCEDURE))
  await turn(mind, clock, 'bob-ops', 'bob', 'Thanks, that looks good.')
  await mind.session('bob-ops', { user: 'bob' }).close()
  await mind.idle()
  assert.deepEqual(await counts(mind), [1, 0], 'a success')
  const [bobRecord] = await tracked(mind, 'user:bob')
  assert.match(String(bobRecord?.reason), /^1 tool call succeeded in the turn it was shown in and the next/)

  await turn(mind, clock, 'carol-ops', 'carol', 'Deploy the billing service to production, please.', [['deploy', { service: 'billing' }]])
  await turn(mind, clock, 'carol-ops', 'carol', "That didn't work, the old version is still live.")
  await mind.session('carol-ops', { user: 'carol' }).close()
  await mind.idle()
  assert.deepEqual(await counts(mind), [1, 1], 'the user said it failed')
  const [carolRecord] = await tracked(mind, 'user:carol')
  assert.equal(carolRecord?.reason, 'the user\'s next message said it did not work ("didn\'t work")')

  const asked = await turn(mind, clock, 'dave-chat', 'dave', 'How do we deploy the billing service?')
  assert.ok(shown(asked).includes(AGENT_PROCEDURE))
  await mind.session('dave-chat', { user: 'dave' }).close()
  await mind.idle()
  assert.deepEqual(await counts(mind), [1, 1], 'shown, but nothing was run: unknown')
  const [daveJob] = await mind.backend.lifecycle.jobs('default', { kind: 'procedure-outcomes' })
  assert.deepEqual([daveJob?.payload.session, daveJob?.status, daveJob?.result?.unknown], ['dave-chat', 'skipped', 1])
  assert.deepEqual(await tracked(mind, 'user:dave'), [])
})

test('a procedure the agent reported itself is not counted again at the boundary', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await open(tmp, clock)
  t.after(() => mind.close())
  await writeProcedure(mind)
  await mind.indexed()

  const begun = await turn(mind, clock, 'ops', 'ada', 'Deploy the billing service to production, please.', [
    ['deploy', { service: 'billing (migration pending)' }],
    ['report_procedure_outcome', { procedure: 'deploy-billing', success: false, note: 'a migration was pending' }],
  ])
  assert.ok(shown(begun).includes(AGENT_PROCEDURE))
  clock.advance(11 * MINUTE)
  const report = await mind.maintain()
  const job = report.jobs.find((outcome) => outcome.kind === 'procedure-outcomes')
  assert.deepEqual([job?.status, job?.result?.reported, job?.result?.failure], ['skipped', 1, 0], JSON.stringify(job))
  assert.deepEqual(await counts(mind), [0, 1], 'the agent\'s own report, once')
  assert.equal(lastNote(await mind.procedures.get('deploy-billing')), 'a migration was pending')
  assert.deepEqual(await tracked(mind, 'user:ada'), [])
})

test("a user's session never changes another user's procedure; a user's own procedure is counted in her tree", async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await open(tmp, clock)
  t.after(() => mind.close())
  // The agent's procedure, and ada's own under the same name (in her sessions hers hides the agent's).
  await writeProcedure(mind)
  await writeProcedure(mind, 'ada')
  await mind.indexed()
  const adaFile = (): string => readFileSync(join(tmp.home, ADA_PROCEDURE), 'utf8')
  const adaBefore = adaFile()

  const bobs = await turn(mind, clock, 'bob-ops', 'bob', 'Deploy the billing service to production, please.', [['deploy', { service: 'billing (migration pending)' }]])
  assert.ok(shown(bobs).includes(AGENT_PROCEDURE))
  assert.ok(!shown(bobs).includes(ADA_PROCEDURE), "bob's priming never sees ada's procedure")
  await mind.session('bob-ops', { user: 'bob' }).close()
  await mind.idle()
  assert.deepEqual(await counts(mind), [0, 1], "bob's failure counts on the agent's procedure he was shown")
  assert.equal(adaFile(), adaBefore, "ada's procedure is untouched, byte for byte")
  assert.deepEqual(await counts(mind, 'ada'), [0, 0])
  const [bobRecord] = await tracked(mind, 'user:bob')
  assert.deepEqual([bobRecord?.owner, bobRecord?.path], ['agent', AGENT_PROCEDURE])
  // The agent's procedure is read by every user: its note says how it was judged, nothing of bob's session.
  assert.doesNotMatch(String(lastNote(await mind.procedures.get('deploy-billing'))), /bob/)

  const adas = await turn(mind, clock, 'ada-ops', 'ada', 'Deploy the billing service to production, please.', [['deploy', { service: 'billing' }]])
  assert.ok(shown(adas).includes(ADA_PROCEDURE), JSON.stringify(adas.provenance.primed))
  await turn(mind, clock, 'ada-ops', 'ada', 'Great, thank you!')
  await mind.session('ada-ops', { user: 'ada' }).close()
  await mind.idle()
  assert.deepEqual(await counts(mind, 'ada'), [1, 0], "ada's success counts on her own procedure")
  assert.match(adaFile(), /success_count: 1/)
  const adaRecords = await tracked(mind, 'user:ada')
  assert.ok(adaRecords.some((record) => record.owner === 'user:ada' && record.path === ADA_PROCEDURE && record.success === true))
  assert.ok(!JSON.stringify(await tracked(mind, 'user:bob')).includes('ada'), "bob's log says nothing of ada")
})
