/**
 * The lines of the streaming journal (`agents/<agent>/journal/streaming.jsonl`), one JSON object
 * each, in the order they happened:
 *
 * ```jsonl
 * {"type":"start","ts":"2026-03-01T10:00:00.000Z","trigger":"message","from":"ada","session":"chat-42"}
 * {"type":"text","ts":"2026-03-01T10:00:01.000Z","text":"Let me check the deploy log"}
 * {"type":"tool_start","ts":"…","id":"t1","tool":"shell","input":"tail deploy.log"}
 * {"type":"tool_end","ts":"…","id":"t1","tool":"shell","ok":true,"result":"…"}
 * {"type":"done","ts":"…"}
 * ```
 */

export interface JournalStartEvent {
  type: 'start'
  ts: string
  /** What started the turn: `message`, `heartbeat`, `cron`, `dm`, … */
  trigger: string
  from?: string
  session?: string
}
export interface JournalTextEvent {
  type: 'text'
  ts: string
  text: string
}
export interface JournalToolStartEvent {
  type: 'tool_start'
  ts: string
  id: string
  tool: string
  input?: string
}
export interface JournalToolEndEvent {
  type: 'tool_end'
  ts: string
  id: string
  tool?: string
  ok: boolean
  result?: string
}
export interface JournalDoneEvent {
  type: 'done'
  ts: string
}

export type JournalEvent = JournalStartEvent | JournalTextEvent | JournalToolStartEvent | JournalToolEndEvent | JournalDoneEvent

/** Parses one journal line; undefined when it is not a journal event (a line cut by a crash). */
export function parseJournalLine(line: string): JournalEvent | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const record = value as Record<string, unknown>
  if (typeof record.ts !== 'string') return undefined
  switch (record.type) {
    case 'start':
      return typeof record.trigger === 'string' ? (record as unknown as JournalStartEvent) : undefined
    case 'text':
      return typeof record.text === 'string' ? (record as unknown as JournalTextEvent) : undefined
    case 'tool_start':
      return typeof record.id === 'string' && typeof record.tool === 'string' ? (record as unknown as JournalToolStartEvent) : undefined
    case 'tool_end':
      return typeof record.id === 'string' && typeof record.ok === 'boolean' ? (record as unknown as JournalToolEndEvent) : undefined
    case 'done':
      return record as unknown as JournalDoneEvent
    default:
      return undefined
  }
}
