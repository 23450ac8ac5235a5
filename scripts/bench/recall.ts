/**
 * Benchmark: recall at 10k / 100k / 1M synthetic memories — index build time, search and priming
 * latency (p50/p95), resident memory and database size, beside a brute-force baseline measured
 * in the same run (every unit's text scanned in TypeScript with the same tokeniser and BM25).
 *
 *   node scripts/bench/recall.ts [--sizes 10000,100000,1000000] [--queries 100] [--vectors-up-to 20000]
 *                                [--backend embedded|postgres|both] [--pg-batch 20000] [--runs 1] [--keep]
 *
 * Each (size, backend) is built by one process and measured by another that only opens the built
 * home, as an agent process does: its resident memory (RSS after the measured priming, before the
 * brute-force baseline reads every text) is the mind's, not what building left behind; the
 * building process's peak RSS and CPU seconds are reported beside its wall time. `--runs N` repeats
 * everything N times (a fresh home each time) and reports the median of each figure. Priming is
 * reported in wall time and in the process's CPU time per prime (`process.cpuUsage()` around each
 * call): on a shared machine the wall time includes waiting for a core, the CPU time does not.
 *
 * Units are synthetic (scripts/bench/synthetic-memories.ts): Zipf-distributed words, a mix of
 * kinds, dates over a year, some [[links]]. Vectors (offline hashing embedder) are stored only for
 * sizes up to --vectors-up-to: above it the retriever's `auto` dense mode re-ranks the lexical
 * candidates by embedding them at query time, so no stored vectors are read anyway.
 *
 * Backends (decision 0037): `--backend embedded` (the default) measures the embedded home (SQLite +
 * FTS5); `postgres` (or `both`) measures the PostgreSQL backend AND the embedded one beside it, in
 * the same run, on the same corpus and the same queries: for each size, embedded then PostgreSQL.
 * Each step runs in a child process of its own, so its RSS is its own. PostgreSQL is
 * the server of ENGRAM_DATABASE_URL, else of ENGRAM_TEST_DATABASE_URL (`npm run bench -- recall
 * --backend postgres` starts the test server of scripts/test-postgres.sh for that); each run uses a
 * fresh schema `bench_<random>`, dropped at the end unless --keep.
 *
 * Building: units go in through the public `SearchIndex.upsert` in batches. Embedded: batches of
 * 50,000, each one transaction (units analysed before it, rows then full-text rows). PostgreSQL:
 * batches of --pg-batch units, each one transaction keeping the term statistics, then one
 * `VACUUM ANALYZE` of the index tables (counted in the build time), as a bulk load into PostgreSQL
 * is followed. At the 10k size the quality of fusion is measured too (lexical only vs weighted
 * sum vs RRF) on queries with typos and inflections.
 *
 * Queries whose every word is common (decision 0095) are timed apart, on the search path and on
 * the lexical channel alone; on PostgreSQL also with `bestFirst: false` (every posting of the word
 * read, as before that decision), the baseline in the same run.
 *
 * On PostgreSQL every statement the mind sends while priming is timed (by statement); the slowest
 * statements' shares are printed on stderr, and the slowest one is run again under
 * EXPLAIN (ANALYZE, BUFFERS) and its plan printed (--explain 0 turns that off).
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ManualClock } from '../../src/core/clock.ts'
import { countTokens } from '../../src/core/tokens.ts'
import { DEFAULT_OFFLINE_EMBEDDER, OFFLINE_EMBEDDERS } from '../../src/llm/embedders/create-embedder.ts'
import { GLOVE_EMBEDDER_MODEL } from '../../src/llm/embedders/glove-embedder.ts'
import { installedWordVectors } from '../../src/llm/embedders/glove.ts'
import type { Embedder } from '../../src/llm/contracts.ts'
import { openMindInternals } from '../../src/mind-internals.ts'
import { createPrimer } from '../../src/memory/priming/prime.ts'
import { analyseQuery } from '../../src/memory/retrieval/query-analysis.ts'
import { createRetriever, type RetrievalOptions } from '../../src/memory/retrieval/search.ts'
import type { RetrievalSettings } from '../../src/memory/retrieval/settings.ts'
import { words } from '../../src/llm/embedders/text-features.ts'
import type { PostgresBackend } from '../../src/storage/postgres/backend.ts'
import { createPostgresSearchIndex } from '../../src/storage/postgres/search-index.ts'
import type { PgClient } from '../../src/storage/postgres/driver.ts'
import { openSqlite } from '../../src/storage/sqlite/database.ts'
import { seededRandom } from '../../src/test-support/seeded-random.ts'
import { type BenchBackend, benchBackend, benchBackends, benchDatabaseUrl, describeServer, dropSchema } from './postgres-target.ts'
import { makeCorpus } from './synthetic-memories.ts'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    queries: { type: 'string', default: '100' },
    'vectors-up-to': { type: 'string', default: '20000' },
    keep: { type: 'boolean', default: false },
    embedder: { type: 'string', default: DEFAULT_OFFLINE_EMBEDDER },
    backend: { type: 'string', default: 'embedded' },
    'pg-batch': { type: 'string', default: '20000' },
    explain: { type: 'string', default: '1' },
    runs: { type: 'string', default: '1' },
    /** Internal: the child process building or measuring one size on one backend (`build:100000:postgres`). */
    one: { type: 'string' },
    /** Internal: the run's directory and PostgreSQL schema, shared by its build and measure processes. */
    root: { type: 'string' },
    schema: { type: 'string' },
    /** Internal: the build step's figures, handed to the measuring process. */
    built: { type: 'string' },
  },
})
const embedderName = String(values.embedder)
const makeEmbedder = OFFLINE_EMBEDDERS[embedderName]
if (!makeEmbedder) throw new Error(`--embedder must be one of ${Object.keys(OFFLINE_EMBEDDERS).join(', ')}`)
const sizes = String(values.sizes).split(',').map((s) => Number(s.trim()))
const queryCount = Number(values.queries)
const vectorsUpTo = Number(values['vectors-up-to'])
const backends = benchBackends(String(values.backend))
const pgBatch = Number(values['pg-batch'])
const runs = Math.max(1, Number(values.runs))
const NOW = new Date('2026-06-01T12:00:00Z')
/** Units per upsert on the embedded backend (one transaction each). */
const EMBEDDED_BATCH = 50_000
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
  backend: BenchBackend
  vectors: string
  buildS: number
  /** CPU seconds of the building process. */
  buildCpuS: number
  search: [number, number]
  prime: [number, number]
  /**
   * p50 and p95 of the process CPU time (user + system) per prime, in ms: on a machine shared with
   * other work, wall time counts the waits for a core; CPU time counts only what priming spent.
   */
  primeCpu: [number, number]
  /** p50 and p95 of priming per message type. */
  primeByType: Record<string, [number, number]>
  primeTokens: number
  brute: [number, number]
  bruteQueries: number
  /** Resident memory and V8 heap of the measuring process after priming. */
  rssMb: string
  heapMb: string
  /** Peak resident memory of the building process. */
  buildPeakRssMb: string
  dbMb: string
  /**
   * Queries whose every word is common (decision 0095), p50 / p95 ms wall: the search path, the
   * lexical channel alone, and (PostgreSQL) the lexical channel reading every posting — the
   * baseline in the same run.
   */
  common: [number, number]
  commonIndex: [number, number]
  commonWhole?: [number, number]
}

