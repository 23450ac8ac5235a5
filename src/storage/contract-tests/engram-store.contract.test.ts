/** The EngramStore contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runEngramStoreContract } from './engram-store.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('EngramStore contract', (seams) => runEngramStoreContract(backend.name, seams.engrams))
