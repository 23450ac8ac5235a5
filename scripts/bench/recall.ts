/**
 * Benchmark: recall at 10k / 100k / 1M synthetic memories — index build time, search and priming
 * latency (p50/p95), resident memory and database size, beside a brute-force baseline measured
 * in the same run (every unit's text scanned in TypeScript with the same tokeniser and BM25).
 *
 *   node scripts/bench/recall.ts [--sizes 10000,100000,1000000] [--queries 100] [--vectors-up-to 20000]
 *
 * Units are synthetic (scripts/bench/synthetic-memories.ts): Zipf-distributed words, a mix of
 * kinds, dates over a year, some [[links]]. Vectors (offline hashing embedder) are stored only for
 * sizes up to --vectors-up-to: above it the retriever's `auto` dense mode re-ranks the lexical
 * candidates by embedding them at query time, so no stored vectors are read anyway.
 *
 * Building: units go in through the public `SearchIndex.upsert` in batches of 50,000 with the FTS5
 * insert trigger dropped, and the full-text index is built once at the end (`rebuild`), then the
 * trigger is restored — the usual bulk-load order for FTS5. At the 10k size the quality of fusion
 * is measured too (lexical only vs weighted sum vs RRF) on queries with typos and inflections.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ManualClock } from '../../src/core/clock.ts'
import { countTokens } from '../../src/core/tokens.ts'
import { DEFAULT_OFFLINE_EMBEDDER, OFFLINE_EMBEDDERS } from '../../src/llm/embedders/create-embedder.ts'
import { GLOVE_EMBEDDER_MODEL } from '../../src/llm/embedders/glove-embedder.ts'
import { installedWordVectors } from '../../src/llm/embedders/glove.ts'
import type { Embedder } from '../../src/llm/contracts.ts'
import { createMind } from '../../src/mind.ts'
import { createPrimer } from '../../src/memory/priming/prime.ts'
import { analyseQuery } from '../../src/memory/retrieval/query-analysis.ts'
import { createRetriever, type RetrievalOptions } from '../../src/memory/retrieval/search.ts'
import type { RetrievalSettings } from '../../src/memory/retrieval/settings.ts'
import { words } from '../../src/llm/embedders/text-features.ts'
import { openSqlite } from '../../src/storage/sqlite/database.ts'
import { seededRandom } from '../../src/testing/seeded-random.ts'
import { makeCorpus } from './synthetic-memories.ts'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    queries: { type: 'string', default: '100' },
    'vectors-up-to': { type: 'string', default: '20000' },
    keep: { type: 'boolean', default: false },
    embedder: { type: 'string', default: DEFAULT_OFFLINE_EMBEDDER },
  },
})
const embedderName = String(values.embedder)
const embedder0 = embedderName
const makeEmbedder = OFFLINE_EMBEDDERS[embedderName]
if (!makeEmbedder) throw new Error(`--embedder must be one of ${Object.keys(OFFLINE_EMBEDDERS).join(', ')}`)
// A word-vector embedder (GloVe) only ever re-ranks lexical candidates, so no vectors are stored;
// its corpus is made of real English words so that the vectors are actually looked up.
const wordVectors = embedderName === GLOVE_EMBEDDER_MODEL
const contentWords = wordVectors ? installedWordVectors().words.filter((w) => /^[a-z]{3,}$/.test(w)).slice(50, 40_050) : []
const sizes = String(values.sizes).split(',').map((s) => Number(s.trim()))
const queryCount = Number(values.queries)
const vectorsUpTo = Number(values['vectors-up-to'])
const NOW = new Date('2026-06-01T12:00:00Z')
const BATCH = 50_000
/** Searches and primes run before measuring (not measured). */
const WARM_UP = 20

