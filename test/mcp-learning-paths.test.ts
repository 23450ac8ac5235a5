/**
 * Two more ways a host reaches engram over MCP (decision 0045), beside
 * those of mcp-learning.test.ts: `engram mcp` without `--user` (the agent alone) learns from its
 * failed calls in the agent's own memory, and a user's session over `/mcp` in `engram serve` (a
 * token for that user) gets its sleep replay and its episode in the user's tree at the idle
 * boundary, as `engram mcp --user` does.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ManualClock } from '../src/core/clock.ts'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { createMind } from '../src/mind.ts'
import { startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { answer, failThreeTimes, lessonFor, listenOnLoopback, postMortemsFor, RULE, read, waitFor } from './support/mcp-learning.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'src/interfaces/cli/bin.ts')

test('engram mcp without --user: the failed calls teach the agent a rule and a lesson in its own memory', async (t) => {
  const tmp = makeTempHome('engram-mcp-agent-')
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: answer })
  t.after(() => server.close())
  const env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  const client = new Client({ name: 'engram-test', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', tmp.home], env, cwd: root, stderr: 'pipe' }))
  try {
    // The post-mortem's lesson names whose calls it read by the missing notes' names.
    await failThreeTimes(client, 'agent')
    await client.getPrompt({ name: 'primed_context', arguments: { message: 'Where are the notes?' } })
    const memory = join(tmp.home, 'agents/default/memory')
    await waitFor("the agent's rule and lesson", () => RULE.test(read(join(memory, 'rules.md'))) && read(join(memory, 'lessons.md')).includes(lessonFor('agent')))
    assert.equal(postMortemsFor(server, 'agent'), 1)
  } finally {
    await client.close()
  }
})

test("a user's session over /mcp in engram serve gets its sleep replay and its episode in the user's tree", async (t) => {
  const tmp = makeTempHome('engram-serve-mcp-episode-')
  t.after(tmp.cleanup)
  const server = await startFakeOpenAiServer({ onChat: answer })
  t.after(() => server.close())
  const env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  const mind = await createMind({ home: tmp.home, env, ignoreConfigFile: true })
  const token = 'ada-token-0123456789abcdef'
  const app = createServeApp({ mind, credentials: parseCredentials(`${token}=default:ada`) })
  const { port, close } = await listenOnLoopback(app.fetch)
  try {
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
    const client = new Client({ name: 'engram-test', version: '1.0.0' })
    await client.connect(transport)
    await client.getPrompt({ name: 'primed_context', arguments: { message: 'Find my notes on the billing queue.' } })
    await failThreeTimes(client, 'ada')
    await transport.terminateSession()
    await client.close()
  } finally {
    await close()
    await mind.close()
  }

  // A later process, eleven minutes on: the session has been idle past its boundary.
  const later = await createMind({ home: tmp.home, env, ignoreConfigFile: true, clock: new ManualClock(new Date(Date.now() + 11 * 60_000).toISOString()) })
  t.after(() => later.close())
  assert.equal((await later.sessions.get('mcp:ada'))?.user, 'ada')
  const report = await later.maintain()
  const replay = report.jobs.find((job) => job.kind === 'sleep-replay' && job.session === 'mcp:ada')
  assert.equal(replay?.status, 'done', JSON.stringify(report.jobs))
  assert.ok(Number(replay?.result?.steps) >= 3, JSON.stringify(replay))
  assert.equal(report.boundaries.find((boundary) => boundary.session === 'mcp:ada')?.kind, 'recorded', JSON.stringify(report.boundaries))
  const episodes = join(tmp.home, 'agents/default/users/ada/episodes')
  assert.ok(readdirSync(episodes).some((day) => read(join(episodes, day)).includes('Looking for notes that were not there')))
  assert.match(read(join(tmp.home, 'agents/default/users/ada/memory/rules.md')), RULE)
})
