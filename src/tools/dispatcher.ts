/**
 * The tool dispatcher: the one place where tool execution and observation meet. It validates a
 * call's input against the tool's zod schema, fires the observers' pre/post hooks around the run
 * (the error learner, anything else), emits pattern-monitor events, and turns every failure into a
 * readable `{ isError: true, text }` result with the fix, so a tool call never throws into the
 * agent loop. Tool runtimes stay hook-agnostic: they never see observers.
 */
import type { z } from 'zod'
import { describeError, EngramError, ErrorCode } from '../core/errors.ts'
import { findMalformedText, WELL_FORMED_FIX } from '../core/well-formed-text.ts'
import { SEVERITY } from '../memory/learning/pattern-events.ts'
import type { PatternMonitor } from '../memory/learning/pattern-monitor.ts'
import type { ToolCallObservation, ToolObserver, ToolResultObservation } from '../memory/learning/tool-observation.ts'
import { engramErrorResult, type ToolError, toolErrorResult } from './tool.ts'

/** What a tool returns. */
export interface ToolResult {
  text: string
  isError?: boolean
  /** With `isError`: its code, message and fix apart from `text` (`toolErrorResult`). */
  error?: ToolError
  /** A non-fatal problem (stderr output, a partial result): the error learner looks at these too. */
  warning?: string
  /** The run was cancelled, timed out or killed. */
  killed?: boolean
  /** Structured data for programmatic callers, besides the text the model reads. */
  data?: unknown
  /**
   * Active pattern monitor only: the failure patterns that fired with this call, each a rule with
   * its polarity. The model must read them with the result; the adapters append them to its text
   * (`withNudges`).
   */
  nudges?: string[]
}

/**
 * A named, stateful environment a tool runs inputs in (a scratchpad, a kernel, a shell). Declaring
 * it lets the pattern monitor see workspace switches, resets, kills and dropped inputs.
 */
export interface ToolWorkspace {
  /** The workspace a call targets (from the raw input), or undefined when it targets none. */
  nameOf(input: unknown): string | undefined
  /** The payload run in the workspace (code, a command); an empty one means the input was dropped. */
  payloadOf?(input: unknown): string | undefined
  /** Whether the call resets the workspace rather than running something in it. */
  isReset?(input: unknown): boolean
}

export interface ToolContext {
  round: number
  signal?: AbortSignal
}

export interface ToolDefinition<I = unknown> {
  name: string
  description: string
  inputSchema: z.ZodType<I>
  run(input: I, context: ToolContext): Promise<ToolResult>
  /** What the call means to do, for the error learner (default: a string `description` field). */
  intentOf?(input: I): string | undefined
  workspace?: ToolWorkspace
}

export interface ToolDispatcherOptions {
  // biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of many input types
  tools: ReadonlyArray<ToolDefinition<any>>
  observers?: readonly ToolObserver[]
  /** Receives tool_call / tool_result / workspace_* events. */
  monitor?: PatternMonitor
  /** Called when an observer or the monitor throws; the tool call itself is unaffected. */
  onObserverError?: (error: unknown, where: string) => void
}

export interface ToolDispatcher {
  readonly tools: ReadonlyArray<ToolDefinition<unknown>>
  /** Run `name` with `input`. Never throws: failures come back as `{ isError: true, text }`. */
  execute(name: string, input: unknown, options?: { round?: number; signal?: AbortSignal }): Promise<ToolResult>
}

const ARGS_SUMMARY_LIMIT = 200

function summarise(input: unknown): string {
  let text: string
  try {
    text = JSON.stringify(input) ?? String(input)
  } catch {
    text = String(input)
  }
  return text.length > ARGS_SUMMARY_LIMIT ? `${text.slice(0, ARGS_SUMMARY_LIMIT)}…` : text
}

function errorResult(error: unknown): ToolResult {
  if (EngramError.is(error)) return engramErrorResult(error)
  return toolErrorResult({ code: ErrorCode.internal, message: describeError(error), fix: "check the tool's input; if it looks right, this is a bug in the tool." })
}

function defaultIntent(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined
  const record = input as Record<string, unknown>
  const value = record.description ?? record.one_line_description ?? record.intent
  return typeof value === 'string' ? value : undefined
}

