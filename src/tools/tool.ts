/**
 * One definition per agent tool: a zod input schema, a description written for the model, and a
 * handler. The same definition is exposed as an AI SDK tool, as an OpenAI-style function
 * definition and over MCP (`src/interfaces/`), so the three never drift apart.
 *
 * Handlers never throw into the host: a failure is a readable result with `isError: true` whose
 * text says what was wrong and how to fix it, and whose `error` carries the same apart (decision
 * 0062), so that no interface parses the text back.
 */
import { z } from 'zod'
import { describeError, EngramError, ErrorCode, withFix } from '../core/errors.ts'

/** Why a call failed, as code reads it: the message and the fix the model reads in `text`, apart. */
export interface ToolError {
  code: ErrorCode
  message: string
  fix?: string
}

export interface ToolResult {
  /** What the model reads. */
  text: string
  isError?: boolean
  /** With `isError`: its code, message and fix, for the HTTP API's error body, MCP's `_meta` and hosts. */
  error?: ToolError
  /** Structured payload for programmatic callers (dashboard, tests); not shown to the model. */
  data?: unknown
  /**
   * Notes for the model from the pattern monitor (active mode) that fired with this call. The
   * adapters append them to the text the model reads (`withNudges`); a host calling tools itself
   * must do the same.
   */
  nudges?: string[]
}

/**
 * Hints about what a tool does, for clients that ask before running tools that change things
 * (MCP tool annotations; written structurally so the core does not import the MCP SDK).
 */
export interface ToolAnnotations {
  /** A human-readable name. */
  title: string
  /** It changes nothing a caller could see (recording that a memory was recalled aside). */
  readOnlyHint?: boolean
  /** It may remove or replace what is there (meaningful when not read-only). */
  destructiveHint?: boolean
  /** Calling it again with the same arguments changes nothing more. */
  idempotentHint?: boolean
  /** It reaches outside the agent's own memory. */
  openWorldHint?: boolean
}

export interface EngramTool<Input = unknown> {
  name: string
  description: string
  /** Hints for clients (MCP annotations); every agent tool has them (`agentToolAnnotations`). */
  annotations?: ToolAnnotations
  inputSchema: z.ZodType<Input>
  /** JSON Schema of the input (`z.toJSONSchema(inputSchema)`), for OpenAI-style definitions and MCP. */
  jsonSchema: Record<string, unknown>
  /** Validates `input` against `inputSchema` itself; never throws. */
  execute(input: unknown): Promise<ToolResult>
}

const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>()

/**
 * The JSON Schema of a tool's zod input schema, computed once per schema: a turn builds its tools
 * anew, and converting the same schemas on every turn was a visible part of `session.begin`.
 */
export function toolJsonSchema(schema: z.ZodType): Record<string, unknown> {
  let known = jsonSchemas.get(schema)
  if (!known) {
    known = z.toJSONSchema(schema) as Record<string, unknown>
    jsonSchemas.set(schema, known)
  }
  return known
}

/**
 * A failed call's result: the model reads the message and then "Fix: …" on the next line (`inline`:
 * after a space, as the `memory` tool words it); `error` carries them apart. `data` as given.
 */
export function toolErrorResult(error: ToolError, options: { data?: unknown; inline?: boolean } = {}): ToolResult & { isError: true; error: ToolError } {
  const text = options.inline && error.fix ? `${error.message} Fix: ${error.fix}` : withFix(error.message, error.fix)
  return { isError: true, text, error: { code: error.code, message: error.message, ...(error.fix ? { fix: error.fix } : {}) }, ...(options.data !== undefined ? { data: options.data } : {}) }
}

/** An EngramError a tool's work threw, as its result: its code, message and fix (`data: { code }` with `withCode`). */
export function engramErrorResult(error: EngramError, options: { withCode?: boolean } = {}): ToolResult & { isError: true; error: ToolError } {
  return toolErrorResult({ code: error.code, message: error.message, ...(error.fix ? { fix: error.fix } : {}) }, options.withCode ? { data: { code: error.code } } : {})
}

/**
 * What a tool's work threw, as its result, the message after `prefix` (`memorize failed: `): an
 * EngramError with its code and fix; anything else as `internal`, described with its name.
 */
export function thrownResult(prefix: string, error: unknown): ToolResult & { isError: true; error: ToolError } {
  if (EngramError.is(error)) return toolErrorResult({ code: error.code, message: `${prefix}${error.message}`, ...(error.fix ? { fix: error.fix } : {}) })
  return toolErrorResult({ code: ErrorCode.internal, message: `${prefix}${describeError(error)}` })
}

/**
 * The result for a call whose arguments failed the tool's schema: each problem on its own line,
 * then the fix (`fix` is the whole "Fix: …" sentence's body, e.g. `pass {"query": "…"}`).
 */
export function invalidArgumentsResult(tool: string, issues: readonly z.core.$ZodIssue[], fix: string): ToolResult & { isError: true; data: { code: ErrorCode } } {
  const problems = issues.map((issue) => `- ${issue.path.join('.') || 'input'}: ${issue.message}`)
  return { ...toolErrorResult({ code: ErrorCode.invalidArgument, message: [`${tool} was called with invalid arguments:`, ...problems].join('\n'), fix }), data: { code: ErrorCode.invalidArgument } }
}
