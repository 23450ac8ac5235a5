/** What a CLI run may touch. Real streams in `bin.ts`; strings in tests. */
import type { Readable } from 'node:stream'
export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  /** Standard input, for commands that speak a protocol on stdio (`engram mcp`). */
  stdin?: Readable
  env: Record<string, string | undefined>
  cwd: string
  /** Whether stdout is a terminal: decides JSON by default and colour. */
  isTTY: boolean
}

/** Exit codes are stable: scripts and agents depend on them. */
export const ExitCode = {
  ok: 0,
  /** Something unexpected: a bug in engram. */
  internal: 1,
  /** The command line was wrong (unknown command or flag, missing argument). */
  usage: 2,
  /** Input or configuration was wrong, or what it names is not there (an id, a path, the home); the message says how to fix it (decision 0074). */
  user: 3,
  /** The machine, a file or a provider failed. */
  system: 4,
  /** `engram doctor` found something required missing. */
  unhealthy: 5,
  /** The command did only part of its work (`engram migrate`: the target does not hold all of the source); running it again resumes. */
  incomplete: 6,
  /** Ctrl-C stopped a long command at a safe point; the message says how to resume (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const
