/** Test wiring: a real embedded backend in a temp home, its SQLite file, and declarative memory. */
import { join } from 'node:path'
import { type Clock, ManualClock } from '../../../core/clock.ts'
import type { MemoryMode } from '../../../config/schema.ts'
import type { Llm } from '../../../llm/contracts.ts'
import type { Backend } from '../../../storage/contracts.ts'
import { openEmbeddedBackend } from '../../../storage/embedded.ts'
import { openSqlite, type SqliteHandle } from '../../../storage/sqlite/database.ts'
import { makeTempHome, type TempHome } from '../../../testing/temp-home.ts'
import { createSqliteConfirmationQueue } from '../../../storage/sqlite/confirmation-queue.ts'
import { createDeclarativeMemory, type DeclarativeMemory } from '../declarative-memory.ts'

export interface OpenedMemory {
  temp: TempHome
  backend: Backend
  sqlite: SqliteHandle
  memory: DeclarativeMemory
  clock: Clock
  /** Close and reopen everything on the same home (a restart). */
  reopen(mode?: MemoryMode): OpenedMemory
  close(): Promise<void>
}

export function openMemory(options: { mode?: MemoryMode; project?: boolean; llm?: Llm; temp?: TempHome; clock?: Clock } = {}): OpenedMemory {
  const temp = options.temp ?? makeTempHome('engram-engrams-')
  const clock = options.clock ?? new ManualClock('2026-03-01T10:00:00Z')
  const project = options.project === false ? undefined : temp.project
  const backend = openEmbeddedBackend({ home: temp.home, agent: 'default', ...(project ? { project } : {}), clock })
  const sqlite = openSqlite(join(temp.home, 'engram.db'), { clock })
  const confirmations = createSqliteConfirmationQueue(sqlite, { agent: 'default', ...(project ? { project } : {}), clock })
  const memory = createDeclarativeMemory({
    backend,
    mode: options.mode ?? 'autopilot',
    confirmations,
    clock,
    ...(options.llm ? { llm: options.llm } : {}),
    ...(project ? { projectDir: project } : {}),
  })
  const opened: OpenedMemory = {
    temp,
    backend,
    sqlite,
    memory,
    clock,
    reopen(mode) {
      sqlite.close()
      void backend.close()
      return openMemory({ ...options, temp, clock, ...(mode ? { mode } : {}) })
    },
    async close() {
      sqlite.close()
      await backend.close()
    },
  }
  return opened
}
