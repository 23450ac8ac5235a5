/**
 * Child process for the contention test and bench (decision 0027): one agent process that opens the
 * home with `createMind` and calls the `memorize` tool through sessions, the agent's own path.
 *
 * Usage: node memorize-child.ts <home> <worker> <count> <in-flight|sequential> <agent|users> [shared-every]
 * - `in-flight`: all `count` calls are started at once (Promise.all), as an agent with many
 *   parallel tool calls, or a process serving many sessions, sends them; `sequential`: one after
 *   the other.
 * - `agent`: every call in a session without a user (everything is the agent's); `users`: see
 *   `memorizeCall` — three users and the agent.
 * - `shared-every` N > 0: every Nth call saves a text every worker saves too (exactly one of them
 *   may report it saved, the others a duplicate).
 *
 * Prints one JSON line (`ChildTally`) after the mind is closed.
 */
import { createMind } from '../../../mind.ts'
import { type ChildTally, memorizeCall } from './memorize-contention.ts'

const [home, worker, count, how, owners, sharedEvery] = process.argv.slice(2)
if (!home || !worker || !count || (how !== 'in-flight' && how !== 'sequential') || (owners !== 'agent' && owners !== 'users')) {
  throw new Error('usage: memorize-child.ts <home> <worker> <count> <in-flight|sequential> <agent|users> [shared-every]')
}

const mind = await createMind({ home, env: process.env, reindexOnOpen: false })
const tally: ChildTally = { worker: Number(worker), saved: [], savedAt: [], duplicates: [], rejected: 0, reasons: [], ms: 0 }

async function call(i: number): Promise<void> {
  const planned = memorizeCall(Number(worker), i, owners as 'agent' | 'users', Number(sharedEvery ?? 0))
  const session = mind.session(`w${worker}-${planned.user ?? 'agent'}`, planned.user === undefined ? {} : { user: planned.user })
  const result = await session.execute('memorize', { entries: [planned.entry] })
  const report = result.data as { saved: unknown[]; duplicates: unknown[]; rejected: Array<{ reason: string }> } | undefined
  if (report?.saved.length === 1) {
    tally.saved.push(i)
    tally.savedAt.push(Date.now())
  } else if (report?.duplicates.length === 1) tally.duplicates.push(i)
  else {
    tally.rejected++
    if (tally.reasons.length < 5) tally.reasons.push(report?.rejected[0]?.reason ?? result.text)
  }
}

const started = performance.now()
if (how === 'in-flight') await Promise.all(Array.from({ length: Number(count) }, (_, i) => call(i)))
else for (let i = 0; i < Number(count); i++) await call(i)
tally.ms = Math.round(performance.now() - started)
await mind.close()
process.stdout.write(`${JSON.stringify(tally)}\n`)
