/**
 * Summaries of a stretch of a session for the episode file: by the LLM (fast tier, structured),
 * or — offline or when the call fails — extractively from the events themselves, marked as such so
 * nothing downstream mistakes it for a real summary.
 */
import { z } from 'zod'
import { ACTIVITY_LABELS, eventContent } from '../../core/activity.ts'
import { describeError } from '../../core/errors.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { ActivityRecord } from '../../storage/contracts.ts'
import { type EpisodeMethod, extractiveNotice } from './episode-format.ts'

export interface EpisodeSummary {
  title: string
  body: string
  /** Problems or tasks that were finished in this stretch. */
  resolved: string[]
  /** Work that is still to do, as stated or agreed in this stretch. */
  tasks: string[]
  method: EpisodeMethod
  /** Why the extractive path was taken (`llm not configured`, the error of a failed call). */
  fallback?: string
  /** Extractive only: whether explicit TODO/done markers were found (else the state is left alone). */
  markersFound?: boolean
}

export const episodeSummarySchema = z.object({
  title: z.string().describe('A short title of what happened (at most 8 words), in the language of the conversation.'),
  summary: z
    .string()
    .describe('What happened, in 2-6 sentences, in the past tense: what was asked, what was done, what was found or decided. Concrete names, numbers and outcomes; no filler.'),
  resolved: z.array(z.string()).describe('Problems, questions or tasks that were finished or fixed in this conversation; one short phrase each. Empty when none.'),
  newTasks: z.array(z.string()).describe('Tasks that remain to be done, as stated or agreed in this conversation; one short imperative phrase each. Empty when none.'),
})

const SYSTEM = `You write the episodic memory of an AI agent: a faithful record of a stretch of its activity log.
Summarise only what the log shows; do not invent outcomes. Write as the agent's own notes.`

/** Longest transcript sent to the LLM; older events are cut first because the end holds the outcome. */
const TRANSCRIPT_LIMIT = 24_000
const EVENT_TEXT_LIMIT = 600

/** One line per event with the seed's ASCII labels, for the LLM and the extractive body. */
export function formatEventLine(event: ActivityRecord, limit = EVENT_TEXT_LIMIT): string {
  const time = event.ts.slice(11, 16)
  const label = ACTIVITY_LABELS[event.type]
  const who = event.from ? ` ${event.from}:` : event.to ? ` to ${event.to}:` : event.tool ? ` ${event.tool}` : ''
  const parts: string[] = []
  const content = eventContent(event)
  if (content) parts.push(content)
  if (event.summary) parts.push(event.summary)
  if (event.type === 'tool_use') {
    if (typeof event.meta?.input === 'string') parts.push(`input: ${event.meta.input}`)
    if (typeof event.meta?.result === 'string') parts.push(`result: ${event.meta.result}`)
    if (event.meta?.ok === false) parts.push('(failed)')
  }
  if (event.type === 'cron_executed' && typeof event.meta?.task_name === 'string') parts.unshift(String(event.meta.task_name))
  // Folded from a bounded start: a 10 MB message is cut before its whitespace is, not after.
  const joined = parts.join(' | ')
  const text = (joined.length > limit * 4 ? joined.slice(0, limit * 4) : joined).replace(/\s+/g, ' ').trim()
  const cut = text.length > limit || joined.length > limit * 4
  return `[${time}] ${label}${who} ${cut ? `${text.slice(0, limit - 1)}…` : text}`.trimEnd()
}

function transcript(events: ActivityRecord[]): string {
  const lines = events.map((event) => formatEventLine(event))
  let total = lines.reduce((sum, line) => sum + line.length + 1, 0)
  let start = 0
  while (total > TRANSCRIPT_LIMIT && start < lines.length - 1) {
    total -= (lines[start]?.length ?? 0) + 1
    start++
  }
  return (start > 0 ? `[… ${start} earlier events omitted]\n` : '') + lines.slice(start).join('\n')
}

