/**
 * Child process for the consolidation kill test and bench (decision 0053): one agent
 * process that opens the home with `createMind` at a fixed instant, with the fake model server,
 * and runs the daily consolidation and then the weekly integration, as `engram consolidate daily`
 * and `engram consolidate weekly` do. A recovery run is the same process started again.
 *
 * Usage: node consolidate-child.ts <home> <model-url> <instant>
 * Prints `started <epoch ms>` when the mind is open and consolidation begins, `done <json>` at the end.
 */
import { ManualClock } from '../../../core/clock.ts'
import { createMind } from '../../../mind.ts'
import { consolidationSettings } from './consolidation-kills.ts'

const [home, url, instant] = process.argv.slice(2)
if (!home || !url || !instant) throw new Error('usage: consolidate-child.ts <home> <model-url> <instant>')

const mind = await createMind({ home, env: process.env, ignoreConfigFile: true, clock: new ManualClock(instant), settings: consolidationSettings(url) })
process.stdout.write(`started ${Date.now()}\n`)
const daily = await mind.consolidate('daily')
const weekly = await mind.consolidate('weekly')
await mind.close()
const k = daily.knowledge
process.stdout.write(
  `done ${JSON.stringify({ learned: k.learned.length, distilled: k.distilled.length, reconsolidated: k.reconsolidated.length, contradictions: k.contradictions.length, merged: weekly.merged.length, scanned: weekly.contradictions.length })}\n`,
)