/** One statement as the pool saw it while priming: its text, how often and how long. */
interface StatementTimes {
  sql: string
  times: number[]
  slowest: { ms: number; values: readonly unknown[] | undefined }
}

type Query = (text: string, values?: readonly unknown[], callback?: (error: unknown, result: unknown) => void) => Promise<unknown> | undefined

/**
 * Times every statement the PostgreSQL backend sends while `recording` is on. Every statement
 * runs on a client the mind's pool hands out (pool.query takes one too, with a callback), so the
 * clients' `query` is wrapped, once each, in both the promise and the callback form.
 */
function timeStatements(backend: PostgresBackend): { statements: Map<string, StatementTimes>; setRecording(on: boolean): void; client(): Promise<PgClient> } {
  const statements = new Map<string, StatementTimes>()
  let recording = false
  const record = (text: string, values: readonly unknown[] | undefined, took: number): void => {
    const sql = text.replace(/\s+/g, ' ').trim()
    const seen = statements.get(sql) ?? { sql, times: [], slowest: { ms: -1, values: undefined } }
    seen.times.push(took)
    if (took > seen.slowest.ms) seen.slowest = { ms: took, values }
    statements.set(sql, seen)
  }
  const wrap = (client: { query: Query }): void => {
    const original = client.query.bind(client)
    client.query = (text, values, callback) => {
      if (!recording || typeof text !== 'string') return original(text, values, callback)
      const start = performance.now()
      if (typeof callback === 'function') {
        return original(text, values, (error, result) => {
          record(text, values, performance.now() - start)
          callback(error, result)
        })
      }
      const done = original(text, values)
      return done?.finally(() => record(text, values, performance.now() - start))
    }
  }
  type Client = { query: Query }
  const pool = backend.handle.pool as unknown as { query: Query; connect(callback?: (error: unknown, client?: Client, release?: unknown) => void): Promise<Client> | undefined }
  const connect = pool.connect.bind(pool)
  const wrapped = new WeakSet<object>()
  const once = (client: Client | undefined): void => {
    if (client && !wrapped.has(client)) {
      wrapped.add(client)
      wrap(client)
    }
  }
  pool.connect = (callback) => {
    if (callback !== undefined) {
      return connect((error, client, release) => {
        once(client)
        callback(error, client, release)
      })
    }
    return connect()?.then((client) => {
      once(client)
      return client
    })
  }
  return { statements, setRecording: (on) => (recording = on), client: () => backend.handle.pool.connect() }
}

