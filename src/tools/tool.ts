/**
 * One definition per agent tool: a zod input schema, a description written for the model, and a
 * handler. The same definition is exposed as an AI SDK tool, as an OpenAI-style function
 * definition and over MCP (`src/interfaces/`), so the three never drift apart.
 *
 * Handlers never throw into the host: a failure is a readable result with `isError: true` whose
 * text says what was wrong and how to fix it.
 */
import type { z } from 'zod'
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

export interface EngramTool<Input = unknown> {
  name: string
  description: string
  inputSchema: z.ZodType<Input>
  /** JSON Schema of the input (`z.toJSONSchema(inputSchema)`), for OpenAI-style definitions and MCP. */
  jsonSchema: Record<string, unknown>
  /** Validates `input` against `inputSchema` itself; never throws. */
  execute(input: unknown): Promise<ToolResult>
}

/**
 * The result for a call whose arguments failed the tool's schema: each problem on its own line,
 * then the fix (`fix` is the whole "Fix: …" sentence's body, e.g. `pass {"query": "…"}`).
 */
export function invalidArgumentsResult(tool: string, issues: readonly z.core.$ZodIssue[], fix: string): ToolResult & { isError: true; data: { code: string } } {
  const problems = issues.map((issue) => `- ${issue.path.join('.') || 'input'}: ${issue.message}`)
  return { isError: true, text: [`${tool} was called with invalid arguments:`, ...problems, `Fix: ${fix}`].join('\n'), data: { code: ErrorCode.invalidArgument } }
}
