/**
 * Child process for the concurrency test: appends `count` messages, one transaction each, to the
 * conversation of session `session`, content `<writer>:<i>`. Waits for a start file so that the
 * writers really overlap.
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { systemClock } from '../../../core/clock.ts'
import { createSqliteContextStore } from '../context-store.ts'
import { openSqlite } from '../database.ts'

const [path, session, writer, countText, startFile] = process.argv.slice(2)
if (!path || !session || !writer || !countText || !startFile) throw new Error('usage: append-worker <db> <session> <writer> <count> <start-file>')

const handle = openSqlite(path)
const store = createSqliteContextStore(handle, { clock: systemClock })
const conversation = await store.conversation(session, { agent: 'agent' })
process.stdout.write('ready\n')
while (!existsSync(startFile)) await sleep(5)
for (let i = 0; i < Number(countText); i++) {
  await store.appendMessages(conversation.id, [
    { role: 'user', content: `${writer}:${i}`, at: new Date().toISOString(), tokenCount: 1 },
  ])
}
handle.close()
process.stdout.write('done\n')
