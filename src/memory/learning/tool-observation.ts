/**
 * What the tool dispatcher shows its observers. Execution and observation meet only in the
 * dispatcher: tool runtimes never see observers (Anton's decoupling of the cerebellum from the
 * scratchpad runtime), so a new runtime inherits no hook code.
 */

/** A tool call about to run. */
export interface ToolCallObservation {
  /** Unique within the dispatcher, ties a result to its call. */
  callId: number
  tool: string
  /** The input as the model sent it (before validation). */
  input: unknown
  /** What the call is meant to do, when the tool takes a description (the forward model). */
  intent?: string
  /** The tool-call round of the turn, when the caller counts rounds. */
  round?: number
}

/** What came back. A clean result has neither `isError` nor `warning`. */
export interface ToolResultObservation {
  isError: boolean
  text: string
  /** Non-fatal problem reported by the tool (stderr, a deprecation, a partial result). */
  warning?: string
  /** The run was cancelled, timed out or killed. */
  killed?: boolean
  durationMs: number
}

/**
 * Pre/post hooks around every tool execution. Hooks must be cheap and must not throw; the
 * dispatcher catches anything they throw so a broken observer never breaks a tool call.
 */
export interface ToolObserver {
  onPreExecute?(call: ToolCallObservation): void
  onPostExecute?(call: ToolCallObservation, result: ToolResultObservation): void
}
