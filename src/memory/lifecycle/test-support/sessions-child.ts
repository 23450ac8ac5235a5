/**
 * Test helper run as a child process: an agent process that runs sessions through the public API
 * (`createMind` → `mind.session(id)` anew on every turn → begin / execute / end) on a manual clock,
 * then exits. Configuration comes from the environment it is given (ENGRAM_*).
 *
 * Usage: node sessions-child.ts <home> <clock start ISO> <scenario>
 * - `two-users`: user u1 has five turns with a tool call each in session chat-u1, user u2 two turns
 *   in chat-u2; then the mind is closed and the process exits. Prints `{"turns":{…}}`.
 * - `five-turns-then-wait`: user u1 has five turns in session chat-u1, prints `{"ended":true}` and
 *   waits (with its background work still running) until it is killed.
 */
import { z } from 'zod'
import { ManualClock } from '../../../core/clock.ts'
import { createMind } from '../../../mind.ts'
import type { ToolDefinition } from '../../../tools/dispatcher.ts'

const [home, start, scenario] = process.argv.slice(2)
if (!home || !start || !scenario) throw new Error('usage: sessions-child.ts <home> <clock start ISO> <scenario>')

const lookup: ToolDefinition<{ query: string }> = {
  name: 'lookup',
  description: 'Look something up in the order system.',
  inputSchema: z.object({ query: z.string() }),
  async run({ query }) {
    return { text: `found 1 record for ${query}` }
  },
}

const clock = new ManualClock(start)
const mind = await createMind({ home, env: process.env, clock })
const turns: Record<string, number[]> = {}

async function turn(sessionId: string, user: string, message: string, reply: string, tool?: string): Promise<void> {
  // A new Session object on every turn, as a stateless host creates it.
  const session = mind.session(sessionId, { user, tools: [lookup] })
  const begun = await session.begin(message)
  turns[sessionId] = [...(turns[sessionId] ?? []), begun.number]
  if (tool) await session.execute('lookup', { query: tool })
  clock.advance(20_000)
  await session.end(begun, reply)
  clock.advance(40_000)
}

if (scenario === 'two-users') {
  await turn('chat-u1', 'u1', 'Hi, my name is Ada Lovelace and I handle the invoices.', 'Hello Ada.', 'invoices owner')
  await turn('chat-u1', 'u1', 'Invoice 4411 was charged twice, can you check?', 'It was charged twice; I opened a refund.', 'invoice 4411')
  await turn('chat-u1', 'u1', 'Is the refund for 4411 through?', 'Yes, the refund went through.', 'refund 4411')
  await turn('chat-u1', 'u1', 'Please check invoice 4412 as well.', 'Invoice 4412 is fine.', 'invoice 4412')
  await turn('chat-u1', 'u1', 'Thanks. Remind me to send the monthly report on Friday.', 'Noted: send the monthly report on Friday.', 'report schedule')
  await turn('chat-u2', 'u2', 'What is the status of the office move?', 'The move is planned for May.')
  await turn('chat-u2', 'u2', 'Thanks, that is all.', 'You are welcome.')
  await mind.close()
  process.stdout.write(`${JSON.stringify({ turns })}\n`)
} else if (scenario === 'five-turns-then-wait') {
  for (let i = 1; i <= 5; i++) await turn('chat-u1', 'u1', i === 1 ? 'My name is Ada Lovelace.' : `Message ${i} about the invoices.`, 'Noted.')
  process.stdout.write(`${JSON.stringify({ ended: true, turns })}\n`)
  // Stay alive (the identity extraction runs in the background) until the test kills the process.
  setInterval(() => {}, 60_000)
} else {
  throw new Error(`unknown scenario ${scenario}`)
}
