/**
 * The memory API end to end through the public API (`createMind`): the one write path and its gate,
 * confirmations across a restart, the memory context, episodes from session boundaries, recall,
 * skills and procedures, and a streamed turn recovered after a crash.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('encode routes by scope through the gate; copilot confirmations survive a restart', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T10:00:00Z')
  const open = (mode: string) => createMind({ home: tmp.home, project: tmp.project, env: tmp.env, clock, settings: { 'memory.mode': mode } })

  const mind = await open('copilot')
  const report = await mind.encode([
    { text: 'Use metric units', kind: 'always', scope: 'global', confidence: 'high', source: 'user' },
    { text: 'Run the linter before committing', kind: 'always', scope: 'project', confidence: 'high', source: 'llm' },
    { text: 'The staging API is slow on Mondays', kind: 'lesson', scope: 'global', confidence: 'medium', source: 'consolidation', topic: 'staging' },
  ])
  assert.equal(report.saved.length, 2)
  assert.equal(report.pending.length, 1, 'a medium-confidence memory waits for the user in copilot mode')
  assert.match(readFileSync(join(tmp.home, 'agents/default/memory/rules.md'), 'utf8'), /## Always\n- Use metric units <!-- .*confidence:high/)
  assert.match(readFileSync(join(tmp.project, '.engram/memory/rules.md'), 'utf8'), /Run the linter before committing/)
  await mind.close()

  const again = await open('copilot')
  const pending = await again.pendingConfirmations()
  assert.deepEqual(pending.map((p) => p.engram?.text), ['The staging API is slow on Mondays'])
  const confirmed = await again.confirm({ accept: 'all' })
  assert.deepEqual([confirmed.saved, confirmed.rejected, confirmed.accepted.map((item) => item.engram?.text), confirmed.problems], [1, 0, ['The staging API is slow on Mondays'], []])
  assert.equal((await again.pendingConfirmations()).length, 0)
  assert.match(readFileSync(join(tmp.home, 'agents/default/memory/lessons.md'), 'utf8'), /The staging API is slow on Mondays <!-- topic:staging/)
  assert.match(readFileSync(join(tmp.home, 'agents/default/memory/topics/staging.md'), 'utf8'), /slow on Mondays/)

  const context = await again.memory.buildContext()
  assert.match(context.text, /## Your memory — Global rules[\s\S]*Use metric units/)
  assert.match(context.text, /## Your memory — Project rules[\s\S]*Run the linter/)
  assert.match(context.text, /## Your memory — Global lessons[\s\S]*slow on Mondays/)

  // What was encoded is searchable at once (the write path updates the index).
  await again.maintain()
  const hits = await again.backend.index.search({ text: 'staging API Mondays', limit: 5 })
  assert.ok(hits.length > 0, 'the accepted lesson is in the index')
  await again.close()

  const off = await open('off')
  const suppressed = await off.encode([{ text: 'Never deploy on Fridays', kind: 'never', scope: 'global', confidence: 'high', source: 'user' }])
  assert.equal(suppressed.suppressed.length, 1)
  assert.doesNotMatch(readFileSync(join(tmp.home, 'agents/default/memory/rules.md'), 'utf8'), /Fridays/)
  await off.close()
})

test('a day of activity becomes an episode at the idle boundary and is recalled days later', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: tmp.home, env: tmp.env, clock })
  await mind.activity.messageReceived('The invoice export to the accounting system is failing with a 429', { session: 's1', from: 'ada' })
  clock.advance(60_000)
  await mind.activity.toolUse('http_get', { input: { url: '/export' }, result: '429 Too Many Requests', ok: false }, { session: 's1' })
  clock.advance(60_000)
  await mind.activity.responseSent('The export hits the rate limit; batching the calls fixes it.\nresolved: invoice export failing', { session: 's1', to: 'ada' })

  clock.advance(11 * 60_000)
  const maintenance = await mind.maintain()
  assert.equal(maintenance.boundaries.filter((b) => b.kind === 'recorded').length, 1, 'the idle session was encoded once')
  const episode = readFileSync(join(tmp.home, 'agents/default/episodes/2026-03-02.md'), 'utf8')
  assert.match(episode, /invoice export/i)
  assert.match(episode, /extractive/, 'offline summaries are marked as such')
  assert.match(readFileSync(join(tmp.home, 'shared/resolutions.jsonl'), 'utf8'), /invoice export failing/)

  assert.equal((await mind.maintain()).boundaries.length, 0, 'nothing is encoded twice')

  clock.advanceDays(3)
  const results = await mind.recall('invoice export rate limit', { daysBack: 7 })
  assert.ok(results.length > 0)
  assert.match(results[0]?.text ?? '', /invoice|export|429/i)
  assert.equal((await mind.recall('invoice export', { daysBack: 1 })).length, 0, 'daysBack limits the window')
  await mind.close()
})

test('skills and procedures through the mind; a streamed turn survives a crash', async (t) => {
  const tmp = makeTempHome()
  t.after(tmp.cleanup)
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const mind = await createMind({ home: tmp.home, env: tmp.env, clock })
  await mind.skills.save({ label: 'csv_summary', name: 'Summarise a CSV', whenToUse: 'When asked to summarise a CSV file', declarative: '1. Load it\n2. Describe columns\n' })
  assert.equal((await mind.skills.closestMatch('csv_sumary'))?.label ?? (await mind.skills.closestMatch('csv_sumary')), 'csv_summary')
  await mind.maintain()
  const skillHits = await mind.retriever.search('summarise a CSV file', { kinds: ['skill'], limit: 3 })
  assert.equal(skillHits.hits[0]?.unit.source, 'agents/default/skills/csv_summary/declarative.md', 'skills are in the one index')
  await mind.procedures.create({ slug: 'deploy', description: 'How to deploy the billing service', body: '1. Tag\n2. Push\n' })
  const outcome = await mind.procedures.reportOutcome('deploy', true)
  assert.equal(outcome.successCount, 1)

  // A turn streams into the journal, then the mind closes before `end` stored the reply.
  const session = mind.session('chat-9')
  const stream = session.stream(await session.begin('What is the release plan?'))
  stream.write('Here is the plan: first we tag the release, ')
  stream.write('then we push it.')
  await mind.close()

  const reopened = await createMind({ home: tmp.home, env: tmp.env, clock })
  assert.equal(reopened.recoveredJournals[0]?.text, 'Here is the plan: first we tag the release, then we push it.')
  const conversation = await reopened.backend.context.findConversation('chat-9', 'default')
  assert.ok(conversation)
  const messages = await reopened.backend.context.messages(conversation.id)
  assert.equal(messages.at(-1)?.content, 'Here is the plan: first we tag the release, then we push it.')
  assert.equal(messages.at(-1)?.meta?.recovered, true)
  await reopened.close()
})

test('with an LLM configured, maintain() compacts a memory file past 20 entries, again only once it changed', async (t) => {
  const { startFakeOpenAiServer } = await import('../src/testing/fake-openai-server.ts')
  const server = await startFakeOpenAiServer()
  const tmp = makeTempHome()
  t.after(async () => {
    await server.close()
    tmp.cleanup()
  })
  const clock = new ManualClock('2026-03-02T09:00:00Z')
  const env = { ...tmp.env, ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake-model', ENGRAM_LLM_MAX_RETRIES: '0' }
  const mind = await createMind({ home: tmp.home, env, clock })
  const lessons = Array.from({ length: 21 }, (_, i) => ({ text: `Service ${i} answers within ${i + 1} seconds`, kind: 'lesson' as const, scope: 'global' as const, confidence: 'high' as const, source: 'user' as const }))
  lessons.push({ text: 'Service 0 answers within 1 second', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user' })
  await mind.encode(lessons)
  // The model says entry 22 restates entry 1; every other call (identity, rules file) finds nothing.
  server.enqueue({ json: { drop: [{ entry: 22, keptInstead: 1, reason: 'restatement' }] } })
  const first = await mind.maintain()
  const compacted = first.compaction.find((c) => c.file === 'lessons')
  assert.equal(compacted?.kind, 'compacted', JSON.stringify(first.compaction))
  const file = readFileSync(join(tmp.home, 'agents/default/memory/lessons.md'), 'utf8')
  assert.doesNotMatch(file, /within 1 second </)
  assert.match(file, /Service 0 answers within 1 seconds/)
  const calls = server.requests.length
  assert.equal((await mind.maintain()).compaction.length, 0, 'not again while the file is as its compaction left it')
  clock.advanceDays(1)
  assert.equal((await mind.maintain()).compaction.length, 0, 'nor the next day')
  assert.equal(server.requests.length, calls)
  await mind.encode([{ text: 'Service 30 answers within 31 seconds', kind: 'lesson', scope: 'global', confidence: 'high', source: 'user' }])
  server.enqueue({ json: { drop: [] } })
  assert.equal((await mind.maintain()).compaction.find((c) => c.file === 'lessons')?.kind, 'unchanged', 'a new entry: compacted again')
  await mind.close()
})
