import assert from 'node:assert/strict'
import { test } from 'node:test'
import { countTokens } from '../../core/tokens.ts'
import { createLlm } from '../../llm/create-llm.ts'
import { createNoneLlm } from '../../llm/none-llm.ts'
import { type FakeChatStep, startFakeOpenAiServer } from '../../testing/fake-openai-server.ts'
import { checkContextConsistency } from './consistency.ts'
import { createSummarizer, summaryTarget } from './summarizer.ts'
import { openHarness } from './test-support/harness.ts'

function llmFor(url: string, timeoutMs = 2_000) {
  return createLlm(
    { provider: 'openai-compatible', baseUrl: url, apiKey: 'test', model: 'planner', fastModel: 'fast-model', timeoutMs, maxRetries: 0 },
    { retryBaseDelayMs: 1 },
  )
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ')
const request = {
  kind: 'leaf' as const,
  sourceTokens: 300,
  segments: [
    { prefix: '[2026-03-01 09:00] ada (user)', text: 'We must ship on Friday. The budget is 4200 euros.' },
    { prefix: '[2026-03-01 09:01] assistant', text: 'Agreed: ship Friday, pin node 24, keep SQLite in WAL mode.' },
  ],
}

test('escalation: normal when short enough, aggressive when normal is over 150% of target, deterministic when aggressive still is', async (t) => {
  const server = await startFakeOpenAiServer()
  t.after(() => server.close())
  const target = summaryTarget(300, 1200)
  assert.equal(target, 100)

  const summarize = () => createSummarizer({ llm: llmFor(server.url), maxSummaryTokens: 1200 }).summarize(request)

  server.enqueue({ json: { summary: 'Ada: ship Friday, budget 4200 euros; pin node 24.' } })
  const normal = await summarize()
  assert.equal(normal.method, 'llm-normal')
  assert.equal(server.requests.length, 1)
  assert.equal(server.requests[0]!.body.model, 'fast-model', 'summaries use the fast tier')
  assert.match(JSON.stringify(server.requests[0]!.body.messages), /at most 100 tokens/)

  server.reset()
  server.enqueue({ json: { summary: words(160) } }, { json: { summary: 'Ship Friday; 4200 euros; node 24; SQLite WAL.' } })
  const aggressive = await summarize()
  assert.equal(aggressive.method, 'llm-aggressive')
  assert.equal(server.requests.length, 2)
  assert.match(JSON.stringify(server.requests[1]!.body.messages), /durable facts/)

  server.reset()
  server.enqueue({ json: { summary: `${words(200)}.` } }, { json: { summary: `First fact. ${words(300)}.` } })
  const cut = await summarize()
  assert.equal(cut.method, 'deterministic')
  assert.ok(cut.tokenCount <= target, `${cut.tokenCount} tokens within the target of ${target}`)
  assert.equal(cut.tokenCount, countTokens(cut.content))
  assert.equal(server.requests.length, 2, 'no third call: the cut is deterministic')
})

test('without an LLM the summary is extractive: informative sentences, who and when, within the target', async () => {
  const summarizer = createSummarizer({ llm: createNoneLlm(), maxSummaryTokens: 1200 })
  const out = await summarizer.summarize({
    kind: 'leaf',
    sourceTokens: 120,
    segments: [
      { prefix: '[2026-03-01 09:00] ada (user)', text: 'Hi there! Thanks.' },
      { prefix: '[2026-03-01 09:01] assistant', text: 'Hello. How can I help?' },
      { prefix: '[2026-03-01 09:02] ada (user)', text: 'We decided to move the Atlas launch to March 14 because QA found 3 blockers.' },
      { prefix: '[2026-03-01 09:03] assistant', text: 'Ok.' },
    ],
  })
  assert.equal(out.method, 'extractive')
  assert.match(out.content, /\[2026-03-01 09:02\] ada \(user\): We decided to move the Atlas launch to March 14/)
  assert.doesNotMatch(out.content, /Thanks|Ok\./)
  assert.ok(out.tokenCount <= out.targetTokens)
  assert.deepEqual(summarizer.warnings, [])
})

const failures: Array<[string, FakeChatStep]> = [
  ['a 503', { fail: { status: 503 } }],
  ['a hang (timeout)', { hang: true }],
  ['garbage output', { invalidJson: true }],
]

for (const [name, failure] of failures) {
  test(`an LLM failure mid-compaction (${name}) falls back to extractive, keeps the DAG consistent and loses nothing`, async (t) => {
    const server = await startFakeOpenAiServer()
    const h = openHarness()
    t.after(async () => {
      await server.close()
      await h.close()
    })
    const lcm = h.provider('lcm', { autoCompact: false, freshTail: 0 }, llmFor(server.url, 400))
    const session = { sessionId: 'fail', agent: 'default' }
    await lcm.append(
      session,
      Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `Message ${i}: the release train leaves at ${i}:00 with build ${i * 7}.` }) as const),
    )
    server.enqueue({ json: { summary: 'Messages 0-9: release train times and builds.' } }, failure)
    const result = await lcm.compact(session, { freshTail: 0 })
    assert.equal(result.kind, 'compacted')
    if (result.kind !== 'compacted') return
    assert.deepEqual(result.methods, { 'llm-normal': 1, extractive: 3 }, 'the first leaf by the LLM, the rest by the fallback')
    assert.equal(result.degraded, true)
    assert.equal(result.warnings.length, 1)
    assert.match(result.warnings[0]!.code, /^llm_(call_failed|timeout|invalid_output)$/)
    assert.equal(server.requests.length, 2, 'after a failure the run stops calling the LLM')

    const conv = (await h.backend.context.findConversation('fail', 'default'))!
    const report = await checkContextConsistency(h.backend.context, conv.id)
    assert.deepEqual(report.problems, [])
    assert.equal(report.messages, 30)
    const assembled = await lcm.assemble(session, 100_000, 0)
    assert.equal(new Set(assembled.items.flatMap((i) => i.messageIds)).size, 30)
    const labels = assembled.items.map((i) => i.content.split('\n')[0])
    assert.ok(labels.every((label) => /extractive — not LLM-written/.test(label!)), 'the condensed summary over a mixed run is extractive and says so')
  })
}
