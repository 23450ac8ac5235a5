/**
 * More ways a host reaches engram over MCP (decision 0045), beside
 * those of mcp-learning.test.ts: `engram mcp` without `--user` (the agent alone) learns from its
 * failed calls in the agent's own memory; a user's session over `/mcp` in `engram serve` (a
 * token for that user) gets its sleep replay and its episode in the user's tree at the idle
 * boundary, as `engram mcp --user` does; and `engram skills save --user` drafts from the work that
 * user did over `engram mcp`.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ManualClock } from '../src/core/clock.ts'
import { createServeApp } from '../src/interfaces/http/app.ts'
import { parseCredentials } from '../src/interfaces/http/credentials.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { answer, failThreeTimes, lessonFor, listenOnLoopback, postMortemsFor, RULE, read, waitFor } from './support/mcp-learning.ts'

const run = promisify(execFile)
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
  const mind = await openMindInternals({ home: tmp.home, env, ignoreConfigFile: true })
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
  const later = await openMindInternals({ home: tmp.home, env, ignoreConfigFile: true, clock: new ManualClock(new Date(Date.now() + 11 * 60_000).toISOString()) })
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

test("engram skills save --user drafts from the work that user did over engram mcp; another user's save and the agent's find none of it", async (t) => {
  const tmp = makeTempHome('engram-mcp-skill-')
  t.after(tmp.cleanup)
  const draft = { label: 'churn_summary', name: 'Churn summary', when_to_use: 'The user asks for the churn in a customer export.', declarative_md: '1. Load the export.\n2. Count the accounts that left.\n3. Split by plan.' }
  const server = await startFakeOpenAiServer({ onChat: (request) => (JSON.stringify(request.body).includes('"skill_draft"') ? { json: draft } : answer(request)) })
  t.after(() => server.close())
  const env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0', ENGRAM_MCP_TOOLS: 'all' }
  const client = new Client({ name: 'engram-test', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', tmp.home, '--user', 'ada'], env, cwd: root, stderr: 'pipe' }))
  try {
    await client.getPrompt({ name: 'primed_context', arguments: { message: 'Summarise the churn in customers_q3.csv for me.' } })
    const saved = await client.callTool({ name: 'memorize', arguments: { entries: [{ text: 'customers_q3.csv has one row per account, churn in column "left"', kind: 'lesson' }] } })
    assert.notEqual((saved as { isError?: boolean }).isError, true)
    const written = await client.callTool({ name: 'write_memory_file', arguments: { path: 'knowledge/churn-q3.md', content: '# Churn in Q3\nChurn was 4.2% in Q3, mostly in the monthly plans.\n' } })
    assert.notEqual((written as { isError?: boolean }).isError, true)
  } finally {
    await client.close()
  }

  const skills = (args: string[]) => run(process.execPath, [bin, 'skills', 'save', '--home', tmp.home, '--json', ...args], { env, cwd: root })
  const { stdout } = await skills(['--user', 'ada'])
  assert.equal((JSON.parse(stdout) as { data: { label: string } }).data.label, 'churn_summary')
  const prompt = JSON.stringify(server.requests.filter((request) => JSON.stringify(request.body).includes('"skill_draft"')).at(-1)?.body)
  assert.match(prompt, /customers_q3\.csv has one row per account/, 'drafted from her calls')
  assert.match(prompt, /Churn was 4\.2% in Q3/)
  const meta = JSON.parse(readFileSync(join(tmp.home, 'agents/default/skills/churn_summary/meta.json'), 'utf8')) as { provenance: { user?: string } }
  assert.equal(meta.provenance.user, 'ada', 'the skill says whose work it was drafted from')
  for (const args of [['--user', 'bob'], []]) {
    await assert.rejects(skills(args), (error: { stdout?: string }) => /no recent activity/i.test(String(error.stdout)), `skills save ${args.join(' ')}`)
  }
})
