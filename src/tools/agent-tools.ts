/**
 * The agent's tool belt for one open mind, in one place: what `mind.tools()`, the OpenAI-style
 * definitions and the MCP server all expose (decision 0015). Each tool is built from the subsystem that
 * owns its behaviour; this file only wires them and normalises them to `EngramTool`.
 */
import { join } from 'node:path'
import { describeError } from '../core/errors.ts'
import { canSee, type Viewer } from '../core/owner.ts'
import type { ContextSession } from '../memory/context/provider.ts'
import { searchWithThreads } from '../memory/threads/thread-search.ts'
import type { Locks } from '../storage/contracts.ts'
import { createFileLocks } from '../storage/files/locks.ts'
import { toEngramTool, toEngramTools } from './adapters.ts'
import { buildForgetMemoryTool } from './forget-memory-tool.ts'
import { withInputLimit } from './input-limits.ts'
import { forgettingContextOf } from './forgetting.ts'
import { buildMemorizeTool } from './memorize-tool.ts'
import { buildReadMemoryFileTool, buildWriteMemoryFileTool, type MemoryFileToolsDeps } from './memory-files.ts'
import { buildMemoryTool } from './memory-tool.ts'
import { buildRecallTool } from './recall-tool.ts'
import { createRecallSkillTool } from './recall-skill-tool.ts'
import { createReportProcedureOutcomeTool } from './report-procedure-outcome-tool.ts'
import { withAnnotations } from './tool-annotations.ts'
import { buildSearchMemoryTool, type MemorySearch, type MemorySearchHit, type MemorySearchOptions, memorySearchHitOf } from './search-memory-tool.ts'
import type { EngramTool } from './tool.ts'
import type { ToolHost } from './tool-host.ts'

/** The tool names, in the order they are offered. */
export const AGENT_TOOL_NAMES = [
  'memorize',
  'recall',
  'search_memory',
  'read_memory_file',
  'write_memory_file',
  'forget_memory',
  'recall_skill',
  'report_procedure_outcome',
  'memory',
] as const
export type AgentToolName = (typeof AGENT_TOOL_NAMES)[number]

export interface AgentToolsSession {
  /** The conversation the `memory` tool works on. */
  sessionId: string
  /**
   * The user of that conversation: every tool reads and writes as their session (decision 0017).
   * Without one, the agent's own memory only.
   */
  user?: string
}

/** The project scope's locks: the same folder `openEmbeddedBackend` gives the project engram store. */
function projectLocksOf(host: ToolHost): Locks | undefined {
  const dir = host.layout.projectMemoryDir
  return dir ? createFileLocks({ dir: join(dir, '..', '.locks') }) : undefined
}

/**
 * What the agent memorizes must be findable by its very next call (search_memory in the same
 * turn), so a successful save waits for the index to catch up before the result goes back.
 */
function indexedBeforeReturning(tool: EngramTool, host: ToolHost): EngramTool {
  return {
    ...tool,
    async execute(input) {
      const result = await tool.execute(input)
      if (result.isError) return result
      try {
        await host.indexed()
        return result
      } catch (error) {
        return { ...result, text: `${result.text}\n(saved; the search index catches up on the next \`engram reindex\`: ${describeError(error)})` }
      }
    },
  }
}

/**
 * Every agent tool over an open mind, as `EngramTool`s: memorize, recall, search_memory,
 * read_memory_file, write_memory_file, recall_skill, report_procedure_outcome, and with a session
 * the `memory` tool (which works on one conversation). `offered` says which of them the caller
 * lists (an MCP connection's set, decision 0067), so an error names only tools it can call.
 */
