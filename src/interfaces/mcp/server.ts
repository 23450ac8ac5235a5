/**
 * The MCP server: the agent's tools, its memory files as resources, and a `primed_context` prompt,
 * over any MCP transport (stdio in `engram mcp`, in-memory in tests).
 *
 * Tools are published with the JSON Schema of their own zod input schema and executed by the
 * tool itself (which validates its input), so MCP clients get exactly the definitions the AI SDK
 * and OpenAI-style exposures get. A failing call is an `isError` result with readable text and
 * the fix — never a JSON-RPC error — so the model can read it and try again (SDK practice).
 * Protocol errors are kept for protocol faults: an unknown resource URI, a bad prompt argument.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  type CallToolResult,
  type GetPromptResult,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  InitializeRequestSchema,
  ErrorCode as McpErrorCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { z } from 'zod'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import { textProblem } from '../../core/well-formed-text.ts'
import { withNudges } from '../../memory/learning/pattern-monitor.ts'
import { type EngramTool, type ToolResult, toolErrorResult } from '../../tools/tool.ts'
import { type McpTool, structuredResult } from './mcp-tools.ts'
import type { ResourceProvider } from './memory-resources.ts'

export const PRIMED_CONTEXT_PROMPT = 'primed_context'
/** The `_meta` key of a failed tool call's `{ code, message, fix }` (the text the model reads joins them). */
export const TOOL_ERROR_META = 'engram/error'

export interface McpServerOptions {
  tools: readonly McpTool[]
  resources: ResourceProvider
  /** Returns the primed context for a message (and its sender); without it the prompt is not offered. */
  primeMessage?: (message: string, user?: string) => Promise<string>
  name: string
  version: string
  /** Shown to the client as the server's instructions. */
  instructions?: string
  /** Rewrites the tool descriptions each time tools are listed (tool wisdom); names and schemas stay. */
  describeTools?: (tools: readonly EngramTool[]) => Promise<EngramTool[]>
}

/** A tool's result as MCP sends it; under an output schema, its structured content follows that schema. */
function toCallToolResult(result: ToolResult, tool?: McpTool): CallToolResult {
  return {
    // The pattern monitor's nudges go in the text the model reads, after the tool's own output.
    content: [{ type: 'text', text: withNudges(result.text, result.nudges) }],
    ...(result.isError ? { isError: true } : {}),
    // Structured data helps programmatic clients; models read the text. A tool with an output
    // schema always has it (the client checks it against the schema, failures included).
    ...(tool?.outputSchema ? { structuredContent: structuredResult(result) } : {}),
    ...(!tool?.outputSchema && result.data !== undefined && typeof result.data === 'object' && result.data !== null && !Array.isArray(result.data)
      ? { structuredContent: JSON.parse(JSON.stringify(result.data)) as Record<string, unknown> }
      : {}),
    // A failure's code, message and fix apart (decision 0062), for a client that acts on them.
    ...(result.isError && result.error ? { _meta: { [TOOL_ERROR_META]: { ...result.error } } } : {}),
  }
}

/** A handler as the SDK's protocol keeps it: the raw request, parsed by the handler itself. */
type SdkRequestHandler = (request: unknown, extra: unknown) => Promise<unknown>

function invalidParams(message: string): McpError {
  return new McpError(McpErrorCode.InvalidParams, message)
}

/** `tools/call`'s params as the handler reads them, or the invalid-params error saying what is wrong. */
function toolCallParams(params: unknown): { [field: string]: unknown; name: string; arguments: Record<string, unknown> } {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw invalidParams('tools/call needs params: {"name": "<tool>", "arguments": {…}}.')
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown }
  if (typeof name !== 'string' || name === '') throw invalidParams(`tools/call needs params.name, the tool's name as a string; got ${describeJson(name)}.`)
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw invalidParams(`tools/call params.arguments must be a JSON object of the tool's named arguments (e.g. {"query": "…"}); got ${describeJson(args)}.`)
  }
  // _meta and task pass through, as the SDK's own schema keeps them.
  return { ...params, name, arguments: (args ?? {}) as Record<string, unknown> }
}

function describeJson(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? `a string (${JSON.stringify(value.slice(0, 40))})` : `a ${typeof value}`
}

/*
 * tools/call registered with a schema that reads its params itself. Registered with the SDK's
 * CallToolRequestSchema, a request whose `arguments` was a string failed the SDK's parse before any
 * handler ran, and a parse failure goes back as -32603 "internal error" (decision 0055): the client's
 * mistake reported as the server's. The transform throws the McpError, which the SDK sends as it is.
 */
const CallToolRequestReadByUs = z.object({ method: z.literal('tools/call'), params: z.unknown().transform(toolCallParams) })

