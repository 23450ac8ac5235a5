import { createLineLogger, type Logger } from '../../core/logger.ts'
import { type MindCore, openMindCore } from '../../mind-core.ts'
import { type MindInternals, openMindInternals } from '../../mind-internals.ts'
import type { CommandContext } from './command.ts'

/** engram's log lines go to the command's stderr (stdout carries the result, or MCP), at `log.level`. */
function commandLogger(context: CommandContext): Logger {
  const stderr = context.io.stderr
  return createLineLogger({ level: 'debug', write: (line) => stderr.write(line), format: context.io.isTTY ? 'text' : 'json' })
}

/**
 * Open the mind a command works on, from its global flags and environment. mind.ts, and the
 * memory systems it builds, load here, when a command opens a mind, not when the CLI starts.
 */
export async function openMind(context: CommandContext, options: { reindexOnOpen?: boolean } = {}): Promise<MindInternals> {
  return openMindInternals({ env: context.io.env, settings: context.settings, reindexOnOpen: options.reindexOnOpen, logger: commandLogger(context) })
}

/** Run `fn` with an open mind and always close it. */
export async function withMind<T>(context: CommandContext, fn: (mind: MindInternals) => Promise<T>, options: { reindexOnOpen?: boolean } = {}): Promise<T> {
  const mind = await openMind(context, options)
  try {
    return await fn(mind)
  } finally {
    await mind.close()
  }
}

/**
 * Run `fn` with the home opened as every mind opens it (configuration, models, storage, owners
 * migration, the reindex of hand edits) but without the memory systems: for a command that only
 * reads counts and capabilities (`engram status`), which then loads a third of the modules
 * (decision 0041). Always closed.
 */
export async function withMindCore<T>(context: CommandContext, fn: (core: MindCore) => Promise<T>): Promise<T> {
  const core = await openMindCore({ env: context.io.env, settings: context.settings, logger: commandLogger(context) })
  try {
    return await fn(core)
  } finally {
    await core.close()
  }
}
