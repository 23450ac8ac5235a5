/**
 * Child process for the lock fairness test: queues `count` callers of one lock at once, each
 * holding it for `hold-ms` of work, so this process wants the lock back-to-back for count × hold-ms. Prints
 * `held` for every holding and `done` when all are through.
 * Usage: node lock-hog.ts <locks-dir> <lock-name> <count> <hold-ms>
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createFileLocks } from '../locks.ts'

const [dir, name, count, holdMs] = process.argv.slice(2)
if (!dir || !name || !count || !holdMs) throw new Error('usage: lock-hog.ts <locks-dir> <lock-name> <count> <hold-ms>')
const locks = createFileLocks({ dir })
await Promise.all(
  Array.from({ length: Number(count) }, () =>
    locks.withLock(name, async () => {
      process.stdout.write('held\n')
      // Busy, as a holder parsing and writing a file is; then one turn of the event loop.
      const until = performance.now() + Number(holdMs)
      while (performance.now() < until);
      await sleep(0)
    }),
  ),
)
process.stdout.write('done\n')
