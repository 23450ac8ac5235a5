import { createMind, type Mind } from '../../mind.ts'
import type { CommandContext } from './command.ts'

/** Open the mind a command works on, from its global flags and environment. */
export function openMind(context: CommandContext, options: { reindexOnOpen?: boolean } = {}): Promise<Mind> {
  return createMind({ env: context.io.env, settings: context.settings, reindexOnOpen: options.reindexOnOpen })
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
