import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, afterEach, before, beforeEach, describe, it } from 'node:test'
import type { Engram } from '../../core/engram.ts'
import { createLlm } from '../../llm/create-llm.ts'
import type { Llm } from '../../llm/contracts.ts'
import { createNoneLlm } from '../../llm/none-llm.ts'
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../../testing/fake-openai-server.ts'
import { compactFile } from './compaction.ts'
import { createIdentityUpdater, extractExplicitFacts } from './identity.ts'
import { type OpenedMemory, openMemory } from './test-support/open-memory.ts'

const lesson = (text: string): Engram => ({ text, kind: 'lesson', scope: 'global', confidence: 'high', source: 'llm' })

function llmFor(server: FakeOpenAiServer): Llm {
  return createLlm(
    { provider: 'openai-compatible', baseUrl: server.url, apiKey: 'sk-test', model: 'planner', fastModel: 'fast', timeoutMs: 1_500, maxRetries: 0 },
    { retryBaseDelayMs: 1 },
  )
}

describe('compaction and identity through the fake server', () => {
  let server: FakeOpenAiServer
  let llm: Llm
  let opened: OpenedMemory
  let lessonsPath: string
  before(async () => {
    server = await startFakeOpenAiServer()
    llm = llmFor(server)
  })
  after(async () => {
    await server.close()
  })
  beforeEach(async () => {
    server.reset()
    opened = openMemory({ llm })
    lessonsPath = join(opened.temp.home, 'agents/default/memory/lessons.md')
  })
  afterEach(async () => {
    await opened.close()
    opened.temp.cleanup()
  })

  async function fill(count: number): Promise<void> {
    await opened.memory.encoder.encode(Array.from({ length: count }, (_, i) => lesson(`Distinct lesson number ${i + 1}`)))
  }

  it('removes what the model names as redundant, atomically, keeping the rest', async () => {
    await fill(22)
    await opened.memory.encoder.encode([lesson('The API rate-limits at 50 requests per minute')])
    await opened.memory.encoder.encode([lesson('Rate limit of the API: 50 req/min')])
    server.enqueue({
      json: {
        drop: [
          { entry: 24, keptInstead: 23, reason: 'restatement' },
          { entry: 2, keptInstead: 1, reason: 'duplicate' },
        ],
      },
    })
    const result = await compactFile(opened.memory.global, 'lessons', { llm, locks: opened.backend.locks })
    assert.equal(result.kind, 'compacted', JSON.stringify(result))
    if (result.kind !== 'compacted') return
    assert.equal(result.before, 24)
    assert.equal(result.after, 22)
    const texts = (await opened.memory.global.read('lessons')).entries.map((entry) => entry.text)
    assert.equal(texts.length, 22)
    assert.ok(!texts.includes('Rate limit of the API: 50 req/min'))
    assert.ok(!texts.includes('Distinct lesson number 2'))
    assert.ok(texts.includes('The API rate-limits at 50 requests per minute'))
    assert.equal(server.requests[0]?.body.model, 'planner')
  })

  it('skips below the threshold, without a model, and when another process holds the lock', async () => {
    await fill(20)
    assert.match((await compactFile(opened.memory.global, 'lessons', { llm, locks: opened.backend.locks })).kind, /skipped/)
    await fill(25)
    const none = await compactFile(opened.memory.global, 'lessons', { llm: createNoneLlm(), locks: opened.backend.locks })
    assert.deepEqual(none, { kind: 'skipped', file: 'lessons', location: opened.memory.global.location, reason: 'no LLM configured' })
    const location = opened.memory.global.location
    let inner: unknown
    await opened.backend.locks.withLock(`compaction:${location}:lessons`, async () => {
      inner = await compactFile(opened.memory.global, 'lessons', { llm, locks: opened.backend.locks })
    })
    assert.deepEqual(inner, { kind: 'skipped', file: 'lessons', location, reason: 'another process is compacting this file' })
    assert.equal(server.requests.length, 0)
  })

  const failures: Array<[string, Parameters<FakeOpenAiServer['enqueue']>[0]]> = [
    ['a 5xx', { fail: { status: 503 } }],
    ['a hang', { hang: true }],
    ['invalid JSON', { invalidJson: true }],
    ['schema-violating JSON', { json: { drop: [{ entry: 'one', keptInstead: 2 }] } }],
    ['an out-of-range entry', { json: { drop: [{ entry: 99, keptInstead: 1, reason: 'duplicate' }] } }],
    ['dropping more than half', { json: { drop: Array.from({ length: 13 }, (_, i) => ({ entry: i + 2, keptInstead: 1, reason: 'duplicate' })) } }],
    ['an entry kept in favour of itself', { json: { drop: [{ entry: 1, keptInstead: 1, reason: 'duplicate' }] } }],
    ['a chain of removals', { json: { drop: [{ entry: 1, keptInstead: 2, reason: 'duplicate' }, { entry: 2, keptInstead: 3, reason: 'duplicate' }] } }],
  ]
  for (const [name, step] of failures) {
    it(`leaves the file byte-identical on ${name}`, async () => {
      await fill(24)
      const before = await readFile(lessonsPath)
      server.enqueue(step)
      const result = await compactFile(opened.memory.global, 'lessons', { llm, locks: opened.backend.locks })
      assert.equal(result.kind, 'skipped', JSON.stringify(result))
      assert.deepEqual(await readFile(lessonsPath), before)
    })
  }

  it('identity: LLM facts merged by key every 5 turns; falls back to explicit statements when the call fails', async () => {
    const updater = createIdentityUpdater({ encoder: opened.memory.encoder, global: opened.memory.global, llm })
    const messages = [
      { role: 'user', content: 'Hi! My name is Ada and I live in London. I prefer short answers.' },
      { role: 'assistant', content: 'Hello Ada.' },
    ]
    assert.equal((await updater.maybeUpdateIdentity(messages, 3)).kind, 'skipped')
    assert.equal(server.requests.length, 0)

    server.enqueue({ json: { facts: ['Name: Ada', 'Location: London'] } })
    const viaLlm = await updater.maybeUpdateIdentity(messages, 5)
    assert.equal(viaLlm.kind, 'updated')
    assert.equal(viaLlm.kind === 'updated' && viaLlm.method, 'llm')
    assert.equal(server.requests[0]?.body.model, 'fast')

    server.enqueue({ fail: { status: 500 } })
    const fallback = await updater.maybeUpdateIdentity([{ role: 'user', content: 'Actually, call me Countess. My timezone is GMT.' }], 10)
    assert.equal(fallback.kind === 'updated' && fallback.method, 'explicit')
    assert.match(fallback.kind === 'updated' ? (fallback.llmError ?? '') : '', /./)
    const profile = (await opened.memory.global.recallIdentity()).map((entry) => entry.text)
    assert.deepEqual(profile, ['Name: Countess', 'Location: London', 'Timezone: GMT'])
    assert.match(await readFile(join(opened.temp.home, 'agents/default/memory/profile.md'), 'utf8'), /^# Profile\n- Name: Countess\n- Location: London\n- Timezone: GMT\n$/)
  })

  it('identity: offline explicit statements', async () => {
    assert.deepEqual(extractExplicitFacts('my name is Jorge, I live in San Francisco and I work at Acme Corp. I work as a data engineer; I prefer uv over pip.'), [
      'Name: Jorge',
      'Location: San Francisco',
      'Works at: Acme Corp',
      'Role: data engineer',
      'Prefers uv over pip',
    ])
    assert.deepEqual(extractExplicitFacts('My name is not important here, you know, truly'), [])
    // Facts that change: a move or a new budget is the same key, so it replaces the old value.
    assert.deepEqual(extractExplicitFacts("I moved to Lisbon last month and my budget is now 40k."), ['Location: Lisbon', 'Budget: 40k'])
    assert.deepEqual(extractExplicitFacts("We've relocated the office. I'm now based in Porto."), ['Location: Porto'])
    const updater = createIdentityUpdater({ encoder: opened.memory.encoder, global: opened.memory.global })
    const result = await updater.maybeUpdateIdentity([{ role: 'user', content: 'Please call me Jo.' }], 5)
    assert.equal(result.kind === 'updated' && result.method, 'explicit')
    assert.deepEqual((await opened.memory.global.recallIdentity()).map((entry) => entry.text), ['Name: Jo'])
  })
})