/** What the bench's processes share about one (size, backend): where the home is, and the corpus. */
function setting(size: number, backend: BenchBackend, root: string, schema: string) {
  // A word-vector embedder (GloVe) only ever re-ranks lexical candidates, so no vectors are stored;
  // its corpus is made of real English words so that the vectors are actually looked up.
  const wordVectors = embedderName === GLOVE_EMBEDDER_MODEL
  const vectors = wordVectors ? installedWordVectors() : undefined
  const contentWords = vectors ? Array.from({ length: vectors.size }, (_, row) => vectors.word(row)).filter((w) => /^[a-z]{3,}$/.test(w)).slice(50, 40_050) : []
  const url = backend === 'postgres' ? benchDatabaseUrl() : undefined
  const open = async (clock: ManualClock, embedder: Embedder) => {
    const settings = url === undefined ? {} : { 'storage.url': url, 'storage.schema': schema }
    return await openMindInternals({ home: join(root, 'home'), env: { HOME: join(root, 'user-home') }, ignoreConfigFile: true, clock, embedder, reindexOnOpen: false, settings })
  }
  return { withVectors: !wordVectors && size <= vectorsUpTo, contentWords, open }
}

/**
 * Build one size on one backend (a child process of its own): the units through the public
 * `SearchIndex.upsert`, then what priming reads besides the index. Prints `@@build` on stdout.
 */
