/**
 * Whether the session bore out a procedure (or skill) that priming showed — decision 0047. Pure:
 * the same log gives the same answer, offline, without a model.
 *
 * A procedure shown in turn N is **followed** when, in turn N or the turn after it (the user's next
 * message, the agent's calls and replies up to the end of that turn):
 *
 * - the agent opened it: `read_memory_file` on its file, `recall_skill` with its label, or
 *   `report_procedure_outcome` naming it; or
 * - what was done carries a specific part of it: its name, or one of its steps. A part is borne out
 *   when at least two of its content words, and at least half of them, appear in the agent's tool
 *   calls (name and input; engram's own memory tools excepted: looking something up is not doing
 *   it), its replies, or the user's next message. One shared word is what any two texts of a
 *   domain have in common ("deploy", "new", "check"); two words of one step are that step.
 *
 * The message the procedure was shown for is no evidence: it is why it was shown, not what came of it.
 */
import type { ActivityRecord } from '../../storage/contracts.ts'
import { compareRecords } from '../episodes/session-events.ts'
import { contentWords } from './matching.ts'

/** One turn of a session as the log has it: the user's message, then what the agent did until the next. */
export interface LoggedTurn {
  number: number
  message: string
  calls: Array<{ tool: string; input: string }>
  replies: string[]
}

/** What was shown: the procedure's or skill's name and text (its steps). */
export interface ShownText {
  kind: 'procedure' | 'skill'
  /** The procedure's slug or the skill's label. */
  name: string
  text: string
}

const READ_TOOL = 'read_memory_file'
const RECALL_SKILL_TOOL = 'recall_skill'
const REPORT_OUTCOME_TOOL = 'report_procedure_outcome'

/**
 * The numbered turns of `sessionId` in `records`: each `message_received` logged with its turn
 * number opens one; tool calls and replies after it are its own. A tool call logged with the number
 * of a turn without a message (an MCP client's calls, decision 0045) opens that turn, with no
 * message. Records of other sessions, and messages logged without a number, open nothing.
 */
export function loggedTurns(records: readonly ActivityRecord[], sessionId: string): LoggedTurn[] {
  const events = records
    .filter((record) => record.session === sessionId && (record.type === 'message_received' || record.type === 'tool_use' || record.type === 'response_sent'))
    .sort(compareRecords)
  const turns: LoggedTurn[] = []
  let current: LoggedTurn | undefined
  for (const event of events) {
    if (event.type === 'message_received') {
      const number = event.meta?.turn
      current = typeof number === 'number' && Number.isInteger(number) && number > 0 ? { number, message: event.content ?? '', calls: [], replies: [] } : undefined
      if (current) turns.push(current)
    } else if (event.type === 'tool_use') {
      const number = event.meta?.turn
      if (typeof number === 'number' && Number.isInteger(number) && number > 0 && current?.number !== number) {
        current = { number, message: '', calls: [], replies: [] }
        turns.push(current)
      }
      current?.calls.push({ tool: event.tool ?? '', input: typeof event.meta?.input === 'string' ? event.meta.input : '' })
    } else if (event.content) {
      current?.replies.push(event.content)
    }
  }
  return turns
}

/** The value of `field` in a logged tool input (JSON, possibly cut at 500 characters). */
function inputField(input: string, field: string): string | undefined {
  const match = new RegExp(`"${field}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(input)
  if (!match) return undefined
  try {
    return (JSON.parse(`"${match[1]}"`) as string).trim()
  } catch {
    return undefined
  }
}

/** The agent opened `shown` by name in one of `calls`: the tool that did, else undefined. */
function openedBy(shown: ShownText, calls: LoggedTurn['calls']): string | undefined {
  const name = shown.name.toLowerCase()
  for (const call of calls) {
    if (call.tool === READ_TOOL && shown.kind === 'procedure') {
      const path = inputField(call.input, 'path')?.toLowerCase().split('#')[0]
      if (path !== undefined && (path === `procedures/${name}.md` || path.endsWith(`/procedures/${name}.md`))) return READ_TOOL
    }
    if (call.tool === RECALL_SKILL_TOOL && shown.kind === 'skill' && inputField(call.input, 'label')?.toLowerCase() === name) return RECALL_SKILL_TOOL
    if (call.tool === REPORT_OUTCOME_TOOL && shown.kind === 'procedure' && inputField(call.input, 'procedure')?.toLowerCase() === name) return REPORT_OUTCOME_TOOL
  }
  return undefined
}

/** The parts of a procedure that can be borne out: its name (with its title) and each step. */
function partsOf(shown: ShownText): Array<{ label: string; words: Set<string> }> {
  const lines = shown.text.split('\n').map((line) => line.trim())
  const title = lines.find((line) => /^#{1,6}\s/.test(line))?.replace(/^#+\s*/, '') ?? ''
  const parts = [{ label: 'its name', words: contentWords(`${shown.name.replace(/[-_]+/g, ' ')} ${title}`) }]
  for (const line of lines) {
    if (line === '' || /^#{1,6}\s/.test(line) || line === '---') continue
    parts.push({ label: `the step "${line.replace(/^(?:[-*+]|\d+[.)])\s+/, '').slice(0, 60)}"`, words: contentWords(line) })
  }
  return parts
}

/** Two words of a part, and half of it, in what was done (see the module comment). */
function bornOut(words: Set<string>, done: Set<string>): string[] | undefined {
  const found = [...words].filter((word) => done.has(word))
  return found.length >= 2 && found.length * 2 >= words.size ? found : undefined
}

/**
 * Why the session followed `shown`, shown in `turn` — from that turn and, when given, the next —
 * or undefined when nothing bears it out. Tools in `ignoredTools` (engram's memory tools) count
 * only as opening it by name.
 */
export function followedBecause(shown: ShownText, turn: LoggedTurn, next: LoggedTurn | undefined, ignoredTools: ReadonlySet<string>): string | undefined {
  const calls = [...turn.calls, ...(next?.calls ?? [])]
  const opened = openedBy(shown, calls)
  if (opened !== undefined) return `the agent called ${opened} on it`
  const done = [
    ...calls.filter((call) => !ignoredTools.has(call.tool)).map((call) => `${call.tool.replace(/[-_]+/g, ' ')} ${call.input}`),
    ...turn.replies,
    ...(next ? [next.message, ...next.replies] : []),
  ]
  if (done.length === 0) return undefined
  const doneWords = contentWords(done.join('\n'))
  for (const part of partsOf(shown)) {
    const found = bornOut(part.words, doneWords)
    if (found) return `what followed carries ${part.label} (${found.join(', ')})`
  }
  return undefined
}
