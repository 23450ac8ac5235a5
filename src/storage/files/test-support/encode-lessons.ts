/**
 * Child process for the engram-store concurrency test: encodes `count` distinct lessons.
 * Usage: node encode-lessons.ts <memory-dir> <locks-dir> <worker-id> <count>
 */
import { systemClock } from '../../../core/clock.ts'
import { createFileEngramStore } from '../engram-store.ts'
import { createFileLocks } from '../locks.ts'

const [dir, locksDir, worker, count] = process.argv.slice(2)
if (!dir || !locksDir || !worker || !count) throw new Error('usage: encode-lessons.ts <memory-dir> <locks-dir> <worker-id> <count>')
const store = createFileEngramStore({ dir, scope: 'global', locks: createFileLocks({ dir: locksDir }), clock: systemClock })
let added = 0
for (let i = 0; i < Number(count); i++) {
  const outcome = await store.encodeLesson({ text: `worker ${worker} lesson ${i}`, kind: 'lesson', meta: {}, topic: `worker-${worker}` })
  if (outcome.kind === 'added') added++
}
process.stdout.write(`${added}\n`)