export function buildAgentTools(host: ToolHost, session?: AgentToolsSession, offered?: { offers(tool: string): boolean }): EngramTool[] {
  const scope = host.scope(session?.user)
  const viewer = scope.viewer
  const search = retrieverSearch(host, viewer)
  const limits = host.config.values.limits
  const tools = toEngramTools([
    indexedBeforeReturning(toEngramTool(buildMemorizeTool(host.memory.encoder, viewer)), host),
    buildRecallTool(scope.recall, limits.queryChars),
    buildSearchMemoryTool({ search, layout: host.layout, viewer, maxQueryChars: limits.queryChars, ...(session ? { currentTurnMessages: () => currentTurnMessages(host, session.sessionId) } : {}) }),
    buildReadMemoryFileTool({ layout: host.layout, viewer, backend: host.backend }),
    buildWriteMemoryFileTool({ ...memoryFileDeps(host, viewer), ...(offered ? { offers: offered.offers } : {}) }),
    buildForgetMemoryTool(forgettingContextOf(host, session?.user)),
    createRecallSkillTool(host.skills),
    createReportProcedureOutcomeTool(scope.procedures),
  ])
  if (session) {
    const contextSession: ContextSession = { sessionId: session.sessionId, agent: host.agent, ...(session.user !== undefined ? { user: session.user } : {}) }
    tools.push(...toEngramTools([buildMemoryTool(host.context, contextSession, host.memory.profiles, limits.queryChars)]))
  }
  // Every input is measured against limits.toolInputChars before a tool reads it (decision 0026).
  return tools.map((tool) => withInputLimit(withAnnotations(tool), limits))
}

/**
 * What write_memory_file (and an accepted promotion of one, `mind.confirm`) writes through for a
 * viewer: the stores of every owner, the viewer's own activity log, the gate of promotions.
 */
export function memoryFileDeps(host: ToolHost, viewer: Viewer): MemoryFileToolsDeps {
  const projectLocks = projectLocksOf(host)
  return {
    layout: host.layout,
    backend: host.backend,
    viewer,
    documents: host.backend.documents,
    documentsOf: (owner) => host.backend.owned(owner).documents,
    activity: host.scope(viewer.user).view.own.activity,
    locks: host.backend.locks,
    ...(projectLocks ? { projectLocks } : {}),
    clock: host.clock,
    gate: { mode: host.config.values.memory.mode, enqueue: (document, reason) => host.backend.confirmations.enqueueDocument(document, reason, viewer.user) },
    maxFileBytes: host.config.values.memory.maxFileBytes,
    // Unchanged files cost a hash: the written file reaches the index before the result returns.
    onWritten: async () => {
      await host.reindex()
    },
  }
}

/**
 * The stored messages of the session's turn in progress: the user's message its latest turn began
 * with, while that turn has no reply yet. Read from the store, not kept on a session object: a host
 * may run a turn's tool calls on a new `mind.session(id)`, in another process (`engram serve`).
 */
async function currentTurnMessages(host: ToolHost, sessionId: string): Promise<number[]> {
  const record = await host.sessions.get(sessionId)
  if (!record || record.turns === 0) return []
  const turn = await host.turnProvenance({ sessionId, turn: record.turns })
  return turn && turn.replyIds.length === 0 && turn.messageId >= 0 ? [turn.messageId] : []
}

/** search_memory over the mind's hybrid retriever (lexical + dense + spreading activation), as `viewer` may see it. */
function retrieverSearch(host: ToolHost, viewer: Viewer): MemorySearch {
  return async (query, options) => searchMemory(host, viewer, query, options)
}

/**
 * The search behind search_memory (the library's tools, `engram mcp`, `/mcp`) and `engram search`:
 * the retriever's ranking as it is, and for a query that asks for order, change or the whole story
 * the viewer's thread on it first — its turns in time order, each naming the thread (decision 0080).
 * `recordAccess: false` for a person looking (`engram search`), not the agent recalling.
 */
export async function searchMemory(host: Pick<ToolHost, 'retriever' | 'threads' | 'backend'>, viewer: Viewer, query: string, options: MemorySearchOptions & { recordAccess?: false }): Promise<MemorySearchHit[]> {
  const ordinary = async () =>
    (
      await host.retriever.search(query, {
        limit: options.limit,
        viewer,
        ...(options.kinds ? { kinds: options.kinds } : {}),
        ...(options.excludeMessageIds ? { excludeMessageIds: options.excludeMessageIds } : {}),
        ...(options.recordAccess === false ? { recordAccess: false } : {}),
      })
    ).hits
  const hits = await searchWithThreads({ threads: () => host.threads(viewer), index: host.backend.index, visible: (hit) => canSee(viewer, hit.unit) }, query, options, ordinary)
  return hits.map(memorySearchHitOf)
}
