/**
 * The pattern monitor's closed event vocabulary (Anton's ACC `EVENT_KINDS`), in generic terms.
 *
 * Anton's scratchpad is one case of a *workspace*: a named, stateful environment that a tool runs
 * inputs in (a scratchpad, a notebook kernel, a shell session). The seed's kinds map as
 * `scratchpad_call → workspace_call`, `scratchpad_result → workspace_result`,
 * `scratchpad_empty_code → workspace_empty_input`, `scratchpad_reset → workspace_reset`,
 * `scratchpad_killed → workspace_killed`; `tool_call`, `tool_result`, `history_repair` and
 * `cap_exhausted` keep their names. Every kind is read by at least one detector except `tool_call`,
 * which is kept for a future orphaned-call detector, as in the seed.
 */
import { z } from 'zod'
import { EngramError, ErrorCode } from '../../core/errors.ts'

export const EVENT_KINDS = [
  'workspace_call',
  'workspace_result',
  'workspace_empty_input',
  'workspace_reset',
  'workspace_killed',
  'tool_call',
  'tool_result',
  'history_repair',
  'cap_exhausted',
] as const
export type EventKind = (typeof EVENT_KINDS)[number]

/** Shapes of `detail` per kind (the seed's detail shapes, renamed generically). */
export const EVENT_DETAIL_SCHEMAS = {
  workspace_call: z.object({ name: z.string(), inputSize: z.number().int().nonnegative(), description: z.string().optional() }),
  workspace_result: z.object({ name: z.string(), success: z.boolean(), outputSize: z.number().int().nonnegative().optional(), error: z.string().optional() }),
  workspace_empty_input: z.object({ name: z.string() }),
  workspace_reset: z.object({ name: z.string(), reason: z.string().optional() }),
  workspace_killed: z.object({ name: z.string(), reason: z.string().optional() }),
  tool_call: z.object({ name: z.string(), argsSummary: z.string().optional() }),
  tool_result: z.object({ name: z.string(), success: z.boolean(), error: z.string().optional() }),
  history_repair: z.object({ reason: z.string().optional() }),
  cap_exhausted: z.object({}),
} as const satisfies Record<EventKind, z.ZodType>

export type EventDetail<K extends EventKind> = z.infer<(typeof EVENT_DETAIL_SCHEMAS)[K]>

/**
 * Severity scale of an event (0 = fine). Emitters grade outcomes so `severityClimb` can see a
 * situation deteriorating: a warning, then an error, then a killed run from the same producer.
 */
export const SEVERITY = { ok: 0, warning: 2, error: 4, killed: 6, cap: 8 } as const

/** One observation. `round` is the tool-call round of the turn it happened in. */
export interface PatternEvent<K extends EventKind = EventKind> {
  kind: K
  detail: EventDetail<K>
  severity: number
  round: number
}

export function isEventKind(value: unknown): value is EventKind {
  return typeof value === 'string' && (EVENT_KINDS as readonly string[]).includes(value)
}

/**
 * Validates one event (kind in the vocabulary, detail of its shape). Throws `invalid_argument` for
 * an unknown kind or a malformed detail, naming the kinds that exist.
 */
export function validateEvent(kind: string, detail: unknown, options: { severity?: number; round?: number } = {}): PatternEvent {
  if (!isEventKind(kind)) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'system',
      message: `"${kind}" is not a pattern-monitor event kind.`,
      fix: `Emit one of: ${EVENT_KINDS.join(', ')}.`,
      details: { kind },
    })
  }
  const parsed = EVENT_DETAIL_SCHEMAS[kind].safeParse(detail ?? {})
  if (!parsed.success) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'system',
      message: `Malformed detail for a ${kind} event: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'detail'}: ${issue.message}`).join('; ')}.`,
      fix: 'Send the detail fields the event kind defines (see EVENT_DETAIL_SCHEMAS).',
      details: { kind },
    })
  }
  const severity = options.severity ?? 0
  if (!Number.isFinite(severity) || severity < 0) {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'system', message: `Severity must be a number ≥ 0, got ${severity}.` })
  }
  return { kind, detail: parsed.data, severity, round: options.round ?? 0 } as PatternEvent
}

const SIGNATURE_LENGTH = 200

/**
 * An error message reduced to its shape, so retries that only tweak arguments count as the same
 * error: hex addresses, short quoted tokens, paths and numbers become placeholders, case and
 * spacing are folded. `"engine='gmail-1'"` and `"engine='gmail-2'"` give the same signature.
 */
export function normaliseErrorSignature(error: string): string {
  return error
    .replace(/0x[0-9a-fA-F]+/g, '<hex>')
    .replace(/(['"`])[^'"`\n]{1,40}\1/g, '<str>')
    .replace(/(^|[\s(=:,[])(?:~|\.{1,2}|[A-Za-z]:)?(?:[\\/][^\s'"`,;:()[\]<>]+)+[\\/]?/g, '$1<path>')
    .replace(/\d+(?:\.\d+)?/g, '<n>')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, SIGNATURE_LENGTH)
}
