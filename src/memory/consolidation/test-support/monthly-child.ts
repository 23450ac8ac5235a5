/**
 * Child process for the monthly forgetting kill test (decision 0053): opens the home
 * with `createMind` at a fixed instant, offline, and runs `mind.consolidate('monthly')`, as
 * `engram consolidate monthly` does. A recovery run is the same process started again.
 *
 * Usage: node monthly-child.ts <home> <model-url (unused)> <instant>
 * Prints `started <epoch ms>` when the mind is open, `done <json>` at the end.
 */
import { ManualClock } from '../../../core/clock.ts'
import { createMind } from '../../../mind.ts'
import { MONTHLY_SETTINGS } from './monthly-kills.ts'

const [home, , instant] = process.argv.slice(2)
if (!home || !instant) throw new Error('usage: monthly-child.ts <home> <model-url> <instant>')

const mind = await createMind({ home, env: process.env, ignoreConfigFile: true, clock: new ManualClock(instant), settings: MONTHLY_SETTINGS })
process.stdout.write(`started ${Date.now()}\n`)
const run = await mind.consolidate('monthly')
await mind.close()
process.stdout.write(`done ${JSON.stringify({ forgotten: run.forgotten.length, failed: run.failed.length, versions: run.versions.moved })}\n`)
