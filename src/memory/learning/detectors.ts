/**
 * The pattern monitor's nine detectors (Anton's ACC): pure functions of one turn's events that
 * return a one-sentence rule when a failure pattern fired, else null. Thresholds are the seed's.
 * Rules are written generically (no names or arguments of this turn) so the same pattern learned
 * on two days is recognised as the same rule; the specifics go into `evidence`.
 */
import type { RuleKind } from '../../core/engram.ts'
import { type EventDetail, type EventKind, normaliseErrorSignature, type PatternEvent } from './pattern-events.ts'

/** What a detector emits. */
export interface PatternLesson {
  detector: DetectorName
  /** The rule, one sentence, as it will stand in rules.md. */
  rule: string
  /** Which section of rules.md it belongs in. */
  kind: RuleKind
  /** How many events triggered it. */
  triggers: number
  /** What was seen this turn (names, counts, the error signature), for logs and tests. */
  evidence: string
}

export type Detector = (events: readonly PatternEvent[]) => PatternLesson | null

/** ≥2 distinct workspace names in one turn. */
export const NAME_SWITCH_MIN_NAMES = 2
/** Inputs this large (~5 KB) are the ones the seed saw silently dropped by the tool-call schema. */
export const OVERSIZED_INPUT_BYTES = 5 * 1024
/** ≥2 oversized inputs (or any observed empty-input drop). */
export const OVERSIZED_MIN_CALLS = 2
/** ≥2 consecutive failures of the same tool. */
export const REPEATED_TOOL_ERROR_MIN = 2
/** The same normalised error signature ≥3 times, from any producers. */
export const ERROR_SIGNATURE_MIN = 3
/** ≥2 workspace resets in one turn. */
export const RESET_CHURN_MIN = 2
/** ≥2 killed runs on the same workspace. */
export const KILL_LOOP_MIN = 2
/** A strictly increasing severity run of ≥3 events from one producer… */
export const SEVERITY_CLIMB_LENGTH = 3
/** …ending at a severity ≥5. */
export const SEVERITY_CLIMB_PEAK = 5
/** ≥3 history repairs in one turn. */
export const REPAIR_CHURN_MIN = 3
/** A single cap-exhausted event. */
export const CAP_EXHAUSTED_MIN = 1

export const DETECTOR_NAMES = [
  'name_switch',
  'oversized_input',
  'repeated_tool_error',
  'repeated_error_signature',
  'reset_churn',
  'kill_loop',
  'severity_climb',
  'repair_churn',
  'cap_exhausted',
] as const
export type DetectorName = (typeof DETECTOR_NAMES)[number]

function ofKind<K extends EventKind>(events: readonly PatternEvent[], kind: K): Array<PatternEvent<K>> {
  return events.filter((event): event is PatternEvent<K> => event.kind === kind)
}

function detailOf<K extends EventKind>(event: PatternEvent<K>): EventDetail<K> {
  return event.detail
}

/** Identity sprawl: each workspace is isolated, so switching names loses the state built so far. */
export const detectNameSwitch: Detector = (events) => {
  const names = [...new Set(ofKind(events, 'workspace_call').map((e) => detailOf(e).name))]
  if (names.length < NAME_SWITCH_MIN_NAMES) return null
  return {
    detector: 'name_switch',
    kind: 'always',
    rule: 'Keep one workspace name for one task: each named workspace is isolated, so variables and files created in one do not exist in another.',
    triggers: names.length,
    evidence: `workspaces used: ${names.join(', ')}`,
  }
}

/** Silent truncation: large inputs arrive empty or fail the same way again and again. */
export const detectOversizedInput: Detector = (events) => {
  const empty = ofKind(events, 'workspace_empty_input').length
  const large = ofKind(events, 'workspace_call').filter((e) => detailOf(e).inputSize > OVERSIZED_INPUT_BYTES).length
  if (empty === 0 && large < OVERSIZED_MIN_CALLS) return null
  return {
    detector: 'oversized_input',
    kind: 'never',
    rule: `Send more than ~${Math.round(OVERSIZED_INPUT_BYTES / 1024)} KB in one tool input: large inputs can be dropped silently, so split the content or build it up in smaller steps.`,
    triggers: empty + large,
    evidence: `${empty} empty-input drops, ${large} inputs over ${OVERSIZED_INPUT_BYTES} bytes`,
  }
}

/** Blind retry: the same tool failing again without a change of approach. */
export const detectRepeatedToolError: Detector = (events) => {
  const runs = new Map<string, number>()
  let worst: { name: string; run: number } | undefined
  for (const event of ofKind(events, 'tool_result')) {
    const { name, success } = detailOf(event)
    const run = success ? 0 : (runs.get(name) ?? 0) + 1
    runs.set(name, run)
    if (run >= REPEATED_TOOL_ERROR_MIN && (!worst || run > worst.run)) worst = { name, run }
  }
  if (!worst) return null
  return {
    detector: 'repeated_tool_error',
    kind: 'when',
    rule: 'When a tool call fails twice in a row, read the error and change the approach or the arguments before calling that tool again.',
    triggers: worst.run,
    evidence: `${worst.name} failed ${worst.run} times in a row`,
  }
}

