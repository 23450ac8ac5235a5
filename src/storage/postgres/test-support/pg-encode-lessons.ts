/**
 * Child process for the PostgreSQL EngramStore races: encodes `count` lessons, one after another,
 * into the agent store of agent `default`, and prints how many were added. `distinct` lessons are
 * this worker's own (`worker <id> lesson <i>`, topic `worker-<id>`); `same` lessons are the same
 * in every worker (`shared lesson <i>`, topic `shared`). Waits for a start file so that workers
 * overlap. Usage: node pg-encode-lessons.ts <database-url> <schema> <worker-id> <count> <distinct|same> <start-file>
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { systemClock } from '../../../core/clock.ts'
import { openPostgres } from '../connection.ts'
import { createPostgresEngramStore } from '../engram-store.ts'

const [url, schema, worker, count, mode, startFile] = process.argv.slice(2)
if (!url || !schema || !worker || !count || (mode !== 'distinct' && mode !== 'same') || !startFile) {
  throw new Error('usage: pg-encode-lessons.ts <database-url> <schema> <worker-id> <count> <distinct|same> <start-file>')
}

const handle = await openPostgres({ url, schema })
const store = createPostgresEngramStore(handle, { agent: 'default', scope: 'global', clock: systemClock })
process.stdout.write('ready\n')
while (!existsSync(startFile)) await sleep(5)
let added = 0
for (let i = 0; i < Number(count); i++) {
  const lesson = mode === 'distinct' ? { text: `worker ${worker} lesson ${i}`, topic: `worker-${worker}` } : { text: `shared lesson ${i}`, topic: 'shared' }
  const outcome = await store.encodeLesson({ ...lesson, kind: 'lesson', meta: {} })
  if (outcome.kind === 'added') added++
}
await handle.close()
process.stdout.write(`${added}\n`)
