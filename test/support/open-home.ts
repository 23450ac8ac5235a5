/**
 * A child process for the journal ownership tests: any other process that opens the home (as
 * `engram status` or a cron `engram maintain` does). Prints what its mind recovered on open —
 * `[{"stream":…,"outcome":{…}}]` — and closes.
 *
 * Usage: node open-home.ts HOME
 */
import { openMindInternals } from '../../src/mind-internals.ts'

const [home] = process.argv.slice(2)
if (!home) throw new Error('usage: open-home.ts HOME')
const mind = await openMindInternals({ home, env: { ENGRAM_EMBED_MODEL: 'hash-v1' }, ignoreConfigFile: true })
process.stdout.write(`${JSON.stringify(mind.recoveredJournals.map((journal) => ({ stream: journal.stream, outcome: journal.outcome })))}\n`)
await mind.close()
