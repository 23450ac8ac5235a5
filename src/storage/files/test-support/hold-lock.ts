/**
 * Child process for the lock tests and the contention bench: takes a lock, says so on stdout, and
 * holds it until killed. With `release-on-sigterm`, SIGTERM makes it release the lock and exit, as
 * a holder that finishes its write does.
 * Usage: node hold-lock.ts <locks-dir> <lock-name> [release-on-sigterm]
 */
import { createFileLocks } from '../locks.ts'

const [dir, name, release] = process.argv.slice(2)
if (!dir || !name) throw new Error('usage: hold-lock.ts <locks-dir> <lock-name> [release-on-sigterm]')
const locks = createFileLocks({ dir })
await locks.withLock(name, async () => {
  process.stdout.write('held\n')
  const timer = setInterval(() => {}, 60_000)
  await new Promise<void>((resolve) => {
    if (release === 'release-on-sigterm') process.once('SIGTERM', () => resolve())
  })
  clearInterval(timer)
})
