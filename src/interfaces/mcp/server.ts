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
  CallToolRequestSchema,
  type CallToolResult,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ErrorCode as McpErrorCode,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import { withNudges } from '../../memory/learning/pattern-monitor.ts'
import type { EngramTool, ToolResult } from '../../tools/tool.ts'
import type { ResourceProvider } from './memory-resources.ts'

export const PRIMED_CONTEXT_PROMPT = 'primed_context'

export interface McpServerOptions {
  tools: readonly EngramTool[]
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

function toCallToolResult(result: ToolResult): CallToolResult {
  return {
    // The pattern monitor's nudges go in the text the model reads, after the tool's own output.
    content: [{ type: 'text', text: withNudges(result.text, result.nudges) }],
    ...(result.isError ? { isError: true } : {}),
    // Structured data helps programmatic clients; models read the text.
    ...(result.data !== undefined && typeof result.data === 'object' && result.data !== null && !Array.isArray(result.data)
      ? { structuredContent: JSON.parse(JSON.stringify(result.data)) as Record<string, unknown> }
      : {}),
  }
}

function asMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error
  if (EngramError.is(error)) {
    const code = error.code === ErrorCode.notFound || error.category === 'user' ? McpErrorCode.InvalidParams : McpErrorCode.InternalError
    return new McpError(code, error.message, { code: error.code })
  }
  return new McpError(McpErrorCode.InternalError, describeError(error))
}

/** Builds the server; connect it to a transport with `server.connect(transport)`. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const byName = new Map<string, EngramTool>()
  for (const tool of options.tools) {
    if (byName.has(tool.name)) throw new EngramError({ code: ErrorCode.invalidArgument, category: 'system', message: `Two tools are named "${tool.name}".`, fix: 'give every tool a unique name' })
    byName.set(tool.name, tool)
  }
  const mcp = new McpServer({ name: options.name, version: options.version }, { ...(options.instructions ? { instructions: options.instructions } : {}) })
  const server = mcp.server
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
      tools: described.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: { ...tool.jsonSchema, type: 'object' as const },
        // What the tool does, so a client can run the read-only ones freely and confirm the
        // destructive one; a host's own tool without hints gets its name as its title.
        annotations: tool.annotations ?? { title: tool.name },
      })),
    }
  })

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name)
    if (!tool) {
      return toCallToolResult({
        isError: true,
        text: `There is no tool named "${request.params.name}".\nFix: call one of: ${[...byName.keys()].join(', ')}.`,
        data: { code: ErrorCode.notFound },
      })
    }
    try {
      return toCallToolResult(await tool.execute(request.params.arguments ?? {}))
    } catch (error) {
      // EngramTools do not throw; this guards a tool that breaks its contract.
      return toCallToolResult({ isError: true, text: `${tool.name} failed: ${describeError(error)}`, data: { code: 'internal' } })
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    try {
      return { resources: await options.resources.list() }
    } catch (error) {
      throw asMcpError(error)
    }
  })

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    try {
      const content = await options.resources.read(request.params.uri)
      return { contents: [content] }
    } catch (error) {
      throw asMcpError(error)
    }
  })

  const prime = options.primeMessage
  if (prime) {
    mcp.registerPrompt(
      PRIMED_CONTEXT_PROMPT,
      {
        title: 'Primed memory for a message',
        description: 'What your memory brings up before answering this message: the memory context and the memories related to it, labelled as recalled data.',
        argsSchema: {
          message: z.string().min(1).describe('The incoming message to prime memory for.'),
          user: z.string().optional().describe('Who sent it (their profile is included when known).'),
        },
      },
      async ({ message, user }) => {
        try {
          const text = await prime(message, user)
          return { description: 'Primed memory context', messages: [{ role: 'user', content: { type: 'text', text } }] }
        } catch (error) {
          throw asMcpError(error)
        }
      },
    )
  }
  return mcp
}
