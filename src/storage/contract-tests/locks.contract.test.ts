/** The Locks contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runLocksContract } from './locks.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('Locks contract', (seams) => runLocksContract(backend.name, seams.locks))
