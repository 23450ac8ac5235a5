/**
 * Child process for the lock tests: queues `count` callers of one lock at once, each holding it
 * for `hold-ms` of work, so this process wants the lock back-to-back for count × hold-ms. Prints
 * `held` for every holding and `done` when all are through.
 *
 * With a tally file, the callers come one after another instead (each release then removes the
 * lock's files), and each holding writes its worker's id into the tally and takes it out again:
 * finding another worker's id there means two processes held the lock at once, printed as `overlap`.
 * Usage: node lock-hog.ts <locks-dir> <lock-name> <count> <hold-ms> [<tally-file> <worker-id>]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { createFileLocks } from '../locks.ts'

const [dir, name, count, holdMs, tally, worker] = process.argv.slice(2)
if (!dir || !name || !count || !holdMs) throw new Error('usage: lock-hog.ts <locks-dir> <lock-name> <count> <hold-ms> [<tally-file> <worker-id>]')
const locks = createFileLocks({ dir })

/** Busy, as a holder parsing and writing a file is; then one turn of the event loop. */
async function work(): Promise<void> {
  const until = performance.now() + Number(holdMs)
  while (performance.now() < until);
  await sleep(0)
}

if (tally && worker) {
  for (let i = 0; i < Number(count); i++) {
    await locks.withLock(name, async () => {
      const before = readFileSync(tally, 'utf8')
      if (before !== '') process.stdout.write(`overlap: found ${before} on entering\n`)
      writeFileSync(tally, worker)
      await work()
      const after = readFileSync(tally, 'utf8')
      if (after !== worker) process.stdout.write(`overlap: found ${after} while holding\n`)
      writeFileSync(tally, '')
    })
    process.stdout.write('held\n')
  }
} else {
  await Promise.all(
    Array.from({ length: Number(count) }, () =>
      locks.withLock(name, async () => {
        process.stdout.write('held\n')
        await work()
      }),
    ),
  )
}
process.stdout.write('done\n')
