/**
 * The real declarative-memory write path on a temp home, for tests of the producers (error
 * learner, pattern monitor, sleep replay): file EngramStore + SQLite confirmation queue + the real
 * `createEncoder`. No mocks of our own modules.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ManualClock } from '../../../core/clock.ts'
import type { EngramStore, Locks } from '../../../storage/contracts.ts'
import { createFileEngramStore } from '../../../storage/files/engram-store.ts'
import { createFileLocks } from '../../../storage/files/locks.ts'
import { openSqlite } from '../../../storage/sqlite/database.ts'
import { createSqliteConfirmationQueue } from '../../../storage/sqlite/confirmation-queue.ts'
import { createEncoder, type EngramEncoder } from '../../engrams/encode.ts'

export interface RealMemory {
  encoder: EngramEncoder
  global: EngramStore
  locks: Locks
  clock: ManualClock
  memoryDir: string
  close(): void
}

export function openRealMemory(home: string, mode: 'autopilot' | 'copilot' | 'off' = 'autopilot'): RealMemory {
  mkdirSync(home, { recursive: true })
  const clock = new ManualClock('2026-04-11T10:00:00Z')
  const locks = createFileLocks({ dir: join(home, '.locks') })
  const memoryDir = join(home, 'agents', 'default', 'memory')
  const global = createFileEngramStore({ dir: memoryDir, scope: 'global', locks, clock })
  const handle = openSqlite(join(home, 'engram.db'))
  const confirmations = createSqliteConfirmationQueue(handle, { agent: 'default', clock })
  const encoder = createEncoder({ global, mode, confirmations, clock, locks })
  return { encoder, global, locks, clock, memoryDir, close: () => handle.close() }
}
