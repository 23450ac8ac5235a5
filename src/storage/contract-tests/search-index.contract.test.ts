/** The SearchIndex contract on every backend of the fixtures list (backend-fixtures.ts), once per way each keeps vectors. */
import { BACKEND_FIXTURES } from './backend-fixtures.ts'
import { runSearchIndexContract } from './search-index.contract.ts'

for (const backend of BACKEND_FIXTURES) {
  backend.whenAvailable('SearchIndex contract', (seams) => {
    for (const variant of seams.searchIndexes) runSearchIndexContract(variant.name, variant.make)
  })
}