const pct = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
}
const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(1))
const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0)
const fileSize = (path: string): number => {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** Brute force: BM25 over every text, tokenised like the retriever's query analysis. */
function bruteForce(texts: readonly string[], query: string, k = 10): number[] {
  const terms = analyseQuery(query, 16).terms
  const termSet = new Set(terms)
  const tf: Array<Map<string, number> | undefined> = new Array(texts.length)
  const lengths = new Float64Array(texts.length)
  const df = new Map<string, number>()
  let total = 0
  for (let i = 0; i < texts.length; i++) {
    const tokens = words(texts[i] as string)
    lengths[i] = tokens.length
    total += tokens.length
    let counts: Map<string, number> | undefined
    for (const token of tokens) {
      if (!termSet.has(token)) continue
      counts ??= new Map()
      counts.set(token, (counts.get(token) ?? 0) + 1)
    }
    if (counts) {
      tf[i] = counts
      for (const term of counts.keys()) df.set(term, (df.get(term) ?? 0) + 1)
    }
  }
  const avg = total / Math.max(1, texts.length)
  const scores: Array<{ i: number; s: number }> = []
  for (let i = 0; i < texts.length; i++) {
    const counts = tf[i]
    if (!counts) continue
    let s = 0
    for (const [term, f] of counts) {
      const n = df.get(term) ?? 0
      const idf = Math.log(1 + (texts.length - n + 0.5) / (n + 0.5))
      s += (idf * f * 2.2) / (f + 1.2 * (1 - 0.75 + (0.75 * (lengths[i] as number)) / avg))
    }
    scores.push({ i, s })
  }
  return scores
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.i)
}

interface Row {
  size: number
  vectors: string
  buildS: number
  search: [number, number]
  prime: [number, number]
  /** p50 and p95 of priming per message type. */
  primeByType: Record<string, [number, number]>
  primeTokens: number
  brute: [number, number]
  bruteQueries: number
  rssMb: string
  dbMb: string
}

const rows: Row[] = []
const quality: string[] = []

