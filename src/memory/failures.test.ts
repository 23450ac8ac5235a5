import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { ManualClock } from '../core/clock.ts'
import { createLineLogger } from '../core/logger.ts'
import type { ModelFailure } from '../llm/model-failures.ts'
import type { Backend } from '../storage/contracts.ts'
import { openEmbeddedBackend } from '../storage/embedded.ts'
import { makeTempHome, type TempHome } from '../testing/temp-home.ts'
import { createActivityRecorder } from './episodes/recorder.ts'
import { FAILURE_LOOKBACK_MS, FAILURE_WARN_INTERVAL_MS, createFailureReports, formatFailureGroup, groupFailures, readFailures } from './failures.ts'

const auth = (task: string, extra: Partial<ModelFailure> = {}): ModelFailure => ({
  source: 'llm',
  kind: 'auth',
  code: 'llm_call_failed',
  status: 401,
  task,
  title: 'LLM authentication failed (HTTP 401)',
  message: 'the openai model m failed after 1 attempt: HTTP 401: Incorrect API key provided.',
  fix: 'set a valid key in llm.apiKey / ENGRAM_LLM_API_KEY',
  ...extra,
})
const timeout: ModelFailure = { source: 'embedder', kind: 'timeout', code: 'embed_failed', task: 'document embedding', title: 'embedder timed out', message: 'no answer within 30000 ms', fix: 'raise embed.timeoutMs' }

let tmp: TempHome
let backend: Backend
const clock = new ManualClock('2026-03-02T09:00:00Z')
before(() => {
  tmp = makeTempHome('engram-failures-')
  backend = openEmbeddedBackend({ home: tmp.home, agent: 'default', project: undefined, clock })
})
after(async () => {
  await backend.close()
  tmp.cleanup()
})

/** Reports over the shared home, as a separate process would open them. */
function reportsOf(lines: string[] = []) {
  return createFailureReports({
    recorder: createActivityRecorder({ log: backend.activity, clock }),
    logs: [backend.activity],
    jobs: backend.jobs,
    agent: 'default',
    clock,
    logger: createLineLogger({ level: 'debug', write: (line) => lines.push(line), now: () => clock.now() }),
  })
}

test('failures are error events in the activity log, grouped by kind with counts, tasks and the fix; one warn line per kind per interval', async () => {
  const lines: string[] = []
  const reports = reportsOf(lines)
  await reports.record(auth('identity_facts'))
  clock.advance(60_000)
  await reports.record(auth('episode', { paused: true, message: 'the LLM was not called: it refused its API key at …' }))
  await reports.record(timeout)
  await reports.record(auth('episode', { paused: true, message: 'the LLM was not called: it refused its API key at …' }))

  const records = await readFailures(backend.activity, { since: '2026-03-02T00:00:00Z' })
  assert.equal(records.length, 4)
  assert.ok(records.every((record) => record.type === 'error' && record.meta?.origin === 'model_failure'))
  const groups = groupFailures(records)
  assert.equal(groups.length, 2)
  const [llm, embedder] = groups
  assert.equal(llm?.count, 3)
  assert.deepEqual(llm?.tasks, ['identity_facts', 'episode'])
  assert.match(llm?.message ?? '', /Incorrect API key/, 'the refusal itself, not a paused call, says what happened')
  assert.equal(llm?.firstAt, '2026-03-02T09:00:00.000Z')
  assert.equal(
    formatFailureGroup(llm as NonNullable<typeof llm>),
    'LLM authentication failed (HTTP 401) ×3 since 2026-03-02 09:00 UTC (identity_facts, episode): the openai model m failed after 1 attempt: HTTP 401: Incorrect API key provided. Fix: set a valid key in llm.apiKey / ENGRAM_LLM_API_KEY',
  )
  assert.equal(formatFailureGroup(embedder as NonNullable<typeof embedder>, { fix: false }), 'embedder timed out at 2026-03-02 09:01 UTC (document embedding): no answer within 30000 ms')

  const levels = lines.map((line) => JSON.parse(line).level)
  assert.deepEqual(levels, [40, 20, 40, 20], 'a warn line for each kind, then debug lines for repeats')
  clock.advance(FAILURE_WARN_INTERVAL_MS)
  await reports.record(auth('summary'))
  const last = JSON.parse(lines.at(-1) as string)
  assert.equal(last.level, 40)
  assert.equal(last.repeatsSinceLastWarning, 2)
})

test('each reader gets the failures once, in whatever process asks next; at most a day back', async () => {
  const reports = reportsOf()
  const turn = await reports.unreported('turn')
  assert.deepEqual(turn.map((group) => [group.title, group.count]), [['LLM authentication failed (HTTP 401)', 4], ['embedder timed out', 1]])
  assert.deepEqual(await reports.unreported('turn'), [], 'reported once')

  // Another process (new reports over the same home) continues from the stored cursor, even at the same instant.
  const other = reportsOf()
  await other.record(auth('episode'))
  assert.deepEqual((await other.unreported('turn')).map((group) => group.count), [1])
  await other.record(auth('lessons'))
  assert.deepEqual((await reports.unreported('turn')).map((group) => group.tasks), [['lessons']])
  // The maintain reader has its own cursor: it sees everything once too.
  assert.deepEqual((await other.unreported('maintain')).map((group) => group.count), [6, 1])

  clock.advance(FAILURE_LOOKBACK_MS + 60_000)
  await other.record(timeout)
  const fresh = reportsOf()
  assert.deepEqual((await fresh.unreported('maintain')).map((group) => group.count), [1])
  // Two readers asking at once in one process do not both take the same failures.
  await fresh.record(timeout)
  const [a, b] = await Promise.all([fresh.unreported('turn'), fresh.unreported('turn')])
  assert.equal((a?.length ?? 0) + (b?.length ?? 0), 1)
})

test('a failure keeps its message and its fix apart in the log: a message that itself holds "Fix:" is read back whole', async () => {
  const reports = reportsOf()
  clock.advance(86_400_000)
  const since = clock.now().toISOString()
  const message = 'the server answered: "invalid model.\nFix: pick another" (its own text)'
  await reports.record(auth('summary', { kind: 'invalid_output', status: 422, message }))
  const [record] = await readFailures(backend.activity, { since })
  assert.equal(record?.meta?.message, message)
  assert.equal(record?.meta?.fix, 'set a valid key in llm.apiKey / ENGRAM_LLM_API_KEY')
  assert.equal(groupFailures(record ? [record] : [])[0]?.message, message)
})
