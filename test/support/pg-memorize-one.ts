/**
 * Child process of the many-hosts test (decision 0037): an agent process on another "host" (a home of
 * its own, the same database) that memorizes one lesson through the `memorize` tool when its
 * stdin says so, and prints the wall-clock time the tool answered.
 *
 * Usage: node pg-memorize-one.ts <home> <lesson text>
 * Prints `ready` once its mind is open, then, after a line on stdin, `{"savedAt": ms, "report": …}`.
 */
import { createInterface } from 'node:readline'
import { createMind } from '../../src/mind.ts'

const [home, text] = process.argv.slice(2)
if (!home || !text) throw new Error('usage: pg-memorize-one.ts <home> <lesson text>')

const mind = await createMind({ home, env: process.env, reindexOnOpen: false })
process.stdout.write('ready\n')
const lines = createInterface({ input: process.stdin })
for await (const _ of lines) {
  const result = await mind.session('host-b').execute('memorize', { entries: [{ text, kind: 'lesson' }] })
  process.stdout.write(`${JSON.stringify({ savedAt: Date.now(), report: result.data })}\n`)
  break
}
lines.close()
await mind.indexed()
await mind.close()
