/**
 * One tool definition, three exposures (decision 0015): AI SDK tools, OpenAI-style function definitions
 * with an executor for their calls, and (in `interfaces/mcp/`) MCP. Tools arrive in the shapes the
 * tool modules build — `EngramTool` (`execute(input)`), the dispatcher's `ToolDefinition`
 * (`run(input, context)`), or a whole `ToolDispatcher` so its observers (the error learner, the
 * pattern monitor) still see every call — and are normalised to `EngramTool` first.
 *
 * The contract all three keep: a tool call never throws into the host. Bad JSON, an unknown tool
 * name, invalid input or a failing handler all come back as readable text with the fix.
 */
import { z } from 'zod'
import { describeError, EngramError, ErrorCode } from '../core/errors.ts'
import { withNudges } from '../memory/learning/pattern-monitor.ts'
import type { ToolDefinition, ToolDispatcher } from './dispatcher.ts'
import type { EngramTool, ToolResult } from './tool.ts'

/** A tool with its own `execute` (EngramTool, or the memorize / recall tool shapes). */
export interface ExecutableToolLike {
  name: string
  description: string
  inputSchema: z.ZodType
  jsonSchema?: Record<string, unknown>
  execute(input: unknown): Promise<{ text: string; isError?: boolean; data?: unknown; nudges?: string[] }>
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of many input types
export type AnyTool = ExecutableToolLike | ToolDefinition<any>

/** An OpenAI chat-completions function tool definition. */
export interface OpenAiFunctionTool {
  type: 'function'
  function: { name: string; description: string; parameters: Record<string, unknown> }
}

// Tools are rebuilt every turn from the same schemas: their JSON forms are computed once each.
const inputSchemas = new WeakMap<z.ZodType, Record<string, unknown>>()
const declaredSchemas = new WeakMap<Record<string, unknown>, Record<string, unknown>>()

/** The JSON Schema of a zod input schema, in the shape tool APIs expect (no `$schema` key). */
export function inputJsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let known = inputSchemas.get(schema)
  if (!known) {
    known = withoutMetaKeys(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>)
    inputSchemas.set(schema, known)
  }
  return known
}

function withoutMetaKeys(schema: Record<string, unknown>): Record<string, unknown> {
  let known = declaredSchemas.get(schema)
  if (!known) {
    const { $schema: _schema, ...rest } = schema
    if (rest.type === undefined && rest.properties !== undefined) rest.type = 'object'
    known = rest
    declaredSchemas.set(schema, known)
  }
  return known
}

function failure(error: unknown, name: string): ToolResult {
  if (EngramError.is(error)) return { isError: true, text: error.message, data: { code: error.code } }
  return { isError: true, text: `${name} failed: ${describeError(error)}\nFix: check the tool's input; if it looks right, this is a bug in the tool.`, data: { code: 'internal' } }
}

function isExecutable(candidate: AnyTool): candidate is ExecutableToolLike {
  return typeof (candidate as ExecutableToolLike).execute === 'function'
}

/** Normalises one tool to `EngramTool`, guarding `execute` so that it never throws. */
export function toEngramTool(candidate: AnyTool): EngramTool {
  const declared = (candidate as { jsonSchema?: Record<string, unknown> }).jsonSchema
  const schema = declared ? withoutMetaKeys(declared) : inputJsonSchemaOf(candidate.inputSchema)
  if (isExecutable(candidate)) {
    return {
      name: candidate.name,
      description: candidate.description,
      inputSchema: candidate.inputSchema,
      jsonSchema: schema,
      async execute(input) {
        try {
          return plainResult(await candidate.execute(input))
        } catch (error) {
          return failure(error, candidate.name)
        }
      },
    }
  }
  const definition = candidate
  return {
    name: definition.name,
    description: definition.description,
    inputSchema: definition.inputSchema,
    jsonSchema: schema,
    async execute(input) {
      const parsed = definition.inputSchema.safeParse(input)
      if (!parsed.success) {
        const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')
        return { isError: true, text: `Invalid input for ${definition.name}: ${issues}.\nFix: call ${definition.name} again with input matching its schema.`, data: { code: ErrorCode.invalidArgument } }
      }
      try {
        return plainResult(await definition.run(parsed.data, { round: 0 }))
      } catch (error) {
        return failure(error, definition.name)
      }
    },
  }
}

