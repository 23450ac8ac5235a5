/**
 * A fresh process that opens a home with `createMind` (as any host does on start) and closes it:
 * what it did as it opened is left in the home. Prints the warnings of the open, one JSON line.
 *
 * Usage: node open-mind.ts HOME [PROJECT]
 */
import { createMind } from '../../src/mind.ts'

const [home, project] = process.argv.slice(2)
if (!home) throw new Error('usage: open-mind.ts HOME [PROJECT]')
const mind = await createMind({ home, ...(project ? { project } : {}), env: { ENGRAM_EMBED_PROVIDER: 'none' }, ignoreConfigFile: true })
const report = await mind.maintain()
process.stdout.write(`${JSON.stringify({ warnings: report.warnings })}\n`)
await mind.close()