/** `resources/read`'s params, or invalid params: a URI that is not a string, or that holds half a character or a NUL. */
function resourceReadParams(params: unknown): { [field: string]: unknown; uri: string } {
  const uri = typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as { uri?: unknown }).uri : undefined
  if (typeof uri !== 'string') throw invalidParams(`resources/read needs params.uri, a resource URI as a string (e.g. "engram://memory/memory/rules.md"); got ${describeJson(uri)}.`)
  // Half a character would reach the file system as U+FFFD, naming another file (decision 0055).
  const problem = textProblem(uri)
  if (problem) throw invalidParams(`The resource URI ${JSON.stringify(uri)} holds ${problem}; it names no memory file.`)
  return { ...(params as Record<string, unknown>), uri }
}

/** `prompts/get`'s params, or invalid params: a prompt name that is not a string, arguments that are not an object. */
function promptGetParams(params: unknown): { [field: string]: unknown; name: string; arguments: Record<string, unknown> } {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw invalidParams('prompts/get needs params: {"name": "<prompt>", "arguments": {…}}.')
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown }
  if (typeof name !== 'string') throw invalidParams(`prompts/get needs params.name, the prompt's name as a string; got ${describeJson(name)}.`)
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw invalidParams(`prompts/get params.arguments must be a JSON object of the prompt's named arguments (e.g. {"message": "…"}); got ${describeJson(args)}.`)
  }
  return { ...params, name, arguments: (args ?? {}) as Record<string, unknown> }
}

const GetPromptRequestReadByUs = z.object({ method: z.literal('prompts/get'), params: z.unknown().transform(promptGetParams) })

const primedContextArgs = z.object({
  message: z.string().min(1).describe('The incoming message to prime memory for.'),
  user: z.string().optional().describe('Who sent it (their profile is included when known).'),
})
type PrimedContextArgs = z.infer<typeof primedContextArgs>

/** resources/read read as tools/call is, for the same reason. */
const ReadResourceRequestReadByUs = z.object({ method: z.literal('resources/read'), params: z.unknown().transform(resourceReadParams) })

/**
 * `schema` with its params read by us: params the schema refuses are invalid params (-32602)
 * naming the field, not the SDK's -32603. A schema whose params throw an McpError keeps it.
 */
function paramsReadByUs(schema: z.ZodObject): z.ZodObject {
  const { method, params } = schema.shape as { method: z.ZodType; params?: z.ZodType }
  if (params === undefined) return schema
  return z.object({
    method,
    // Optional before the transform, so a request without params (tools/list) is read too.
    params: z
      .unknown()
      .optional()
      .transform((value) => {
        const read = params.safeParse(value)
        if (read.success) return read.data
        const problems = read.error.issues.map((issue) => `params${issue.path.map((key) => `.${String(key)}`).join('')}: ${issue.message}`).join('; ')
        throw invalidParams(`The request's params are not what ${String((method as z.ZodLiteral<string>).value)} takes: ${problems}.`)
      }),
  })
}

function asMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error
  if (EngramError.is(error)) {
    const code = error.code === ErrorCode.notFound || error.category === 'user' ? McpErrorCode.InvalidParams : McpErrorCode.InternalError
    // The protocol error's text reads as the tool results do (message, then its fix); its data carries them apart.
    return new McpError(code, describeError(error), { code: error.code, ...(error.fix ? { fix: error.fix } : {}) })
  }
  return new McpError(McpErrorCode.InternalError, describeError(error))
}

/**
 * The SDK's JSON Schema validator (ajv), made when first asked for: the server checks only an
 * elicitation's answer with it, which engram never asks for, and making it at once cost ~7 ms of
 * CPU at every start and every `/mcp` session (decision 0082).
 */
function ajvWhenAsked(): jsonSchemaValidator {
  let made: AjvJsonSchemaValidator | undefined
  return {
    getValidator(schema) {
      made ??= new AjvJsonSchemaValidator()
      return made.getValidator(schema)
    },
  }
}

