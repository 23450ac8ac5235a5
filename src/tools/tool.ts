/**
 * One definition per agent tool: a zod input schema, a description written for the model, and a
 * handler. The same definition is exposed as an AI SDK tool, as an OpenAI-style function
 * definition and over MCP (`src/interfaces/`), so the three never drift apart.
 *
 * Handlers never throw into the host: a failure is a readable result with `isError: true` whose
 * text says what was wrong and how to fix it.
 */
import { z } from 'zod'
import { ErrorCode } from '../core/errors.ts'

export interface ToolResult {
  /** What the model reads. */
  text: string
  isError?: boolean
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
 * The result for a call whose arguments failed the tool's schema: each problem on its own line,
 * then the fix (`fix` is the whole "Fix: …" sentence's body, e.g. `pass {"query": "…"}`).
 */
export function invalidArgumentsResult(tool: string, issues: readonly z.core.$ZodIssue[], fix: string): ToolResult & { isError: true; data: { code: string } } {
  const problems = issues.map((issue) => `- ${issue.path.join('.') || 'input'}: ${issue.message}`)
  return { isError: true, text: [`${tool} was called with invalid arguments:`, ...problems, `Fix: ${fix}`].join('\n'), data: { code: ErrorCode.invalidArgument } }
}
