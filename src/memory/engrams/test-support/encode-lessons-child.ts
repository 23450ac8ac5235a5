/**
 * Child process for the encode() concurrency test: encodes `count` distinct lessons through the
 * public factories on a shared home. Usage: node encode-lessons-child.ts <home> <worker> <count>
 */
import { join } from 'node:path'
import { systemClock } from '../../../core/clock.ts'
import { openEmbeddedBackend } from '../../../storage/embedded.ts'
import { openSqlite } from '../../../storage/sqlite/database.ts'
import { createSqliteConfirmationQueue } from '../../../storage/sqlite/confirmation-queue.ts'
import { createDeclarativeMemory } from '../declarative-memory.ts'

const [home, worker, count] = process.argv.slice(2)
if (!home || !worker || !count) throw new Error('usage: encode-lessons-child.ts <home> <worker> <count>')
const backend = openEmbeddedBackend({ home, agent: 'default', clock: systemClock })
const sqlite = openSqlite(join(home, 'engram.db'))
const memory = createDeclarativeMemory({
  backend,
  mode: 'autopilot',
  confirmations: createSqliteConfirmationQueue(sqlite, { agent: 'default', clock: systemClock }),
  clock: systemClock,
})
let saved = 0
for (let i = 0; i < Number(count); i++) {
  const report = await memory.encoder.encode([{ text: `worker ${worker} lesson ${i}`, kind: 'lesson', scope: 'global', confidence: 'high', source: 'llm' }])
  if (report.rejected.length > 0) throw new Error(JSON.stringify(report.rejected))
  saved += report.saved.length
}
sqlite.close()
await backend.close()
process.stdout.write(`${saved}\n`)
