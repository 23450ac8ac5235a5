/**
 * Recent activity for priming (channel B), in the seed's compact format: one ASCII label per
 * event (one token each, where emoji cost two or three), runs of related events folded into one
 * group line, and a pointer to the source log wherever text was cut, so the agent can read the
 * whole record with `read_memory_file` when it needs it.
 *
 *   [09:12] MSG< ada: can we move the demo to Friday?
 *   [09:30-09:41] DM bob: backups of the staging database (3) -> activity/2026-03-04.jsonl#L3-7
 *   [10:00-10:01] HB: nothing to do
 *   [02:00] CRON nightly-backup: exit=0
 *
 * Groups: DMs with one peer whose gaps are at most 30 minutes; a stretch of one session (its
 * messages and tool calls) with the same gaps, each tool's calls one line in it; a heartbeat's
 * start and end; consecutive runs of one cron task. Groups never span two day files, so one pointer names
 * them. A line says what was done, to what, with what result (a tool call: its input and outcome);
 * an event with nothing to say (no text, no input, no result) is not primed at all.
 *
 *   [10:02-10:07] TOOL run_sql x5, 1 failed: select count(*) from invoices; … | last: ok: 1204 (-> activity/2026-03-04.jsonl#L3-12)
 */
import { ACTIVITY_LABELS, type ActivityType, eventContent } from '../../core/activity.ts'
import type { ActivityRecord } from '../../storage/contracts.ts'
import { escapeRecalled } from '../engrams/escape-recalled.ts'

/** Content longer than this is cut, with a pointer to its line (the seed's 200 characters). */
export const ACTIVITY_CONTENT_LIMIT = 200
/** A tool call's input and result are cut shorter: what was done and how it ended, not the whole payload. */
const TOOL_PART_LIMIT = 100
/** A conversation group shows its first and last messages, at most this many, and points at the rest. */
const CONVERSATION_SHOWN = 6
/** A tool group names at most this many distinct inputs. */
const TOOL_INPUTS_SHOWN = 3
/** DMs with one peer closer than this form one group (the seed's 30 minutes). */
export const DM_GROUP_GAP_MS = 30 * 60_000

export interface ActivityBlock {
  /** The formatted line(s) of this group or event, without a trailing newline. */
  text: string
  /** The log lines it stands for (`activity/<date>.jsonl#L<n>`). */
  refs: string[]
  /** `activity/<date>.jsonl#L<from>-<to>` (or `#L<n>`): where to read it in full. */
  pointer: string
  kind: 'dm' | 'conversation' | 'session' | 'tools' | 'heartbeat' | 'cron' | 'single'
  /** Time of the newest event in the block. */
  latestTs: string
  /**
   * A shorter text of the same block (a session's stretch: its header, the last message, one line
   * per tool without inputs), for when `text` alone would not fit the channel's share: the
   * stretch is then still said, in less detail, instead of not at all.
   */
  compact?: string
}

/**
 * Priming formats the same events turn after turn (the last hours of the log): what formatting an
 * event derives from its strings alone is remembered, by those strings, up to this many entries
 * per kind (then forgotten at once and built up again).
 */
const FORMAT_MEMO_LIMIT = 4_096

function memoised<T>(compute: (key: string) => T): (key: string) => T {
  const known = new Map<string, T>()
  return (key) => {
    let value = known.get(key)
    if (value === undefined) {
      value = compute(key)
      if (known.size >= FORMAT_MEMO_LIMIT) known.clear()
      known.set(key, value)
    }
    return value
  }
}

/** `HH:MM` (UTC, like the day files) of an ISO instant. */
const hhmm = memoised((ts: string): string => {
  const date = new Date(ts)
  return Number.isNaN(date.getTime()) ? '??:??' : date.toISOString().slice(11, 16)
})

const escapedShort = memoised(escapeRecalled)
/** escapeRecalled, remembered for texts up to a few hundred characters (what the log mostly holds). */
const escaped = (text: string): string => (text.length <= 2 * ACTIVITY_CONTENT_LIMIT ? escapedShort(text) : escapeRecalled(text))

function fileOf(ref: string): string {
  return ref.split('#L')[0] ?? ref
}

function lineOf(ref: string): number {
  return Number(ref.split('#L')[1] ?? 0)
}

