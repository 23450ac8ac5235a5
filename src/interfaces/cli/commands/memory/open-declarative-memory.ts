import type { MindInternals } from '../../../../mind-internals.ts'
import type { DeclarativeMemory } from '../../../../memory/engrams/declarative-memory.ts'
import type { CommandContext } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

/** Run `fn` with the mind's declarative memory (encoder, gate, confirmations, memory context). */
export async function withDeclarativeMemory<T>(context: CommandContext, fn: (memory: DeclarativeMemory, mind: MindInternals) => Promise<T>): Promise<T> {
  return withMind(context, (mind) => fn(mind.memory, mind), { reindexOnOpen: false })
}

/** The user the command acts for (`--user`), or undefined for the agent's own view (decision 0017). */
export function cliUser(context: CommandContext): string | undefined {
  const user = context.options.user
  return typeof user === 'string' && user !== '' ? user : undefined
}
