/**
 * Lossless-context benchmark (decision 0043): for one long conversation (default 100,000 messages),
 * offline (no LLM: extractive summaries), each figure beside a baseline measured in the same run.
 *
 * 1. Append, on the provider (embedded backend): single-message appends and batches of 100, per
 *    second and per CPU-second, beside plain FTS5 inserts of the same texts; the store alone and the
 *    index write alone for the split; the FTS5 write of the analysed fields with and without the
 *    related words (context-ingest.ts). Then the backlog for parts 2–3, in batches of 100.
 * 2. Assemble at a 16k-token budget on the raw window, beside a naive baseline (read every message,
 *    keep the newest that fit).
 * 3. Offline compaction of the backlog: the first incremental compaction (one leaf and one condensed
 *    pass over the whole backlog, what the first assemble past the threshold used to do inline),
 *    then incremental compactions until the window is under the threshold; the consistency check
 *    (every message covered exactly once) after.
 * 4. Turns while compaction runs: a mind on its own home with a second backlog appended in batches
 *    of 100 through `mind.context.append`; turns (`mind.session(...).begin/end`, and an `assemble`
 *    with automatic compaction), one every `--think` ms (the model's answer between two turns), with
 *    no compaction running (baseline), then while the backlog is compacted in the background in the
 *    same process (incremental compactions until under the threshold, as the `context-compaction`
 *    jobs that turns queue do): the longest and p95 calls.
 *
 * Usage: node scripts/bench/context.ts [MESSAGES] [--turns N] [--batches B] [--think MS] [--append-only]
 *   (N single-message appends timed, default 2,000; B batches of 100 timed, default 100; MS between
 *   turns in part 4, default 200; --append-only: part 1 alone)
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { ManualClock } from '../../src/core/clock.ts'
import { createNoneLlm } from '../../src/llm/none-llm.ts'
import { checkContextConsistency } from '../../src/memory/context/consistency.ts'
import { createLcmProvider } from '../../src/memory/context/lcm-provider.ts'
import { type CompactionResult, hasCompactor } from '../../src/memory/context/provider.ts'
import { prng, randomMessage } from '../../src/memory/context/test-support/harness.ts'
import { openMindInternals } from '../../src/mind-internals.ts'
import { openEmbeddedBackend } from '../../src/storage/embedded.ts'
import { makeTempHome } from '../../src/testing/temp-home.ts'
import { measureIngest } from './context-ingest.ts'

const { values, positionals } = parseArgs({
  options: {
    turns: { type: 'string', default: '2000' },
    batches: { type: 'string', default: '100' },
    think: { type: 'string', default: '200' },
    'append-only': { type: 'boolean', default: false },
  },
  allowPositionals: true,
})
const MESSAGES = Number(positionals[0] ?? 100_000)
const TIMED_TURNS = Number(values.turns)
const TIMED_BATCHES = Number(values.batches)
/** Milliseconds between two turns in part 4: the model's answer, which a turn waits for (a host never begins turns back to back). */
const THINK_MS = Number(values.think)
const BUDGET = 16_000
const FRESH_TAIL = 20
const BATCH = 100
const THRESHOLD = 0.75

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

async function timed(runs: number, fn: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) }
}

const ms = (value: number): string => value.toFixed(1)
const n = (value: number): string => Math.round(value).toLocaleString('en')
const random = prng(7)
const size = (): number => (random() < 0.8 ? 5 + Math.floor(random() * 40) : 40 + Math.floor(random() * 300))
const rows: string[] = []
const notes: string[] = []

// ---- 1–3: the provider on an embedded backend ----
const tmp = makeTempHome('engram-bench-context-')
const clock = new ManualClock('2026-01-01T00:00:00Z')
const backend = openEmbeddedBackend({ home: tmp.home, agent: 'bench', clock })
const lcm = createLcmProvider({ store: backend.context, index: backend.index, locks: backend.locks, clock, llm: createNoneLlm(), settings: { freshTail: FRESH_TAIL } })
const session = { sessionId: 'bench', agent: 'bench' }
let appended = 0
const turn = (count: number) => {
  clock.advance(20_000)
  const messages = Array.from({ length: count }, (_, j) => randomMessage(random, appended + j, size()))
  appended += count
  return messages
}

