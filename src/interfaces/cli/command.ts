import type { ParseArgsConfig } from 'node:util'
import type { CliIo } from './io.ts'

export type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & { description: string; valueName?: string }

export interface CommandContext {
  io: CliIo
  /** Positionals after the command words. */
  args: string[]
  /** Parsed options (global and the command's own). */
  options: Record<string, string | boolean | string[] | undefined>
  json: boolean
  /** Settings from global flags, by dotted key, for `createMind`. */
  settings: Record<string, unknown>
}

/** A result the shell prints: `data` as JSON, or `human` text on a terminal. */
export interface CommandResult {
  data: unknown
  human: string
  exitCode?: number
  /** The command wrote stdout itself (a protocol, like `engram mcp`): print no envelope. */
  quiet?: boolean
}

/** A command's module: what it parses and runs. Its summary is in the registry (`commands/index.ts`), which loads the module only to run it. */
export interface Command {
  /** Words that select it: `['status']`, `['context', 'append']` (the same as its registry entry). */
  path: string[]
  usage?: string
  options?: Record<string, OptionSpec>
  run(context: CommandContext): Promise<CommandResult>
}
