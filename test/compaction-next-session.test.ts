/**
 * Memory-file compaction at the next session start after a file crosses 20 entries (decision 0050), on
 * PostgreSQL: what a compaction left a file as is read from the finished job's row, so the same
 * holds when the memory files are rows. (The same scenario on the embedded home is in
 * lifecycle-session.test.ts.) Through createMind → a new Session per turn, two users, the fake model.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind } from '../src/mind.ts'
import { freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { startFakeOpenAiServer } from '../src/testing/fake-openai-server.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const name = (request: { body: unknown }): string => (request.body as { response_format?: { json_schema?: { name?: string } } } | undefined)?.response_format?.json_schema?.name ?? 'text'
const lesson = (text: string) => ({ text, kind: 'lesson' as const, scope: 'global' as const, confidence: 'high' as const, source: 'user' as const })

onPostgres('memory-file compaction at the next session start', (url) => {
  test('on PostgreSQL a user file crossing 20 entries mid-day is compacted at her next session start; unchanged files are not sent again', async (t) => {
    const server = await startFakeOpenAiServer({ onChat: (request) => (name(request) === 'compaction' ? { json: { drop: [{ entry: 22, keptInstead: 1, reason: 'restatement' }] } } : { json: { facts: [] } }) })
    t.after(() => server.close())
    const temp = makeTempHome('engram-compaction-pg-')
    t.after(temp.cleanup)
    const clock = new ManualClock('2026-03-02T09:00:00Z')
    const env = { ...temp.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: freshSchema(), ENGRAM_LLM_PROVIDER: 'openai-compatible', ENGRAM_LLM_BASE_URL: server.url, ENGRAM_LLM_MODEL: 'fake', ENGRAM_LLM_MAX_RETRIES: '0' }
    const mind = await createMind({ home: temp.home, env, ignoreConfigFile: true, clock, embedder: null })
    t.after(() => mind.close())
    assert.equal(mind.backend.name, 'postgres')
    const compactions = () => server.requests.filter((request) => name(request) === 'compaction').length

    await mind.encode([...Array.from({ length: 21 }, (_, i) => lesson(`Service ${i} answers within ${i + 1} seconds`)), lesson('Service 0 answers within 1 second')])
    await mind.session('morning', { user: 'ada' }).begin('Good morning!')
    await mind.idle()
    assert.equal(compactions(), 1)
    assert.equal((await mind.memory.global.read('lessons')).entries.length, 21)

    clock.advance(3 * 60 * 60_000)
    await mind.scope('ada').encoder.encode([...Array.from({ length: 21 }, (_, i) => lesson(`Ada's report ${i} is due on day ${i + 1} of the month`)), lesson("Ada's report 0 is due on day 1 of each month")])
    await mind.session('bob-1', { user: 'bob' }).begin('Hi')
    await mind.idle()
    assert.equal(compactions(), 1, "Bob's begin does not look at Ada's files; the agent's is as its compaction left it")
    await mind.session('afternoon', { user: 'ada' }).begin('Hello again')
    await mind.idle()
    assert.equal(compactions(), 2, 'compacted at her next session start, the same day')
    assert.equal((await mind.memory.storesOf('user:ada').global.read('lessons')).entries.length, 21)
    await mind.session('evening', { user: 'ada' }).begin('Good evening')
    await mind.idle()
    assert.equal(compactions(), 2)
  })
})
