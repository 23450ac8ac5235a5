/**
 * Lossless-context benchmark: for one long conversation (default 100,000 messages), append
 * throughput (turns of 2 messages, as an agent appends them) and assemble latency p50/p95 at a
 * 16k-token budget — on the raw window and after compaction — beside a naive baseline measured in
 * the same run (read every message, keep the newest that fit).
 *
 * Usage: node scripts/bench/context.ts [MESSAGES]   (offline: no LLM, extractive summaries)
 */
import { ManualClock } from '../../src/core/clock.ts'
import { createNoneLlm } from '../../src/llm/none-llm.ts'
import { createLcmProvider } from '../../src/memory/context/lcm-provider.ts'
import { prng, randomMessage } from '../../src/memory/context/test-support/harness.ts'
import { openEmbeddedBackend } from '../../src/storage/embedded.ts'
import { makeTempHome } from '../../src/testing/temp-home.ts'

const MESSAGES = Number(process.argv[2] ?? 100_000)
const BUDGET = 16_000
const FRESH_TAIL = 20
const TURN = 2

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
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

const tmp = makeTempHome('engram-bench-context-')
const clock = new ManualClock('2026-01-01T00:00:00Z')
const backend = openEmbeddedBackend({ home: tmp.home, agent: 'bench', clock })
const lcm = createLcmProvider({
  store: backend.context,
  index: backend.index,
  locks: backend.locks,
  clock,
  llm: createNoneLlm(),
  settings: { freshTail: FRESH_TAIL },
})
const session = { sessionId: 'bench', agent: 'bench' }
const random = prng(7)
const size = (): number => (random() < 0.8 ? 5 + Math.floor(random() * 40) : 40 + Math.floor(random() * 300))

try {
  const appendStart = performance.now()
  for (let i = 0; i < MESSAGES; i += TURN) {
    clock.advance(20_000)
    await lcm.append(
      session,
      Array.from({ length: Math.min(TURN, MESSAGES - i) }, (_, j) => randomMessage(random, i + j, size())),
    )
  }
  const appendSeconds = (performance.now() - appendStart) / 1000
  const conv = (await backend.context.findConversation('bench', 'bench'))!
  const stats = await lcm.stats(session)

  const naive = async (): Promise<number> => {
    const all = await backend.context.messages(conv.id)
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

  const compactStart = performance.now()
  const first = await lcm.assemble(session, BUDGET, FRESH_TAIL)
  const compactSeconds = (performance.now() - compactStart) / 1000
  const compaction = first.compaction
  // Later assembles keep compacting while the window is past the threshold; time the steady state.
  let settling = 0
  while ((await lcm.assemble(session, BUDGET, FRESH_TAIL)).compaction?.kind === 'compacted' && settling < 20) settling++
  const compactedLatency = await timed(50, () => lcm.assemble(session, BUDGET, FRESH_TAIL))
  const after = await lcm.stats(session)

  const ms = (value: number): string => value.toFixed(1)
  console.log(`## Lossless context — ${MESSAGES.toLocaleString('en')} messages (${stats.messageTokens.toLocaleString('en')} tokens), budget ${BUDGET}, fresh tail ${FRESH_TAIL}`)
  console.log('')
  console.log(`Node ${process.version}, ${process.platform}/${process.arch}, offline (no LLM: extractive summaries).`)
  console.log('')
  console.log('| measure | engram LCM | naive baseline |')
  console.log('|---|---|---|')
  console.log(`| append throughput (turns of ${TURN}, lock + SQLite + FTS index) | ${Math.round(MESSAGES / appendSeconds).toLocaleString('en')} messages/s | — |`)
  console.log(`| assemble p50 / p95, raw window (${stats.items.toLocaleString('en')} items, no summaries) | ${ms(rawLatency.p50)} / ${ms(rawLatency.p95)} ms | ${ms(naiveLatency.p50)} / ${ms(naiveLatency.p95)} ms |`)
  console.log(`| first assemble past threshold: incremental compaction | ${compactSeconds.toFixed(1)} s (${compaction?.kind === 'compacted' ? `${compaction.leafSummaries} leaf + ${compaction.condensedSummaries} condensed summaries` : compaction?.kind ?? 'none'}) | — |`)
  console.log(`| assemble p50 / p95, compacted window after ${settling} more incremental compactions (${after.items} items) | ${ms(compactedLatency.p50)} / ${ms(compactedLatency.p95)} ms | ${ms(naiveLatency.p50)} / ${ms(naiveLatency.p95)} ms |`)
  console.log('')
  const last = await lcm.assemble(session, BUDGET, FRESH_TAIL)
  console.log(`Assembled after compaction: ${last.items.length} items, ${last.tokens} tokens, covering all ${MESSAGES.toLocaleString('en')} messages through summaries; the naive baseline covers only the newest ${await naive()} messages.`)
} finally {
  await backend.close()
  tmp.cleanup()
}
