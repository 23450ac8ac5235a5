import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ManualClock } from '../../core/clock.ts'
import { contentHash } from '../../core/hash.ts'
import { createOfflineHashEmbedder } from '../../llm/embedders/offline-hash-embedder.ts'
import { openMindInternals, type MindInternals } from '../../mind-internals.ts'
import type { IndexUnit } from '../../storage/contracts.ts'
import { makeTempHome, type TempHome } from '../../testing/temp-home.ts'
import { fuseScores } from './fusion.ts'
import { personalizedPageRank } from './graph-diffusion.ts'
import { analyseQuery } from './query-analysis.ts'
import { createRetriever } from './search.ts'

const NOW = '2026-03-01T12:00:00.000Z'

function unit(id: string, text: string, createdAt: string, extra: Partial<IndexUnit> = {}): IndexUnit {
  return { id, kind: 'knowledge', text, source: `agents/default/knowledge/${id}.md`, provenance: [`agents/default/knowledge/${id}.md`], agent: 'default', createdAt, hash: contentHash(text), ...extra }
}

let temp: TempHome
let mind: MindInternals
let clock: ManualClock

before(async () => {
  temp = makeTempHome()
  clock = new ManualClock(NOW)
  mind = await openMindInternals({ home: temp.home, env: temp.env, ignoreConfigFile: true, clock, embedder: null, reindexOnOpen: false })
})
after(async () => {
  await mind.close()
  temp.cleanup()
})

async function fresh(units: IndexUnit[]): Promise<void> {
  const sources = await mind.backend.index.sources()
  for (const source of sources) await mind.backend.index.removeSource(source)
  await mind.backend.index.upsert(units)
}