/** A pointer covering `refs` (all in one file): `file#L3` or `file#L3-7`. */
export function pointerFor(refs: readonly string[]): string {
  const first = refs[0] ?? ''
  const lines = refs.map(lineOf)
  const from = Math.min(...lines)
  const to = Math.max(...lines)
  return from === to ? `${fileOf(first)}#L${from}` : `${fileOf(first)}#L${from}-${to}`
}

/** Text cut to the seed's limit, escaped, with a pointer to `ref` when it was cut. */
function clip(text: string, ref: string, limit = ACTIVITY_CONTENT_LIMIT): string {
  const flat = escaped(text)
  if (flat.length <= limit) return flat
  return `${flat.slice(0, limit).trimEnd()}… (-> ${ref})`
}

const isDm = (type: ActivityType): boolean => type === 'dm_sent' || type === 'dm_received'
const peerOf = (record: ActivityRecord): string => (record.type === 'dm_sent' ? record.to : record.from) ?? '?'
const taskOf = (record: ActivityRecord): string => {
  const task = record.meta?.task_name ?? record.meta?.task
  return typeof task === 'string' && task !== '' ? task : (record.summary ?? record.content ?? 'task')
}
const textOf = (record: ActivityRecord): string => eventContent(record) ?? record.summary ?? ''
const isMessage = (type: ActivityType): boolean => type === 'message_received' || type === 'response_sent'
const speakerOf = (record: ActivityRecord): string => (record.type === 'message_received' ? record.from : record.to) ?? ''

/** A logged tool input as a short readable phrase: `{"query":"x","limit":3}` → `query=x, limit=3`. */
function inputPhrase(input: unknown): string {
  if (typeof input !== 'string' || input.trim() === '') return ''
  try {
    const value: unknown = JSON.parse(input)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined && v !== null && v !== '')
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(', ')
    }
    return typeof value === 'string' ? value : input
  } catch {
    return input
  }
}

/** What a tool call was given: the logged content or summary, else its input. */
function toolInput(record: ActivityRecord): string {
  return (record.content ?? record.summary ?? inputPhrase(record.meta?.input)).replace(/\s+/g, ' ').trim()
}

/** How a tool call ended: `ok: <first words of the result>`, `failed: <…>`, or '' when the log does not say. */
function toolOutcome(record: ActivityRecord): string {
  const result = typeof record.meta?.result === 'string' ? record.meta.result.replace(/\s+/g, ' ').trim() : ''
  const status = record.meta?.ok === false ? 'failed' : record.meta?.ok === true || result !== '' ? 'ok' : ''
  if (status === '') return ''
  return result === '' ? status : `${status}: ${result}`
}

/**
 * What a tool call was given and how it ended, neither escaped nor cut: `path=x -> failed: …`. For
 * readers other than priming that show the log to a model (the skill drafter): a call logged
 * without content is still its input, as priming shows it.
 */
export function describeToolCall(record: ActivityRecord): string {
  const outcome = toolOutcome(record)
  return [toolInput(record), outcome === '' ? '' : `-> ${outcome}`].filter((part) => part !== '').join(' ')
}

/** A part of a tool call's line, escaped and cut short; `cut` says whether the pointer is needed. */
function toolPart(text: string, limit = TOOL_PART_LIMIT): { text: string; cut: boolean } {
  const flat = escaped(text)
  return flat.length <= limit ? { text: flat, cut: false } : { text: `${flat.slice(0, limit).trimEnd()}…`, cut: true }
}

/** A tool call's line text, escaped: `<input> -> <outcome>`, with a pointer to `ref` when a part was cut. */
function toolText(record: ActivityRecord, ref: string): string {
  const input = toolPart(toolInput(record))
  const outcome = toolPart(toolOutcome(record))
  const text = [input.text, outcome.text === '' ? '' : `-> ${outcome.text}`].filter((part) => part !== '').join(' ')
  return input.cut || outcome.cut ? `${text} (-> ${ref})` : text
}

/** One event as a single line: `[HH:MM] LABEL who: text`. */
function singleLine(record: ActivityRecord): string | undefined {
  const label = ACTIVITY_LABELS[record.type]
  const who =
    record.type === 'message_received' || record.type === 'dm_received'
      ? record.from
      : record.type === 'response_sent' || record.type === 'dm_sent'
        ? record.to
        : record.type === 'tool_use'
          ? record.tool
          : record.type === 'channel_post' || record.type === 'channel_read'
            ? record.channel
            : undefined
  const text = record.type === 'tool_use' ? toolText(record, record.ref) : clip(textOf(record), record.ref)
  // A label and a name say that something happened, not what: such a line is not worth its tokens.
  if (text === '') return undefined
  return `[${hhmm(record.ts)}] ${label}${who ? ` ${escaped(who)}:` : ''} ${text}`
}

