// @slow: 3,400 messages into an embedded home and a PostgreSQL schema, then searched as an agent searches
/**
 * A query whose every word is common, through the path a host uses: `search_memory` from
 * `mind.agentTools()` on a mind made by `createMind`, on the embedded home and on PostgreSQL, after
 * the same conversation went into each. On PostgreSQL such a word's best blocks are read first
 * (decision 0095); the hits — ids, order and scores — are the embedded backend's, as the whole
 * posting list read gives them.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../src/core/clock.ts'
import { createMind, type Mind } from '../src/mind.ts'
import { internalsOf } from '../src/mind-internals.ts'
import { dropSchema, freshSchema, onPostgres } from '../src/storage/postgres/test-support/test-database.ts'
import { seededRandom } from '../src/test-support/seeded-random.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

const FILLER = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa'.split(' ')

/** 3,400 messages, 3,200 of them holding "plentiful" (once to three times), lengths 1–40 words. */
function conversation(): Array<{ role: 'user' | 'assistant'; content: string; at: string }> {
  const next = seededRandom(33)
  const words = (n: number) => Array.from({ length: n }, () => FILLER[Math.floor(next() * FILLER.length)]!).join(' ')
  return Array.from({ length: 3_400 }, (_, i) => {
    const common = i % 17 !== 0 ? `${Array.from({ length: 1 + Math.floor(next() ** 3 * 3) }, () => 'plentiful').join(' ')} ` : ''
    return { role: i % 2 === 0 ? 'user' : 'assistant', content: `${common}${words(1 + Math.floor(next() ** 2 * 40))}`, at: new Date(Date.UTC(2026, 2, 1) + i * 60_000).toISOString() }
  })
}

async function hits(mind: Mind, query: string): Promise<string[]> {
  const search = mind.agentTools({ sessionId: 'lookup' }).find((tool) => tool.name === 'search_memory')
  assert.ok(search, 'search_memory is among the agent tools')
  const result = await search.execute({ query, limit: 10 })
  assert.equal(result.isError, undefined, result.text)
  const found = (result.data as { hits: Array<{ id: string; score: number }> }).hits
  return found.map((hit) => `${hit.id} ${hit.score.toFixed(9)}`)
}

onPostgres('a query of common words through search_memory', (url) => {
  test('search_memory on PostgreSQL answers a query of common words as the embedded home does', { timeout: 180_000 }, async () => {
    const schema = freshSchema()
    const homes = [makeTempHome('engram-common-embedded-'), makeTempHome('engram-common-pg-')]
    const minds: Mind[] = []
    try {
      const clock = new ManualClock(new Date('2026-03-10T12:00:00Z'))
      minds.push(await createMind({ home: homes[0]!.home, env: homes[0]!.env, ignoreConfigFile: true, clock }))
      minds.push(await createMind({ home: homes[1]!.home, env: { ...homes[1]!.env, ENGRAM_DATABASE_URL: url, ENGRAM_DATABASE_SCHEMA: schema }, ignoreConfigFile: true, clock }))
      const messages = conversation()
      for (const mind of minds) {
        const { context } = internalsOf(mind)
        for (let at = 0; at < messages.length; at += 200) await context.append({ sessionId: 'long-chat', agent: mind.agent }, messages.slice(at, at + 200))
      }
      let compared = 0
      for (const query of ['plentiful', 'plentiful plentiful', 'what was plentiful?']) {
        const [embedded, postgres] = await Promise.all(minds.map((mind) => hits(mind, query)))
        assert.ok(embedded!.length === 10, `${query}: ${embedded!.length} hits`)
        assert.deepEqual(postgres, embedded, query)
        compared += embedded!.length
      }
      assert.equal(compared, 30)
    } finally {
      await Promise.all(minds.map((mind) => mind.close()))
      for (const home of homes) home.cleanup()
      await dropSchema(url, schema)
    }
  })
})
