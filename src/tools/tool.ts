/**
 * One definition per agent tool: a zod input schema, a description written for the model, and a
 * handler. The same definition is exposed as an AI SDK tool, as an OpenAI-style function
 * definition and over MCP (`src/interfaces/`), so the three never drift apart.
 *
 * Handlers never throw into the host: a failure is a readable result with `isError: true` whose
 * text says what was wrong and how to fix it.
 */
import type { z } from 'zod'

export interface ToolResult {
  /** What the model reads. */
  text: string
  isError?: boolean
  /** Structured payload for programmatic callers (dashboard, tests); not shown to the model. */
  data?: unknown
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
