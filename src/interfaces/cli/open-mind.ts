import { createLineLogger } from '../../core/logger.ts'
import { createMind, type Mind } from '../../mind.ts'
import type { CommandContext } from './command.ts'

/**
 * Open the mind a command works on, from its global flags and environment. Its log lines go to
 * the command's stderr (stdout carries the result, or MCP), at `log.level`.
 */
export function openMind(context: CommandContext, options: { reindexOnOpen?: boolean } = {}): Promise<Mind> {
  const stderr = context.io.stderr
  const logger = createLineLogger({ level: 'debug', write: (line) => stderr.write(line), format: context.io.isTTY ? 'text' : 'json' })
  return createMind({ env: context.io.env, settings: context.settings, reindexOnOpen: options.reindexOnOpen, logger })
}

/** Run `fn` with an open mind and always close it. */
export async function withMind<T>(context: CommandContext, fn: (mind: Mind) => Promise<T>, options: { reindexOnOpen?: boolean } = {}): Promise<T> {
  const mind = await openMind(context, options)
  try {
    return await fn(mind)
  } finally {
    await mind.close()
  }
}
