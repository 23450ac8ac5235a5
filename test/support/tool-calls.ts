/** Calling agent tools and reading MCP results in tests. */
import assert from 'node:assert/strict'
import type { EngramTool } from '../../src/tools/tool.ts'

/** Runs the tool `name` of `tools` (which must have it) with `input`. */
export async function call(tools: readonly EngramTool[], name: string, input: unknown): Promise<{ text: string; isError?: boolean }> {
  const tool = tools.find((candidate) => candidate.name === name)
  assert.ok(tool, `tool ${name}`)
  return tool.execute(input)
}

export type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean }

/** The text parts of an MCP tool result, joined by lines. */
export const textOf = (result: unknown): string => (result as CallResult).content.map((part) => part.text ?? '').join('\n')
