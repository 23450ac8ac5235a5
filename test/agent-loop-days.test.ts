/**
 * The agent loop as a host really runs it, over several simulated days (decision 0020):
 * the AI SDK's own `generateText` and `streamText` against the fake OpenAI-compatible server,
 * through the explicit loop (`session.begin` → the model with `turn.system`, `turn.messages`,
 * `toAiSdkTools(turn.tools)` → `session.end(turn, result.responseMessages)`) and through
 * `engramMiddleware`, with a new `mind.session(id)` (or a new middleware) on every turn, the pattern
 * monitor in `active` mode, a manual clock and `mind.maintain()` between days. Only the public
 * entry points are used (`engram`, `engram/ai-sdk`, `engram/test`).
 *
 * Everything is checked where it matters: in the request bodies the model server received. Ada
 * works with the agent for three days; Bob talks to the same agent on day 2 and 3 and must never
 * see anything of hers.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai'
import { z } from 'zod'
import { engramMiddleware, toAiSdkTools } from '../src/ai-sdk.ts'
import { createMind, type Mind, type SessionOptions, type Turn } from '../src/index.ts'
import { type FakeChatRequest, type FakeChatStep, type FakeOpenAiServer, type FakeRequest, ManualClock, makeTempHome, startFakeOpenAiServer, type TempHome } from '../src/test.ts'

const MINUTE = 60_000
type HostTool = NonNullable<SessionOptions['tools']>[number]

/** The agent's own tool: a deploy that refuses every target (there is never a build artifact). */
const deploy: HostTool = {
  name: 'deploy',
  description: 'Deploy a service to a target environment.',
  inputSchema: z.object({ service: z.string(), target: z.string() }) as z.ZodType<unknown>,
  async run(input) {
    const { service, target } = input as { service: string; target: string }
    return { isError: true, text: `Deploy refused for ${service} -> ${target}: no build artifact.` }
  },
}

// What the model server is told to answer, in order: a fixed step, or one that reads the request (as
// a model reads its prompt). Every turn must use up exactly what it scripted.
type Step = FakeChatStep | ((request: FakeChatRequest) => FakeChatStep)
const script: Step[] = []

/** The chat messages of a request as the OpenAI wire format has them. */
interface WireMessage {
  role: string
  content: string | null
  tool_call_id?: string
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>
}
interface WireTool {
  type: string
  function: { name: string; description: string }
}
const messagesOf = (request: FakeRequest): WireMessage[] => request.body.messages
const systemOf = (request: FakeRequest): string => messagesOf(request).find((m) => m.role === 'system')?.content ?? ''
const toolResult = (request: FakeRequest, callId: string): string => messagesOf(request).find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content ?? ''
const descriptions = (request: FakeRequest): Map<string, string> => new Map((request.body.tools as WireTool[]).map((t) => [t.function.name, t.function.description]))

let tmp: TempHome
let server: FakeOpenAiServer
let mind: Mind
const clock = new ManualClock('2026-03-02T09:00:00Z') // a Monday
const chatModel = () => createOpenAICompatible({ name: 'agent', baseURL: server.url, apiKey: 'test' })('agent-model')
/** Every chat request made for a user, to check at the end that Bob's never carried Ada's memory. */
const requestsOf: Record<string, FakeRequest[]> = { ada: [], bob: [] }

before(async () => {
  tmp = makeTempHome()
  server = await startFakeOpenAiServer({
    onChat: (request) => {
      const step = script.shift()
      if (step === undefined) return { fail: { status: 500, body: { error: { message: 'the test scripted no answer for this call', type: 'server_error' } } } }
      return typeof step === 'function' ? step(request) : step
    },
  })
  mind = await createMind({
    home: tmp.home,
    env: tmp.env,
    ignoreConfigFile: true,
    clock,
    settings: {
      'learning.patternMonitorMode': 'active',
      // A small working memory, so that Monday's conversation is folded into a summary by its own turns.
      'context.budget': 400,
      'context.freshTail': 4,
      'context.leafChunk': 4,
    },
  })
})
after(async () => {
  await mind?.close()
  await server?.close()
  tmp?.cleanup()
})

interface Played {
  /** The model calls of this turn, in order. */
  requests: FakeRequest[]
  text: string
}

