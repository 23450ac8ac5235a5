/** The ConfirmationQueue contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runConfirmationQueueContract } from './confirmation-queue.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('ConfirmationQueue contract', (seams) => runConfirmationQueueContract(backend.name, seams.confirmations))
