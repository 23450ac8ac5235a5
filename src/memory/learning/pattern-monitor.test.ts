import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { EngramError } from '../../core/errors.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { DETECTOR_NAMES, type DetectorName, DETECTORS } from './detectors.ts'
import { EVENT_KINDS, type EventKind, normaliseErrorSignature, validateEvent } from './pattern-events.ts'
import { createPatternMonitor, knownRulesPredicate, type PatternMonitor } from './pattern-monitor.ts'
import { openRealMemory } from './test-support/real-memory.ts'

interface Fixture {
  description: string
  fires: string[]
  events: Array<{ kind: EventKind; detail: Record<string, unknown>; severity?: number; round: number }>
}

const fixturesDir = join(import.meta.dirname, 'fixtures')
const fixtures = readdirSync(fixturesDir)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ name: name.slice(0, -5), fixture: JSON.parse(readFileSync(join(fixturesDir, name), 'utf8')) as Fixture }))

function replay(monitor: PatternMonitor, fixture: Fixture): void {
  // biome-ignore lint/suspicious/noExplicitAny: fixture details are validated by observe()
  for (const e of fixture.events) monitor.observe(e.kind, e.detail as any, { severity: e.severity ?? 0, round: e.round })
}

describe('recorded event streams: one fixture per failure mode', () => {
  test("the seed's five failure modes and one per remaining detector are recorded", () => {
    const names = fixtures.map((f) => f.name)
    for (const required of ['name_switch', 'oversized_input', 'publish_failure_loop', 'reset_churn', 'kill_loop']) assert.ok(names.includes(required), required)
    const fired = new Set(fixtures.flatMap((f) => f.fixture.fires))
    for (const detector of DETECTOR_NAMES) assert.ok(fired.has(detector), `a fixture exercises ${detector}`)
  })
  for (const { name, fixture } of fixtures) {
    test(`${name}: ${fixture.description}`, () => {
      const monitor = createPatternMonitor()
      replay(monitor, fixture)
      assert.deepEqual(monitor.atEndOfTurn().map((l) => l.detector).sort(), [...fixture.fires].sort())
    })
  }
})

/** Which event kinds each detector reads (read off detectors.ts; the vocabulary-discipline test checks every kind is read). */
const DETECTOR_INPUTS: Readonly<Record<DetectorName, readonly EventKind[]>> = {
  name_switch: ['workspace_call'],
  oversized_input: ['workspace_call', 'workspace_empty_input'],
  repeated_tool_error: ['tool_result'],
  repeated_error_signature: ['tool_result', 'workspace_result'],
  reset_churn: ['workspace_reset'],
  kill_loop: ['workspace_killed'],
  severity_climb: ['workspace_result', 'workspace_empty_input', 'workspace_reset', 'workspace_killed', 'tool_result', 'history_repair', 'cap_exhausted'],
  repair_churn: ['history_repair'],
  cap_exhausted: ['cap_exhausted'],
}

test('vocabulary discipline: unknown kinds and malformed details are rejected in every mode', () => {
  for (const mode of ['off', 'passive', 'active'] as const) {
    const monitor = createPatternMonitor({ mode })
    // biome-ignore lint/suspicious/noExplicitAny: deliberately outside the vocabulary
    assert.throws(() => monitor.observe('context_compaction' as any, {} as any), (e) => EngramError.is(e) && e.code === 'invalid_argument' && /workspace_call/.test(e.fix ?? ''))
    // biome-ignore lint/suspicious/noExplicitAny: deliberately malformed
    assert.throws(() => monitor.observe('tool_result', { name: 'x' } as any), /success/)
  }
  assert.equal(EVENT_KINDS.length, 9)
  assert.equal(DETECTORS.length, 9)
  const read = new Set(Object.values(DETECTOR_INPUTS).flat())
  assert.deepEqual(EVENT_KINDS.filter((kind) => !read.has(kind)), ['tool_call'], 'only tool_call is producer-only, as in the seed')
  assert.throws(() => validateEvent('round_milestone', {}))
})

