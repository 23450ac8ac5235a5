/**
 * Test helper run as a child process: records `count` tool uses (each with a large input and
 * result, so every line is several kilobytes) onto an agent's activity log through the recorder.
 * Usage: node append-child.ts <activity dir> <writer id> <count>
 */
import { systemClock } from '../../../core/clock.ts'
import { createFileActivityLog } from '../../../storage/files/activity-log.ts'
import { createActivityRecorder } from '../recorder.ts'

const [dir, writer, countArg] = process.argv.slice(2)
if (!dir || !writer) throw new Error('usage: append-child.ts <activity dir> <writer id> <count>')
let failures = 0
const log = createFileActivityLog({ dir, clock: systemClock, onError: () => failures++ })
const recorder = createActivityRecorder({ log, clock: systemClock, onError: () => failures++ })
for (let i = 0; i < Number(countArg ?? 100); i++) {
  await recorder.toolUse('shell', { input: `${writer}:${i} ${'i'.repeat(700)}`, result: `${writer}:${i} ${'r'.repeat(2500)}`, ok: true }, { session: `writer-${writer}`, meta: { writer, i } })
}
process.stdout.write(JSON.stringify({ writer, failures }))
