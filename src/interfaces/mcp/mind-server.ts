/**
 * An MCP server over one open mind: its agent tools, its memory files as resources, and the
 * `primed_context` prompt. `engram mcp` serves this over stdio; tests link it in process.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { derivedSessionId } from '../../core/session-ids.ts'
import { createResolutionReader } from '../../memory/episodes/resolutions.ts'
import type { InjectedMemory } from '../../memory/priming/prime.ts'
import { buildWorkingState } from '../../memory/episodes/working-state.ts'
import type { Mind } from '../../mind.ts'
import { internalsOf, type MindInternals } from '../../mind-internals.ts'
import { type AgentToolsSession, buildAgentTools } from '../../tools/agent-tools.ts'
import type { ConfigValues } from '../../config/resolve.ts'
import { ENGRAM_VERSION } from '../cli/version.ts'
import { mcpOffers, mcpToolsOf } from './mcp-tools.ts'
import { createMcpTurns } from './mcp-turns.ts'
import { memoryResourcesOf } from './memory-resources.ts'
import { withConfirmationsInResults, withPendingConfirmations } from './pending-confirmations.ts'
import { createMcpServer } from './server.ts'

export interface MindMcpServerOptions {
  /**
   * The conversation the tools work on, and the user the connection acts for, fixed when it
   * connects (decision 0017). Default: session "mcp", no user (the agent's own memory).
   */
  session?: AgentToolsSession
  /**
   * An administrator's connection: `primed_context` may name any user. Otherwise a `user`
   * argument other than the connection's own is refused.
   */
  admin?: boolean
  /** Overrides how the `primed_context` prompt is computed. */
  primeMessage?: (message: string, user?: string) => Promise<string>
  /** The tools listed: one per question (essential) or every agent tool (all). Default: the mind's `mcp.tools`. */
  tools?: ConfigValues['mcp']['tools']
}

/** The user a `primed_context` request may be computed for: the connection's own, unless an administrator names another. */
export function primeUserOf(requested: string | undefined, own: string | undefined, admin: boolean): string | undefined {
  const named = requested !== undefined && requested.trim() !== '' ? requested.trim() : undefined
  if (named === undefined || named === own) return own
  if (admin) return named
  throw new EngramError({
    code: ErrorCode.accessDenied,
    category: 'user',
    message: `This MCP connection acts for ${own === undefined ? 'the agent alone (no user)' : `user ${JSON.stringify(own)}`} and cannot prime for ${JSON.stringify(named)}.`,
    fix: `leave the user argument out, connect for that user (engram mcp --user ${named}), or connect as an administrator (engram mcp --admin)`,
    details: { requested: named },
  })
}

/**
 * The primed context for a message, as an agent would get it before its turn: the declarative
 * memory context (identity, rules, lessons within their budgets), the working state (current task,
 * recently resolved issues) and automatic recall (the
 * sender's profile, recent activity, related memories, matching skills) within the message type's
 * budget — all framed and escaped as recalled data (principle 5) — and the memories it showed (the
 * procedures the turn answering the message may bear out, decision 0084).
 */
function primedContextOf(mind: MindInternals): (message: string, user?: string) => Promise<{ text: string; shown: readonly InjectedMemory[] }> {
  const resolutions = createResolutionReader(mind.layout.resolutionsFile, 'shared/resolutions.jsonl')
  return async (message, user) => {
    const sender = user !== undefined && user.trim() !== '' ? user.trim() : undefined
    // Everything as that user's session would see it (decision 0017).
    const scope = mind.scope(sender)
    const [context, state, primed] = await Promise.all([
      scope.memory.buildContext(),
      buildWorkingState({ documents: scope.view.own.documents, resolutions, ...(sender !== undefined ? { user: sender } : {}) }, { now: mind.clock.now() }),
      mind.primer.prime({ message, viewer: scope.viewer, activity: scope.view.activity, procedures: scope.procedures, skipProfile: true }),
    ])
    const parts = [context.text.trim(), state.text.trim(), primed.text.trim()].filter((part) => part !== '')
    return { text: parts.length > 0 ? parts.join('\n\n') : 'Your memory holds nothing related to this message yet.', shown: primed.injected }
  }
}

