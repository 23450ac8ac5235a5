/**
 * What each agent tool does to the memory, as MCP tool annotations (decision 0023): a client may run the
 * read-only ones without asking and confirm the destructive one. Typed by `AGENT_TOOL_NAMES`, so a
 * new tool cannot be added without saying what it does. None reaches outside the agent's memory
 * (`openWorldHint: false`: a memory tool's world is closed, as the MCP specification puts it).
 */
import type { AgentToolName } from './agent-tools.ts'
import type { EngramTool, ToolAnnotations } from './tool.ts'

const AGENT_TOOL_ANNOTATIONS: Readonly<Record<AgentToolName, ToolAnnotations>> = Object.freeze({
  // Deduplicated on encode: memorizing the same thing twice saves it once.
  memorize: { title: 'Memorize', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // The reads count each recall in the memories' access statistics (the Hebbian term of ranking);
  // that is bookkeeping, not a change a caller sees.
  recall: { title: 'Recall episodes', readOnlyHint: true, openWorldHint: false },
  search_memory: { title: 'Search memory', readOnlyHint: true, openWorldHint: false },
  read_memory_file: { title: 'Read a memory file', readOnlyHint: true, openWorldHint: false },
  // An overwrite keeps the previous version under archive/versions/: nothing is lost.
  write_memory_file: { title: 'Write a memory file', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  // The memory leaves search and the prompt; only a person brings it back (`engram restore`).
  // A second call finds nothing left to forget.
  forget_memory: { title: 'Forget a memory', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  recall_skill: { title: 'Recall a skill', readOnlyHint: true, openWorldHint: false },
  // Each report adds to a procedure's success or failure count.
  report_procedure_outcome: { title: 'Report how a procedure went', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  // Searches and expands the conversation, and replaces the user's profile (its old version is kept).
  memory: { title: 'Conversation memory and user profile', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

/** The tool with its annotations (a tool that is not an agent tool is returned as it is). */
export function withAnnotations(tool: EngramTool): EngramTool {
  const annotations = (AGENT_TOOL_ANNOTATIONS as Readonly<Record<string, ToolAnnotations>>)[tool.name]
  return annotations ? { ...tool, annotations } : tool
}
