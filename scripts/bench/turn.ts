/**
 * Benchmark: the cost of a turn on the agent's path — `mind.session(id, { user })` created anew,
 * `session.begin` (store the message, assemble, prime, the memory context, the working state, the
 * tools with their wisdom, the turn counted and its provenance stored) and `session.end` — beside
 * the least a turn can do, measured in the same run: appending the message and assembling the
 * conversation, in process CPU (user + system) and wall time. Run: `npm run bench -- turn [--turns N] [--users N]`. With `--units N [--home DIR]`,
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
/** Wall and process CPU (user + system) milliseconds of each timed step. */
interface Timed {
  wall: number[]
  cpu: number[]
}
const timed = (): Timed => ({ wall: [], cpu: [] })
const mark = () => ({ wall: performance.now(), cpu: process.cpuUsage() })
const add = (into: Timed, from: ReturnType<typeof mark>, to: ReturnType<typeof mark>) => {
  into.wall.push(to.wall - from.wall)
  into.cpu.push((to.cpu.user + to.cpu.system - from.cpu.user - from.cpu.system) / 1000)
}
const begin = timed()
const end = timed()
const whole = timed()
for (let i = 0; i < turns; i++) {
  const user = `user-${i % users}`
  const started = mark()
  const session = mind.session(`chat-${user}-${Math.floor(i / 40)}`, { user })
  const t0 = mark()
  const turn = await session.begin(question(i))
  const t1 = mark()
  await session.end(turn, `About the ${words[i % words.length]}: noted as item ${i}, with the figures you gave.`)
  const t2 = mark()
  if (i >= warmup) {
    add(begin, t0, t1)
    add(end, t1, t2)
    add(whole, started, t2)
  }
  clock.advance(30_000)
}
await mind.idle()

// Baseline: the least a turn does — append the message, assemble the conversation.
const baseline = timed()
for (let i = 0; i < turns; i++) {
  const session = { sessionId: `baseline-${Math.floor(i / 40)}`, agent: mind.agent }
  const t0 = mark()
  await mind.context.append(session, [{ role: 'user', content: question(i) }])
  await mind.context.assemble(session, mind.config.values.context.budget, mind.config.values.context.freshTail)
  if (i >= warmup) add(baseline, t0, mark())
  await mind.context.append(session, [{ role: 'assistant', content: `Noted as item ${i}.` }])
}
await mind.close()
rmSync(dir, { recursive: true, force: true })

const pct = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number).toFixed(1)
}
const row = (name: string, t: Timed) => `| ${name} | ${pct(t.cpu, 0.5)} | ${pct(t.cpu, 0.95)} | ${pct(t.wall, 0.5)} | ${pct(t.wall, 0.95)} |`
console.log(`a turn on the agent's path: ${turns} turns of ${users} users (first ${warmup} not counted), Node ${process.version}`)
console.log('| measure | CPU p50 ms | CPU p95 ms | wall p50 ms | wall p95 ms |')
console.log('|---|---|---|---|---|')
console.log(row('append + assemble only (baseline)', baseline))
console.log(row('session.begin', begin))
console.log(row('session.end (its work queued, run in the background)', end))
console.log(row('whole turn: mind.session + begin + end', whole))
