/**
 * The lines of a streaming journal (`agents/<agent>/journal/streams/<stream>.jsonl`, one file per
 * stream), one JSON object each, in the order they happened:
 *
 * ```jsonl
 * {"type":"start","ts":"2026-03-01T10:00:00.000Z","trigger":"message","from":"ada","session":"chat-42","turn":17,"stream":"20260301T100000000Z-1f2e3d4c","writer":{"host":"vm","pid":4242,"started":140968,"boot":"a121…","pidns":"pid:[4026531836]"}}
 * {"type":"text","ts":"2026-03-01T10:00:01.000Z","text":"Let me check the deploy log"}
 * {"type":"tool_start","ts":"…","id":"t1","tool":"shell","input":"tail deploy.log"}
 * {"type":"tool_end","ts":"…","id":"t1","tool":"shell","ok":true,"result":"…"}
 * {"type":"done","ts":"…"}
 * ```
 *
 * Journals written before streams had their own files (`journal/streaming.jsonl`) have no `turn`,
 * `stream` or `writer`; they are still read.
 */

/**
 * The process that writes a journal, as another process can check it (docs/decisions/0018):
 * `pid` with the process's start time (`/proc/<pid>/stat` field 22, clock ticks since boot) names
 * one process for the life of a boot even when the pid is reused; `boot` and `pidns` say which
 * boot and which PID namespace (container) the pid belongs to. Fields a system cannot provide
 * (no `/proc`) are left out, and the checks that need them fall back to the file's heartbeat.
 */
export interface JournalWriterIdentity {
  host: string
  pid: number
  started?: number
  boot?: string
  pidns?: string
}

export interface JournalStartEvent {
  type: 'start'
  ts: string
  /** What started the turn: `message`, `heartbeat`, `cron`, `dm`, … */
  trigger: string
  from?: string
  session?: string
  /** The stored id of the user message the streamed reply answers. */
  turn?: number
  /** The stream's id: its file name without `.jsonl`. */
  stream?: string
  writer?: JournalWriterIdentity
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

function parseWriter(value: unknown): JournalWriterIdentity | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const record = value as Record<string, unknown>
  if (typeof record.host !== 'string' || !Number.isSafeInteger(record.pid) || (record.pid as number) <= 0) return undefined
  return {
    host: record.host,
    pid: record.pid as number,
    ...(Number.isSafeInteger(record.started) ? { started: record.started as number } : {}),
    ...(typeof record.boot === 'string' ? { boot: record.boot } : {}),
    ...(typeof record.pidns === 'string' ? { pidns: record.pidns } : {}),
  }
}

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
    case 'start': {
      if (typeof record.trigger !== 'string') return undefined
      // Optional fields of the wrong type are dropped: a writer that does not parse is an unknown
      // writer, not an unreadable line.
      const writer = parseWriter(record.writer)
      return {
        type: 'start',
        ts: record.ts,
        trigger: record.trigger,
        ...(typeof record.from === 'string' ? { from: record.from } : {}),
        ...(typeof record.session === 'string' ? { session: record.session } : {}),
        ...(Number.isSafeInteger(record.turn) ? { turn: record.turn as number } : {}),
        ...(typeof record.stream === 'string' ? { stream: record.stream } : {}),
        ...(writer ? { writer } : {}),
      }
    }
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
