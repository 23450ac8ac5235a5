import type { Command } from '../command.ts'
import { configCommand } from './config/index.ts'
import { confirmCommand } from './confirm/index.ts'
import { contextCommands } from './context/index.ts'
import { doctorCommand } from './doctor/index.ts'
import { evalCommand } from './eval/index.ts'
import { exportCommand } from './export/index.ts'
import { forgetCommand } from './forget/index.ts'
import { importCommand } from './import/index.ts'
import { initCommand } from './init/index.ts'
import { maintainCommand } from './maintain/index.ts'
import { consolidateCommand } from './consolidate/index.ts'
import { mcpCommand } from './mcp/index.ts'
import { memoryContextCommand } from './memory/index.ts'
import { migrateCommand } from './migrate/index.ts'
import { recallCommand } from './recall/index.ts'
import { reindexCommand } from './reindex/index.ts'
import { rememberCommand } from './remember/index.ts'
import { restoreCommand } from './restore/index.ts'
import { historyCommand } from './history/index.ts'
import { searchCommand } from './search/index.ts'
import { serveCommand } from './serve/index.ts'
import { SKILLS_COMMANDS } from './skills/index.ts'
import { statusCommand } from './status/index.ts'

/** Every command. Adding one here is a decision: it becomes public interface. */
export const COMMANDS: readonly Command[] = [
  initCommand,
  statusCommand,
  configCommand,
  doctorCommand,
  reindexCommand,
  maintainCommand,
  consolidateCommand,
  rememberCommand,
  memoryContextCommand,
  confirmCommand,
  importCommand,
  recallCommand,
  searchCommand,
  forgetCommand,
  restoreCommand,
  historyCommand,
  exportCommand,
  migrateCommand,
  mcpCommand,
  serveCommand,
  evalCommand,
  ...SKILLS_COMMANDS,
  ...contextCommands,
]
