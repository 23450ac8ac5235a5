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
  /**
   * What follows the command's words on its usage line (`QUERY [--limit N]`); one string per form
   * when it has several. The help prints `engram <words> <usage>`, so neither is written here.
   */
  usage?: string | readonly string[]
  /** Whole command lines a person can copy (`engram search "deploy token" --limit 5`); `--help` shows them, a test runs them through the parser. */
  examples: readonly string[]
  /**
   * What the command needs of the engram home. Unset: an existing one — the command line refuses
   * before it runs when there is none, and creates nothing (decision 0074). `creates`: it may
   * create the home (it adds memory, or serves an agent that will). `checks`: it asks itself, or
   * needs no home (`engram doctor` reports a missing one as a failed check, `engram config --docs`
   * and `engram eval` need none).
   */
  home?: 'creates' | 'checks'
  options?: Record<string, OptionSpec>
  run(context: CommandContext): Promise<CommandResult>
}
