/**
 * Child process for the lock tests: takes a lock, says so on stdout, and holds it until killed.
 * Usage: node hold-lock.ts <locks-dir> <lock-name>
 */
import { createFileLocks } from '../locks.ts'

const [dir, name] = process.argv.slice(2)
if (!dir || !name) throw new Error('usage: hold-lock.ts <locks-dir> <lock-name>')
const locks = createFileLocks({ dir })
await locks.withLock(name, async () => {
  process.stdout.write('held\n')
  // Never resolves: the parent kills this process while it holds the lock.
  await new Promise(() => setInterval(() => {}, 60_000))
})
