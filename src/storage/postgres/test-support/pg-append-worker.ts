/**
 * Child process for the PostgreSQL append race: finds or creates the conversation of session
 * `session` (agent `agent`), then appends `count` messages to it in batches of 1–5, content
 * `<writer>:<i>`, and prints the ids it stored as JSON. Waits for a start file so that the writers
 * overlap. Usage: node pg-append-worker.ts <database-url> <schema> <session> <writer> <count> <start-file>
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { systemClock } from '../../../core/clock.ts'
import { openPostgres } from '../connection.ts'
import { createPostgresContextStore } from '../context-store.ts'

const [url, schema, session, writer, countText, startFile] = process.argv.slice(2)
if (!url || !schema || !session || !writer || !countText || !startFile) {
  throw new Error('usage: pg-append-worker.ts <database-url> <schema> <session> <writer> <count> <start-file>')
}

const handle = await openPostgres({ url, schema })
const store = createPostgresContextStore(handle, { clock: systemClock })
process.stdout.write('ready\n')
while (!existsSync(startFile)) await sleep(5)
// Every writer finds or creates the conversation at the same moment: there must be one.
const conversation = await store.conversation(session, { agent: 'agent' })
const count = Number(countText)
const ids: number[] = []
let sent = 0
for (let batch = 0; sent < count; batch++) {
  // Batch sizes 1–5, different per writer, so batches of different writers interleave unevenly.
  const size = Math.min(1 + ((batch * 7 + writer.charCodeAt(0)) % 5), count - sent)
  const messages = Array.from({ length: size }, (_, k) => ({
    role: 'user' as const,
    content: `${writer}:${sent + k}`,
    at: new Date().toISOString(),
    tokenCount: 1,
  }))
  for (const message of await store.appendMessages(conversation.id, messages)) ids.push(message.id)
  sent += size
}
await handle.close()
process.stdout.write(`${JSON.stringify({ conversation: conversation.id, ids })}\n`)
