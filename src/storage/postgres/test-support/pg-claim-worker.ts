/**
 * Child process for the PostgreSQL claim race: claims jobs of agent `agent` until none is left,
 * settling each as done, and prints the ids it ran as JSON. Waits for a start file so that
 * workers overlap. Usage: node pg-claim-worker.ts <database-url> <schema> <owner> <start-file>
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { systemClock } from '../../../core/clock.ts'
import { openPostgres } from '../connection.ts'
import { createPostgresLifecycle } from '../lifecycle.ts'

const [url, schema, owner, startFile] = process.argv.slice(2)
if (!url || !schema || !owner || !startFile) throw new Error('usage: pg-claim-worker.ts <database-url> <schema> <owner> <start-file>')

const handle = await openPostgres({ url, schema })
const lifecycle = createPostgresLifecycle(handle, { clock: systemClock })
process.stdout.write('ready\n')
while (!existsSync(startFile)) await sleep(5)
const ran: number[] = []
for (;;) {
  const now = new Date().toISOString()
  const job = await lifecycle.claim('agent', { owner, now, leaseMs: 60_000 })
  if (!job) break
  // A job takes a moment, as real work does: the other workers get their turns at the queue.
  await sleep(1)
  if (await lifecycle.settle(job.id, owner, { status: 'done', at: now, result: { owner } })) ran.push(job.id)
}
await handle.close()
process.stdout.write(`${JSON.stringify(ran)}\n`)
