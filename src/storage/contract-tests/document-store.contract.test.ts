/** The DocumentStore contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runDocumentStoreContract } from './document-store.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('DocumentStore contract', (seams) => runDocumentStoreContract(backend.name, seams.documents))
