/** The Jobs contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runJobsContract } from './jobs.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('Jobs contract', (seams) => runJobsContract(backend.name, seams.jobs))
