/**
 * engram's agent tools as Vercel AI SDK tools. In the tools layer, so that `mind.tools()` reaches
 * it without importing an interface (decision 0061); in a file of its own, loaded only when asked
 * for, so that code paths which never hand tools to the AI SDK do not load it.
 */
import { jsonSchema, type ToolSet, tool } from 'ai'
import type { ToolDispatcher } from './dispatcher.ts'
import { type AnyTool, modelTextOf, toEngramTools } from './adapters.ts'

/**
 * The tools as an AI SDK `tools` record. Each tool's `execute` returns the text the model reads;
 * a failure returns its text marked `Error:` instead of throwing, so one bad call never ends a
 * `generateText` loop. Input is validated by the tool itself (its zod schema), so the model gets
 * our readable message and fix rather than the SDK's validation error.
 */
export function toAiSdkTools(tools: readonly AnyTool[] | ToolDispatcher): ToolSet {
  const record: ToolSet = {}
  for (const engramTool of toEngramTools(tools)) {
    record[engramTool.name] = tool({
      description: engramTool.description,
      inputSchema: jsonSchema<unknown>(engramTool.jsonSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (input: unknown) => modelTextOf(await engramTool.execute(input)),
    })
  }
  return record
}
