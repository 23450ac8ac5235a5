/** `engram status` names the storage it runs on: SQLite's words never describe a PostgreSQL mind. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { renderStatus } from '../src/interfaces/cli/commands/status/index.ts'
import { createMind } from '../src/mind.ts'
import { makeTempHome } from '../src/testing/temp-home.ts'

test('the capabilities name the backend: SQLite and FTS5 for the embedded one, PostgreSQL otherwise', async () => {
  const temp = makeTempHome()
  const mind = await createMind({ home: temp.home, env: temp.env })
  try {
    const status = await mind.status()
    const embedded = renderStatus(status, false)
    assert.match(embedded, /storage\s+embedded \(SQLite \+ markdown files\)/)
    assert.match(embedded, /FTS5 with BM25/)
    // How a PostgreSQL mind describes itself (storage/postgres/backend.ts), rendered without a server.
    const postgres = renderStatus({ ...status, capabilities: { ...status.capabilities, backend: 'postgres', storage: 'PostgreSQL: memory files as rows, tables, pgvector', fullTextRanking: 'BM25 over term rows, ranked as the embedded index ranks' } }, false)
    assert.match(postgres, /storage\s+postgres \(PostgreSQL/)
    assert.doesNotMatch(postgres, /SQLite \+ markdown|FTS5/)
  } finally {
    await mind.close()
    temp.cleanup()
  }
})
