/**
 * The pattern monitor (Anton's anterior cingulate cortex): watches one turn's events, runs the
 * pure detectors, and turns the patterns that fired into rules. It is a producer, not a store:
 * rules go through the one `Encoder` into rules.md like every other memory.
 *
 * Modes (`off` / `passive` / `active`, mirroring the seed's ANTON_ACC_MODE):
 * - `off`: events are dropped; nothing is detected or learned.
 * - `passive` (default): rules are learned at the end of the turn for the next turns.
 * - `active`: also `atRoundN()` after each tool round returns inline nudges, one per detector per
 *   turn, so the model sees the alarm on its very next round.
 */
import { dedupeKey, type Engram, type EngramEntry, type EngramScope, RULE_KINDS, ruleWithPolarity } from '../../core/engram.ts'
import type { EngramStore } from '../../storage/contracts.ts'
import type { EncodeReport, Encoder } from '../engrams/encoder.ts'
import { DETECTORS, type DetectorName, type PatternLesson } from './detectors.ts'
import { type EventDetail, type EventKind, type PatternEvent, validateEvent } from './pattern-events.ts'

export const PATTERN_MONITOR_MODES = ['off', 'passive', 'active'] as const
export type PatternMonitorMode = (typeof PATTERN_MONITOR_MODES)[number]

/** An inline alarm for the model, appended next to the round's tool results. */
export interface PatternNudge {
  detector: DetectorName
  text: string
  lesson: PatternLesson
}

/** True when a rule like this one is already known (the caller decides how "like" is judged). */
export type SimilarLessonPredicate = (rule: string) => boolean

export interface PatternMonitorOptions {
  mode?: PatternMonitorMode
  /** Where learned rules go (default global: a failure pattern is about the agent, not a project). */
  scope?: EngramScope
}

export type PatternFlushResult =
  | { kind: 'off' }
  | { kind: 'nothing'; events: number }
  | { kind: 'encoded'; lessons: PatternLesson[]; skippedAsKnown: PatternLesson[]; report: EncodeReport }

export interface PatternMonitor {
  readonly mode: PatternMonitorMode
  /**
   * Record an event. Throws `invalid_argument` for a kind outside the vocabulary or a malformed
   * detail, in every mode. Returns false when the mode is `off` (the event is dropped).
   */
  observe<K extends EventKind>(kind: K, detail: EventDetail<K>, options?: { severity?: number; round?: number }): boolean
  /** The events of the current turn (a copy). */
  readonly events: readonly PatternEvent[]
  readonly eventKindCounts: Readonly<Partial<Record<EventKind, number>>>
  /** Active mode: lessons of detectors that fired and have not nudged yet this turn. Else []. */
  atRoundN(): PatternNudge[]
  /**
   * Every lesson the turn's events produce, deduplicated across detectors and against
   * `hasSimilarLesson` (rules already known). Does not clear the turn. [] when `off`.
   */
  atEndOfTurn(options?: { hasSimilarLesson?: SimilarLessonPredicate }): PatternLesson[]
  /**
   * End of turn: `atEndOfTurn`, encode the new lessons as rules (scope per options, confidence
   * high, source consolidation) and clear the turn. The turn is cleared even when encoding throws.
   */
  flush(options: { encoder: Encoder; hasSimilarLesson?: SimilarLessonPredicate }): Promise<PatternFlushResult>
  /** Drop the turn's events and nudge marks. */
  clear(): void
}

/** One nudge as the model reads it: the rule with its polarity, and the detector that fired. */
export function nudgeText(lesson: PatternLesson): string {
  return `${ruleWithPolarity(lesson.kind, lesson.rule)} (self-check: ${lesson.detector})`
}

/** The line above the nudges appended to a tool result, so the model can tell them from the tool's output. */
export const NUDGE_HEADER = "[Note from your memory's self-check, not part of the tool's output: a failure pattern you repeated in this turn]"

/**
 * A tool result's text with the nudges that fired with it appended (the seed's layer 2: the alarm
 * travels in the same message as the round's tool results, so the model reads it on its very next
 * step). Every adapter to a model (AI SDK, OpenAI functions, MCP) sends this text.
 */
