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
 * Groups: DMs with one peer whose gaps are at most 30 minutes; a heartbeat's start and end;
 * consecutive runs of one cron task. Groups never span two day files, so one pointer names them.
 */
import { ACTIVITY_LABELS, type ActivityType, eventContent } from '../../core/activity.ts'
import type { ActivityRecord } from '../../storage/contracts.ts'
import { escapeRecalled } from '../engrams/escape-recalled.ts'

/** Content longer than this is cut, with a pointer to its line (the seed's 200 characters). */
export const ACTIVITY_CONTENT_LIMIT = 200
/** DMs with one peer closer than this form one group (the seed's 30 minutes). */
export const DM_GROUP_GAP_MS = 30 * 60_000

export interface ActivityBlock {
  /** The formatted line(s) of this group or event, without a trailing newline. */
  text: string
  /** The log lines it stands for (`activity/<date>.jsonl#L<n>`). */
  refs: string[]
  /** `activity/<date>.jsonl#L<from>-<to>` (or `#L<n>`): where to read it in full. */
  pointer: string
  kind: 'dm' | 'heartbeat' | 'cron' | 'single'
  /** Time of the newest event in the block. */
  latestTs: string
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

/** One event as a single line: `[HH:MM] LABEL who: text`. */
function singleLine(record: ActivityRecord): string {
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
  const text = clip(textOf(record), record.ref)
  const head = `[${hhmm(record.ts)}] ${label}${who ? ` ${escaped(who)}:` : ''}`
  return text === '' ? head.replace(/:$/, '') : `${head} ${text}`
}

/**
 * Fold chronological `records` into blocks (see the file comment). Returned in chronological
 * order; priming keeps the newest blocks that fit its budget.
 */
export function groupActivity(records: readonly ActivityRecord[]): ActivityBlock[] {
  const blocks: ActivityBlock[] = []
  let i = 0
  while (i < records.length) {
    const record = records[i] as ActivityRecord
    const file = fileOf(record.ref)

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

    blocks.push({ text: singleLine(record), refs: [record.ref], pointer: record.ref, kind: 'single', latestTs: record.ts })
    i++
  }
  return blocks
}
