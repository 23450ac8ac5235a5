/**
 * What counts as a use of a procedure (decision 0047) over MCP (decision 0084): `engram mcp --user X`
 * in a child process, the official MCP client. A procedure the `primed_context` prompt shows and the
 * turn answering it opens is credited one use — what monthly forgetting counts — as a library
 * turn's would be; one shown to another user who does not follow it is not, and neither is being
 * shown again.
 */
import assert from 'node:assert/strict'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openMindInternals, type MindInternals } from '../src/mind-internals.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { call, textOf } from './support/tool-calls.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')
const RESTART = 'agents/default/procedures/restart-ingest.md'

/** Recalls of a procedure: the access counts of its index units. */
async function uses(mind: MindInternals, source: string): Promise<number> {
  const ids = [...(await mind.backend.index.hashes(source)).keys()]
  assert.ok(ids.length > 0, `${source} is indexed`)
  return (await mind.backend.index.get(ids)).reduce((sum, unit) => sum + unit.accessCount, 0)
}

test('over engram mcp, a procedure primed_context shows and the turn answering it opens is credited a use; shown and not followed, it is not', async (t) => {
  const tmp = makeTempHome('engram-mcp-procedure-')
  t.after(tmp.cleanup)
  const setup = await openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true })
  const written = await call(setup.agentTools({ sessionId: 'notes' }), 'write_memory_file', {
    path: 'procedures/restart-ingest.md',
    owner: 'agent',
    content: '# Restart the ingest worker [restart-ingest]\n\n1. Stop the ingest worker\n2. Clear the stuck queue\n3. Start the worker again and watch the logs\n',
  })
  assert.notEqual(written.isError, true, written.text)
  await setup.close()

  const connect = async (user: string): Promise<Client> => {
    const client = new Client({ name: 'engram-test', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', tmp.home, '--user', user], env: tmp.env, cwd: root, stderr: 'pipe' }))
    return client
  }
  const primed = async (client: Client, message: string): Promise<string> => JSON.stringify(await client.getPrompt({ name: 'primed_context', arguments: { message } }))
  const ada = await connect('ada')
  const bob = await connect('bob')
  try {
    // Ada names it; her client's model opens it and walks her through it. The next message ends that turn.
    assert.match(await primed(ada, 'The ingest is stuck. [restart-ingest] please.'), /Restart the ingest worker/)
    assert.match(textOf(await ada.callTool({ name: 'read_memory_file', arguments: { path: 'procedures/restart-ingest.md' } })), /Clear the stuck queue/)
    // Shown again for the next message: a showing is no use.
    assert.match(await primed(ada, 'Thanks. How do I restart the ingest worker next time?'), /Restart the ingest worker/)
    // Bob is shown it by its words and does something else.
    assert.match(await primed(bob, 'Is the ingest worker stuck again? Should I restart it?'), /Restart the ingest worker/)
    assert.equal((await bob.callTool({ name: 'read_memory_file', arguments: { path: 'knowledge/ingest-dashboards.md' } })).isError, true)
  } finally {
    await Promise.all([ada.close(), bob.close()])
  }

  const mind = await openMindInternals({ home: tmp.home, env: tmp.env, ignoreConfigFile: true })
  t.after(() => mind.close())
  assert.equal(await uses(mind, RESTART), 1, 'one use: the turn that opened it')
  const credits = async (owner: 'user:ada' | 'user:bob' | 'agent') =>
    (await mind.backend.owned(owner).activity.read({ types: ['memory_write'] })).filter((record) => record.meta?.origin === 'procedure_use').map((record) => record.meta)
  const [credit, ...more] = await credits('user:ada')
  assert.deepEqual(more, [])
  assert.deepEqual([credit?.path, credit?.session, credit?.turn], [RESTART, 'mcp:ada', 1])
  assert.match(String(credit?.reason), /read_memory_file/)
  assert.deepEqual(await credits('user:bob'), [])
  assert.deepEqual(await credits('agent'), [])
})
