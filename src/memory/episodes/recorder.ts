/**
 * Typed helpers that write what happened onto the unified activity log (AnimaWorks' ActivityLogger,
 * Anton's fire-and-forget `log_turn`). Every helper resolves, never rejects: recording a memory of
 * a turn must not be able to break the turn itself. Failures go to `onError`.
 *
 * Tool inputs are cut to TOOL_INPUT_LIMIT and results to TOOL_RESULT_LIMIT characters here as well
 * as in the log, so a backend that does not cut (a PostgreSQL table) still stores bounded rows.
 */
import { type ActivityEvent, type ActivityType, TOOL_INPUT_LIMIT, TOOL_RESULT_LIMIT } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import { messageOf } from '../../core/errors.ts'
import type { ActivityLog } from '../../storage/contracts.ts'

export interface ActivityRecorderOptions {
  log: ActivityLog
  clock: Clock
  /** Receives anything that went wrong while recording (the helpers never throw). */
  onError?: (error: unknown) => void
  /** Called after each event was handed to the log (the session lifecycle notes activity here); awaited. */
  onRecorded?: (event: ActivityEvent) => void | Promise<void>
  /**
   * Episodic memory (`memory.episodic`, ENGRAM_EPISODIC_MEMORY; default true). When false the
   * events of the conversation (EPISODIC_TYPES) are not written; `onRecorded` still hears them, so
   * sessions still reach their boundaries.
   */
  episodic?: boolean
}

/**
 * What the seed's episodic memory logs (Anton's `episodes/*.jsonl`: user, assistant, tool calls
 * and results): the experience of a conversation, which episodes are written from. Heartbeats,
 * crons, memory writes, errors and resolutions are the system's records and are always kept.
 */
export const EPISODIC_TYPES: ReadonlySet<ActivityType> = new Set<ActivityType>(['message_received', 'response_sent', 'dm_sent', 'dm_received', 'channel_post', 'channel_read', 'tool_use'])

/** Fields most events share. */
export interface TurnContext {
  /** Session (conversation) id; immediate encoding groups events by it. */
  session?: string
  channel?: string
  meta?: Record<string, unknown>
}

export interface ActivityRecorder {
  messageReceived(content: string, context?: TurnContext & { from?: string }): Promise<void>
  responseSent(content: string, context?: TurnContext & { to?: string }): Promise<void>
  /**
   * A tool call; `input` is cut to 500 characters, `result` to 2000 (JSON-serialised when not a
   * string). `killed` and `warning` let sleep replay tell a cancelled or warning step from a clean one.
   */
  toolUse(tool: string, call: { input?: unknown; result?: unknown; ok?: boolean; killed?: boolean; warning?: string; summary?: string }, context?: TurnContext): Promise<void>
  error(error: unknown, context?: TurnContext & { where?: string }): Promise<void>
  heartbeatStart(context?: TurnContext & { summary?: string }): Promise<void>
  heartbeatEnd(summary: string, context?: TurnContext): Promise<void>
  /** Any event of the seed's vocabulary, for the types without a dedicated helper (DMs, channels). */
  record(event: Omit<ActivityEvent, 'ts'> & { ts?: string }): Promise<void>
}

function cutText(text: string, limit: number): { text: string; cut: boolean } {
  if (text.length <= limit) return { text, cut: false }
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1] ?? '') ? limit - 1 : limit
  return { text: text.slice(0, end), cut: true }
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    // Circular structures and BigInts: a readable form is better than nothing.
    return String(value)
  }
}

function errorText(error: unknown): { message: string; name?: string; code?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    // The log keeps what a person reads: an EngramError's message with its fix.
    return { message: messageOf(error), name: error.name, ...(typeof code === 'string' ? { code } : {}) }
  }
  return { message: asText(error) }
}

/** Creates the recorder over an activity log. */
export function createActivityRecorder(options: ActivityRecorderOptions): ActivityRecorder {
  const { log, clock, onError, onRecorded } = options
  const episodic = options.episodic !== false

  function report(error: unknown): void {
    try {
      onError?.(error)
    } catch {
      // A failing reporter must not turn a logging problem into a crash of the agent.
    }
  }

  async function record(event: Omit<ActivityEvent, 'ts'> & { ts?: string }): Promise<void> {
    try {
      const full: ActivityEvent = { ...event, ts: event.ts ?? clock.now().toISOString() }
      if (episodic || !EPISODIC_TYPES.has(full.type)) await log.append(full)
      await onRecorded?.(full)
    } catch (error) {
      report(error)
    }
  }

  function base(context: TurnContext | undefined): Pick<ActivityEvent, 'session' | 'channel' | 'meta'> {
    return {
      ...(context?.session ? { session: context.session } : {}),
      ...(context?.channel ? { channel: context.channel } : {}),
      ...(context?.meta && Object.keys(context.meta).length > 0 ? { meta: { ...context.meta } } : {}),
    }
  }

  return {
    record,

    messageReceived: (content, context) => record({ type: 'message_received', content, ...base(context), ...(context?.from ? { from: context.from } : {}) }),

    responseSent: (content, context) => record({ type: 'response_sent', content, ...base(context), ...(context?.to ? { to: context.to } : {}) }),

    async toolUse(tool, call, context) {
      try {
        const meta: Record<string, unknown> = { ...(context?.meta ?? {}) }
        const truncated: Record<string, number> = {}
        if (call.input !== undefined) {
          const full = asText(call.input)
          const { text, cut } = cutText(full, TOOL_INPUT_LIMIT)
          meta.input = text
          if (cut) truncated.input = full.length
        }
        if (call.result !== undefined) {
          const full = asText(call.result)
          const { text, cut } = cutText(full, TOOL_RESULT_LIMIT)
          meta.result = text
          if (cut) truncated.result = full.length
        }
        if (call.ok !== undefined) meta.ok = call.ok
        if (call.killed) meta.killed = true
        if (call.warning?.trim()) meta.warning = cutText(call.warning, TOOL_INPUT_LIMIT).text
        if (Object.keys(truncated).length > 0) meta.truncated = truncated
        await record({ type: 'tool_use', tool, ...base(context), ...(call.summary ? { summary: call.summary } : {}), meta })
      } catch (error) {
        report(error)
      }
    },

    async error(error, context) {
      try {
        const described = errorText(error)
        const meta: Record<string, unknown> = { ...(context?.meta ?? {}) }
        if (described.name) meta.name = described.name
        if (described.code) meta.code = described.code
        if (context?.where) meta.where = context.where
        await record({ type: 'error', content: cutText(described.message, TOOL_RESULT_LIMIT).text, ...base(context), meta })
      } catch (failure) {
        report(failure)
      }
    },

    heartbeatStart: (context) => record({ type: 'heartbeat_start', ...base(context), ...(context?.summary ? { summary: context.summary } : {}) }),

    heartbeatEnd: (summary, context) => record({ type: 'heartbeat_end', summary, ...base(context) }),


  }
}