/** Blind retry across tools or argument tweaks: the same error, reshaped, three times. */
export const detectRepeatedErrorSignature: Detector = (events) => {
  const counts = new Map<string, number>()
  let previous: PatternEvent | undefined
  for (const event of events) {
    const before = previous
    previous = event
    let error: string | undefined
    if (event.kind === 'tool_result' || event.kind === 'workspace_result') {
      const detail = event.detail as EventDetail<'tool_result'>
      if (!detail.success) error = detail.error
    }
    if (!error?.trim()) continue
    // A workspace tool reports one failure twice (workspace_result, then tool_result): count it once.
    if (event.kind === 'tool_result' && before?.kind === 'workspace_result' && (before.detail as EventDetail<'workspace_result'>).error === error) continue
    const signature = normaliseErrorSignature(error)
    counts.set(signature, (counts.get(signature) ?? 0) + 1)
  }
  let worst: [string, number] | undefined
  for (const entry of counts) if (entry[1] >= ERROR_SIGNATURE_MIN && (!worst || entry[1] > worst[1])) worst = entry
  if (!worst) return null
  return {
    detector: 'repeated_error_signature',
    kind: 'when',
    rule: 'When the same error comes back after changing only the arguments, stop retrying: find the cause named in the error, or take a different route.',
    triggers: worst[1],
    evidence: `signature "${worst[0]}" seen ${worst[1]} times`,
  }
}

/** Abandoning state instead of debugging in place. */
export const detectResetChurn: Detector = (events) => {
  const resets = ofKind(events, 'workspace_reset')
  if (resets.length < RESET_CHURN_MIN) return null
  return {
    detector: 'reset_churn',
    kind: 'never',
    rule: 'Reset a workspace to escape an error: resetting throws away working state; debug the failing step in place instead.',
    triggers: resets.length,
    evidence: `${resets.length} resets (${[...new Set(resets.map((e) => detailOf(e).name))].join(', ')})`,
  }
}

/** Writing runs that hang: the approach is too heavy. */
export const detectKillLoop: Detector = (events) => {
  const perName = new Map<string, number>()
  for (const event of ofKind(events, 'workspace_killed')) perName.set(detailOf(event).name, (perName.get(detailOf(event).name) ?? 0) + 1)
  let worst: [string, number] | undefined
  for (const entry of perName) if (entry[1] >= KILL_LOOP_MIN && (!worst || entry[1] > worst[1])) worst = entry
  if (!worst) return null
  return {
    detector: 'kill_loop',
    kind: 'when',
    rule: 'When a run is killed or times out, make the next one lighter (a smaller sample, fewer steps, progress output) instead of resubmitting the same heavy work.',
    triggers: worst[1],
    evidence: `${worst[1]} runs killed in ${worst[0]}`,
  }
}

function producerOf(event: PatternEvent): string {
  const detail = event.detail as { name?: unknown }
  return typeof detail.name === 'string' ? detail.name : `(${event.kind})`
}

/** The situation deteriorating without a change of strategy (the ERN crossing its threshold). */
export const detectSeverityClimb: Detector = (events) => {
  const runs = new Map<string, { length: number; last: number }>()
  let fired: { producer: string; length: number; peak: number } | undefined
  for (const event of events) {
    // Calls carry no outcome; only outcomes can climb.
    if (event.kind === 'tool_call' || event.kind === 'workspace_call') continue
    const producer = producerOf(event)
    const previous = runs.get(producer)
    const run = previous && event.severity > previous.last ? { length: previous.length + 1, last: event.severity } : { length: 1, last: event.severity }
    runs.set(producer, run)
    if (run.length >= SEVERITY_CLIMB_LENGTH && run.last >= SEVERITY_CLIMB_PEAK && (!fired || run.length > fired.length)) {
      fired = { producer, length: run.length, peak: run.last }
    }
  }
  if (!fired) return null
  return {
    detector: 'severity_climb',
    kind: 'when',
    rule: 'When each attempt ends worse than the one before, stop and change strategy (or ask the user) before trying again.',
    triggers: fired.length,
    evidence: `${fired.producer}: ${fired.length} steps of rising severity up to ${fired.peak}`,
  }
}

/** Malformed tool calls and results: the conversation is derailing structurally. */
export const detectRepairChurn: Detector = (events) => {
  const repairs = ofKind(events, 'history_repair').length
  if (repairs < REPAIR_CHURN_MIN) return null
  return {
    detector: 'repair_churn',
    kind: 'always',
    rule: 'Always make complete tool calls, one at a time, and wait for each result before the next: broken calls had to be repaired repeatedly.',
    triggers: repairs,
    evidence: `${repairs} history repairs`,
  }
}

/** The round cap was hit: a mandatory post-mortem instead of a silent retry. */
export const detectCapExhausted: Detector = (events) => {
  const caps = ofKind(events, 'cap_exhausted').length
  if (caps < CAP_EXHAUSTED_MIN) return null
  return {
    detector: 'cap_exhausted',
    kind: 'when',
    rule: 'When a task needs many tool rounds, plan the steps first and report progress and the blocker before the round limit is reached.',
    triggers: caps,
    evidence: `round cap reached ${caps} time(s)`,
  }
}

/** Every detector, in the order lessons are reported. */
export const DETECTORS: ReadonlyArray<readonly [DetectorName, Detector]> = [
  ['name_switch', detectNameSwitch],
  ['oversized_input', detectOversizedInput],
  ['repeated_tool_error', detectRepeatedToolError],
  ['repeated_error_signature', detectRepeatedErrorSignature],
  ['reset_churn', detectResetChurn],
  ['kill_loop', detectKillLoop],
  ['severity_climb', detectSeverityClimb],
  ['repair_churn', detectRepairChurn],
  ['cap_exhausted', detectCapExhausted],
]
