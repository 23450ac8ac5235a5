/**
 * An activity event as every backend stores it: its time read as UTC when it names no zone, its
 * UTC day, and the record written for it (the seed's field order, empty fields dropped, tool
 * input and results cut to their limits). The embedded log writes the record as a JSONL line,
 * PostgreSQL as a row's JSON; both read times with `instantOf`, so a day means the same on both.
 */
import { type ActivityEvent, TOOL_INPUT_LIMIT, TOOL_RESULT_LIMIT } from '../core/activity.ts'
import { isoDay } from '../core/clock.ts'

const FIELD_ORDER = ['ts', 'type', 'content', 'summary', 'from', 'to', 'channel', 'tool', 'via', 'session', 'meta'] as const
const HAS_ZONE = /(Z|[+-]\d{2}:?\d{2})$/i

/**
 * Milliseconds of an event time. The seed's examples have no zone (`2026-02-17T14:30:00`); those
 * are read as UTC so that the day file and range filters never depend on the machine's zone.
 */
export function instantOf(ts: string): number {
  const iso = /^\d{4}-\d{2}-\d{2}T[^Z+-]*$/.test(ts) && !HAS_ZONE.test(ts) ? `${ts}Z` : ts
  return Date.parse(iso)
}

/** The UTC day (`YYYY-MM-DD`) an event time belongs to, or undefined when it is not a time. */
export function dayOf(ts: string): string | undefined {
  const ms = instantOf(ts)
  return Number.isNaN(ms) ? undefined : isoDay(new Date(ms))
}

/** Cuts `text` to at most `limit` UTF-16 units without splitting a surrogate pair. */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1] ?? '') ? limit - 1 : limit
  return text.slice(0, end)
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value
  return JSON.stringify(value) ?? String(value)
}

/** The object written for an event: seed field order, empty fields dropped, tool data cut. */
export function toLogRecord(event: ActivityEvent): Record<string, unknown> {
  const source: Record<string, unknown> = { ...event }
  if (event.type === 'tool_use') {
    const meta: Record<string, unknown> = { ...(event.meta ?? {}) }
    const truncated: Record<string, number> = {}
    if (meta.input !== undefined && meta.input !== null) {
      const input = asText(meta.input)
      meta.input = cut(input, TOOL_INPUT_LIMIT)
      if (input.length > TOOL_INPUT_LIMIT) truncated.input = input.length
    }
    if (meta.result !== undefined && meta.result !== null) {
      const result = asText(meta.result)
      meta.result = cut(result, TOOL_RESULT_LIMIT)
      if (result.length > TOOL_RESULT_LIMIT) truncated.result = result.length
    }
    if (typeof event.content === 'string' && event.content.length > TOOL_RESULT_LIMIT) {
      truncated.content = event.content.length
      source.content = cut(event.content, TOOL_RESULT_LIMIT)
    }
    if (Object.keys(truncated).length > 0) meta.truncated = truncated
    source.meta = meta
  }
  const record: Record<string, unknown> = {}
  for (const field of FIELD_ORDER) {
    const value = source[field]
    if (value === undefined || value === null || value === '') continue
    if (field === 'meta' && typeof value === 'object' && Object.keys(value as object).length === 0) continue
    record[field] = value
  }
  // Fields outside the seed's set are kept rather than silently dropped.
  for (const [key, value] of Object.entries(source)) {
    if (!(FIELD_ORDER as readonly string[]).includes(key) && value !== undefined && value !== null && value !== '') record[key] = value
  }
  return record
}
