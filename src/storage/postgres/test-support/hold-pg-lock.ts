/**
 * Child process for the PostgreSQL lock tests: takes a lock, says so on stdout, and holds it until
 * killed. Usage: node hold-pg-lock.ts <database-url> <schema> <lock-name>
 */
import { openPostgres } from '../connection.ts'
import { createPostgresLocks } from '../locks.ts'

const [url, schema, name] = process.argv.slice(2)
if (!url || !schema || !name) throw new Error('usage: hold-pg-lock.ts <database-url> <schema> <lock-name>')
const handle = await openPostgres({ url, schema })
const locks = createPostgresLocks(handle)
await locks.withLock(name, async () => {
  process.stdout.write('held\n')
  setInterval(() => {}, 60_000)
  await new Promise<void>(() => {})
})
