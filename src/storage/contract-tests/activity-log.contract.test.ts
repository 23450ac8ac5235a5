/** The ActivityLog contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runActivityLogContract } from './activity-log.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('ActivityLog contract', (seams) => runActivityLogContract(backend.name, seams.activity))
