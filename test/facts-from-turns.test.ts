/**
 * `memory.extractFromTurns` (decision 0066): at the end of each turn, what the user stated about
 * themselves reaches that user's own tree through the encoding gate — by the offline rules without
 * a model (marked `method:rules`), by the model behind the fake OpenAI-compatible server with one;
 * a model's facts pass the same gate (copilot mode holds them for the user's answer), and a
 * failed model call falls back to the rules, marked degraded. Over `engram mcp` (the official
 * client over stdio) the message a client primes a turn with is that turn's user message; over
 * HTTP a `/v1/turns` turn is a session turn like the library's.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ManualClock } from '../src/core/clock.ts'
import { extractFacts } from '../src/memory/extraction/extract.ts'
import { openMindInternals } from '../src/mind-internals.ts'
import { type FakeChatRequest, type FakeChatStep, startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'
import { ADA, assertOk, BOB, call, openServeHome } from './support/serve-app.ts'

const read = (path: string): string => (existsSync(path) ? readFileSync(path, 'utf8') : '')

function schemaName(request: Pick<FakeChatRequest, 'body'>): string {
  return (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
}

test('offline, with the setting on: a turn\'s stated facts go to its user\'s profile and rules (method:rules), nothing to another user; off by default', async (t) => {
  const temp = makeTempHome('engram-facts-turns-')
  t.after(temp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const on = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, settings: { 'memory.extractFromTurns': true } })
  const ada = on.session('ada-1', { user: 'ada' })
  await ada.end(await ada.begin("Hi! I'm allergic to peanuts. Never use emojis in replies. Would I like opera? Yesterday I ran my first marathon."), 'Noted.')
  const bob = on.session('bob-1', { user: 'bob' })
  await bob.end(await bob.begin('What is the capital of France?'), 'Paris.')
  await on.idle()
  const facts = (await on.memory.profiles.facts('ada')).map((entry) => entry.text)
  assert.ok(facts.includes('The user is allergic to peanuts.'), facts.join(' | '))
  assert.ok(!facts.some((fact) => /opera/.test(fact)), 'a question is no fact')
  const rules = read(join(temp.home, 'agents/default/users/ada/memory/rules.md'))
  assert.match(rules, /Use emojis in replies\..*method:rules/)
  // A reported event is her lesson (decision 0070), dated from the turn's time.
  assert.match(read(join(temp.home, 'agents/default/users/ada/memory/lessons.md')), /The user ran their first marathon yesterday \(2026-03-01\)\..*method:rules/)
  assert.deepEqual(await on.memory.profiles.facts('bob'), [])
  assert.doesNotMatch(read(join(temp.home, 'agents/default/memory/rules.md')), /emojis/, 'nothing reaches the agent\'s own memory')
  // The save is logged with how the fact was found (a profile line keeps no metadata).
  const writes = await on.scope('ada').view.own.activity.read({ types: ['memory_write'] })
  assert.ok(writes.some((record) => record.content === 'The user is allergic to peanuts.' && record.meta?.method === 'rules'))
  await on.close()

  const off = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null })
  t.after(() => off.close())
  const cy = off.session('cy-1', { user: 'cy' })
  await cy.end(await cy.begin("I'm allergic to shellfish."), 'Noted.')
  await off.idle()
  assert.deepEqual(await off.memory.profiles.facts('cy'), [], 'off by default')
})

test('with the fake model: the facts pass the gate (copilot holds the model\'s medium-confidence facts for the user), and a failed call falls back to the rules, marked degraded', async (t) => {
  const temp = makeTempHome('engram-facts-model-')
  t.after(temp.cleanup)
  let failing = false
  const server = await startFakeOpenAiServer({
    onChat: (request): FakeChatStep => {
      if (schemaName(request) !== 'conversation_facts') return { json: {} }
      if (failing) return { fail: { status: 503 } }
      return { json: { facts: [{ kind: 'profile', text: 'The user keeps bees.' }, { kind: 'always', text: 'Answer in metric units.' }] } }
    },
  })
  t.after(() => server.close())
  const env = { ...temp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await openMindInternals({ home: temp.home, env, ignoreConfigFile: true, clock, embedder: null, settings: { 'memory.extractFromTurns': true, 'memory.mode': 'copilot' } })
  t.after(() => mind.close())
  const ada = mind.session('ada-1', { user: 'ada' })
  await ada.end(await ada.begin('I keep bees, and please always answer in metric units.'), 'Noted.')
  await mind.idle()
  assert.ok(server.requests.some((request) => schemaName(request) === 'conversation_facts'), 'the model was asked')
  const pending = await mind.memory.encoder.pendingConfirmations('ada')
  assert.deepEqual(pending.map((item) => item.engram?.text).sort(), ['Answer in metric units.', 'The user keeps bees.'], 'held by the gate for ada')
  assert.ok(pending.every((item) => item.engram?.source === 'llm' && item.engram.owner === 'user:ada'))
  assert.deepEqual(await mind.memory.profiles.facts('ada'), [], 'nothing written before ada says yes')

  failing = true
  const again = mind.session('ada-2', { user: 'ada' })
  await again.end(await again.begin("I'm allergic to peanuts."), 'Noted.')
  await mind.idle()
  // The rules' fact is the user's own words (high confidence): the copilot gate lets it through.
  assert.deepEqual((await mind.memory.profiles.facts('ada')).map((entry) => entry.text), ['The user is allergic to peanuts.'])
  const writes = await mind.scope('ada').view.own.activity.read({ types: ['memory_write'] })
  assert.ok(writes.some((record) => record.content === 'The user is allergic to peanuts.' && record.meta?.method === 'rules'))
  // What the job reports: the rules stood in, and why.
  const fallback = await extractFacts([{ role: 'user', content: "I'm allergic to peanuts." }], { llm: mind.llm })
  assert.equal(fallback.method, 'rules')
  assert.match(fallback.degraded ?? '', /model call failed/)
  assert.equal(fallback.engrams[0]?.meta.method, 'rules')
})

test('over engram mcp: the message primed_context is asked for is read for facts at the end of its turn, into the connection user\'s tree', async (t) => {
  const temp = makeTempHome('engram-facts-mcp-')
  t.after(temp.cleanup)
  const root = resolve(import.meta.dirname, '..')
  const bin = join(root, 'src/interfaces/cli/bin.ts')
  const env = { ...temp.env, ENGRAM_MEMORY_EXTRACT_FROM_TURNS: 'true' }
  const connect = async (user: string): Promise<Client> => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--home', temp.home, '--user', user], env, cwd: root, stderr: 'pipe' })
    const client = new Client({ name: 'engram-test', version: '1.0.0' })
    await client.connect(transport)
    return client
  }
  const ada = await connect('ada')
  // One message answered with a tool call, the next without one: both are turns of ada's.
  await ada.getPrompt({ name: 'primed_context', arguments: { message: "Hi! I'm allergic to peanuts. Is my note on billing there?" } })
  await ada.callTool({ name: 'search_memory', arguments: { query: 'billing' } })
  await ada.getPrompt({ name: 'primed_context', arguments: { message: 'From now on, answer in metric units.' } })
  await ada.close()
  const bob = await connect('bob')
  await bob.getPrompt({ name: 'primed_context', arguments: { message: 'What time is it in Oslo?' } })
  await bob.close()
  // Whatever the closing processes left queued runs here.
  await promisify(execFile)(process.execPath, [bin, 'maintain', '--home', temp.home, '--json'], { env, cwd: root })
  const mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, embedder: null })
  t.after(() => mind.close())
  assert.deepEqual((await mind.memory.profiles.facts('ada')).map((entry) => entry.text), ['The user is allergic to peanuts.'])
  assert.match(read(join(temp.home, 'agents/default/users/ada/memory/rules.md')), /Answer in metric units\..*method:rules/)
  assert.deepEqual(await mind.memory.profiles.facts('bob'), [])
  assert.doesNotMatch(read(join(temp.home, 'agents/default/memory/rules.md')), /metric/)
})

test('over HTTP: a /v1/turns turn of ada\'s has its stated facts extracted into ada\'s profile, none into bob\'s', async (t) => {
  const served = await openServeHome({ 'memory.extractFromTurns': true })
  t.after(() => served.close())
  const turn = (token: string, session: string, message: string) => call(served.app, 'POST', '/v1/turns/begin', { token, body: { session, message } })
  const begun = assertOk(await turn(ADA, 'ada-http', 'My favorite color is teal.'))
  assertOk(await call(served.app, 'POST', '/v1/turns/end', { token: ADA, body: { session: 'ada-http', turn: begun.turn.number, reply: 'Noted.' } }))
  const bobs = assertOk(await turn(BOB, 'bob-http', 'What is teal?'))
  assertOk(await call(served.app, 'POST', '/v1/turns/end', { token: BOB, body: { session: 'bob-http', turn: bobs.turn.number, reply: 'A colour.' } }))
  await served.mind.idle()
  assert.deepEqual((await served.mind.memory.profiles.facts('ada')).map((entry) => entry.text), ["The user's favorite color is teal."])
  assert.deepEqual(await served.mind.memory.profiles.facts('bob'), [])
})