/** The run of records from `i` that `belongs` admits, in one day file (so one pointer names it). */
function runFrom(records: readonly ActivityRecord[], i: number, belongs: (next: ActivityRecord, last: ActivityRecord) => boolean): ActivityRecord[] {
  const first = records[i] as ActivityRecord
  const run = [first]
  while (i + run.length < records.length) {
    const next = records[i + run.length] as ActivityRecord
    if (fileOf(next.ref) !== fileOf(first.ref) || !belongs(next, run[run.length - 1] as ActivityRecord)) break
    run.push(next)
  }
  return run
}

const within = (gapMs: number) => (next: ActivityRecord, last: ActivityRecord): boolean => Date.parse(next.ts) - Date.parse(last.ts) <= gapMs

/** `[HH:MM]` or `[HH:MM-HH:MM]` for a run. */
function span(run: readonly ActivityRecord[]): string {
  const first = hhmm((run[0] as ActivityRecord).ts)
  const last = hhmm((run[run.length - 1] as ActivityRecord).ts)
  return first === last && run.length === 1 ? `[${first}]` : `[${first}-${last}]`
}

/** A stretch of one session's messages and tool calls: what `sessionBlocks` folds into one block. */
const inSession = (type: ActivityType): boolean => isMessage(type) || type === 'tool_use'

/** Tool calls by tool, in the order each was first called; calls with nothing logged but the tool's name are left out. */
function callsByTool(records: readonly ActivityRecord[]): Map<string, ActivityRecord[]> {
  const byTool = new Map<string, ActivityRecord[]>()
  for (const record of records) {
    if (record.type !== 'tool_use' || (toolInput(record) === '' && toolOutcome(record) === '')) continue
    const tool = record.tool ?? '?'
    byTool.set(tool, [...(byTool.get(tool) ?? []), record])
  }
  return byTool
}

/**
 * The calls of one tool as one line: `TOOL run_sql x5, 1 failed: <inputs> | last: <outcome>` (one
 * call: its own line's text). `brief` leaves the inputs out and cuts the outcome shorter.
 */
function toolSummary(tool: string, calls: readonly ActivityRecord[], brief = false): string {
  const last = calls[calls.length - 1] as ActivityRecord
  const failed = calls.filter((r) => r.meta?.ok === false).length
  if (brief) {
    const outcome = toolPart(toolOutcome(last), TOOL_PART_LIMIT / 2).text
    return `${span(calls)} TOOL ${escaped(tool)}${calls.length > 1 ? ` x${calls.length}` : ''}${failed > 0 ? `, ${failed} failed` : ''}${outcome !== '' ? ` | last: ${outcome}` : ''}`
  }
  if (calls.length === 1) return `[${hhmm(last.ts)}] TOOL ${escaped(tool)}: ${toolText(last, last.ref)}`
  const inputs = [...new Set(calls.map(toolInput).filter((input) => input !== ''))]
  // Beside other lines of a block, each input is cut shorter than a call's own line would cut it.
  const named = inputs.slice(0, TOOL_INPUTS_SHOWN).map((input) => toolPart(input, TOOL_PART_LIMIT * 0.6).text)
  const more = inputs.length > TOOL_INPUTS_SHOWN ? `; +${inputs.length - TOOL_INPUTS_SHOWN} more` : ''
  const outcome = toolPart(toolOutcome(last)).text
  const parts = [`${span(calls)} TOOL ${escaped(tool)} x${calls.length}${failed > 0 ? `, ${failed} failed` : ''}:`, named.length > 0 ? `${named.join('; ')}${more}` : '', outcome !== '' ? `| last: ${outcome}` : '']
  return parts.filter((part) => part !== '').join(' ')
}

/**
 * A stretch of one session — its messages and tool calls, no gap over 30 minutes — as few blocks
 * as say what happened: one event as its own line; the calls of one tool as one line; otherwise
 * one block with the first and last messages and one line per tool (its count, failures, inputs
 * and last outcome), and a pointer to the whole stretch. Repeats cost one line, not one each.
 */
