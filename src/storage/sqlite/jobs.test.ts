import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { makeTempHome } from '../../testing/temp-home.ts'
import { runJobsContract } from '../contract-tests/jobs.contract.ts'
import { openSqlite } from './database.ts'
import { createSqliteJobs } from './jobs.ts'

runJobsContract('sqlite', async () => {
  const temp = makeTempHome('engram-sqlite-jobs-')
  mkdirSync(temp.home, { recursive: true })
  const handle = openSqlite(join(temp.home, 'engram.db'))
  return {
    jobs: createSqliteJobs(handle),
    cleanup: async () => {
      handle.close()
      temp.cleanup()
    },
  }
})
