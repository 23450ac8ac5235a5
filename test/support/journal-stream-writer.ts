/**
 * A child process for the journal ownership tests: an agent process in the middle of a turn.
 * It opens the mind, begins a turn, streams the reply through `session.stream`, runs one tool call
 * to completion and starts another that never returns (both through `session.execute`), then
 * writes a chunk every INTERVAL ms, printing `{"n":…,"chunk":"…"}` for each, until it is killed —
 * or until it reads `end` on stdin, when it ends the turn with everything it streamed, closes
 * the mind and prints `{"ended":true}`.
 *
 * Usage: node journal-stream-writer.ts HOME SESSION USER [INTERVAL_MS]
 */
import { createInterface } from 'node:readline'
import { z } from 'zod'
import { openMindInternals } from '../../src/mind-internals.ts'
import type { ToolDefinition } from '../../src/tools/dispatcher.ts'

const [home, sessionId, user, intervalArg] = process.argv.slice(2)
if (!home || !sessionId || !user) throw new Error('usage: journal-stream-writer.ts HOME SESSION USER [INTERVAL_MS]')
const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}

const tools: Array<ToolDefinition<{ q: string }>> = [
  { name: 'lookup', description: 'Search the deploy log', inputSchema: z.object({ q: z.string() }), run: async ({ q }) => ({ text: `found 3 lines about ${q}` }) },
  // Still running when the process is killed: its start is journaled, its end never is.
  { name: 'tail_log', description: 'Follow the deploy log', inputSchema: z.object({ q: z.string() }), run: () => new Promise(() => {}) },
]
const mind = await openMindInternals({ home, env: { ENGRAM_EMBED_MODEL: 'hash-v1' }, ignoreConfigFile: true })
const session = mind.session(sessionId, { user, tools: tools as Array<ToolDefinition<unknown>> })
const turn = await session.begin('Why did the deploy fail?')
const stream = session.stream(turn)
const chunks: string[] = []
const write = (chunk: string): void => {
  chunks.push(chunk)
  stream.write(chunk)
}
write('Let me look. ')
await session.execute('lookup', { q: 'deploy' })
void session.execute('tail_log', { q: 'deploy' })
print({ ready: true, stream: mind.journals.find({ sessionId })?.id, turn: turn.messageId })

let n = 0
const timer = setInterval(
  () => {
    n++
    const chunk = `${sessionId} chunk ${String(n).padStart(5, '0')}; `
    write(chunk)
    print({ n, chunk })
  },
  Number(intervalArg ?? 15),
)

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line.trim() !== 'end') return
  clearInterval(timer)
  await session.end(turn, chunks.join(''))
  await mind.close()
  print({ ended: true })
  process.exit(0)
})
