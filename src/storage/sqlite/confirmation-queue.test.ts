import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ManualClock } from '../../core/clock.ts'
import { makeTempHome } from '../../testing/temp-home.ts'
import { runConfirmationQueueContract } from '../contract-tests/confirmation-queue.contract.ts'
import { createSqliteConfirmationQueue } from './confirmation-queue.ts'
import { openSqlite } from './database.ts'

runConfirmationQueueContract('sqlite', async () => {
  const temp = makeTempHome('engram-sqlite-confirmations-')
  mkdirSync(temp.home, { recursive: true })
  const handle = openSqlite(join(temp.home, 'engram.db'))
  const clock = new ManualClock('2026-03-01T10:00:00Z')
  return {
    queueOf: (agent) => createSqliteConfirmationQueue(handle, { agent, clock }),
    cleanup: async () => {
      handle.close()
      temp.cleanup()
    },
  }
})
