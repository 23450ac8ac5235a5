/**
 * The tools an MCP client sees (decision 0067). By default (`mcp.tools: essential`) one tool per
 * question — search, save, read a file, write a file, forget, load a skill — each with a short
 * description, a title, annotations and an output schema: a client's model reads every listed
 * description on every turn, and three tools that all answered "search" (recall, search_memory,
 * memory → search) made it guess. `mcp.tools: all` lists every agent tool as the library gives it
 * (`mind.tools()`), for hosts built on the longer set; the library's own descriptions stay as they are.
 *
 * The tools keep their names and their inputs: an MCP call runs the agent tool of that name.
 */
import type { ConfigValues } from '../../config/resolve.ts'
import type { AgentToolName } from '../../tools/agent-tools.ts'
import type { EngramTool, ToolResult } from '../../tools/tool.ts'

/** An agent tool as MCP lists it: with the JSON Schema its structured results follow. */
export interface McpTool extends EngramTool {
  outputSchema?: Record<string, unknown>
}

/** The key of a structured result that holds what the model reads (the tool's text). */
export const RESULT_TEXT_KEY = 'result'

const texts = { type: 'array', items: { type: 'string' } }
const objects = { type: 'array', items: { type: 'object' } }

/** The output schema of a tool whose structured result holds `fields` beside its text (and a failure's code). */
function outputSchema(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      [RESULT_TEXT_KEY]: { type: 'string', description: 'What the model reads.' },
      code: { type: 'string', description: 'A failure\'s error code.' },
      ...fields,
    },
    required: [RESULT_TEXT_KEY],
  }
}

/** The essential set: for each tool, its description for MCP (all together ≤ 1,500 characters) and its output. */
const ESSENTIAL: Partial<Record<AgentToolName, { description: string; output: Record<string, unknown> }>> = {
  search_memory: {
    description: 'Search your long-term memory (rules, lessons, facts about the user, notes, past conversations) before answering. Returns ranked hits with their source; read a whole file with read_memory_file.',
    output: outputSchema({ hits: objects }),
  },
  memorize: {
    description: 'Save what is worth remembering later: a fact about the user, a preference, a rule, a lesson learned. One entry per thing, as a sentence that stands alone. Saving it twice keeps one.',
    output: outputSchema({ saved: objects, duplicates: objects, pending: objects, suppressed: objects, rejected: objects }),
  },
  read_memory_file: {
    description: 'Read a memory file by its path (e.g. memory/lessons.md, knowledge/<name>.md) a page of lines at a time; a folder\'s path lists its files.',
    output: outputSchema({ path: { type: 'string' }, entries: texts, from: { type: 'integer' }, to: { type: 'integer' }, totalLines: { type: 'integer' } }),
  },
  write_memory_file: {
    description: 'Write or append to a memory file (knowledge/, procedures/, memory/topics/): notes kept whole. An overwritten file\'s old version is archived.',
    output: outputSchema({ path: { type: 'string' } }),
  },
  forget_memory: {
    description: 'Forget a wrong or outdated memory (a rule, lesson, fact, or file) by its text, id or path. It moves to the archive, out of search; a person can restore it.',
    output: outputSchema({ path: { type: 'string' }, archive: { type: 'string' } }),
  },
  recall_skill: {
    description: 'Load a saved skill (a procedure you learned) by its label before doing the task it covers.',
    output: outputSchema({ requested: { type: 'string' }, label: { type: 'string' } }),
  },
}

/** Whether a connection with `set` lists the tool `name`. */
export function mcpOffers(set: ConfigValues['mcp']['tools'], name: string): boolean {
  return set === 'all' || Object.hasOwn(ESSENTIAL, name)
}

/** The agent tools as MCP offers them: the essential set (default) or all of them, as given. */
export function mcpToolsOf(tools: readonly EngramTool[], set: ConfigValues['mcp']['tools']): McpTool[] {
  if (set === 'all') return [...tools]
  const essential: McpTool[] = []
  for (const tool of tools) {
    const mcp = (ESSENTIAL as Record<string, { description: string; output: Record<string, unknown> }>)[tool.name]
    if (mcp) essential.push({ ...tool, description: mcp.description, outputSchema: mcp.output })
  }
  return essential
}

/** A result's structured content under an output schema: its data, and its text under `result`. */
export function structuredResult(result: ToolResult): Record<string, unknown> {
  const data = typeof result.data === 'object' && result.data !== null && !Array.isArray(result.data) ? (JSON.parse(JSON.stringify(result.data)) as Record<string, unknown>) : {}
  return { ...data, [RESULT_TEXT_KEY]: result.text }
}
