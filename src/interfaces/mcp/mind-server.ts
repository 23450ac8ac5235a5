/**
 * An MCP server over one open mind: its agent tools, its memory files as resources, and the
 * `primed_context` prompt. `engram mcp` serves this over stdio; tests link it in process.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { createResolutionReader } from '../../memory/episodes/resolutions.ts'
import { buildWorkingState } from '../../memory/episodes/working-state.ts'
import type { Mind } from '../../mind.ts'
import type { Session } from '../../session/session.ts'
import { type AgentToolsSession, buildAgentTools } from '../../tools/agent-tools.ts'
import type { EngramTool } from '../../tools/tool.ts'
import { ENGRAM_VERSION } from '../cli/version.ts'
import { createMemoryResources } from './memory-resources.ts'
import { createMcpServer } from './server.ts'

/**
 * MCP has no turns: the client's model calls tools while it works on a message, then goes quiet.
 * A quiet spell this long ends the client's turn, so the pattern monitor counts one turn's calls
 * (a model's tool rounds follow each other within seconds; minutes of quiet mean a person is
 * reading or typing). A `primed_context` request for a new message ends it too.
 */
export const MCP_TURN_GAP_MS = 2 * 60_000

export interface MindMcpServerOptions {
  /** The conversation the tools work on, and its user (default: session "mcp"). */
  session?: AgentToolsSession
  /** Overrides how the `primed_context` prompt is computed. */
  primeMessage?: (message: string, user?: string) => Promise<string>
}

/**
 * The primed context for a message, as an agent would get it before its turn: the declarative
 * memory context (identity, rules, lessons within their budgets), the working state (current task,
 * recently resolved issues) and automatic recall (the
 * sender's profile, recent activity, related memories, matching skills) within the message type's
 * budget — all framed and escaped as recalled data (principle 5).
 */
export function primedContextOf(mind: Mind): (message: string, user?: string) => Promise<string> {
  const resolutions = createResolutionReader(mind.layout.resolutionsFile, 'shared/resolutions.jsonl')
  return async (message, user) => {
    const sender = user !== undefined && user.trim() !== '' ? user.trim() : undefined
    const [context, state, primed] = await Promise.all([
      mind.memory.buildContext(),
      buildWorkingState({ documents: mind.backend.documents, resolutions, ...(sender !== undefined ? { user: sender } : {}) }, { now: mind.clock.now() }),
      mind.primer.prime({ message, ...(sender !== undefined ? { user: sender } : {}) }),
    ])
    const parts = [context.text.trim(), state.text.trim(), primed.text.trim()].filter((part) => part !== '')
    return parts.length > 0 ? parts.join('\n\n') : 'Your memory holds nothing related to this message yet.'
  }
}

/**
 * The agent tools of the MCP server for `mind`. Calls run through a session of the mind
 * (`session.execute`), as `turn.tools` do, so the error learner and the pattern monitor watch an
 * MCP client too, and in active mode its results carry the monitor's nudges. A new session (a
 * new turn for the monitor) starts after `MCP_TURN_GAP_MS` of quiet or when `newTurn()` is called.
 */
export function mcpAgentTools(mind: Mind, options: MindMcpServerOptions = {}): { tools: EngramTool[]; newTurn(): void } {
  const ref = options.session ?? { sessionId: 'mcp' }
  let current: Session | undefined
  let lastCallAt = Number.NEGATIVE_INFINITY
  const session = (): Session => {
    const now = mind.clock.now().getTime()
    if (!current || now - lastCallAt >= MCP_TURN_GAP_MS) current = mind.session(ref.sessionId, ref.user !== undefined ? { user: ref.user } : {})
    lastCallAt = now
    return current
  }
  const tools = buildAgentTools(mind, ref).map((tool) => ({ ...tool, execute: (input: unknown) => session().execute(tool.name, input) }))
  return {
    tools,
    newTurn() {
      current = undefined
    },
  }
}

/** Builds the MCP server over an open mind. The caller owns the mind and closes it. */
export function createMindMcpServer(mind: Mind, options: MindMcpServerOptions = {}): McpServer {
  const { tools, newTurn } = mcpAgentTools(mind, options)
  const prime = options.primeMessage ?? primedContextOf(mind)
  return createMcpServer({
    name: 'engram',
    version: ENGRAM_VERSION,
    instructions: `Long-term memory of agent "${mind.agent}". Search it with search_memory or recall, save with memorize, keep notes with write_memory_file; the memory files are resources.`,
    tools,
    // Tool wisdom reaches an MCP client's model as it reaches turn.tools: on the tool it names.
    describeTools: async (listed) => (await mind.memory.decorateTools(listed)).tools,
    resources: createMemoryResources(mind.layout),
    primeMessage: async (message, user) => {
      // A new message is a new turn for the pattern monitor.
      newTurn()
      return prime(message, user)
    },
  })
}