/** Creates a dispatcher over `tools`. Tool names must be unique. */
export function createToolDispatcher(options: ToolDispatcherOptions): ToolDispatcher {
  const byName = new Map<string, ToolDefinition<unknown>>()
  for (const tool of options.tools) {
    if (byName.has(tool.name)) throw new EngramError({ code: ErrorCode.invalidArgument, category: 'system', message: `Two tools are named "${tool.name}".` })
    byName.set(tool.name, tool as ToolDefinition<unknown>)
  }
  const observers = options.observers ?? []
  const monitor = options.monitor
  let nextCallId = 1

  function guarded(where: string, fn: () => void): void {
    try {
      fn()
    } catch (error) {
      try {
        options.onObserverError?.(error, where)
      } catch {
        // An error reporter that throws must not break the tool call either.
      }
    }
  }

  function emit(fn: (m: PatternMonitor) => void): void {
    if (monitor) guarded('pattern monitor', () => fn(monitor))
  }

  async function observed(name: string, input: unknown, executeOptions: { round?: number; signal?: AbortSignal }): Promise<ToolResult> {
    const round = executeOptions.round ?? 0
    const started = performance.now()
    const tool = byName.get(name)
    emit((m) => m.observe('tool_call', { name, argsSummary: summarise(input) }, { round }))

    const finish = (call: ToolCallObservation | undefined, result: ToolResult): ToolResult => {
      const isError = result.isError === true
      const severity = result.killed ? SEVERITY.killed : isError ? SEVERITY.error : result.warning ? SEVERITY.warning : SEVERITY.ok
      emit((m) => m.observe('tool_result', { name, success: !isError, ...(isError ? { error: result.text } : {}) }, { severity, round }))
      if (call) {
        const observation: ToolResultObservation = {
          isError,
          text: result.text,
          durationMs: performance.now() - started,
          ...(result.warning !== undefined ? { warning: result.warning } : {}),
          ...(result.killed ? { killed: true } : {}),
        }
        for (const observer of observers) if (observer.onPostExecute) guarded('onPostExecute', () => observer.onPostExecute?.(call, observation))
      }
      return result
    }

    if (!tool) {
      const names = [...byName.keys()]
      return finish(undefined, toolErrorResult({ code: ErrorCode.notFound, message: `There is no tool named "${name}".`, fix: `call one of: ${names.length > 0 ? names.join(', ') : '(no tools are registered)'}.` }))
    }

    const workspaceName = tool.workspace ? safely(() => tool.workspace?.nameOf(input)) : undefined
    if (workspaceName !== undefined && tool.workspace) {
      const payload = tool.workspace.payloadOf ? safely(() => tool.workspace?.payloadOf?.(input)) : undefined
      const isReset = safely(() => tool.workspace?.isReset?.(input)) === true
      if (!isReset && tool.workspace.payloadOf && (payload === undefined || payload.trim() === '')) {
        emit((m) => m.observe('workspace_empty_input', { name: workspaceName }, { severity: SEVERITY.error, round }))
        return finish(
          undefined,
          toolErrorResult({
            code: ErrorCode.invalidArgument,
            message: `The input for workspace "${workspaceName}" arrived empty.`,
            fix: 'if you sent a large input, it was probably dropped on the way; split it into smaller calls.',
          }),
        )
      }
      if (!isReset) {
        emit((m) =>
          m.observe('workspace_call', { name: workspaceName, inputSize: Buffer.byteLength(payload ?? summarise(input)), ...(defaultIntent(input) ? { description: defaultIntent(input) } : {}) }, { round }),
        )
      }
    }

    // Every interface's tool calls pass here (MCP, the AI SDK, a host's own loop): a NUL or half a
    // character in any argument is refused before a store sees it (decision 0055).
    const malformed = findMalformedText(input)
    if (malformed) {
      return finish(
        undefined,
        toolErrorResult({ code: ErrorCode.invalidArgument, message: `Invalid input for ${name}: ${malformed.path || 'input'} holds ${malformed.problem}.`, fix: `${WELL_FORMED_FIX}.` }, { data: { code: ErrorCode.invalidArgument } }),
      )
    }
    const parsed = tool.inputSchema.safeParse(input)
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')
      return finish(undefined, toolErrorResult({ code: ErrorCode.invalidArgument, message: `Invalid input for ${name}: ${issues}.`, fix: `call ${name} again with input matching its schema.` }))
    }

    const intent = tool.intentOf ? safely(() => tool.intentOf?.(parsed.data)) : defaultIntent(input)
    const call: ToolCallObservation = { callId: nextCallId++, tool: name, input, round, ...(intent !== undefined ? { intent } : {}) }
    for (const observer of observers) if (observer.onPreExecute) guarded('onPreExecute', () => observer.onPreExecute?.(call))

    let result: ToolResult
    try {
      result = await tool.run(parsed.data, { round, ...(executeOptions.signal ? { signal: executeOptions.signal } : {}) })
    } catch (error) {
      result = errorResult(error)
      if ((error as Error)?.name === 'AbortError') result.killed = true
    }

    if (workspaceName !== undefined && tool.workspace) {
      const isReset = safely(() => tool.workspace?.isReset?.(input)) === true
      if (result.killed) {
        emit((m) => m.observe('workspace_killed', { name: workspaceName, reason: result.text.slice(0, 200) }, { severity: SEVERITY.killed, round }))
      } else if (isReset) {
        emit((m) => m.observe('workspace_reset', { name: workspaceName, reason: defaultIntent(input) ?? 'reset' }, { severity: SEVERITY.warning, round }))
      } else {
        const failed = result.isError === true
        emit((m) =>
          m.observe(
            'workspace_result',
            { name: workspaceName, success: !failed, outputSize: Buffer.byteLength(result.text), ...(failed ? { error: result.text } : {}) },
            { severity: failed ? SEVERITY.error : result.warning ? SEVERITY.warning : SEVERITY.ok, round },
          ),
        )
      }
    }
    return finish(call, result)
  }

  return {
    tools: [...byName.values()],
    async execute(name, input, executeOptions = {}) {
      const result = await observed(name, input, executeOptions)
      // Active mode (the seed's layer 2): what fired with this call travels back with its result,
      // one nudge per detector per turn. Passive and off return none.
      let nudges: string[] = []
      if (monitor) guarded('pattern monitor', () => {
        nudges = monitor.atRoundN().map((nudge) => nudge.text)
      })
      return nudges.length > 0 ? { ...result, nudges } : result
    },
  }
}

function safely<T>(fn: () => T): T | undefined {
  try {
    return fn()
  } catch {
    return undefined
  }
}