describe('retriever on a real index', () => {
  test('recency: of two equally matching memories the newer ranks first, with the seed\'s term (weight × 0.5^(age/half-life))', async () => {
    await fresh([
      unit('old', 'The staging database backup runs at night.', '2025-12-01T12:00:00.000Z'),
      unit('new', 'The staging database backup runs at noon.', '2026-02-28T12:00:00.000Z'),
    ])
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock, settings: { graph: false } })
    const { hits } = await retriever.search('staging database backup', { recordAccess: false })
    assert.deepEqual(hits.map((h) => h.unit.id), ['new', 'old'])
    const old = hits.find((h) => h.unit.id === 'old')!
    // 90 days old: 0.05 × 0.5^(90/30) (the weight is 0.05 by default, decision 0029).
    assert.ok(Math.abs(old.terms.recency - 0.05 * 0.5 ** 3) < 1e-9)
    // Recency is measured from asOf: 60 days later the new one is 61 days old.
    const later = await retriever.search('staging database backup', { recordAccess: false, asOf: '2026-04-30T12:00:00.000Z' })
    const aged = later.hits.find((h) => h.unit.id === 'new')!
    assert.ok(Math.abs(aged.terms.recency - 0.05 * 0.5 ** (61 / 30)) < 1e-9)
  })

  test('frequency: a memory recalled often outranks an equal one, and every recall records access', async () => {
    await fresh([
      unit('a', 'Deploys go through the blue pipeline first.', NOW),
      unit('b', 'Deploys go through the blue pipeline always.', NOW),
    ])
    await mind.backend.index.recordAccess(['b', 'b', 'b'], NOW)
    for (let i = 0; i < 5; i++) await mind.backend.index.recordAccess(['b'], NOW)
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock, settings: { graph: false } })
    const { hits } = await retriever.search('blue pipeline deploys')
    assert.equal(hits[0]?.unit.id, 'b')
    assert.ok(Math.abs((hits[0]?.terms.frequency ?? 0) - 0.1 * Math.log(1 + 6)) < 1e-9)
    const [a, b] = await mind.backend.index.get(['a', 'b'])
    assert.equal(a?.accessCount, 1, 'the recall itself was recorded')
    assert.equal(b?.accessCount, 7)
    await retriever.search('blue pipeline deploys', { recordAccess: false })
    assert.equal((await mind.backend.index.get(['a']))[0]?.accessCount, 1, 'recordAccess: false leaves statistics alone')
  })

  test('filters by kind, user and time', async () => {
    await fresh([
      unit('k1', 'Tea ceremony notes from Kyoto.', '2026-01-10T00:00:00.000Z'),
      unit('m1', 'Ada asked about the tea ceremony.', '2026-02-10T00:00:00.000Z', { kind: 'message', source: 'conv:1', provenance: ['1'], user: 'ada' }),
      unit('m2', 'Bob asked about the tea ceremony.', '2026-02-11T00:00:00.000Z', { kind: 'message', source: 'conv:2', provenance: ['2'], user: 'bob' }),
    ])
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock })
    const ids = async (options: Parameters<typeof retriever.search>[1]) => (await retriever.search('tea ceremony', { recordAccess: false, ...options })).hits.map((h) => h.unit.id).sort()
    assert.deepEqual(await ids({ kinds: ['knowledge'] }), ['k1'])
    assert.deepEqual(await ids({ user: 'ada' }), ['m1'])
    assert.deepEqual(await ids({ since: '2026-02-01T00:00:00.000Z' }), ['m1', 'm2'])
    assert.deepEqual(await ids({ until: '2026-02-10T12:00:00.000Z' }), ['k1', 'm1'])
    assert.deepEqual(await ids({ excludeMessageIds: [1] }), ['k1', 'm2'], 'messages already in the conversation are left out')
  })

  test('a threshold that would remove everything returns the best hits and says so', async () => {
    await fresh([unit('x', 'Quarterly report numbers for the lighthouse project.', '2025-01-01T00:00:00.000Z')])
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock })
    const high = await retriever.search('lighthouse report', { minScore: 100, recordAccess: false })
    assert.equal(high.belowThreshold, true)
    assert.deepEqual(high.hits.map((h) => h.unit.id), ['x'])
    const low = await retriever.search('lighthouse report', { minScore: 0.1, recordAccess: false })
    assert.equal(low.belowThreshold, false)
    assert.equal(low.hits.length, 1)
  })

  test('graph diffusion lifts a unit linked from relevant ones even when it shares no word with the query', async () => {
    const linked = unit('glossary', 'Terms: ingress, egress, sidecar proxies.', '2026-02-01T00:00:00.000Z')
    const decoy = unit('decoy', 'Unrelated note about gardening tomatoes.', '2026-02-01T00:00:00.000Z')
    await fresh([
      unit('n1', 'Mesh routing rules for the payments service.', '2026-02-01T00:00:00.000Z', { links: ['glossary'] }),
      unit('n2', 'Mesh routing timeouts for the payments service.', '2026-02-01T00:00:00.000Z', { links: ['glossary'] }),
      linked,
      decoy,
    ])
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock })
    const withGraph = await retriever.search('payments mesh routing', { recordAccess: false })
    const glossary = withGraph.hits.find((h) => h.unit.id === 'glossary')
    assert.ok(glossary, 'the linked unit is recalled')
    assert.ok(glossary.terms.graph > 0)
    assert.equal(glossary.terms.lexical, 0)
    assert.ok(!withGraph.hits.some((h) => h.unit.id === 'decoy'))
    const without = await retriever.search('payments mesh routing', { recordAccess: false, graph: false })
    assert.ok(!without.hits.some((h) => h.unit.id === 'glossary'))
  })

  test("a user's [[link]] resolves in her tree first; similarity alone never lifts a note past the linked one", async () => {
    const ada = (slug: string, text: string, extra: Partial<IndexUnit> = {}): IndexUnit => {
      const source = `agents/default/users/ada/knowledge/${slug}.md`
      return { ...unit(slug, text, '2026-02-01T00:00:00.000Z', extra), id: `${source}#0`, source, provenance: [source], owner: 'user:ada' }
    }
    const agentOwner = { ...unit('owner', 'Jonas Weber runs the agent fleet rota.', '2026-02-01T00:00:00.000Z'), id: 'agents/default/knowledge/owner.md#0' }
    const words = 'retention partitions consumer groups spring cleanup folders storage changing'
    await fresh([
      ada('falcon', `Falcon billing queue moves to Kafka; ask before changing ${words}.`, { links: ['owner'] }),
      ada('owner', 'Priya Raman decides every schema change.'),
      // Two notes that resemble the best hit and each other: similarity edges from several seeds.
      ada('similar-1', `Billing ${words} ask.`),
      ada('similar-2', `Queue ${words} ask before.`),
      agentOwner,
    ])
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock })
    const { hits } = await retriever.search('Falcon billing queue Kafka', { recordAccess: false, viewer: { agent: 'default', user: 'ada' } })
    const byId = (slug: string) => hits.find((hit) => hit.unit.id === `agents/default/users/ada/knowledge/${slug}.md#0`)
    const owner = byId('owner')
    assert.ok(owner && owner.terms.graph > 0 && owner.terms.lexical === 0, 'her note is reached through the link')
    assert.ok(!hits.some((hit) => hit.unit.id === agentOwner.id && hit.terms.graph > 0), "the agent's note of the same name is not the link's target")
    for (const slug of ['similar-1', 'similar-2']) {
      const similar = byId(slug)
      assert.ok(similar, slug)
      assert.ok(similar.terms.graph <= similar.terms.fused + 1e-12, `${slug}: similarity lifts no more than its own match`)
      if ((similar.terms.fused + similar.terms.recency + similar.terms.frequency) * similar.terms.history < owner.score) assert.ok(similar.score < owner.score, `${slug} stays below the linked note`)
    }
    // Bob reaches nothing of it, links included.
    const bob = await retriever.search('Falcon billing queue Kafka', { recordAccess: false, viewer: { agent: 'default', user: 'bob' } })
    assert.ok(!bob.hits.some((hit) => hit.unit.source.includes('/users/ada/')))
  })

  test('dense fusion with the offline embedder finds a misspelt word that BM25 misses', async () => {
    const temp2 = makeTempHome()
    const embedder = createOfflineHashEmbedder()
    const mind2 = await openMindInternals({ home: temp2.home, env: temp2.env, ignoreConfigFile: true, clock, embedder, reindexOnOpen: false })
    try {
      const units = [unit('target', 'Kubernetes autoscaling thresholds for the checkout service.', NOW), unit('other', 'Lunch menu for the office party.', NOW)]
      const vectors = await embedder.embed(units.map((u) => u.text))
      units.forEach((u, i) => {
        u.vector = vectors[i]
      })
      await mind2.backend.index.upsert(units)
      const retriever = createRetriever({ index: mind2.backend.index, embedder, clock })
      const result = await retriever.search('kubernetis autoscalling', { recordAccess: false })
      assert.equal(result.stats.dense, 'knn')
      assert.equal(result.hits[0]?.unit.id, 'target')
      assert.ok((result.hits[0]?.terms.dense ?? 0) > 0)
      const reranked = await createRetriever({ index: mind2.backend.index, embedder, clock, settings: { dense: 'rerank' } }).search('checkout autoscaling', { recordAccess: false })
      assert.equal(reranked.stats.dense, 'rerank')
      assert.ok((reranked.hits[0]?.terms.dense ?? 0) > 0)
    } finally {
      await mind2.close()
      temp2.cleanup()
    }
  })

  test('a superseded fact ranks right below its successor, scores at most as much, is never dropped, and as of before it was replaced it is live again', async () => {
    const history = (meta: Record<string, unknown>): Partial<IndexUnit> => ({ meta })
    // The old fact matches the question far better (more of its words); the chain is porto → lisbon → berlin.
    await fresh([
      unit('porto', 'Ada lives in an apartment in Porto; the apartment in Porto is where Ada lives.', '2025-06-01T00:00:00.000Z', history({ supersededBy: 'lisbon', validUntil: '2026-01-03T00:00:00.000Z' })),
      unit('lisbon', 'Ada lives in an apartment in Lisbon; the apartment in Lisbon is where Ada lives.', '2026-01-03T00:00:00.000Z', history({ supersededBy: 'berlin', supersedes: 'porto', validFrom: '2026-01-03T00:00:00.000Z', validUntil: '2026-02-20T00:00:00.000Z' })),
      unit('berlin', 'Ada lives in Berlin now.', '2026-02-20T00:00:00.000Z', history({ supersedes: 'lisbon', validFrom: '2026-02-20T00:00:00.000Z' })),
      unit('cat', 'Ada has a cat and lives with it.', '2026-02-01T00:00:00.000Z'),
    ])
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock, settings: { graph: false } })
    const { hits } = await retriever.search('where does Ada live, in which apartment', { recordAccess: false })
    const ids = hits.map((h) => h.unit.id)
    // The chain takes the place of its best-ranked member (Lisbon, without the history), current fact first.
    assert.deepEqual(ids, ['berlin', 'lisbon', 'porto', 'cat'], ids.join(', '))
    const score = (id: string): number => hits.find((h) => h.unit.id === id)?.score ?? Number.NaN
    assert.ok(score('lisbon') <= score('berlin') && score('porto') <= score('lisbon'))
    assert.equal(hits.find((h) => h.unit.id === 'lisbon')?.terms.history, 0.9, 'the documented factor')
    assert.equal(hits.find((h) => h.unit.id === 'berlin')?.terms.history, 1)
    // Alone, the superseded fact is still found (history), with its score lowered by the factor.
    const alone = await retriever.search('Porto', { recordAccess: false })
    assert.equal(alone.hits[0]?.unit.id, 'porto')
    const plain = alone.hits[0]
    assert.ok(plain && Math.abs(plain.score - 0.9 * (plain.terms.fused + plain.terms.recency + plain.terms.frequency)) < 1e-9)
    // Searched as of a day when Lisbon still held, Lisbon is live and its better match wins; Porto was already history.
    const then = await retriever.search('where does Ada live, in which apartment', { recordAccess: false, asOf: '2026-02-01T00:00:00.000Z' })
    assert.equal(then.hits.find((h) => h.unit.id === 'lisbon')?.terms.history, 1)
    assert.equal(then.hits.find((h) => h.unit.id === 'porto')?.terms.history, 0.9)
    assert.ok(then.hits.findIndex((h) => h.unit.id === 'lisbon') < then.hits.findIndex((h) => h.unit.id === 'berlin'))
  })

  test('bad options are refused with a clear error', async () => {
    const retriever = createRetriever({ index: mind.backend.index, embedder: null, clock })
    await assert.rejects(retriever.search('x', { limit: 0 }), { code: 'invalid_argument' })
    await assert.rejects(retriever.search('x', { asOf: 'yesterday' }), { code: 'invalid_argument' })
    assert.throws(() => createRetriever({ index: mind.backend.index, embedder: null, clock, settings: { recencyHalfLifeDays: 0 } }), { code: 'invalid_argument' })
  })
})

