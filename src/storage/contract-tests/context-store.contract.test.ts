/** The ContextStore contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runContextStoreContract } from './context-store.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('ContextStore contract', (seams) => runContextStoreContract(backend.name, seams.context))
