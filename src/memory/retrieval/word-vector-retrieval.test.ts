import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { contentHash } from '../../core/hash.ts'
import { createGloVeEmbedder } from '../../llm/embedders/glove-embedder.ts'
import { wordVectorsFrom } from '../../llm/embedders/test-support/word-vectors.ts'
import { openMindInternals, type MindInternals } from '../../mind-internals.ts'
import type { IndexUnit } from '../../storage/contracts.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import { createRetriever } from './search.ts'

const NOW = '2026-03-01T12:00:00.000Z'

/** Music words close together, outdoor words close together (4 dimensions is enough to tell). */
const VECTORS = wordVectorsFrom([
  ['fiddle', [1, 0.2, 0, 0]],
  ['violin', [0.9, 0.3, 0, 0]],
  ['lessons', [0.5, 0.5, 0.5, 0.5]],
  ['weekend', [0.1, 0.1, 0.5, 0.9]],
  ['hiking', [0, 0, 1, 0.2]],
  ['trail', [0, 0.1, 0.95, 0.3]],
])

function message(id: string, text: string, session: string): IndexUnit {
  return { id, kind: 'message', text, source: `conv:${session}`, provenance: [id], agent: 'default', createdAt: NOW, hash: contentHash(text), meta: { name: 'Ana' } }
}

let temp: TempHome
let mind: MindInternals
const clock = new ManualClock(NOW)
const embedder = createGloVeEmbedder(() => VECTORS, 4)

before(async () => {
  temp = makeTempHome()
  mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, reindexOnOpen: false })
  await mind.backend.index.upsert([
    message('m1', 'Violin lessons every weekend', '1'),
    message('m2', 'Hiking the trail this weekend', '2'),
    message('m3', 'Another weekend, more lessons', '2'),
  ])
})
after(async () => {
  await mind.close()
  temp.cleanup()
})

describe('retrieval with word vectors', () => {
  test('the index lists the stems of its units’ own words', async () => {
    const vocabulary = await (mind.backend.index as unknown as { vocabulary(): Promise<Set<string>> }).vocabulary()
    for (const term of ['violin', 'lesson', 'weekend', 'hike', 'trail']) assert.ok(vocabulary.has(term), term)
  })

  test('a word-vector embedder re-ranks the lexical candidates (never a KNN over every vector)', async () => {
    const retriever = createRetriever({ index: mind.backend.index, embedder, clock, settings: { sessionWeight: 0 } })
    const result = await retriever.search('weekend lessons on the violin', { recordAccess: false })
    assert.equal(result.stats.dense, 'rerank')
    assert.equal(result.hits[0]?.unit.id, 'm1')
    // Normalised over the candidates: the best is 1, the rest below.
    assert.equal(result.hits[0]?.terms.dense, 1)
  })

  test('query expansion (off by default) finds the turn that answers with other words', async () => {
    const off = await createRetriever({ index: mind.backend.index, embedder, clock }).search('fiddle', { recordAccess: false })
    assert.equal(off.hits.length, 0)
    const on = await createRetriever({ index: mind.backend.index, embedder, clock, settings: { expansionWeight: 0.2 } }).search('fiddle', { recordAccess: false })
    assert.equal(on.hits[0]?.unit.id, 'm1')
    // The expansion terms' own weighted BM25 is what scores the turn (it holds none of the query's words).
    assert.ok((on.hits[0]?.terms.lexical ?? 0) > 0)
  })

  test('a message gains a share of the best lexical match in its session', async () => {
    const search = (sessionWeight: number) => createRetriever({ index: mind.backend.index, embedder: null, clock, settings: { sessionWeight, informationWeight: 0 } }).search('weekend lessons hiking', { recordAccess: false })
    const withSession = await search(0.3)
    const without = await search(0)
    const fusedOf = (result: Awaited<ReturnType<typeof search>>, id: string) => result.hits.find((hit) => hit.unit.id === id)?.terms.fused ?? 0
    // Session 2 holds the best match of the question (its best turn is the best overall): its turns gain more.
    assert.ok(fusedOf(withSession, 'm3') - fusedOf(without, 'm3') > fusedOf(withSession, 'm1') - fusedOf(without, 'm1'))
    assert.ok(Math.abs(fusedOf(withSession, 'm2') - fusedOf(without, 'm2') - 0.3) < 1e-9)
  })
})
