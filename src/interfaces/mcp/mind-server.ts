/**
 * An MCP server over one open mind: its agent tools, its memory files as resources, and the
 * `primed_context` prompt. `engram mcp` serves this over stdio; tests link it in process.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Mind } from '../../mind.ts'
import { type AgentToolsOptions, type AgentToolsSession, buildAgentTools } from '../../tools/agent-tools.ts'
import type { EngramTool } from '../../tools/tool.ts'
import { ENGRAM_VERSION } from '../cli/version.ts'
import { createMemoryResources } from './memory-resources.ts'
import { createMcpServer } from './server.ts'

export interface MindMcpServerOptions extends AgentToolsOptions {
  /** The conversation the `memory` tool works on (default: session "mcp"). */
  session?: AgentToolsSession
  /** Overrides how the `primed_context` prompt is computed (the session priming layer, once wired). */
  primeMessage?: (message: string, user?: string) => Promise<string>
}

/**
 * The primed context for a message, as an agent would get it before its turn: the declarative
 * memory context (identity, rules, lessons within their budgets) and automatic recall (the
 * sender's profile, recent activity, related memories, matching skills) within the message type's
 * budget — all framed and escaped as recalled data (principle 5).
 */
export function primedContextOf(mind: Mind): (message: string, user?: string) => Promise<string> {
  return async (message, user) => {
    const [context, primed] = await Promise.all([mind.memory.buildContext(), mind.primer.prime({ message, ...(user !== undefined && user.trim() !== '' ? { user: user.trim() } : {}) })])
    const parts = [context.text.trim(), primed.text.trim()].filter((part) => part !== '')
    return parts.length > 0 ? parts.join('\n\n') : 'Your memory holds nothing related to this message yet.'
  }
}

/** The agent tools of the MCP server for `mind` (exported for tests and other hosts). */
export function mcpAgentTools(mind: Mind, options: MindMcpServerOptions = {}): EngramTool[] {
  return buildAgentTools(mind, options.session ?? { sessionId: 'mcp' }, options)
}

/** Builds the MCP server over an open mind. The caller owns the mind and closes it. */
export function createMindMcpServer(mind: Mind, options: MindMcpServerOptions = {}): McpServer {
  return createMcpServer({
    name: 'engram',
    version: ENGRAM_VERSION,
    instructions: `Long-term memory of agent "${mind.agent}". Search it with search_memory or recall, save with memorize, keep notes with write_memory_file; the memory files are resources.`,
    tools: mcpAgentTools(mind, options),
    resources: createMemoryResources(mind.layout),
    primeMessage: options.primeMessage ?? primedContextOf(mind),
  })
}
