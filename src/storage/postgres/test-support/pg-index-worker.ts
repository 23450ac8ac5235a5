/**
 * Child process for the PostgreSQL search-index race: upserts units `from`..`to` (ids `u<n>`) in
 * batches of 50, each batch twice, after a start file appears, so that workers with overlapping
 * ranges write the same ids at once. Usage: node pg-index-worker.ts <database-url> <schema> <from> <to> <start-file>
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { openPostgres } from '../connection.ts'
import { createPostgresSearchIndex } from '../search-index.ts'

const [url, schema, from, to, startFile] = process.argv.slice(2)
if (!url || !schema || !from || !to || !startFile) throw new Error('usage: pg-index-worker.ts <database-url> <schema> <from> <to> <start-file>')

const handle = await openPostgres({ url, schema })
const index = await createPostgresSearchIndex(handle)
process.stdout.write('ready\n')
while (!existsSync(startFile)) await sleep(5)
const words = ['apple', 'river', 'stone', 'lamp', 'cloud', 'tiger', 'violin', 'harbor']
for (let start = Number(from); start < Number(to); start += 50) {
  const batch = []
  for (let n = start; n < Math.min(start + 50, Number(to)); n++) {
    const text = `unit ${n} ${words[n % words.length]} ${words[(n * 3) % words.length]}`
    batch.push({ id: `u${n}`, kind: 'message' as const, text, source: `conv:${n % 7}`, provenance: [], createdAt: '2026-01-01T00:00:00Z', hash: text, meta: { name: `Speaker${n % 5}` } })
  }
  await index.upsert(batch)
  await index.upsert(batch.reverse())
}
await handle.close()
process.stdout.write('done\n')