/** Runs `steps` through the model server for one turn and checks that the turn used all of them. */
async function withScript(user: string, steps: Step[], run: () => Promise<string>): Promise<Played> {
  script.push(...steps)
  const from = server.requests.length
  const text = await run()
  await mind.idle()
  assert.equal(script.length, 0, 'every scripted model answer was asked for')
  const requests = server.requests.slice(from).filter((request) => request.path === '/v1/chat/completions')
  requestsOf[user]?.push(...requests)
  clock.advance(3 * MINUTE)
  return { requests, text }
}

/** One turn of the explicit loop, on a Session object made for this turn only. */
async function explicitTurn(sessionId: string, user: string, message: string, steps: Step[]): Promise<Played & { turn: Turn }> {
  const session = mind.session(sessionId, { user, tools: [deploy] })
  const turn = await session.begin(message)
  const played = await withScript(user, steps, async () => {
    const result = await generateText({ model: chatModel(), system: turn.system, messages: turn.messages, tools: toAiSdkTools(turn.tools), stopWhen: stepCountIs(5) })
    await session.end(turn, result.responseMessages)
    return result.text
  })
  return { ...played, turn }
}

/** One turn through the middleware, built for this request only; the host sends only the new message. */
async function middlewareTurn(sessionId: string, user: string, message: string, steps: Step[], options: { stream?: boolean } = {}): Promise<Played> {
  const memory = engramMiddleware({ mind, sessionId, user, tools: [deploy] })
  const model = wrapLanguageModel({ model: chatModel(), middleware: memory })
  return withScript(user, steps, async () => {
    if (!options.stream) return (await generateText({ model, tools: memory.tools, prompt: message, stopWhen: stepCountIs(5) })).text
    let streamed = ''
    for await (const delta of streamText({ model, tools: memory.tools, prompt: message, stopWhen: stepCountIs(5) }).textStream) streamed += delta
    return streamed
  })
}

const home = (rel: string): string => join(tmp.home, rel)
const read = (rel: string): string => (existsSync(home(rel)) ? readFileSync(home(rel), 'utf8') : '')

const NUDGE = "[Note from your memory's self-check, not part of the tool's output"
const DEPLOY_LESSON = 'Run the build before deploy: it refuses a target without a build artifact'
const NEVER_RULE = 'Use time.sleep() in scratchpad cells'

/**
 * Searches a curious model makes through every read tool, and what each finds in Ada's sessions. Their
 * words name none of her secrets, so that a secret in Bob's requests can only have come from engram.
 */
const PROBES: Array<{ name: string; input: unknown; finds: RegExp }> = [
  { name: 'search_memory', input: { query: 'salary' }, finds: /Salary: 120k/ },
  { name: 'recall', input: { query: 'billing migration queue' }, finds: /billing cron/ },
  { name: 'memory', input: { action: 'search', query: 'deploy refused' }, finds: /Deploy refused for billing/ },
  { name: 'search_memory', input: { query: 'scratchpad cells sleep' }, finds: /Never: Use time\.sleep\(\) in scratchpad cells/ },
  { name: 'memory', input: { action: 'profile_get' }, finds: /Name: Ada Lovelace/ },
]
const probeCalls = (prefix: string) => PROBES.map((probe, i) => ({ id: `${prefix}${i + 1}`, name: probe.name, input: probe.input }))

