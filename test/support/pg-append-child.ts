/**
 * Child process of the many-hosts test (decision 0037): one agent process with a home of its own,
 * sharing only the database (ENGRAM_DATABASE_URL, ENGRAM_DATABASE_SCHEMA) with the others. It
 * appends `count` messages to ONE conversation in batches of 1–5, as a host serving that
 * conversation does, and compacts the conversation every few batches while the others append.
 *
 * Usage: node pg-append-child.ts <home> <worker> <count>
 * Prints one JSON line: the ids it stored, in order, and how many compactions ran.
 */
import { hasCompactor } from '../../src/memory/context/provider.ts'
import { createMind } from '../../src/mind.ts'

const [home, worker, count] = process.argv.slice(2)
if (!home || worker === undefined || !count) throw new Error('usage: pg-append-child.ts <home> <worker> <count>')

const mind = await createMind({ home, env: process.env, reindexOnOpen: false })
const session = { sessionId: 'one-conversation', agent: mind.agent }
const stored: number[] = []
let compactions = 0
let i = 0
let batch = 0
while (i < Number(count)) {
  const size = Math.min(1 + ((Number(worker) + batch) % 5), Number(count) - i)
  const messages = Array.from({ length: size }, (_, k) => ({ role: 'user' as const, content: `w${worker}-m${i + k}: the invoices of batch ${i + k} are kept apart. `.repeat(8) }))
  for (const message of await mind.context.append(session, messages)) stored.push(message.id)
  i += size
  batch++
  if (batch % 7 === 0 && hasCompactor(mind.context)) {
    const result = await mind.context.compact(session, { freshTail: 8 })
    if (result.kind === 'compacted') compactions++
  }
}
await mind.close()
process.stdout.write(`${JSON.stringify({ worker: Number(worker), stored, compactions })}\n`)
