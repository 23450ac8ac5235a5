import type { Mind } from '../../../../mind.ts'
import { createSqliteConfirmationQueue } from '../../../../memory/engrams/confirmations.ts'
import { createDeclarativeMemory, type DeclarativeMemory } from '../../../../memory/engrams/declarative-memory.ts'
import { openSqlite } from '../../../../storage/sqlite/database.ts'
import type { CommandContext } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

/**
 * Run `fn` with the mind's declarative memory. The confirmation queue lives in the home's SQLite
 * file; until the Mind exposes it, a second handle on the same (WAL) database is opened here.
 */
export async function withDeclarativeMemory<T>(context: CommandContext, fn: (memory: DeclarativeMemory, mind: Mind) => Promise<T>): Promise<T> {
  return withMind(
    context,
    async (mind) => {
      const sqlite = openSqlite(mind.layout.database, { clock: mind.clock })
      try {
        const confirmations = createSqliteConfirmationQueue(sqlite, { agent: mind.agent, ...(mind.project ? { project: mind.project } : {}), clock: mind.clock })
        const memory = createDeclarativeMemory({
          backend: mind.backend,
          mode: mind.config.values.memory.mode,
          confirmations,
          clock: mind.clock,
          llm: mind.llm,
          ...(mind.project ? { projectDir: mind.project } : {}),
        })
        return await fn(memory, mind)
      } finally {
        sqlite.close()
      }
    },
    { reindexOnOpen: false },
  )
}
