/** What every `engram context …` command shares: the provider of the open mind, the session, number options. */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { createContextProvider } from '../../../../memory/context/create-provider.ts'
import type { LcmContextProvider } from '../../../../memory/context/lcm-provider.ts'
import type { ContextSession } from '../../../../memory/context/provider.ts'
import type { SimpleContextProvider } from '../../../../memory/context/simple-provider.ts'
import type { Viewer } from '../../../../core/owner.ts'
import type { MindInternals } from '../../../../mind-internals.ts'
import type { CommandContext, OptionSpec } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

export const SESSION_OPTION: Record<string, OptionSpec> = {
  session: { type: 'string', description: 'the conversation (session id)', valueName: 'S' },
}

/** The configured provider (context.provider / ENGRAM_CONTEXT_PROVIDER) over the mind's backend. */
export function contextProviderOf(mind: MindInternals): LcmContextProvider | SimpleContextProvider {
  const values = mind.config.values.context
  return createContextProvider(values.provider, {
    store: mind.backend.context,
    index: mind.backend.index,
    locks: mind.backend.locks,
    clock: mind.clock,
    llm: mind.llm,
    documents: mind.backend.documents,
    settings: { freshTail: values.freshTail, threshold: values.threshold, leafChunk: values.leafChunk, maxMessageChars: mind.config.values.limits.messageChars },
  })
}

export function withContext<T>(
  context: CommandContext,
  fn: (provider: LcmContextProvider | SimpleContextProvider, mind: MindInternals) => Promise<T>,
): Promise<T> {
  return withMind(
    context,
    async (mind) => {
      const provider = contextProviderOf(mind)
      try {
        return await fn(provider, mind)
      } finally {
        await provider.close()
      }
    },
    { reindexOnOpen: false },
  )
}

export function usage(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/**
 * The session a command works on. The CLI is the home's operator: without --user it works on an
 * existing session as the user it belongs to (decision 0017); --user names the user of a new one,
 * and must match an existing one's.
 */
export async function requireSession(context: CommandContext, mind: MindInternals, command: string): Promise<ContextSession> {
  const sessionId = context.options.session
  if (typeof sessionId !== 'string' || sessionId.trim() === '') {
    throw usage(`engram context ${command} needs --session.`, `Pass --session S (the conversation to work on), e.g. engram context ${command} --session chat-42.`)
  }
  const given = context.options.user
  const user = typeof given === 'string' && given !== '' ? given : (await mind.backend.context.findConversation(sessionId, mind.agent))?.user
  return user !== undefined ? { sessionId, agent: mind.agent, user } : { sessionId, agent: mind.agent }
}

/**
 * Whose conversations a search or an exploration reaches (decision 0017): `--user`'s and the
 * agent's own; without --user, the agent's own only.
 */
export function readerOf(context: CommandContext, mind: MindInternals): Viewer {
  const user = context.options.user
  return typeof user === 'string' && user !== '' ? { agent: mind.agent, user } : { agent: mind.agent }
}

/** A whole-number option; `fallback` when absent. */
export function intOption(context: CommandContext, name: string, fallback: number | undefined, min = 0): number | undefined {
  const raw = context.options[name]
  if (raw === undefined) return fallback
  const value = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN
  if (!Number.isInteger(value) || value < min) throw usage(`--${name} must be a whole number ≥ ${min}, got ${JSON.stringify(raw)}.`, `Pass e.g. --${name} ${Math.max(min, 16000)}.`)
  return value
}

export function unsupported(provider: { kind: string }, what: string): EngramError {
  return new EngramError({
    code: ErrorCode.unsupported,
    category: 'user',
    message: `The ${provider.kind} context provider has no ${what}.`,
    fix: 'Use the lcm provider: --set context.provider=lcm or ENGRAM_CONTEXT_PROVIDER=lcm.',
  })
}