export function withNudges(text: string, nudges: readonly string[] | undefined): string {
  if (!nudges || nudges.length === 0) return text
  return `${text}\n\n${NUDGE_HEADER}\n${nudges.map((nudge) => `- ${nudge}`).join('\n')}`
}

/** Creates a monitor for one session (one turn at a time). */
export function createPatternMonitor(options: PatternMonitorOptions = {}): PatternMonitor {
  const mode = options.mode ?? 'passive'
  const scope = options.scope ?? 'global'
  let events: PatternEvent[] = []
  const nudged = new Set<DetectorName>()

  function detect(): PatternLesson[] {
    const lessons: PatternLesson[] = []
    for (const [, detector] of DETECTORS) {
      const lesson = detector(events)
      if (lesson) lessons.push(lesson)
    }
    return lessons
  }

  function atEndOfTurn(endOptions: { hasSimilarLesson?: SimilarLessonPredicate } = {}): PatternLesson[] {
    if (mode === 'off') return []
    const seen = new Set<string>()
    const out: PatternLesson[] = []
    for (const lesson of detect()) {
      const key = dedupeKey(lesson.rule)
      if (seen.has(key)) continue
      seen.add(key)
      if (endOptions.hasSimilarLesson?.(lesson.rule)) continue
      out.push(lesson)
    }
    return out
  }

  const monitor: PatternMonitor = {
    mode,
    observe(kind, detail, observeOptions = {}) {
      const event = validateEvent(kind, detail, observeOptions)
      if (mode === 'off') return false
      events.push(event)
      return true
    },
    get events() {
      return [...events]
    },
    get eventKindCounts() {
      const counts: Partial<Record<EventKind, number>> = {}
      for (const event of events) counts[event.kind] = (counts[event.kind] ?? 0) + 1
      return counts
    },
    atRoundN() {
      // Deliberately not deduplicated against known rules: if the model is breaking a rule it
      // already has, repeating it inline right now is the point.
      if (mode !== 'active') return []
      const nudges: PatternNudge[] = []
      for (const lesson of detect()) {
        if (nudged.has(lesson.detector)) continue
        nudged.add(lesson.detector)
        nudges.push({ detector: lesson.detector, text: nudgeText(lesson), lesson })
      }
      return nudges
    },
    atEndOfTurn,
    async flush({ encoder, hasSimilarLesson }) {
      if (mode === 'off') {
        monitor.clear()
        return { kind: 'off' }
      }
      try {
        const all = atEndOfTurn()
        const lessons = hasSimilarLesson ? all.filter((lesson) => !hasSimilarLesson(lesson.rule)) : all
        const skippedAsKnown = all.filter((lesson) => !lessons.includes(lesson))
        if (all.length === 0) return { kind: 'nothing', events: events.length }
        const engrams: Engram[] = lessons.map((lesson) => ({
          text: lesson.rule,
          kind: lesson.kind,
          scope,
          confidence: 'high',
          source: 'consolidation',
        }))
        const report = engrams.length > 0 ? await encoder.encode(engrams) : { saved: [], duplicates: [], pending: [], suppressed: [], rejected: [] }
        return { kind: 'encoded', lessons, skippedAsKnown, report }
      } finally {
        monitor.clear()
      }
    },
    clear() {
      events = []
      nudged.clear()
    },
  }
  return monitor
}

/**
 * A `hasSimilarLesson` predicate over the rules already in `stores` (read once, now): a lesson is
 * known when its normalised text contains, or is contained in, an existing rule's. The seed's
 * cheap substring match; a caller may pass an embedding-based predicate instead.
 */
export async function knownRulesPredicate(stores: ReadonlyArray<EngramStore | undefined>): Promise<SimilarLessonPredicate> {
  const keys: string[] = []
  for (const store of stores) {
    if (!store) continue
    const rules = await store.recallRules()
    for (const kind of RULE_KINDS) for (const entry of rules[kind] as EngramEntry[]) {
      const key = dedupeKey(entry.text)
      if (key !== '') keys.push(key)
    }
  }
  return (rule) => {
    const key = dedupeKey(rule)
    return keys.some((known) => known === key || known.includes(key) || key.includes(known))
  }
}
