/** `engram context …`: the lossless working memory from the command line (all with --json). */
import type { Command } from '../../command.ts'
import { contextAppendCommand } from './append.ts'
import { contextAssembleCommand } from './assemble.ts'
import { contextCompactCommand } from './compact.ts'
import { contextDescribeCommand, contextExpandCommand } from './describe.ts'
import { contextSearchCommand } from './search.ts'
import { contextStatsCommand } from './stats.ts'

export const contextCommands: Command[] = [
  contextAppendCommand,
  contextAssembleCommand,
  contextCompactCommand,
  contextSearchCommand,
  contextDescribeCommand,
  contextExpandCommand,
  contextStatsCommand,
]
