/**
 * A fresh process that opens a home with `createMind` (as any host does on start) and closes it:
 * what it did as it opened is left in the home. Prints the warnings of the open, one JSON line.
 *
 * Usage: node open-mind.ts HOME [PROJECT]
 */
import { createMind } from '../../src/mind.ts'

const [home, project] = process.argv.slice(2)
if (!home) throw new Error('usage: open-mind.ts HOME [PROJECT]')
// The storage the test chose (PostgreSQL when it passes ENGRAM_DATABASE_URL), and nothing else of this environment.
const storage = Object.fromEntries(['ENGRAM_DATABASE_URL', 'ENGRAM_DATABASE_SCHEMA'].flatMap((key) => (process.env[key] ? [[key, process.env[key]]] : [])))
const mind = await createMind({ home, ...(project ? { project } : {}), env: { ENGRAM_EMBED_PROVIDER: 'none', ...storage }, ignoreConfigFile: true })
const report = await mind.maintain()
process.stdout.write(`${JSON.stringify({ warnings: report.warnings })}\n`)
await mind.close()