/**
 * The server's instructions: whose memory this is and how to use it. A connection for no user says
 * so (decision 0067): it reads and writes the agent's own memory, shared by every conversation.
 */
function mindInstructions(agent: string, user: string | undefined): string {
  const whose =
    user !== undefined
      ? `Long-term memory of agent "${agent}" in conversations with ${user}.`
      : `Long-term memory of agent "${agent}"; this connection acts for the agent alone (no user), so what it saves is the agent's own memory, seen in every conversation.`
  return `${whose} Search it with search_memory before answering, save with memorize, keep notes with write_memory_file; the memory files are resources (engram://memory/<path>).`
}

/** Builds the MCP server over an open mind. The caller owns the mind and closes it. */
export function createMindMcpServer(host: Mind, options: MindMcpServerOptions = {}): McpServer {
  const mind = internalsOf(host)
  const ref = options.session ?? { sessionId: derivedSessionId('mcp', undefined) }
  // Calls run through a session of the mind (`session.execute`), as `turn.tools` do, so the error
  // learner and the pattern monitor watch an MCP client too, and in active mode its results carry
  // the monitor's nudges; each MCP turn's end queues their work (mcp-turns.ts).
  const set = options.tools ?? mind.config.values.mcp.tools
  // The tools' errors name only the tools this connection lists (decision 0070).
  const offers = (name: string): boolean => mcpOffers(set, name)
  const turns = createMcpTurns(mind, ref, offers)
  const agentTools = buildAgentTools(mind, ref, { offers }).map((tool) => ({ ...tool, execute: (input: unknown) => turns.execute(tool.name, input) }))
  const custom = options.primeMessage
  // A context computed elsewhere says nothing of what it showed.
  const prime = custom !== undefined ? async (message: string, user?: string) => ({ text: await custom(message, user), shown: [] }) : primedContextOf(mind)
  const own = options.session?.user
  // Copilot confirmations reach the client where it reads: new ones after a tool's result (pending-confirmations.ts).
  const confirming = withConfirmationsInResults(agentTools, () => mind.pendingConfirmations(own !== undefined ? { user: own } : {}), own)
  const tools = mcpToolsOf(confirming, set)
  const scope = mind.scope(own)
  const server = createMcpServer({
    name: 'engram',
    version: ENGRAM_VERSION,
    instructions: mindInstructions(mind.agent, own),
    tools,
    // Tool wisdom reaches an MCP client's model as it reaches turn.tools: on the tool it names.
    describeTools: async (listed) => (await scope.memory.decorateTools(listed)).tools,
    resources: memoryResourcesOf(mind.layout, scope.viewer, mind.backend),
    primeMessage: async (message, user) => {
      const sender = primeUserOf(user, own, options.admin === true)
      // A new message is a new turn: the one before it ends here, and the next one answers this message.
      await turns.end()
      // Only the connection's own user's words (an administrator may prime for another user).
      if (sender === own) turns.heard(message)
      // What waits for the user's yes or no comes with the context, before the model answers the new message.
      const [context, pending] = await Promise.all([prime(message, sender), mind.pendingConfirmations(sender !== undefined ? { user: sender } : {})])
      // The procedures it shows are the ones the turn answering it may bear out.
      if (sender === own) turns.showed(context.shown)
      return withPendingConfirmations(context.text, pending, sender)
    },
  })
  // The connection's last turn ends with it, however it closes: the client goes away (the
  // transport's close), or the server's owner closes it (`engram mcp` on SIGTERM, `engram serve`
  // closing an idle session) — then before the owner goes on to close the mind.
  const protocol = server.server
  const onclose = protocol.onclose
  protocol.onclose = () => {
    onclose?.()
    void turns.end()
  }
  const close = server.close.bind(server)
  server.close = async () => {
    await turns.end()
    await close()
  }
  return server
}