/** Builds the server; connect it to a transport with `server.connect(transport)`. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const byName = new Map<string, McpTool>()
  for (const tool of options.tools) {
    if (byName.has(tool.name)) throw new EngramError({ code: ErrorCode.invalidArgument, category: 'system', message: `Two tools are named "${tool.name}".`, fix: 'give every tool a unique name' })
    byName.set(tool.name, tool)
  }
  const mcp = new McpServer({ name: options.name, version: options.version }, { ...(options.instructions ? { instructions: options.instructions } : {}), jsonSchemaValidator: ajvWhenAsked() })
  const server = mcp.server
  // Every handler registered from here on (ours and the SDK's own, e.g. prompts/list) reads its
  // params so that malformed ones are invalid params: the SDK's parse failure went back as -32603,
  // e.g. tools/list with a numeric cursor (decision 0055).
  const register = server.setRequestHandler.bind(server)
  server.setRequestHandler = ((schema: z.ZodObject, handler: never) => register(paramsReadByUs(schema) as never, handler)) as typeof server.setRequestHandler
  // The SDK registered `initialize` in its constructor, before the wrap above: an initialize whose
  // protocolVersion was a number went back as -32603 (decision 0085). Registered again through the
  // wrap, delegating to the SDK's own handler, which records the client's capabilities and info.
  const sdkInitialize = (server as unknown as { _requestHandlers?: Map<string, SdkRequestHandler> })._requestHandlers?.get('initialize')
  if (sdkInitialize) server.setRequestHandler(InitializeRequestSchema, ((request: unknown, extra: unknown) => sdkInitialize(request, extra)) as never)
  server.registerCapabilities({ tools: {}, resources: {} })

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const listed = [...byName.values()]
    let described = listed
    if (options.describeTools) {
      try {
        described = await options.describeTools(listed)
      } catch {
        // Tool wisdom is an addition: a tool list without it is still a correct tool list.
        described = listed
      }
    }
    return {
      tools: described.map((tool) => {
        const outputSchema = byName.get(tool.name)?.outputSchema
        return {
          name: tool.name,
          title: tool.annotations?.title ?? tool.name,
          description: tool.description,
          inputSchema: { ...tool.jsonSchema, type: 'object' as const },
          ...(outputSchema ? { outputSchema: { ...outputSchema, type: 'object' as const } } : {}),
          // What the tool does, so a client can run the read-only ones freely and confirm the
          // destructive one; a host's own tool without hints gets its name as its title.
          annotations: tool.annotations ?? { title: tool.name },
        }
      }),
    }
  })

  server.setRequestHandler(CallToolRequestReadByUs, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name)
    if (!tool) {
      return toCallToolResult(
        toolErrorResult({ code: ErrorCode.notFound, message: `There is no tool named "${request.params.name}".`, fix: `call one of: ${[...byName.keys()].join(', ')}.` }, { data: { code: ErrorCode.notFound } }),
      )
    }
    try {
      return toCallToolResult(await tool.execute(request.params.arguments), tool)
    } catch (error) {
      // EngramTools do not throw; this guards a tool that breaks its contract.
      return toCallToolResult(toolErrorResult({ code: ErrorCode.internal, message: `${tool.name} failed: ${describeError(error)}` }, { data: { code: ErrorCode.internal } }), tool)
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    try {
      return { resources: await options.resources.list() }
    } catch (error) {
      throw asMcpError(error)
    }
  })

  // The memory files as one template, so a client can read a file it did not list (or list none).
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: options.resources.templates }))

  server.setRequestHandler(ReadResourceRequestReadByUs, async (request) => {
    try {
      const content = await options.resources.read(request.params.uri)
      return { contents: [content] }
    } catch (error) {
      throw asMcpError(error)
    }
  })

  const prime = options.primeMessage
  if (prime) {
    const primedContext = async ({ message, user }: PrimedContextArgs): Promise<GetPromptResult> => {
      const problem = textProblem(message) ?? (user !== undefined ? textProblem(user) : undefined)
      if (problem) throw invalidParams(`The ${PRIMED_CONTEXT_PROMPT} arguments hold ${problem}; send whole characters without NUL.`)
      try {
        const text = await prime(message, user)
        return { description: 'Primed memory context', messages: [{ role: 'user', content: { type: 'text', text } }] }
      } catch (error) {
        throw asMcpError(error)
      }
    }
    // Registered with the SDK so that prompts/list shows it with its arguments...
    mcp.registerPrompt(
      PRIMED_CONTEXT_PROMPT,
      {
        title: 'Primed memory for a message',
        description: 'What your memory brings up before answering this message: the memory context and the memories related to it, labelled as recalled data.',
        argsSchema: primedContextArgs.shape,
      },
      primedContext,
    )
    // ...and prompts/get then read by us, as tools/call is: the SDK's handler parses params before
    // any check of ours, and arguments that were not an object went back as -32603. Set after
    // registerPrompt, this replaces the SDK's handler (a protocol keeps one per method).
    server.setRequestHandler(GetPromptRequestReadByUs, async (request) => {
      const { name } = request.params
      if (name !== PRIMED_CONTEXT_PROMPT) throw invalidParams(`There is no prompt named ${JSON.stringify(name)}; the one prompt is ${PRIMED_CONTEXT_PROMPT}.`)
      const parsed = primedContextArgs.safeParse(request.params.arguments)
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`).join('; ')
        throw invalidParams(`${PRIMED_CONTEXT_PROMPT} needs arguments {"message": "the incoming message", "user": "who sent it (optional)"}: ${problems}.`)
      }
      return primedContext(parsed.data)
    })
  }
  return mcp
}