function sessionBlocks(run: readonly ActivityRecord[]): ActivityBlock[] {
  const messages = run.filter((r) => isMessage(r.type) && textOf(r).trim() !== '')
  const tools = callsByTool(run)
  const calls = [...tools.values()].reduce((sum, list) => sum + list.length, 0)
  const kept = run.filter((r) => messages.includes(r) || [...tools.values()].some((list) => list.includes(r)))
  const last = kept[kept.length - 1]
  if (last === undefined) return []
  const refs = kept.map((r) => r.ref)
  const pointer = pointerFor(refs)
  if (kept.length === 1) {
    const text = singleLine(last)
    return text === undefined ? [] : [{ text, refs, pointer, kind: 'single', latestTs: last.ts }]
  }
  if (messages.length === 0 && tools.size === 1) {
    const [tool, list] = [...tools][0] as [string, ActivityRecord[]]
    return [{ text: `${toolSummary(tool, list)} (-> ${pointer})`, refs, pointer, kind: 'tools', latestTs: last.ts }]
  }
  // With tool lines beside them, messages are cut shorter and fewer are shown: the block must fit a channel's share.
  const shownMessages = tools.size > 0 ? CONVERSATION_SHOWN - 2 : CONVERSATION_SHOWN
  const limit = tools.size > 0 ? ACTIVITY_CONTENT_LIMIT / 2 : ACTIVITY_CONTENT_LIMIT
  const line = (r: ActivityRecord): string => `  [${hhmm(r.ts)}] ${ACTIVITY_LABELS[r.type]} ${clip(textOf(r), r.ref, limit)}`
  const head = Math.ceil(shownMessages / 3)
  const said =
    messages.length <= shownMessages
      ? messages.map(line)
      : [...messages.slice(0, head).map(line), `  … ${messages.length - shownMessages} more`, ...messages.slice(messages.length - (shownMessages - head)).map(line)]
  const people = [...new Set(messages.map(speakerOf).filter((name) => name !== ''))]
  const who = people.length > 0 ? ` ${people.map(escaped).join(', ')}` : ''
  const first = kept[0] as ActivityRecord
  const session = first.session ? `${who === '' ? ' ' : ', '}session ${escaped(first.session)}` : ''
  const count = tools.size === 0 ? `${messages.length}` : messages.length === 0 ? `${calls} tool calls` : `${messages.length} messages, ${calls} tool calls`
  const label = messages.length > 0 ? 'MSG' : 'TOOL'
  const toolLines = [...tools].map(([tool, list]) => `  ${toolSummary(tool, list)}`)
  const header = `${span(kept)} ${label}${who}${session} (${count}):`
  const lastSaid = messages[messages.length - 1]
  const compact = [header, ...(lastSaid ? [`  [${hhmm(lastSaid.ts)}] ${ACTIVITY_LABELS[lastSaid.type]} ${clip(textOf(lastSaid), lastSaid.ref, ACTIVITY_CONTENT_LIMIT / 2)}`] : []), ...[...tools].map(([tool, list]) => `  ${toolSummary(tool, list, true)}`), `  -> ${pointer}`]
  return [
    {
      text: [header, ...said, ...toolLines, `  -> ${pointer}`].join('\n'),
      compact: compact.join('\n'),
      refs,
      pointer,
      kind: tools.size === 0 ? 'conversation' : 'session',
      latestTs: last.ts,
    },
  ]
}

// A block's line without its time: `[09:00] ` or `[09:00-09:05] `.
const LEADING_SPAN = /^\[\d\d:\d\d(?:-\d\d:\d\d)?\] /

/**
 * One-line blocks that say the same thing at different times (a heartbeat with nothing to do, a
 * reminder, a poll between other events) as one line: the newest, with how many times and since
 * when, standing for all of their log lines. The same line said again adds no evidence, only tokens.
 */
function foldRepeats(blocks: readonly ActivityBlock[]): ActivityBlock[] {
  const said = (block: ActivityBlock): string | undefined => (block.text.includes('\n') ? undefined : block.text.replace(LEADING_SPAN, ''))
  const byText = new Map<string, ActivityBlock[]>()
  for (const block of blocks) {
    const key = said(block)
    if (key !== undefined) byText.set(key, [...(byText.get(key) ?? []), block])
  }
  const out: ActivityBlock[] = []
  for (const block of blocks) {
    const key = said(block)
    const same = key === undefined ? undefined : byText.get(key)
    if (same === undefined || same.length === 1) {
      out.push(block)
      continue
    }
    // Only the newest stands for them all.
    if (same[same.length - 1] !== block) continue
    const first = same[0] as ActivityBlock
    const since = LEADING_SPAN.exec(first.text)?.[0].slice(1, 6) ?? ''
    const refs = same.flatMap((b) => b.refs)
    out.push({ ...block, text: `${block.text} (x${same.length}${since === '' ? '' : ` since ${since}`})`, refs })
  }
  return out
}

