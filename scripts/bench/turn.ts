/**
 * Benchmark: the cost of a turn on the agent's path — `mind.session(id, { user })` created anew,
 * `session.begin` (store the message, assemble, prime, the memory context, the working state, the
 * tools with their wisdom, the turn counted and its provenance stored) and `session.end` — beside
 * the least a turn can do, measured in the same run: appending the message and assembling the
 * conversation. Run: `npm run bench -- turn [--turns N] [--users N]`. With `--units N [--home DIR]`,
 * `session.begin` over N synthetic units instead, beside plain FTS5 (scripts/bench/turn-at-size.ts).
 *
 * Users take turns in their own sessions (new sessions every 40 turns), so every turn reads its
 * user's tree, the agent's and the shared one, and writes into its own.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ManualClock } from '../../src/core/clock.ts'
import { openMindInternals } from '../../src/mind-internals.ts'

const { values } = parseArgs({
  options: { turns: { type: 'string' }, users: { type: 'string', default: '4' }, units: { type: 'string', default: '0' }, home: { type: 'string' } },
})
if (Number(values.units) > 0) {
  // `--units N`: session.begin over N units in the user's tree, beside plain FTS5 (turn-at-size.ts).
  const { benchTurnAtSize } = await import('./turn-at-size.ts')
  await benchTurnAtSize({ units: Number(values.units), turns: Number(values.turns ?? 200), ...(values.home ? { home: values.home } : {}) })
  process.exit(0)
}
const turns = Number(values.turns ?? 400)
const users = Number(values.users)
const dir = mkdtempSync(join(tmpdir(), 'engram-bench-turn-'))
const env = { HOME: dir, PATH: process.env.PATH ?? '', ENGRAM_EMBED_MODEL: 'hash-v1' }
const clock = new ManualClock('2026-03-02T09:00:00Z')
const mind = await openMindInternals({ home: join(dir, 'home'), env, ignoreConfigFile: true, clock })

const words = 'invoice billing export deploy staging vault cache rate limit batch migration report hiring budget ledger refund'.split(' ')
const question = (i: number) => `Turn ${i}: what about the ${words[i % words.length]} and the ${words[(i * 7) % words.length]} from last week?`
const warmup = Math.min(20, Math.floor(turns / 10))
const begin: number[] = []
const end: number[] = []
const whole: number[] = []
for (let i = 0; i < turns; i++) {
  const user = `user-${i % users}`
  const started = performance.now()
  const session = mind.session(`chat-${user}-${Math.floor(i / 40)}`, { user })
  const t0 = performance.now()
  const turn = await session.begin(question(i))
  const t1 = performance.now()
  await session.end(turn, `About the ${words[i % words.length]}: noted as item ${i}, with the figures you gave.`)
  const t2 = performance.now()
  if (i >= warmup) {
    begin.push(t1 - t0)
    end.push(t2 - t1)
    whole.push(t2 - started)
  }
  clock.advance(30_000)
}
await mind.idle()

// Baseline: the least a turn does — append the message, assemble the conversation.
const baseline: number[] = []
for (let i = 0; i < turns; i++) {
  const session = { sessionId: `baseline-${Math.floor(i / 40)}`, agent: mind.agent }
  const t0 = performance.now()
  await mind.context.append(session, [{ role: 'user', content: question(i) }])
  await mind.context.assemble(session, mind.config.values.context.budget, mind.config.values.context.freshTail)
  if (i >= warmup) baseline.push(performance.now() - t0)
  await mind.context.append(session, [{ role: 'assistant', content: `Noted as item ${i}.` }])
}
await mind.close()
rmSync(dir, { recursive: true, force: true })

const pct = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number).toFixed(1)
}
console.log(`a turn on the agent's path: ${turns} turns of ${users} users (first ${warmup} not counted), Node ${process.version}`)
console.log('| measure | p50 ms | p95 ms |')
console.log('|---|---|---|')
console.log(`| append + assemble only (baseline) | ${pct(baseline, 0.5)} | ${pct(baseline, 0.95)} |`)
console.log(`| session.begin | ${pct(begin, 0.5)} | ${pct(begin, 0.95)} |`)
console.log(`| session.end (its work queued, run in the background) | ${pct(end, 0.5)} | ${pct(end, 0.95)} |`)
console.log(`| whole turn: mind.session + begin + end | ${pct(whole, 0.5)} | ${pct(whole, 0.95)} |`)