async function buildOne(size: number, backend: BenchBackend, root: string, schema: string): Promise<void> {
  const { withVectors, contentWords, open } = setting(size, backend, root, schema)
  const clock = new ManualClock(NOW)
  const embedder = (makeEmbedder as NonNullable<typeof makeEmbedder>)(undefined)
  const mind = await open(clock, embedder)
  const pgBackend = mind.backend.name === 'postgres' ? (mind.backend as PostgresBackend) : undefined
  if (pgBackend) process.stderr.write(`${size} postgres: ${pgBackend.handle.location}\n`)
  try {
    const corpus = makeCorpus({ now: NOW, agent: mind.agent, contentWords })
    const batch = pgBackend ? pgBatch : EMBEDDED_BATCH
    const buildStart = performance.now()
    const cpuStart = process.cpuUsage()
    let lastReport = buildStart
    // Making up the synthetic units is not building the index: its time is left out (~7 s of CPU
    // at 1M units, which figures before 2026-11-24 included).
    let generatingMs = 0
    let generatingCpuUs = 0
    for (let i = 0; i < size; i += batch) {
      const generating = performance.now()
      const generatingCpu = process.cpuUsage()
      const units = []
      for (let j = i; j < Math.min(size, i + batch); j++) units.push(corpus.unit(j))
      generatingMs += performance.now() - generating
      const generated = process.cpuUsage(generatingCpu)
      generatingCpuUs += generated.user + generated.system
      if (withVectors) {
        const vectors = await embedder.embed(
          units.map((u) => u.text),
          'document',
        )
        units.forEach((unit, k) => {
          unit.vector = vectors[k]
        })
      }
      await mind.backend.index.upsert(units)
      const now = performance.now()
      if (now - lastReport > 2_000 || i + batch >= size) {
        lastReport = now
        const done = Math.min(size, i + batch)
        process.stderr.write(`\r${size} ${backend}: ${done} units, ${((1000 * done) / (now - buildStart)).toFixed(0)} units/s   `)
      }
    }
    if (pgBackend) {
      // What a bulk load into PostgreSQL is followed by: visibility map and planner statistics, so
      // autovacuum does not do it in the middle of the measurements.
      const vacuumStart = performance.now()
      await pgBackend.handle.pool.query('VACUUM ANALYZE index_units, index_blocks, index_stats')
      process.stderr.write(`\n${size} postgres: VACUUM ANALYZE ${((performance.now() - vacuumStart) / 1000).toFixed(1)} s`)
    }
    const buildS = (performance.now() - buildStart - generatingMs) / 1000
    const cpu = process.cpuUsage(cpuStart)
    // CPU seconds of the building process (user + system): beside the wall time, what the build
    // costs whatever else the machine runs (not the PostgreSQL server's share).
    const buildCpuS = (cpu.user + cpu.system - generatingCpuUs) / 1e6
    process.stderr.write(`\n${size} ${backend}: built in ${buildS.toFixed(1)} s, ${buildCpuS.toFixed(1)} s of CPU (making up the units: ${(generatingMs / 1000).toFixed(1)} s more; peak RSS of the building process ${mb(process.resourceUsage().maxRSS * 1024)} MB)\n`)

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
    // The profile and procedures just written are indexed in the background: wait for that.
    await mind.indexed()
    if (!pgBackend) {
      const side = openSqlite(mind.layout.database)
      side.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      side.close()
    }
    process.stdout.write(`@@build ${JSON.stringify({ buildS, buildCpuS, buildPeakRssMb: mb(process.resourceUsage().maxRSS * 1024) })}\n`)
  } finally {
    await mind.close()
  }
}

/**
 * Measure one size on one backend in a process that only opens the built home, as an agent process
 * does (its resident memory is then the mind's, not what building left behind); prints `@@row`,
 * `@@quality` lines on stdout.
 */
