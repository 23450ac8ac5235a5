/**
 * What an orphaned streaming journal says about the turn that was cut off (AnimaWorks'
 * `JournalRecovery`): the text streamed so far, the tool calls with whether each completed, the
 * session it belonged to, and whether it had actually finished (a `done` line, the process died
 * before deleting the file). Lines that do not parse — the last one, cut mid-write by the crash —
 * are skipped and reported.
 */
import type { ParseProblem } from '../../storage/contracts.ts'
import { type JournalWriterIdentity, parseJournalLine } from './journal-events.ts'

export interface RecoveredToolCall {
  id: string
  tool: string
  input?: string
  startedAt: string
  /** True when its `tool_end` was written. */
  completed: boolean
  ok?: boolean
  result?: string
  endedAt?: string
}

export interface JournalRecovery {
  /** Every `text` chunk, concatenated in order. */
  text: string
  toolCalls: RecoveredToolCall[]
  /** From the `start` line; undefined when that line itself was lost. */
  session: { trigger: string; from?: string; sessionId?: string; startedAt: string } | undefined
  /** The stored id of the user message the reply answered (journals since 0018). */
  turn?: number
  /** Who wrote it (journals since 0018). */
  writer?: JournalWriterIdentity
  /** A `done` line was written: the turn completed and only the clean-up was lost. */
  finished: boolean
  /** Time of the last readable line. */
  lastEventAt: string | undefined
  /** Lines that could not be read (kept in the archived copy). */
  skipped: ParseProblem[]
}

/** Reads a journal's text. `file` names it in the reported problems. */
export function readJournal(text: string, file: string): JournalRecovery {
  const recovery: JournalRecovery = { text: '', toolCalls: [], session: undefined, finished: false, lastEventAt: undefined, skipped: [] }
  const chunks: string[] = []
  const calls = new Map<string, RecoveredToolCall>()
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return
    const event = parseJournalLine(line)
    if (!event) {
      recovery.skipped.push({ file, line: index + 1, text: line.length > 200 ? `${line.slice(0, 200)}…` : line, reason: 'not a journal event (probably cut off by a crash)' })
      return
    }
    recovery.lastEventAt = event.ts
    switch (event.type) {
      case 'start':
        recovery.session = { trigger: event.trigger, ...(event.from ? { from: event.from } : {}), ...(event.session ? { sessionId: event.session } : {}), startedAt: event.ts }
        if (event.turn !== undefined) recovery.turn = event.turn
        if (event.writer) recovery.writer = event.writer
        break
      case 'text':
        chunks.push(event.text)
        break
      case 'tool_start': {
        const call: RecoveredToolCall = { id: event.id, tool: event.tool, startedAt: event.ts, completed: false, ...(event.input !== undefined ? { input: event.input } : {}) }
        calls.set(event.id, call)
        recovery.toolCalls.push(call)
        break
      }
      case 'tool_end': {
        let call = calls.get(event.id)
        if (!call) {
          // Its start line was the broken one: keep what the end says.
          call = { id: event.id, tool: event.tool ?? 'unknown', startedAt: event.ts, completed: false }
          calls.set(event.id, call)
          recovery.toolCalls.push(call)
        }
        call.completed = true
        call.ok = event.ok
        call.endedAt = event.ts
        if (event.result !== undefined) call.result = event.result
        break
      }
      case 'done':
        recovery.finished = true
        break
    }
  })
  recovery.text = chunks.join('')
  return recovery
}
