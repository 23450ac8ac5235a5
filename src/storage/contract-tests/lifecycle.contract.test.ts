/** The Lifecycle contract on every backend of the fixtures list (backend-fixtures.ts). */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runLifecycleContract } from './lifecycle.contract.ts'

for (const backend of BACKEND_FIXTURES) backend.whenAvailable('Lifecycle contract', (seams) => runLifecycleContract(backend.name, seams.lifecycle))
