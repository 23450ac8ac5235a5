/** The unified activity log (AnimaWorks): one JSONL timeline of everything that happened. */
import { isRuleKind, ruleWithPolarity } from './engram.ts'

export const ACTIVITY_TYPES = [
  'message_received',
  'response_sent',
  'dm_sent',
  'dm_received',
  'channel_post',
  'channel_read',
  'human_notify',
  'tool_use',
  'heartbeat_start',
  'heartbeat_end',
  'cron_executed',
  'memory_write',
  'error',
  'issue_resolved',
] as const
export type ActivityType = (typeof ACTIVITY_TYPES)[number]

/** ASCII labels: one token each, unlike emoji (the seed measured 2–3). */
export const ACTIVITY_LABELS: Readonly<Record<ActivityType, string>> = {
  message_received: 'MSG<',
  response_sent: 'MSG>',
  dm_sent: 'DM>',
  dm_received: 'DM<',
  channel_post: 'CH.W',
  channel_read: 'CH.R',
  human_notify: 'NTFY',
  tool_use: 'TOOL',
  heartbeat_start: 'HB',
  heartbeat_end: 'HB',
  cron_executed: 'CRON',
  memory_write: 'MEM',
  error: 'ERR',
  issue_resolved: 'RSLV',
}

/** Tool inputs are cut to this many characters in the log… */
export const TOOL_INPUT_LIMIT = 500
/** …and tool results to this many. */
export const TOOL_RESULT_LIMIT = 2000

/** One line of `activity/<YYYY-MM-DD>.jsonl`. Empty fields are omitted when written. */
export interface ActivityEvent {
  ts: string
  type: ActivityType
  content?: string
  summary?: string
  from?: string
  to?: string
  channel?: string
  tool?: string
  via?: string
  session?: string
  meta?: Record<string, unknown>
}

export function isActivityType(value: unknown): value is ActivityType {
  return typeof value === 'string' && (ACTIVITY_TYPES as readonly string[]).includes(value)
}

/**
 * The text of an event as it is shown to the agent (recent-activity priming, recall, episodes):
 * its content, and for a saved rule the rule with its polarity. The encoder logs a memorized
 * never-rule with its bare text and `meta.kind: 'never'`; shown as "MEM Use time.sleep() in
 * scratchpad cells" it would read as the opposite of what was memorized.
 */
export function eventContent(event: Pick<ActivityEvent, 'type' | 'content' | 'meta'>): string | undefined {
  if (event.content === undefined || event.type !== 'memory_write') return event.content
  const kind = event.meta?.kind
  return isRuleKind(kind) ? ruleWithPolarity(kind, event.content) : event.content
}