for (const size of sizes) {
  const root = join(tmpdir(), `engram-bench-recall-${size}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(root, { recursive: true })
  const home = join(root, 'home')
  const withVectors = !wordVectors && size <= vectorsUpTo
  const clock = new ManualClock(NOW)
  const embedder = makeEmbedder(undefined)
  const mind = await createMind({ home, env: { HOME: join(root, 'user-home') }, ignoreConfigFile: true, clock, embedder, reindexOnOpen: false })
  const corpus = makeCorpus({ now: NOW, agent: mind.agent, contentWords })
  const random = seededRandom(size)

  // Bulk load: FTS insert trigger off, rows in big transactions, one FTS rebuild at the end.
  const side = openSqlite(mind.layout.database)
  const trigger = side.db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = 'index_units_fts_insert'").get() as { sql: string } | undefined
  if (trigger) side.db.exec('DROP TRIGGER index_units_fts_insert')
  const buildStart = performance.now()
  for (let i = 0; i < size; i += BATCH) {
    const units = []
    for (let j = i; j < Math.min(size, i + BATCH); j++) units.push(corpus.unit(j))
    if (withVectors) {
      const vectors = await embedder.embed(units.map((u) => u.text), 'document')
      units.forEach((unit, k) => {
        unit.vector = vectors[k]
      })
    }
    await mind.backend.index.upsert(units)
    process.stderr.write(`\r${size}: ${Math.min(size, i + BATCH)} units`)
  }
  if (trigger) {
    side.db.exec("INSERT INTO index_fts (index_fts) VALUES ('rebuild')")
    side.db.exec(trigger.sql)
  }
  side.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  side.close()
  const buildS = (performance.now() - buildStart) / 1000
  process.stderr.write(`\r${size}: built in ${buildS.toFixed(1)} s\n`)

  // What priming reads besides the index: a profile, a day of activity, procedures.
  await mind.backend.documents.write('user', 'ada', { name: 'Ada' }, '# Ada\n\n- Prefers short answers.\n- Works on the staging cluster.\n- Timezone: Europe/Berlin.\n')
  for (let p = 0; p < 20; p++) {
    await mind.backend.documents.write('procedure', `procedure-${p}`, { description: corpus.sentence(5, 9) }, `# Procedure ${p}\n\n${corpus.sentence(10, 20)}\n`)
  }
  for (let e = 0; e < 200; e++) {
    const ts = new Date(NOW.getTime() - (200 - e) * 6 * 60_000).toISOString()
    const kind = e % 10
    if (kind < 5) await mind.backend.activity.append({ ts, type: e % 2 ? 'message_received' : 'response_sent', from: 'ada', to: 'ada', content: corpus.sentence(6, 40) })
    else if (kind < 7) await mind.backend.activity.append({ ts, type: e % 2 ? 'dm_sent' : 'dm_received', from: 'bob', to: 'bob', content: corpus.sentence(6, 30) })
    else if (kind < 8) await mind.backend.activity.append({ ts, type: 'cron_executed', summary: 'ok', meta: { task_name: 'nightly-backup', exit_code: 0 } })
    else await mind.backend.activity.append({ ts, type: 'tool_use', tool: 'shell', content: corpus.sentence(4, 12) })
  }

  // The profile and procedures just written are indexed in the background: measure after that, not during it.
  await mind.indexed()
  const retriever = createRetriever({ index: mind.backend.index, embedder, clock })
  const primer = createPrimer({ documents: mind.backend.documents, activity: mind.backend.activity, index: mind.backend.index, retriever, clock, agent: mind.agent })

  // Queries use mid-frequency words (Zipf ranks 100–5,000): the words people actually ask about.
  const word = (): string => corpus.vocabulary[100 + Math.floor(random() * 4900)] as string
  const questions = Array.from({ length: queryCount }, () => `what did we decide about the ${word()} and ${word()} ${word()}?`)
  const messages = Array.from({ length: queryCount }, (_, i) => {
    switch (i % 4) {
      case 0:
        return i % 8 === 0 ? 'good morning!' : 'hi there, how are you?'
      case 1:
        return `why does the ${word()} ${word()} keep failing when ${word()} is on?`
      case 2:
        return `please update the ${word()} notes with the ${word()} ${word()} results and tell ${word()}`
      default:
        return '[heartbeat] check inbox and pending tasks'
    }
  })

  // Steady state, as in an agent process that has been answering for a while: the JIT has
  // compiled the hot path and the page cache holds the index's upper levels. Warm-up messages are
  // their own, so the measured ones still meet cold postings.
  countTokens('warm the tokenizer tables')
  const warmQuestions = Array.from({ length: WARM_UP }, () => `what did we decide about the ${word()} and ${word()} ${word()}?`)
  for (const q of warmQuestions) await retriever.search(q, { recordAccess: false })
  for (const q of warmQuestions) await primer.prime({ message: q.replace('what did we decide about', 'please update'), user: 'ada' })

  const searchTimes: number[] = []
  for (const q of questions) {
    const t = performance.now()
    await retriever.search(q)
    searchTimes.push(performance.now() - t)
  }
  const primeTimes: number[] = []
  const primeByType: Record<string, number[]> = {}
  let primeTokens = 0
  for (const m of messages) {
    const t = performance.now()
    const result = await primer.prime({ message: m, user: 'ada' })
    const took = performance.now() - t
    primeTimes.push(took)
    const ofType = primeByType[result.type] ?? []
    ofType.push(took)
    primeByType[result.type] = ofType
    primeTokens += result.tokens
  }

  // Brute force over the same units, texts held in memory (loading them is not timed).
  const texts: string[] = []
  const reader = openSqlite(mind.layout.database, { readOnly: true })
  for (const row of reader.db.prepare('SELECT text FROM index_units').iterate() as Iterable<{ text: string }>) texts.push(row.text)
  reader.close()
  const bruteQueries = size >= 1_000_000 ? 5 : size >= 100_000 ? 10 : 30
  const bruteTimes: number[] = []
  for (const q of questions.slice(0, bruteQueries)) {
    const t = performance.now()
    bruteForce(texts, q)
    bruteTimes.push(performance.now() - t)
  }
  texts.length = 0

  if (withVectors) quality.push(...(await fusionQuality(mind.backend.index, embedder, clock, random, size)))

  rows.push({
    size,
    vectors: withVectors ? 'stored (knn)' : 'none (rerank)',
    buildS,
    search: [pct(searchTimes, 0.5), pct(searchTimes, 0.95)],
    prime: [pct(primeTimes, 0.5), pct(primeTimes, 0.95)],
    primeByType: Object.fromEntries(Object.entries(primeByType).map(([type, times]) => [type, [Math.round(pct(times, 0.5) * 10) / 10, Math.round(pct(times, 0.95) * 10) / 10]])),
    primeTokens: primeTokens / messages.length,
    brute: [pct(bruteTimes, 0.5), pct(bruteTimes, 0.95)],
    bruteQueries,
    rssMb: mb(process.memoryUsage().rss),
    dbMb: mb(fileSize(mind.layout.database) + fileSize(`${mind.layout.database}-wal`)),
  })
  process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`)
  await mind.close()
  if (!values.keep) rmSync(root, { recursive: true, force: true })
}

/** R@10 of lexical only, weighted fusion and RRF on queries made from a unit with typos and inflections. */
async function fusionQuality(
  index: Parameters<typeof createRetriever>[0]['index'],
  embedder: Embedder,
  clock: ManualClock,
  random: () => number,
  size: number,
): Promise<string[]> {
  const probes: Array<{ id: string; query: string }> = []
  while (probes.length < 200) {
    const i = Math.floor(random() * size)
    // corpus.unit(i) draws from a shared random stream, so the stored text is read back instead.
    const [unit] = await index.get([`u:${i}`])
    if (!unit) continue
    const content = analyseQuery(unit.text, 64).terms.filter((w) => w.length >= 5)
    if (content.length < 4) continue
    const picked = content.sort(() => random() - 0.5).slice(0, 4)
    // Two of the four words are misspelt or inflected, as people type them.
    const noisy = picked.map((w, k) => (k === 0 ? `${w.slice(0, 2)}${w.slice(3)}` : k === 1 ? `${w}s` : w))
    probes.push({ id: `u:${i}`, query: noisy.join(' ') })
  }
  const variants: Array<[string, Partial<RetrievalSettings>]> = [
    ['lexical only', { dense: 'off' }],
    ['weighted 0.7/0.3', { fusion: 'weighted', lexicalWeight: 0.7, denseWeight: 0.3 }],
    ['weighted 0.5/0.5', { fusion: 'weighted', lexicalWeight: 0.5, denseWeight: 0.5 }],
    ['rrf k=60', { fusion: 'rrf', lexicalWeight: 1, denseWeight: 1 }],
  ]
  const lines = [`Fusion quality at ${size} units (200 queries of 4 words, one misspelt and one inflected; target = the unit they came from):`, '', '| fusion | R@1 | R@10 |', '|---|---|---|']
  const options: RetrievalOptions = { limit: 10, recordAccess: false, graph: false }
  for (const [label, settings] of variants) {
    const retriever = createRetriever({ index, embedder, clock, settings: { ...settings, recencyWeight: 0, frequencyWeight: 0, graph: false } })
    let r1 = 0
    let r10 = 0
    for (const probe of probes) {
      const { hits } = await retriever.search(probe.query, options)
      const rank = hits.findIndex((h) => h.unit.id === probe.id)
      if (rank === 0) r1++
      if (rank >= 0) r10++
    }
    lines.push(`| ${label} | ${((100 * r1) / probes.length).toFixed(1)} | ${((100 * r10) / probes.length).toFixed(1)} |`)
  }
  return lines
}

console.log(`Recall benchmark (Node ${process.version}, ${process.platform}/${process.arch}, embedder ${embedder0}, ${queryCount} queries and ${queryCount} priming messages per size)`)
console.log('')
console.log('| units | vectors | build s | search p50 / p95 ms | prime p50 / p95 ms | prime tokens (mean) | brute-force BM25 p50 / p95 ms (queries) | RSS MB | DB MB |')
console.log('|---|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  console.log(
    `| ${r.size.toLocaleString('en')} | ${r.vectors} | ${r.buildS.toFixed(1)} | ${ms(r.search[0])} / ${ms(r.search[1])} | ${ms(r.prime[0])} / ${ms(r.prime[1])} | ${r.primeTokens.toFixed(0)} | ${ms(r.brute[0])} / ${ms(r.brute[1])} (${r.bruteQueries}) | ${r.rssMb} | ${r.dbMb} |`,
  )
}
if (quality.length > 0) console.log(`\n${quality.join('\n')}`)