try {
  const ingest = await measureIngest({
    backend,
    provider: lcm,
    clock,
    dir: tmp.home,
    message: () => randomMessage(random, appended++, size()),
    singles: TIMED_TURNS,
    batches: TIMED_BATCHES,
  })
  rows.push(...ingest.rows)
  notes.push(...ingest.notes)
  if (values['append-only']) {
    printReport()
    process.exit(0)
  }

  // The backlog for parts 2–3: batches of 100 up to MESSAGES.
  const batches = Math.max(1, Math.floor(MESSAGES / BATCH))
  const fillStart = performance.now()
  for (let b = 0; b < batches; b++) await lcm.append(session, turn(BATCH))
  rows.push(`| the backlog: ${n(batches * BATCH)} messages appended in batches of ${BATCH} | ${n(((batches * BATCH) / (performance.now() - fillStart)) * 1000)} messages/s | | |`)

  const conversation = (await backend.context.findConversation('bench', 'bench'))!
  const stats = await lcm.stats(session)
  const naive = async (): Promise<number> => {
    const all = await backend.context.messages(conversation.id)
    let used = 0
    let kept = 0
    for (let i = all.length - 1; i >= 0; i--) {
      if (used + all[i]!.tokenCount > BUDGET && kept >= FRESH_TAIL) break
      used += all[i]!.tokenCount
      kept++
    }
    return kept
  }
  const naiveLatency = await timed(10, naive)
  const rawLatency = await timed(20, () => lcm.assemble(session, BUDGET, FRESH_TAIL, { autoCompact: false }))
  rows.push(`| assemble p50 / p95, raw window (${n(stats.items)} items, no summaries) | ${ms(rawLatency.p50)} / ${ms(rawLatency.p95)} ms | ${ms(naiveLatency.p50)} / ${ms(naiveLatency.p95)} ms: naive | |`)
  // One assemble past the threshold: a bounded slice of compaction, then the window.
  const sliceStart = performance.now()
  const sliced = await lcm.assemble(session, BUDGET, FRESH_TAIL)
  const sliceMs = performance.now() - sliceStart
  const slice = sliced.compaction
  rows.push(
    `| first assemble past the threshold: one bounded slice of compaction, then the window | ${ms(sliceMs)} ms (${slice?.kind === 'compacted' ? `${slice.leafSummaries} leaf ${slice.leafSummaries === 1 ? 'summary' : 'summaries'}, complete: ${slice.complete}` : (slice?.kind ?? 'none')}; ${sliced.items.length} items, ${n(sliced.tokens)} tokens) | was 212.2 s: the whole backlog inline | |`,
  )

  // Offline compaction of the backlog.
  const compactStart = performance.now()
  const first = await lcm.compact(session, { mode: 'incremental', freshTail: FRESH_TAIL })
  const firstSeconds = (performance.now() - compactStart) / 1000
  let more = 0
  let last: CompactionResult = first
  while (await lcm.needsCompaction(session, BUDGET)) {
    last = await lcm.compact(session, { mode: 'incremental', freshTail: FRESH_TAIL })
    if (last.kind === 'skipped') break
    more++
  }
  const allSeconds = (performance.now() - compactStart) / 1000
  const describe = (result: CompactionResult): string => (result.kind === 'compacted' ? `${n(result.leafSummaries)} leaf + ${n(result.condensedSummaries)} condensed summaries` : result.kind)
  rows.push(`| offline compaction: first incremental compaction of the backlog | ${firstSeconds.toFixed(1)} s (${describe(first)}) | was 212.2 s (9,998 leaf + 2,500 condensed) | |`)
  rows.push(`| offline compaction: until the window is under the threshold (${THRESHOLD} × budget) | ${allSeconds.toFixed(1)} s (${more} more incremental compactions) | | |`)
  const consistency = await checkContextConsistency(backend.context, conversation.id)
  const compactedLatency = await timed(50, () => lcm.assemble(session, BUDGET, FRESH_TAIL))
  const after = await lcm.stats(session)
  rows.push(`| assemble p50 / p95, compacted window (${after.items} items) | ${ms(compactedLatency.p50)} / ${ms(compactedLatency.p95)} ms | ${ms(naiveLatency.p50)} / ${ms(naiveLatency.p95)} ms: naive | |`)
  notes.push(
    `Consistency after compaction: ${consistency.ok ? 'no problem' : consistency.problems.slice(0, 3).join('; ')} (${n(consistency.messages)} messages, each covered exactly once; ${n(consistency.summaries)} summaries). The compacted window covers all ${n(stats.messages)} messages through summaries; the naive baseline covers only the newest ${await naive()}.`,
  )
  notes.push(`Conversation: ${n(stats.messages)} messages, ${n(stats.messageTokens)} tokens; budget ${BUDGET}, fresh tail ${FRESH_TAIL}.`)
} finally {
  await backend.close()
  tmp.cleanup()
}