describe('retrieval stages', () => {
  test('query analysis drops function words, keeps them when nothing else is left, and caps long queries by the longest words', () => {
    assert.deepEqual(analyseQuery('What is the status of the deployment?', 16).terms, ['status', 'deployment'])
    const only = analyseQuery('what did we do', 16)
    assert.equal(only.onlyStopWords, true)
    assert.deepEqual(only.terms, ['what', 'did', 'we', 'do'])
    assert.deepEqual(analyseQuery('ab cd efghij klmnopq rs', 2).terms, ['efghij', 'klmnopq'])
  })

  test('weighted fusion normalises each channel; RRF puts first-in-both at 1', () => {
    const candidates = [
      { id: 'a', lexical: 10, dense: 0.5 },
      { id: 'b', lexical: 5, dense: 0.9 },
      { id: 'c', dense: 0.2 },
    ]
    const weighted = fuseScores(candidates, { method: 'weighted', lexicalWeight: 0.5, denseWeight: 0.5, rrfK: 60, channels: { lexical: true, dense: true } })
    assert.ok(Math.abs((weighted.get('a') ?? 0) - (0.5 + 0.5 * (0.5 / 0.9))) < 1e-9)
    const lexicalOnly = fuseScores(candidates, { method: 'weighted', lexicalWeight: 0.5, denseWeight: 0.5, rrfK: 60, channels: { lexical: true, dense: false } })
    assert.equal(lexicalOnly.get('a'), 1)
    const rrf = fuseScores([{ id: 'x', lexical: 3, dense: 0.8 }, { id: 'y', lexical: 1, dense: 0.1 }], { method: 'rrf', lexicalWeight: 1, denseWeight: 1, rrfK: 60, channels: { lexical: true, dense: true } })
    assert.ok(Math.abs((rrf.get('x') ?? 0) - 1) < 1e-12)
    assert.ok((rrf.get('y') ?? 1) < 1)
  })

  test('personalized PageRank spreads activation from the seeds along edges and sums to 1', () => {
    const rank = personalizedPageRank({
      nodes: ['s', 'n', 'far', 'alone'],
      edges: [
        { a: 's', b: 'n', weight: 1 },
        { a: 'n', b: 'far', weight: 1 },
      ],
      personalization: new Map([['s', 1]]),
    })
    const total = [...rank.values()].reduce((a, b) => a + b, 0)
    assert.ok(Math.abs(total - 1) < 1e-6)
    assert.ok((rank.get('n') ?? 0) > (rank.get('far') ?? 0))
    assert.ok((rank.get('far') ?? 0) > 0)
    assert.equal(rank.get('alone'), 0)
  })
})

test('what a recall strengthened is on disk once the mind is closed', async () => {
  const home = makeTempHome()
  try {
    const open = () => openMindInternals({ home: home.home, env: home.env, ignoreConfigFile: true, clock: new ManualClock(NOW), embedder: null, reindexOnOpen: false })
    const first = await open()
    await first.backend.index.upsert([unit('r', 'Restore drills run on the first Monday.', NOW)])
    const { hits } = await first.retriever.search('restore drills monday')
    assert.deepEqual(hits.map((h) => h.unit.id), ['r'])
    await first.close()
    const second = await open()
    try {
      assert.equal((await second.backend.index.get(['r']))[0]?.accessCount, 1)
    } finally {
      await second.close()
    }
  } finally {
    home.cleanup()
  }
})
