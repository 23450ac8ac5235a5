/**
 * Child process for the append tests: appends `count` long lines tagged with the worker id.
 * Usage: node append-lines.ts <file> <worker-id> <count>
 */
import { appendLine } from '../../atomic-write.ts'

const [file, worker, count] = process.argv.slice(2)
if (!file || !worker || !count) throw new Error('usage: append-lines.ts <file> <worker-id> <count>')
// Lines longer than a pipe buffer page make interleaving visible if writes were not atomic.
const padding = 'x'.repeat(6000)
for (let i = 0; i < Number(count); i++) {
  await appendLine(file, JSON.stringify({ worker, i, padding }))
}