test('error signatures collapse paths, numbers, hex addresses and short quoted tokens', () => {
  const a = normaliseErrorSignature("Refusing to save record for engine='gmail-1'")
  assert.equal(a, normaliseErrorSignature("Refusing to save record for engine='gmail-2'"))
  assert.equal(a, 'refusing to save record for engine=<str>')
  assert.equal(normaliseErrorSignature('Segfault at 0x7ffe12ab in /usr/lib/libfoo.so line 42'), 'segfault at <hex> in <path> line <n>')
  assert.equal(normaliseErrorSignature('No such file: ./data/2026/q3.csv'), normaliseErrorSignature('No such file: ./data/2025/q4.csv'))
  assert.notEqual(normaliseErrorSignature('timeout'), normaliseErrorSignature('permission denied'))
})

test('modes: off drops events, passive never nudges, active nudges once per detector per turn', () => {
  const fixture = fixtures.find((f) => f.name === 'publish_failure_loop')?.fixture as Fixture
  const off = createPatternMonitor({ mode: 'off' })
  replay(off, fixture)
  assert.equal(off.events.length, 0)
  assert.deepEqual(off.atEndOfTurn(), [])
  const passive = createPatternMonitor({ mode: 'passive' })
  replay(passive, fixture)
  assert.deepEqual(passive.atRoundN(), [])
  assert.equal(passive.atEndOfTurn().length, 2)
  const active = createPatternMonitor({ mode: 'active' })
  active.observe('tool_result', { name: 'publish', success: false, error: 'x' }, { round: 0 })
  assert.deepEqual(active.atRoundN(), [])
  active.observe('tool_result', { name: 'publish', success: false, error: 'x' }, { round: 1 })
  assert.deepEqual(active.atRoundN().map((n) => n.detector), ['repeated_tool_error'])
  active.observe('tool_result', { name: 'publish', success: false, error: 'x' }, { round: 2 })
  assert.deepEqual(active.atRoundN().map((n) => n.detector), ['repeated_error_signature'], 'only the newly fired detector')
  assert.deepEqual(active.atRoundN(), [])
  active.clear()
  assert.equal(active.eventKindCounts.tool_result, undefined)
})

test('flush encodes rules into rules.md; the dedupe predicate stops re-learning them next turn', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const memory = openRealMemory(tmp.home)
  t.after(memory.close)
  const monitor = createPatternMonitor()
  const fixture = fixtures.find((f) => f.name === 'kill_loop')?.fixture as Fixture
  replay(monitor, fixture)
  const first = await monitor.flush({ encoder: memory.encoder, hasSimilarLesson: await knownRulesPredicate([memory.global]) })
  assert.equal(first.kind, 'encoded')
  if (first.kind !== 'encoded') return
  assert.equal(first.report.saved.length, 2)
  assert.equal(monitor.events.length, 0, 'flush clears the turn')
  const rules = readFileSync(join(memory.memoryDir, 'rules.md'), 'utf8')
  assert.match(rules, /## When\n(- .*\n)*- When a run is killed or times out, make the next one lighter.*<!-- .*confidence:high.*source:consolidation.*-->/)
  const recalled = await memory.global.recallRules()
  assert.equal(recalled.when.length, 2)

  replay(monitor, fixture)
  const second = await monitor.flush({ encoder: memory.encoder, hasSimilarLesson: await knownRulesPredicate([memory.global]) })
  assert.equal(second.kind, 'encoded')
  if (second.kind !== 'encoded') return
  assert.equal(second.lessons.length, 0)
  assert.equal(second.skippedAsKnown.length, 2)
  assert.equal(readFileSync(join(memory.memoryDir, 'rules.md'), 'utf8'), rules, 'rules.md unchanged')

  const nothing = await monitor.flush({ encoder: memory.encoder })
  assert.deepEqual(nothing, { kind: 'nothing', events: 0 })
})