/**
 * Fold chronological `records` into blocks (see the file comment), the same line said at several
 * times into one. Returned in chronological order; priming keeps the newest blocks that fit its budget.
 */
export function groupActivity(records: readonly ActivityRecord[]): ActivityBlock[] {
  const blocks: ActivityBlock[] = []
  let i = 0
  while (i < records.length) {
    const record = records[i] as ActivityRecord
    const file = fileOf(record.ref)

    if (inSession(record.type)) {
      const run = runFrom(records, i, (next, last) => inSession(next.type) && next.session === record.session && within(DM_GROUP_GAP_MS)(next, last))
      blocks.push(...sessionBlocks(run))
      i += run.length
      continue
    }

    if (isDm(record.type)) {
      const peer = peerOf(record)
      const run = [record]
      while (i + run.length < records.length) {
        const next = records[i + run.length] as ActivityRecord
        const last = run[run.length - 1] as ActivityRecord
        if (!isDm(next.type) || peerOf(next) !== peer || fileOf(next.ref) !== file) break
        if (Date.parse(next.ts) - Date.parse(last.ts) > DM_GROUP_GAP_MS) break
        run.push(next)
      }
      if (run.length > 1) {
        const refs = run.map((r) => r.ref)
        const pointer = pointerFor(refs)
        const first = run[0] as ActivityRecord
        const last = run[run.length - 1] as ActivityRecord
        const topic = clip(textOf(first), first.ref, 80)
        const children = run.map((r) => `  [${hhmm(r.ts)}] ${ACTIVITY_LABELS[r.type]} ${clip(textOf(r), r.ref)}`)
        blocks.push({
          text: [`[${hhmm(first.ts)}-${hhmm(last.ts)}] DM ${escaped(peer)}: ${topic} (${run.length})`, ...children, `  -> ${pointer}`].join('\n'),
          refs,
          pointer,
          kind: 'dm',
          latestTs: last.ts,
        })
        i += run.length
        continue
      }
    }

    if (record.type === 'heartbeat_start') {
      const end = records[i + 1]
      if (end && end.type === 'heartbeat_end' && fileOf(end.ref) === file) {
        const refs = [record.ref, end.ref]
        const pointer = pointerFor(refs)
        const summary = clip(end.summary ?? end.content ?? record.summary ?? '', end.ref)
        blocks.push({ text: `[${hhmm(record.ts)}-${hhmm(end.ts)}] HB: ${summary || 'done'}`, refs, pointer, kind: 'heartbeat', latestTs: end.ts })
        i += 2
        continue
      }
    }

    if (record.type === 'cron_executed') {
      const task = taskOf(record)
      const run = [record]
      while (i + run.length < records.length) {
        const next = records[i + run.length] as ActivityRecord
        if (next.type !== 'cron_executed' || taskOf(next) !== task || fileOf(next.ref) !== file) break
        run.push(next)
      }
      const refs = run.map((r) => r.ref)
      const pointer = pointerFor(refs)
      const first = run[0] as ActivityRecord
      const last = run[run.length - 1] as ActivityRecord
      const exit = last.meta?.exit_code
      const when = run.length > 1 ? `[${hhmm(first.ts)}-${hhmm(last.ts)}]` : `[${hhmm(first.ts)}]`
      const times = run.length > 1 ? ` x${run.length}` : ''
      const detail = exit !== undefined ? `exit=${escaped(String(exit))}` : clip(last.summary ?? 'ran', last.ref)
      blocks.push({
        text: `${when} CRON ${escaped(task)}${times}: ${detail}${run.length > 1 ? ` -> ${pointer}` : ''}`,
        refs,
        pointer,
        kind: 'cron',
        latestTs: last.ts,
      })
      i += run.length
      continue
    }

    const text = singleLine(record)
    if (text !== undefined) blocks.push({ text, refs: [record.ref], pointer: record.ref, kind: 'single', latestTs: record.ts })
    i++
  }
  return foldRepeats(blocks)
}
