/**
 * A child process for the crash and concurrency tests: appends messages to one session of a home,
 * printing `ack <writer> <n>` after each append returns (the acknowledgement the parent trusts),
 * and with `--compact` runs an incremental compaction every few appends.
 *
 * Usage: node context-writer.ts HOME SESSION WRITER COUNT [--compact] [--start N]
 */
import { systemClock } from '../../../core/clock.ts'
import { createNoneLlm } from '../../../llm/none-llm.ts'
import { createFileLocks } from '../../../storage/files/locks.ts'
import { homeLayout } from '../../../storage/home-layout.ts'
import { createSqliteContextStore } from '../../../storage/sqlite/context-store.ts'
import { openSqlite } from '../../../storage/sqlite/database.ts'
import { createSqliteSearchIndex } from '../../../storage/sqlite/search-index.ts'
import { createLcmProvider } from '../lcm-provider.ts'

const [home, sessionId, writer, countText] = process.argv.slice(2)
const compact = process.argv.includes('--compact')
const startAt = process.argv.indexOf('--start')
const start = startAt > 0 ? Number(process.argv[startAt + 1]) : 0
const layout = homeLayout(home!, 'default')
const handle = openSqlite(layout.database)
const provider = createLcmProvider({
  store: createSqliteContextStore(handle, { clock: systemClock }),
  index: createSqliteSearchIndex(handle),
  locks: createFileLocks({ dir: layout.locksDir }),
  clock: systemClock,
  llm: createNoneLlm(),
  settings: { freshTail: 4, leafChunk: 3, condenseChunk: 2, autoCompact: false },
})
const session = { sessionId: sessionId!, agent: 'default' }
for (let n = start; n < start + Number(countText); n++) {
  await provider.append(session, [{ role: n % 2 ? 'assistant' : 'user', content: `${writer} ${n}: a message with a few words so that summaries have sentences. Item ${n}.` }])
  process.stdout.write(`ack ${writer} ${n}\n`)
  if (compact && n % 5 === 4) await provider.compact(session, { mode: n % 15 === 14 ? 'full' : 'incremental' })
}
handle.close()