async function measureOne(size: number, backend: BenchBackend, root: string, schema: string, build: { buildS: number; buildCpuS: number; buildPeakRssMb: string }): Promise<void> {
  const { withVectors, contentWords, open } = setting(size, backend, root, schema)
  const clock = new ManualClock(NOW)
  const embedder = (makeEmbedder as NonNullable<typeof makeEmbedder>)(undefined)
  const mind = await open(clock, embedder)
  const pgBackend = mind.backend.name === 'postgres' ? (mind.backend as PostgresBackend) : undefined
  const timing = pgBackend ? timeStatements(pgBackend) : undefined
  try {
    const corpus = makeCorpus({ now: NOW, agent: mind.agent, contentWords })
    const random = seededRandom(size)
    const opened = process.memoryUsage()
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
    const primeCpuTimes: number[] = []
    const primeByType: Record<string, number[]> = {}
    let primeTokens = 0
    let slowest = { ms: -1, message: '' }
    timing?.setRecording(true)
    for (const m of messages) {
      const t = performance.now()
      const cpuStart = process.cpuUsage()
      const result = await primer.prime({ message: m, user: 'ada' })
      const cpu = process.cpuUsage(cpuStart)
      const took = performance.now() - t
      primeTimes.push(took)
      primeCpuTimes.push((cpu.user + cpu.system) / 1000)
      if (took > slowest.ms) slowest = { ms: took, message: m }
      const ofType = primeByType[result.type] ?? []
      ofType.push(took)
      primeByType[result.type] = ofType
      primeTokens += result.tokens
    }
    timing?.setRecording(false)

    // Queries whose every word is common — content words of Zipf ranks 100–129, one or two — each
    // kept alone by the lexical plan, its posting list in the hundred thousands at 1M units. Own
    // random numbers, so the queries above stay as they were. Warm: each query set once first.
    const commonRandom = seededRandom(size + 1)
    const commonWord = (): string => corpus.vocabulary[100 + Math.floor(commonRandom() * 30)] as string
    const commonQueries = Array.from({ length: Math.min(queryCount, 40) }, (_, i) => (i % 2 === 0 ? commonWord() : `${commonWord()} ${commonWord()}`))
    const timed = async (run: (q: string) => Promise<unknown>): Promise<[number, number]> => {
      for (const q of commonQueries) await run(q)
      const times: number[] = []
      for (const q of commonQueries) {
        const t = performance.now()
        await run(q)
        times.push(performance.now() - t)
      }
      return [pct(times, 0.5), pct(times, 0.95)]
    }
    const common = await timed((q) => retriever.search(q, { recordAccess: false }))
    const commonIndex = await timed((q) => mind.backend.index.search({ text: q, limit: 10 }))
    const whole = pgBackend ? await createPostgresSearchIndex(pgBackend.handle, { bestFirst: false }) : undefined
    const commonWhole = whole ? await timed((q) => whole.search({ text: q, limit: 10 })) : undefined
    // Resident memory of the mind after the measured priming (before the brute-force baseline
    // loads every text): the figure of an agent process that has been answering for a while.
    const primed = process.memoryUsage()
    const breakdown = (m: NodeJS.MemoryUsage): string => `RSS ${mb(m.rss)} MB (V8 heap ${mb(m.heapUsed)} of ${mb(m.heapTotal)}, external ${mb(m.external)}, array buffers ${mb(m.arrayBuffers)})`
    process.stderr.write(`${size} ${backend}: memory when opened ${breakdown(opened)}; after priming ${breakdown(primed)}\n`)
    if (timing) await reportStatements(size, timing, primeTimes, slowest)

    // Brute force over the same units, texts held in memory (loading them is not timed).
    const texts: string[] = []
    if (pgBackend) {
      const { rows } = await pgBackend.handle.pool.query<{ text: string }>('SELECT text FROM index_units')
      for (const row of rows) texts.push(row.text)
    } else {
      const reader = openSqlite(mind.layout.database, { readOnly: true })
      for (const row of reader.db.prepare('SELECT text FROM index_units').iterate() as Iterable<{ text: string }>) texts.push(row.text)
      reader.close()
    }
    const bruteQueries = size >= 1_000_000 ? 5 : size >= 100_000 ? 10 : 30
    const bruteTimes: number[] = []
    for (const q of questions.slice(0, bruteQueries)) {
      const t = performance.now()
      bruteForce(texts, q)
      bruteTimes.push(performance.now() - t)
    }
    texts.length = 0

    if (withVectors) for (const line of await fusionQuality(mind.backend.index, embedder, clock, random, size, backend)) process.stdout.write(`@@quality ${line}\n`)

    let dbBytes: number
    if (pgBackend) {
      await mind.backend.index.flush?.()
      const { rows } = await pgBackend.handle.pool.query<{ bytes: string | null }>(
        `SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
        [pgBackend.handle.schema],
      )
      dbBytes = Number(rows[0]?.bytes ?? 0)
    } else dbBytes = fileSize(mind.layout.database) + fileSize(`${mind.layout.database}-wal`)

    const row: Row = {
      size,
      backend,
      vectors: withVectors ? 'stored (knn)' : 'none (rerank)',
      buildS: build.buildS,
      buildCpuS: build.buildCpuS,
      search: [pct(searchTimes, 0.5), pct(searchTimes, 0.95)],
      prime: [pct(primeTimes, 0.5), pct(primeTimes, 0.95)],
      primeCpu: [pct(primeCpuTimes, 0.5), pct(primeCpuTimes, 0.95)],
      primeByType: Object.fromEntries(Object.entries(primeByType).map(([type, times]) => [type, [Math.round(pct(times, 0.5) * 10) / 10, Math.round(pct(times, 0.95) * 10) / 10]])),
      primeTokens: primeTokens / messages.length,
      brute: [pct(bruteTimes, 0.5), pct(bruteTimes, 0.95)],
      common,
      commonIndex,
      ...(commonWhole ? { commonWhole } : {}),
      bruteQueries,
      rssMb: mb(primed.rss),
      heapMb: mb(primed.heapUsed),
      buildPeakRssMb: build.buildPeakRssMb,
      dbMb: mb(dbBytes),
    }
    process.stderr.write(`${JSON.stringify(row)}\n`)
    process.stdout.write(`@@row ${JSON.stringify(row)}\n`)
  } finally {
    await mind.close()
  }
}

/**
 * What the PostgreSQL backend spent priming on: each statement's count, total and p95 over the
 * measured messages, and the plan of the slowest statement run again under EXPLAIN ANALYZE.
 */
async function reportStatements(size: number, timing: ReturnType<typeof timeStatements>, primeTimes: number[], slowest: { ms: number; message: string }): Promise<void> {
  const all = [...timing.statements.values()]
  const total = all.reduce((sum, s) => sum + s.times.reduce((a, b) => a + b, 0), 0)
  const primeTotal = primeTimes.reduce((a, b) => a + b, 0)
  const lines = [
    `${size} postgres: priming ${primeTimes.length} messages took ${primeTotal.toFixed(0)} ms, of which ${total.toFixed(0)} ms waiting for ${all.reduce((n, s) => n + s.times.length, 0)} statements; slowest prime ${slowest.ms.toFixed(1)} ms (${JSON.stringify(slowest.message)})`,
    '  statements by total time (count, total ms, p50 / p95 / max ms):',
  ]
  all.sort((a, b) => b.times.reduce((x, y) => x + y, 0) - a.times.reduce((x, y) => x + y, 0))
  for (const s of all.slice(0, 8)) {
    const sum = s.times.reduce((a, b) => a + b, 0)
    lines.push(`  ${String(s.times.length).padStart(5)} ${sum.toFixed(0).padStart(7)} ${ms(pct(s.times, 0.5))} / ${ms(pct(s.times, 0.95))} / ${ms(s.slowest.ms)}  ${s.sql.slice(0, 160)}`)
  }
  process.stderr.write(`${lines.join('\n')}\n`)
  if (values.explain === '0') return
  // The reads only (an EXPLAIN ANALYZE runs its statement): the one with the most time in all, and
  // the one with the slowest single run; each in a transaction rolled back.
  const reads = all.filter((s) => /^(SELECT|WITH)\b/i.test(s.sql))
  const picked = new Set([reads[0], [...reads].sort((a, b) => b.slowest.ms - a.slowest.ms)[0]].filter((s) => s !== undefined))
  const client = await timing.client()
  for (const statement of picked) {
    try {
      await client.query('BEGIN')
      const result = (await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`, statement.slowest.values)) as { rows: Array<Record<string, string>> }
      const plan = result.rows.map((r) => Object.values(r)[0]).join('\n')
      process.stderr.write(
        `${size} postgres: statement (${statement.times.length} runs, slowest ${ms(statement.slowest.ms)} ms), parameters ${JSON.stringify(statement.slowest.values)?.slice(0, 400)}\n${statement.sql}\nEXPLAIN (ANALYZE, BUFFERS), run again:\n${plan}\n`,
      )
    } catch (error) {
      process.stderr.write(`${size} postgres: EXPLAIN failed: ${(error as Error).message}\n`)
    } finally {
      await client.query('ROLLBACK').catch(() => undefined)
    }
  }
  client.release()
}

