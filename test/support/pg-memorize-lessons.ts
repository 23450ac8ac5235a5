/**
 * Child process of the many-hosts test (decision 0037): an agent process with a home and a temp folder
 * of its own, sharing only the database with the others, that memorizes `count` distinct lessons
 * through the `memorize` tool, every call in flight at once.
 *
 * Usage: node pg-memorize-lessons.ts <home> <worker> <count>
 * Prints one JSON line: how many calls said saved, duplicate, rejected (with the first reasons).
 */
import { createMind } from '../../src/mind.ts'

const [home, worker, count] = process.argv.slice(2)
if (!home || worker === undefined || !count) throw new Error('usage: pg-memorize-lessons.ts <home> <worker> <count>')

const mind = await createMind({ home, env: process.env, reindexOnOpen: false })
const tally = { worker: Number(worker), saved: 0, duplicates: 0, rejected: 0, reasons: [] as string[] }
await Promise.all(
  Array.from({ length: Number(count) }, async (_, i) => {
    const text = `ref-w${worker}-m${i}: the invoices of batch ${i} from host ${worker} are kept apart`
    const result = await mind.session(`host-${worker}-${i % 10}`).execute('memorize', { entries: [{ text, kind: 'lesson' }] })
    const report = result.data as { saved: unknown[]; duplicates: unknown[]; rejected: Array<{ reason: string }> } | undefined
    if (report?.saved.length === 1) tally.saved++
    else if (report?.duplicates.length === 1) tally.duplicates++
    else {
      tally.rejected++
      if (tally.reasons.length < 5) tally.reasons.push(report?.rejected[0]?.reason ?? result.text)
    }
  }),
)
await mind.close()
process.stdout.write(`${JSON.stringify(tally)}\n`)