test('three days of an agent loop: nudges, never-rules, identity, tool wisdom, the current task, tool calls kept, users kept apart', async () => {
  // ── Day 1, Monday: Ada, explicit loop, session "ada-mon". ──────────────────────────────────────
  const t1 = await explicitTurn('ada-mon', 'ada', 'Hi, my name is Ada Lovelace. I look after the billing service.', [{ text: 'Nice to meet you, Ada.' }])
  assert.equal(t1.text, 'Nice to meet you, Ada.')
  assert.equal(t1.turn.number, 1)

  // (1) The deploy fails twice in a row: the pattern monitor's nudge is in the tool result the model reads.
  const t2 = await explicitTurn('ada-mon', 'ada', 'Please deploy the billing service to staging.', [
    { toolCalls: [{ id: 'c1', name: 'deploy', input: { service: 'billing', target: 'staging' } }] },
    { toolCalls: [{ id: 'c2', name: 'deploy', input: { service: 'billing', target: 'staging-eu' } }] },
    { text: 'The deploy was refused twice: there is no build artifact.' },
  ])
  assert.equal(t2.requests.length, 3)
  assert.equal(toolResult(t2.requests[1]!, 'c1'), 'Error: Deploy refused for billing -> staging: no build artifact.', 'one failure is not a pattern')
  assert.ok(toolResult(t2.requests[2]!, 'c2').includes(NUDGE))
  assert.match(
    toolResult(t2.requests[2]!, 'c2'),
    /^Error: Deploy refused for billing -> staging-eu: no build artifact\.\n\n\[Note from your memory's self-check[^\n]*\]\n- When a tool call fails twice in a row, [^\n]* \(self-check: repeated_tool_error\)$/,
  )

  // The user teaches two things; the model memorizes them, one tagged for the deploy tool.
  const t3 = await explicitTurn('ada-mon', 'ada', 'For next time: run the build before you deploy. And never use time.sleep() in scratchpad cells.', [
    {
      toolCalls: [
        {
          id: 'm1',
          name: 'memorize',
          input: { entries: [{ text: DEPLOY_LESSON, kind: 'lesson', tool: 'deploy' }, { text: NEVER_RULE, kind: 'never' }] },
        },
      ],
    },
    { text: 'Noted, both of them.' },
  ])
  // (6, first half) Turn 2's tool calls and results, stored by session.end, come back as structured parts.
  const calls = t3.turn.messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((part) => part.type === 'tool-call') : []))
  assert.deepEqual(calls.map((part) => part.type === 'tool-call' && [part.toolCallId, part.toolName, part.input]), [
    ['c1', 'deploy', { service: 'billing', target: 'staging' }],
    ['c2', 'deploy', { service: 'billing', target: 'staging-eu' }],
  ])
  const results = t3.turn.messages.flatMap((m) => (m.role === 'tool' ? m.content : []))
  assert.deepEqual(results.map((part) => part.toolCallId), ['c1', 'c2'])
  assert.match(JSON.stringify(results[1]?.output), /no build artifact[\s\S]*self-check: repeated_tool_error/, 'the nudge is kept with the result it came with')
  const replayed = messagesOf(t3.requests[0]!)
  assert.deepEqual(replayed.flatMap((m) => m.tool_calls?.map((call) => call.id) ?? []), ['c1', 'c2'], 'the model sees the earlier tool calls again')
  assert.match(toolResult(t3.requests[1]!, 'm1'), /saved \[never, global\] Never: Use time\.sleep\(\) in scratchpad cells/)

  await explicitTurn('ada-mon', 'ada', 'TODO: migrate the billing cron to the new queue', [{ text: 'It is on the list.' }])
  // Four turns of Ada's, each on a new Session object: no identity extraction yet.
  assert.equal(read('shared/users/ada.md'), '')
  assert.deepEqual(await mind.backend.lifecycle.jobs('default', { kind: 'identity' }), [])

  // ── Day 2, Tuesday: Monday's session ends at the idle boundary. ─────────────────────────────────
  clock.advanceDays(1)
  const tuesday = await mind.maintain()
  assert.ok(tuesday.boundaries.some((boundary) => boundary.kind === 'recorded' && boundary.session === 'ada-mon'), JSON.stringify(tuesday.boundaries))
  assert.match(read('agents/default/users/ada/episodes/2026-03-02.md'), /billing/, "Monday's episode, in Ada's tree")
  assert.match(read('agents/default/users/ada/state/current_task.md'), /migrate the billing cron to the new queue/)

  // Ada's fifth turn, through the middleware (a new one per request, only the new message sent).
  const t5 = await middlewareTurn('ada-tue', 'ada', 'Good morning! What is on my list today?', [{ text: 'The billing cron migration is still open.' }])
  const system5 = systemOf(t5.requests[0]!)
  // (5) The current task, written at Monday's boundary, is in Tuesday's system prompt.
  assert.match(system5, /## Your memory — Current task\n- \[ \] migrate the billing cron to the new queue\n/)
  // (2) The never-rule reads as never in the system prompt: every line that shows it says "Never:".
  assertReadsAsNever('system prompt', system5)
  // (4) The lesson tagged for deploy is in deploy's description, and in no other tool's.
  const tools5 = descriptions(t5.requests[0]!)
  assert.ok(tools5.size >= 9, [...tools5.keys()].join(', '))
  assert.match(tools5.get('deploy') ?? '', new RegExp(`^Deploy a service to a target environment\\.[\\s\\S]*${literally(DEPLOY_LESSON).source}`))
  for (const [name, description] of tools5) if (name !== 'deploy') assert.ok(!description.includes(DEPLOY_LESSON), `the deploy lesson on ${name}`)
  // (3) Identity extraction ran at Ada's fifth turn, counted over new Session objects and days.
  const [identity] = await mind.backend.lifecycle.jobs('default', { kind: 'identity' })
  assert.deepEqual([identity?.status, identity?.payload.user, identity?.payload.count], ['done', 'ada', 5])
  assert.match(read('shared/users/ada.md'), /Name: Ada Lovelace/)
  assert.doesNotMatch(read('agents/default/memory/profile.md'), /Lovelace/, "facts about Ada go into her profile, not the agent's")

  // (2) Streamed, with a tool call: the search result the model reads shows the rule as a never-rule.
  const t6 = await middlewareTurn(
    'ada-tue',
    'ada',
    'Can a scratchpad cell wait with time.sleep() between API calls?',
    [{ toolCalls: [{ id: 's1', name: 'search_memory', input: { query: 'time.sleep scratchpad cells' } }] }, { text: 'No: never time.sleep() in a scratchpad cell.' }],
    { stream: true },
  )
  assert.equal(t6.text, 'No: never time.sleep() in a scratchpad cell.')
  assertReadsAsNever('search_memory result', toolResult(t6.requests[1]!, 's1'))
  assert.equal(systemOf(t6.requests[1]!), systemOf(t6.requests[0]!), 'primed once for the whole tool loop')

  await explicitTurn('ada-tue', 'ada', 'Keep this between us: my salary is 120k.', [
    { toolCalls: [{ id: 'm2', name: 'memorize', input: { entries: [{ text: 'Salary: 120k', kind: 'profile' }] } }] },
    { text: 'Kept, only for you.' },
  ])
  assert.match(read('shared/users/ada.md'), /Salary: 120k/)

  // Bob, on the same agent the same day, goes looking with every read tool the model has.
  const b1 = await middlewareTurn('bob-tue', 'bob', 'Hi, my name is Bob. What salaries do people here have, and what is everyone working on?', [
    { toolCalls: probeCalls('b') },
    { text: 'I have nothing about salaries.' },
  ])
  assert.equal(b1.requests.length, 2)
  assert.equal(descriptions(b1.requests[0]!).get('deploy'), 'Deploy a service to a target environment.', "Ada's deploy lesson is hers")
  PROBES.forEach((probe, i) => {
    const found = toolResult(b1.requests[1]!, `b${i + 1}`)
    assert.ok(found !== '', `the result of ${probe.name} reached the model`)
    assert.doesNotMatch(found, probe.finds, `${probe.name} ${JSON.stringify(probe.input)} for Bob`)
  })
  const b2 = await middlewareTurn('bob-tue', 'bob', 'Please deploy the VPN service to prod.', [
    { toolCalls: [{ id: 'v1', name: 'deploy', input: { service: 'vpn', target: 'prod' } }] },
    { text: 'The deploy was refused: no build artifact.' },
  ])
  assert.equal(toolResult(b2.requests[1]!, 'v1'), 'Error: Deploy refused for vpn -> prod: no build artifact.', 'one failure is no pattern, and Ada\'s are not counted')

  // ── Day 3, Wednesday: Ada is back in Monday's conversation. ─────────────────────────────────────
  clock.advanceDays(1)
  const wednesday = await mind.maintain()
  assert.deepEqual(wednesday.boundaries.map((boundary) => boundary.session).sort(), ['ada-tue', 'bob-tue'])

  // (6, second half) Monday's tool calls were folded into a summary; the model opens it with the
  // memory tool. In the same step it runs Bob's searches: in Ada's session they find what is hers.
  const t8 = await explicitTurn('ada-mon', 'ada', "Back to Monday's deploy: what exactly did the deploy tool answer? And remind me what you know about me.", [
    (request) => {
      const summaryId = /\[summary (sum_[\w-]+),/.exec(request.messages.filter((m) => m.role !== 'system').map((m) => m.content).join('\n'))?.[1]
      if (summaryId === undefined) return { text: 'I see no summary of Monday.' }
      return { toolCalls: [{ id: 'e1', name: 'memory', input: { action: 'expand', id: summaryId, toMessages: true } }, ...probeCalls('a')] }
    },
    { text: 'It said: "Deploy refused for billing -> staging: no build artifact."' },
  ])
  assert.equal(t8.turn.number, 5, "Monday's conversation goes on counting")
  assert.equal(t8.requests.length, 2, 'the model found the summary and expanded it')
  const summary = t8.turn.messages.find((m) => m.role === 'user' && m.content.startsWith('[summary sum_'))
  // Offline, the summary is extractive and says so; it still says something of what it folds.
  assert.match(String(summary?.content), /^\[summary sum_\w+, extractive — not LLM-written; depth \d; 8 messages, 2026-03-02 09:00 → 2026-03-02 09:03\]\n.*deploy the billing service/)
  const replayedCalls = t8.turn.messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content : [])).map((part) => part.type === 'tool-call' && part.toolCallId)
  assert.deepEqual(replayedCalls, ['m1'], "turn 2's deploy calls are folded into the summary, turn 3's memorize call is not")
  const expanded = toolResult(t8.requests[1]!, 'e1')
  assert.match(expanded, /\[tool call deploy c1\] \{"service":"billing","target":"staging"\}/)
  assert.match(expanded, /\[tool result deploy c1\] Error: Deploy refused for billing -> staging: no build artifact\./)
  assert.match(expanded, /\[tool call deploy c2\] \{"service":"billing","target":"staging-eu"\}/)
  assert.match(expanded, /\[tool result deploy c2\] Error: Deploy refused for billing -> staging-eu: no build artifact\.[\s\S]*self-check: repeated_tool_error/)
  PROBES.forEach((probe, i) => {
    assert.match(toolResult(t8.requests[1]!, `a${i + 1}`), probe.finds, `${probe.name} ${JSON.stringify(probe.input)} for Ada`)
  })
  // Ada's profile is her identity in the memory context.
  assert.match(t8.turn.systemParts.memory, /Name: Ada Lovelace/)
  assert.match(t8.turn.systemParts.memory, /Salary: 120k/)

  const b3 = await middlewareTurn('bob-wed', 'bob', 'Good morning. Anything on my list, and do you remember my name?', [{ text: 'You are Bob.' }])
  assert.match(systemOf(b3.requests[0]!), /Bob/, "Bob's own profile")

  // (7) Nothing of Ada's reached any of Bob's model calls: not her name, profile, task, rules or tool wisdom.
  assert.ok(requestsOf.bob!.length >= 5)
  const secrets = [/Lovelace/, /120k/, /billing cron/, /time\.sleep/, literally(DEPLOY_LESSON), /staging/, /\bAda\b/]
  for (const request of requestsOf.bob!) {
    const sent = JSON.stringify(request.body)
    for (const secret of secrets) assert.doesNotMatch(sent, secret, `Bob's request carried ${secret}`)
  }
  // …while Ada's requests had them all (the check above looks for things that were there to leak).
  const adaSent = requestsOf.ada!.map((request) => JSON.stringify(request.body)).join('\n')
  for (const secret of secrets) assert.match(adaSent, secret)
})

/**
 * The never-rule is shown as one ("Never: …"), and every line that shows its words says its polarity
 * (the memorize call that saved it, found as a past message, says it by its `"kind":"never"`).
 */
function assertReadsAsNever(where: string, text: string): void {
  assert.ok(text.includes(`Never: ${NEVER_RULE}`), `${where} shows the rule as a never-rule:\n${text}`)
  for (const line of text.split('\n').filter((line) => line.includes(NEVER_RULE))) {
    assert.ok(line.includes(`Never: ${NEVER_RULE}`) || line.includes('"kind":"never"'), `${where} shows it without its polarity: ${line}`)
  }
}

/** A regular expression that matches `text` as written. */
function literally(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
}