// ---- 4: turns through a mind while its backlog is compacted in the background ----
{
  const home = makeTempHome('engram-bench-context-mind-')
  const mindClock = new ManualClock('2026-02-01T09:00:00Z')
  const mind = await openMindInternals({
    home: home.home,
    env: { HOME: home.home, PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1', ENGRAM_JOBS_EAGER: 'false' },
    ignoreConfigFile: true,
    clock: mindClock,
  })
  try {
    const sessionId = 'long-chat'
    const who = { sessionId, agent: mind.agent }
    const importStart = performance.now()
    for (let i = 0; i < MESSAGES; i += BATCH) {
      mindClock.advance(20_000)
      await mind.context.append(
        who,
        Array.from({ length: Math.min(BATCH, MESSAGES - i) }, (_, j) => randomMessage(random, i + j, size())),
      )
    }
    const importSeconds = (performance.now() - importStart) / 1000
    const context = mind.context
    if (!hasCompactor(context)) throw new Error('the mind context provider does not compact')
    const words = 'invoice billing export deploy staging vault cache rate limit batch migration report hiring budget ledger refund'.split(' ')
    let turnNo = 0
    const begins: number[] = []
    const assembles: number[] = []
    const oneTurn = async (autoCompact: boolean): Promise<void> => {
      const i = turnNo++
      mindClock.advance(30_000)
      const s = mind.session(sessionId)
      let t = performance.now()
      const started = await s.begin(`Turn ${i}: what about the ${words[i % words.length]} and the ${words[(i * 7) % words.length]} from last week?`)
      begins.push(performance.now() - t)
      await s.end(started, `About the ${words[i % words.length]}: noted as item ${i}.`)
      t = performance.now()
      await context.assemble(who, BUDGET, FRESH_TAIL, { autoCompact })
      assembles.push(performance.now() - t)
      await sleep(THINK_MS)
    }
    // Baseline: the same turns with no compaction running (and none in the assemble).
    for (let i = 0; i < 10; i++) await oneTurn(false)
    begins.length = 0
    assembles.length = 0
    const BASE_TURNS = 60
    for (let i = 0; i < BASE_TURNS; i++) await oneTurn(false)
    const baseBegin = { p95: percentile(begins, 95), max: Math.max(...begins) }
    const baseAssemble = { p95: percentile(assembles, 95), max: Math.max(...assembles) }
    begins.length = 0
    assembles.length = 0
    // The background compaction, as the jobs turns queue run it: incremental compactions while past the threshold.
    let compactions = 0
    let finished = false
    const loopDelay = monitorEventLoopDelay({ resolution: 1 })
    loopDelay.enable()
    const compactStart = performance.now()
    const background = (async () => {
      while (await context.needsCompaction(who, BUDGET)) {
        const result = await context.compact(who, { mode: 'incremental', freshTail: FRESH_TAIL })
        if (result.kind === 'skipped') break
        compactions++
      }
      finished = true
      return (performance.now() - compactStart) / 1000
    })()
    while (!finished) await oneTurn(true)
    const backgroundSeconds = await background
    loopDelay.disable()
    const during = { begin: { p95: percentile(begins, 95), max: Math.max(...begins) }, assemble: { p95: percentile(assembles, 95), max: Math.max(...assembles) } }
    const conversation = (await mind.backend.context.findConversation(sessionId, mind.agent))!
    const consistency = await checkContextConsistency(mind.backend.context, conversation.id)
    rows.push(
      `| import of ${n(MESSAGES)} messages through \`mind.context.append\` in batches of ${BATCH} | ${n(MESSAGES / importSeconds)} messages/s (${importSeconds.toFixed(1)} s) | | |`,
    )
    rows.push(
      `| background compaction of that backlog in the same process, while turns run (one every ${THINK_MS} ms + the turn) | ${backgroundSeconds.toFixed(1)} s (${compactions} incremental compactions), ${begins.length} turns meanwhile | | |`,
    )
    rows.push(
      `| event-loop delay while it runs, p99 / longest (a timer's lateness: how long a turn's step can wait) | ${ms(loopDelay.percentile(99) / 1e6)} / ${ms(loopDelay.max / 1e6)} ms | | |`,
    )
    rows.push(`| \`session.begin\` p95 / longest while it runs | ${ms(during.begin.p95)} / ${ms(during.begin.max)} ms | ${ms(baseBegin.p95)} / ${ms(baseBegin.max)} ms: ${BASE_TURNS} turns, no compaction | |`)
    rows.push(
      `| \`assemble\` (automatic compaction on) p95 / longest while it runs | ${ms(during.assemble.p95)} / ${ms(during.assemble.max)} ms | ${ms(baseAssemble.p95)} / ${ms(baseAssemble.max)} ms: automatic compaction off, no compaction | |`,
    )
    notes.push(`After the background compaction: consistency ${consistency.ok ? 'no problem' : consistency.problems.slice(0, 3).join('; ')} (${n(consistency.messages)} messages, the turns' included).`)
  } finally {
    await mind.close()
    home.cleanup()
  }
}

printReport()

function printReport(): void {
  console.log(`## Lossless context — ${MESSAGES.toLocaleString('en')} messages, budget ${BUDGET}, fresh tail ${FRESH_TAIL}`)
  console.log('')
  console.log(
    `Node ${process.version}, ${process.platform}/${process.arch}, offline (no LLM: extractive summaries); ${TIMED_TURNS.toLocaleString('en')} single-message appends and ${TIMED_BATCHES.toLocaleString('en')} batches of ${BATCH} timed.`,
  )
  console.log('')
  console.log('| measure | engram | baseline (same run) | split |')
  console.log('|---|---|---|---|')
  for (const row of rows) console.log(row)
  console.log('')
  for (const note of notes) console.log(note)
}
