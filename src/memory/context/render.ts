/**
 * How messages and summaries are written out as text: for a summarizer's input and for the
 * assembled context. One place, so the token count of an item is always the count of the
 * text the model actually sees.
 */
import type { StoredMessage, Summary, SummaryMethod } from '../../core/message.ts'

/** `2026-01-01 09:00` (UTC, minute resolution): enough to say when, short enough to repeat per line. */
export function shortTime(at: string): string {
  const ms = Date.parse(at)
  if (Number.isNaN(ms)) return at
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ')
}

/** Who spoke: `ada (user)`, or the bare role. */
export function speakerOf(message: Pick<StoredMessage, 'role' | 'name'>): string {
  return message.name ? `${message.name} (${message.role})` : message.role
}

export function isDegradedMethod(method: SummaryMethod): boolean {
  return !method.startsWith('llm-')
}

const METHOD_LABELS: Record<SummaryMethod, string> = {
  'llm-normal': 'LLM summary',
  'llm-aggressive': 'LLM summary, durable facts only',
  extractive: 'extractive — not LLM-written',
  deterministic: 'deterministic — cut at a sentence boundary, incomplete',
}

/**
 * A summary as the model sees it: a header that says it is a summary, what it covers and how it
 * was made (fallbacks are labelled so they are never mistaken for an LLM summary), then the text.
 * The id lets the agent `expand` it with the memory tool.
 */
export function renderSummary(summary: Pick<Summary, 'id' | 'depth' | 'earliestAt' | 'latestAt' | 'method'>, content: string, messageCount: number): string {
  const span = `${shortTime(summary.earliestAt)} → ${shortTime(summary.latestAt)}`
  return `[summary ${summary.id}, ${METHOD_LABELS[summary.method]}; depth ${summary.depth}; ${messageCount} messages, ${span}]\n${content}`
}
