import { runJobsContract } from '../contract-tests/jobs.contract.ts'
import { createPostgresJobs } from './jobs.ts'
import { onPostgres, openTestHandle } from './test-support/test-database.ts'

onPostgres('Jobs contract', (url) => {
  runJobsContract('postgres', async () => {
    const { handle, cleanup } = await openTestHandle(url)
    return { jobs: createPostgresJobs(handle), cleanup }
  })
})
