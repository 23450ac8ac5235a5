/**
 * An error of `write_memory_file` over MCP names only tools the connection lists (decisions 0067,
 * 0070): with the essential set (the default) a procedure's counts are not the agent's to set, and
 * the fix says in words what to do, without `report_procedure_outcome`, which the connection does
 * not have; with `mcp.tools: all` it names that tool. A user's profile is changed through
 * `memorize`, which every set has, never through the `memory` tool. Checked with the official client.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { createMindMcpServer } from '../src/interfaces/mcp/mind-server.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

type CallResult = { content: Array<{ type: string; text?: string }>; isError?: boolean }
const textOf = (result: CallResult): string => result.content.map((part) => part.text ?? '').join('\n')

const PROCEDURE = '---\nsuccess_count: 12\n---\n# Deploy\n1. Build.\n2. Ship.\n'

test('over MCP, write_memory_file\'s errors name only tools the connection lists', async (t) => {
  const temp = makeTempHome('engram-mcp-errors-')
  t.after(temp.cleanup)
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, embedder: null })
  t.after(() => mind.close())
  for (const set of ['essential', 'all'] as const) {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const client = new Client({ name: 'tool-errors-test', version: '1.0.0' })
    await Promise.all([createMindMcpServer(mind, { session: { sessionId: `mcp-${set}`, user: 'ada' }, tools: set }).connect(serverSide), client.connect(clientSide)])
    try {
      const listed = new Set((await client.listTools()).tools.map((tool) => tool.name))
      const counts = (await client.callTool({ name: 'write_memory_file', arguments: { path: 'procedures/deploy.md', content: PROCEDURE } })) as CallResult
      assert.equal(counts.isError, true, textOf(counts))
      const profile = (await client.callTool({ name: 'write_memory_file', arguments: { path: 'users/ada.md', content: 'Likes tea.' } })) as CallResult
      assert.equal(profile.isError, true, textOf(profile))
      assert.match(textOf(profile), /memorize/)
      for (const result of [counts, profile]) {
        // Every tool name an error mentions is one this connection lists.
        const named = [...textOf(result).matchAll(/\b(?:memorize|recall|search_memory|read_memory_file|write_memory_file|forget_memory|recall_skill|report_procedure_outcome|memory tool)\b/g)].map((match) => match[0].replace(' tool', ''))
        for (const name of named) assert.ok(listed.has(name), `${set}: the error names ${name}, which the connection does not list: ${textOf(result)}`)
      }
      if (set === 'essential') {
        assert.ok(!listed.has('report_procedure_outcome'))
        assert.match(textOf(counts), /follow the procedure in a session and let engram count how it went/)
      } else assert.match(textOf(counts), /call report_procedure_outcome after following the procedure/)
    } finally {
      await client.close()
    }
  }
})