/** R@10 of lexical only, weighted fusion and RRF on queries made from a unit with typos and inflections. */
async function fusionQuality(
  index: Parameters<typeof createRetriever>[0]['index'],
  embedder: Embedder,
  clock: ManualClock,
  random: () => number,
  size: number,
  backend: BenchBackend,
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
  const lines = [`Fusion quality at ${size} units on ${backend} (200 queries of 4 words, one misspelt and one inflected; target = the unit they came from):`, '', '| fusion | R@1 | R@10 |', '|---|---|---|']
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

/** Runs one step (build or measure) of one (size, backend) in a child process of this script; the lines it printed, or why it failed. */
function runChild(step: 'build' | 'measure', size: number, backend: BenchBackend, root: string, schema: string, built?: string): Promise<{ lines: string[]; error?: string }> {
  const args = [
    ...process.execArgv,
    fileURLToPath(import.meta.url),
    '--one',
    `${step}:${size}:${backend}`,
    '--root',
    root,
    '--schema',
    schema,
    '--queries',
    String(queryCount),
    '--vectors-up-to',
    String(vectorsUpTo),
    '--embedder',
    embedderName,
    '--pg-batch',
    String(pgBatch),
    '--explain',
    String(values.explain),
    ...(built === undefined ? [] : ['--built', built]),
  ]
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
    })
    child.on('close', (code, signal) => {
      const lines = out.split('\n')
      resolve(code === 0 ? { lines } : { lines, error: `${step} exited with ${signal ?? code}` })
    })
  })
}