/**
 * Normalises tools to `EngramTool`s. Given a dispatcher, every call goes through it, so observers
 * and the pattern monitor see calls made over the AI SDK, OpenAI-style APIs and MCP alike.
 * Throws `invalid_argument` when two tools share a name (a wiring bug, found at start-up).
 */
export function toEngramTools(source: readonly AnyTool[] | ToolDispatcher): EngramTool[] {
  const tools: EngramTool[] = []
  if (isDispatcher(source)) {
    for (const definition of source.tools) {
      const base = toEngramTool(definition)
      tools.push({ ...base, execute: (input) => source.execute(definition.name, input).then(plainResult, (error) => failure(error, definition.name)) })
    }
  } else {
    for (const candidate of source) tools.push(toEngramTool(candidate))
  }
  const seen = new Set<string>()
  for (const { name } of tools) {
    if (seen.has(name)) throw new EngramError({ code: ErrorCode.invalidArgument, category: 'system', message: `Two tools are named "${name}".`, fix: 'give every tool a unique name' })
    seen.add(name)
  }
  return tools
}

function isDispatcher(source: readonly AnyTool[] | ToolDispatcher): source is ToolDispatcher {
  return !Array.isArray(source) && typeof (source as ToolDispatcher).execute === 'function'
}

function plainResult(result: { text: string; isError?: boolean; data?: unknown; nudges?: string[] }): ToolResult {
  return {
    text: result.text,
    ...(result.isError ? { isError: true } : {}),
    ...(result.data !== undefined ? { data: result.data } : {}),
    ...(result.nudges && result.nudges.length > 0 ? { nudges: [...result.nudges] } : {}),
  }
}

/** What the model reads for a result: the text, marked when it is an error, then the monitor's nudges. */
export function modelTextOf(result: ToolResult): string {
  const text = withNudges(result.text, result.nudges)
  return result.isError ? `Error: ${text}` : text
}


/** The tools as OpenAI chat-completions function definitions (`tools: [...]`). */
export function toOpenAiFunctions(tools: readonly AnyTool[] | ToolDispatcher): OpenAiFunctionTool[] {
  return toEngramTools(tools).map((engramTool) => ({
    type: 'function',
    function: { name: engramTool.name, description: engramTool.description, parameters: engramTool.jsonSchema },
  }))
}

/**
 * Runs one OpenAI-style tool call (`tool_calls[i].function.name` and its JSON `arguments`).
 * Never throws: unparseable arguments and unknown names come back as `isError` results. The
 * result's `text` is the tool message content for the model: the pattern monitor's nudges are
 * already appended to it (and not repeated in `nudges`), so a host that sends `text` as it is
 * loses nothing; an `isError` result should be marked as an error (`modelTextOf` does both).
 */
export async function executeToolCall(tools: readonly EngramTool[], name: string, argsJson: string | undefined): Promise<ToolResult> {
  const target = tools.find((candidate) => candidate.name === name)
  if (!target) {
    return {
      isError: true,
      text: `There is no tool named "${name}".\nFix: call one of: ${tools.map((candidate) => candidate.name).join(', ') || '(no tools are available)'}.`,
      data: { code: ErrorCode.notFound },
    }
  }
  let input: unknown = {}
  if (argsJson !== undefined && argsJson.trim() !== '') {
    try {
      input = JSON.parse(argsJson)
    } catch (error) {
      return {
        isError: true,
        text: `The arguments for ${name} are not valid JSON (${(error as Error).message}).\nFix: send the arguments as one JSON object matching the tool's parameters.`,
        data: { code: ErrorCode.invalidArgument },
      }
    }
  }
  let result: ToolResult
  try {
    result = await target.execute(input)
  } catch (error) {
    return failure(error, name)
  }
  const { nudges, ...rest } = result
  return nudges && nudges.length > 0 ? { ...rest, text: withNudges(rest.text, nudges) } : rest
}