const TODO_LINE = /^\s*(?:[-*]\s*)?(?:\[ \]\s*)?(?:TODO|To-?do)\s*[:：]\s*(.+?)\s*$/i
const DONE_LINE = /^\s*(?:[-*]\s*)?(?:\[x\]\s*)?(?:DONE|RESOLVED|FIXED)\s*[:：]\s*(.+?)\s*$/i

/** Explicit `TODO:` and `done:` / `resolved:` / `fixed:` lines in the events' text. */
export function explicitMarkers(events: ActivityRecord[]): { resolved: string[]; tasks: string[] } {
  const resolved: string[] = []
  const tasks: string[] = []
  for (const event of events) {
    if (event.type === 'tool_use' || event.type === 'error') continue
    for (const line of `${event.content ?? ''}\n${event.summary ?? ''}`.split('\n')) {
      const todo = TODO_LINE.exec(line)?.[1]
      const done = DONE_LINE.exec(line)?.[1]
      if (todo && !tasks.includes(todo)) tasks.push(todo)
      if (done && !resolved.includes(done)) resolved.push(done)
    }
  }
  return { resolved, tasks }
}

/** A summary made only of the events' own words: the first request, the last answer, tools and errors. */
export function extractiveSummary(events: ActivityRecord[], fallback: string): EpisodeSummary {
  const firstAsk = events.find((event) => event.type === 'message_received' || event.type === 'dm_received')
  const opener = firstAsk ?? events.find((event) => event.type === 'heartbeat_start' || event.type === 'cron_executed') ?? events[0]
  const titleSource = opener?.content ?? opener?.summary ?? (typeof opener?.meta?.task_name === 'string' ? opener.meta.task_name : undefined) ?? 'Session'
  const title = titleSource.split('\n')[0] ?? 'Session'
  const key = events.filter((event) => event.type !== 'tool_use')
  // Long stretches keep their beginning and end: the request and the outcome matter most.
  const shown = key.length > 12 ? [...key.slice(0, 6), ...key.slice(-6)] : key
  const lines = shown.map((event) => `- ${formatEventLine(event, 300)}`)
  if (key.length > 12) lines.splice(6, 0, `- … ${key.length - 12} more events`)
  const tools = [...new Set(events.filter((event) => event.type === 'tool_use' && event.tool).map((event) => event.tool as string))]
  const failedTools = events.filter((event) => event.type === 'tool_use' && event.meta?.ok === false).length
  if (tools.length > 0) lines.push(`- tools used: ${tools.join(', ')}${failedTools > 0 ? ` (${failedTools} failed calls)` : ''}`)
  const markers = explicitMarkers(events)
  return {
    title,
    body: `${extractiveNotice(fallback)}\n\n${lines.join('\n')}`,
    resolved: markers.resolved,
    tasks: markers.tasks,
    method: 'extractive',
    fallback,
    markersFound: markers.resolved.length + markers.tasks.length > 0,
  }
}

/** Summarises `events` with the fast-tier LLM; falls back to the extractive summary on any failure. */
export async function summarizeEvents(events: ActivityRecord[], llm: Llm, options: { timeoutMs?: number } = {}): Promise<EpisodeSummary> {
  if (!llm.available) return extractiveSummary(events, 'no LLM configured (llm.provider / ENGRAM_LLM_PROVIDER is none)')
  try {
    const result = await llm.generateObject({
      schema: episodeSummarySchema,
      name: 'episode',
      system: SYSTEM,
      messages: [{ role: 'user', content: `Activity log of the session:\n\n${transcript(events)}` }],
      tier: 'fast',
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    })
    const clean = (items: string[]): string[] => [...new Set(items.map((item) => item.replace(/\s+/g, ' ').trim()).filter((item) => item.length > 0))]
    if (result.summary.trim() === '') return extractiveSummary(events, 'the LLM returned an empty summary')
    return { title: result.title.trim() || 'Session', body: result.summary.trim(), resolved: clean(result.resolved), tasks: clean(result.newTasks), method: 'llm' }
  } catch (error) {
    return extractiveSummary(events, `LLM call failed: ${describeError(error).split('\n')[0]}`)
  }
}