/** One run of one (size, backend): a fresh home (or schema) built by one process and measured by another. */
async function runSize(size: number, backend: BenchBackend): Promise<{ row?: Row; quality: string[]; error?: string }> {
  const root = join(tmpdir(), `engram-bench-recall-${size}-${backend}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(root, { recursive: true })
  const schema = `bench_${randomBytes(5).toString('hex')}`
  try {
    const build = await runChild('build', size, backend, root, schema)
    const builtLine = build.lines.find((line) => line.startsWith('@@build '))
    if (build.error || !builtLine) return { quality: [], error: build.error ?? 'no build figures' }
    const measure = await runChild('measure', size, backend, root, schema, builtLine.slice('@@build '.length))
    const rowLine = measure.lines.find((line) => line.startsWith('@@row '))
    const quality = measure.lines.filter((line) => line.startsWith('@@quality ')).map((line) => line.slice('@@quality '.length))
    if (rowLine) return { row: JSON.parse(rowLine.slice('@@row '.length)) as Row, quality }
    return { quality, error: measure.error ?? 'no row' }
  } finally {
    const url = backend === 'postgres' ? benchDatabaseUrl() : undefined
    if (url !== undefined && !values.keep) await dropSchema(url, schema)
    if (!values.keep) rmSync(root, { recursive: true, force: true })
    else process.stderr.write(`kept: ${root}${url !== undefined ? ` and schema ${schema}` : ''}\n`)
  }
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** The median of each figure over the runs of one (size, backend) (each figure on its own). */
function medianRow(of: readonly Row[]): Row {
  const first = of[0] as Row
  const pair = (pick: (r: Row) => [number, number]): [number, number] => [median(of.map((r) => pick(r)[0])), median(of.map((r) => pick(r)[1]))]
  const types = [...new Set(of.flatMap((r) => Object.keys(r.primeByType)))]
  const mbMedian = (pick: (r: Row) => string): string => median(of.map((r) => Number(pick(r)))).toFixed(0)
  return {
    ...first,
    buildS: median(of.map((r) => r.buildS)),
    buildCpuS: median(of.map((r) => r.buildCpuS)),
    search: pair((r) => r.search),
    prime: pair((r) => r.prime),
    primeCpu: pair((r) => r.primeCpu),
    primeByType: Object.fromEntries(
      types.map((type) => [type, pair((r) => r.primeByType[type] ?? [Number.NaN, Number.NaN]).map((x) => Math.round(x * 10) / 10) as [number, number]]),
    ),
    primeTokens: median(of.map((r) => r.primeTokens)),
    brute: pair((r) => r.brute),
    common: pair((r) => r.common),
    commonIndex: pair((r) => r.commonIndex),
    ...(first.commonWhole ? { commonWhole: pair((r) => r.commonWhole ?? [Number.NaN, Number.NaN]) } : {}),
    rssMb: mbMedian((r) => r.rssMb),
    heapMb: mbMedian((r) => r.heapMb),
    buildPeakRssMb: mbMedian((r) => r.buildPeakRssMb),
    dbMb: mbMedian((r) => r.dbMb),
  }
}

if (values.one !== undefined) {
  const [step, size, backend] = values.one.split(':')
  const root = String(values.root)
  const schema = String(values.schema)
  if (step === 'build') await buildOne(Number(size), benchBackend(String(backend)), root, schema)
  else await measureOne(Number(size), benchBackend(String(backend)), root, schema, JSON.parse(String(values.built)))
} else {
  const server = backends.includes('postgres') ? await describeServer(benchDatabaseUrl()) : undefined
  const runRows = new Map<string, Row[]>()
  const quality: string[] = []
  const failures: string[] = []
  for (let run = 1; run <= runs; run++) {
    for (const size of sizes) {
      for (const backend of backends) {
        const result = await runSize(size, backend)
        if (result.row) runRows.set(`${size}:${backend}`, [...(runRows.get(`${size}:${backend}`) ?? []), result.row])
        else failures.push(`${size.toLocaleString('en')} on ${backend} (run ${run}): ${result.error}`)
        if (run === 1 && result.quality.length > 0) quality.push(...result.quality, '')
      }
    }
  }
  const rows = [...runRows.values()].map(medianRow)
  console.log(
    `Recall benchmark (Node ${process.version}, ${process.platform}/${process.arch}, embedder ${embedderName}, ${queryCount} queries and ${queryCount} priming messages per size and backend; ${runs === 1 ? 'one run' : `median of ${runs} runs, each figure on its own`})`,
  )
  if (server) console.log(`PostgreSQL: ${server}; units upserted in batches of ${pgBatch}`)
  console.log('')
  console.log('| units | backend | vectors | build s (CPU s) | search p50 / p95 ms | prime p50 / p95 ms | prime CPU p50 / p95 ms | prime tokens (mean) | brute-force BM25 p50 / p95 ms (queries) | RSS MB (heap) | build peak RSS MB | DB MB |')
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const r of rows) {
    console.log(
      `| ${r.size.toLocaleString('en')} | ${r.backend} | ${r.vectors} | ${r.buildS.toFixed(1)} (${r.buildCpuS.toFixed(1)}) | ${ms(r.search[0])} / ${ms(r.search[1])} | ${ms(r.prime[0])} / ${ms(r.prime[1])} | ${ms(r.primeCpu[0])} / ${ms(r.primeCpu[1])} | ${r.primeTokens.toFixed(0)} | ${ms(r.brute[0])} / ${ms(r.brute[1])} (${r.bruteQueries}) | ${r.rssMb} (${r.heapMb}) | ${r.buildPeakRssMb} | ${r.dbMb} |`,
    )
  }
  console.log('')
  console.log('Queries whose every word is common (40 queries of content words of Zipf ranks 100–129, one or two words; warm), p50 / p95 ms:')
  console.log('')
  console.log('| units | backend | search | lexical channel (limit 10) | lexical channel reading every posting (PostgreSQL before decision 0095) |')
  console.log('|---|---|---|---|---|')
  for (const r of rows) {
    const whole = r.commonWhole ? `${ms(r.commonWhole[0])} / ${ms(r.commonWhole[1])}` : '—'
    console.log(`| ${r.size.toLocaleString('en')} | ${r.backend} | ${ms(r.common[0])} / ${ms(r.common[1])} | ${ms(r.commonIndex[0])} / ${ms(r.commonIndex[1])} | ${whole} |`)
  }
  console.log('')
  console.log('Priming p50 / p95 ms by message type:')
  for (const r of rows) console.log(`- ${r.size.toLocaleString('en')} ${r.backend}: ${Object.entries(r.primeByType).map(([type, [p50, p95]]) => `${type} ${p50} / ${p95}`).join(', ')}`)
  if (runs > 1) {
    console.log('')
    console.log('Each run (build s; prime p50 / p95 ms; prime CPU p50 / p95 ms; RSS MB; DB MB):')
    for (const [key, of] of runRows) console.log(`- ${key}: ${of.map((r) => `${r.buildS.toFixed(1)}; ${ms(r.prime[0])} / ${ms(r.prime[1])}; ${ms(r.primeCpu[0])} / ${ms(r.primeCpu[1])}; ${r.rssMb}; ${r.dbMb}`).join(' | ')}`)
  }
  if (quality.length > 0) console.log(`\n${quality.join('\n')}`)
  if (failures.length > 0) {
    console.log(`\nNot measured: ${failures.join('; ')}`)
    process.exitCode = 1
  }
}
