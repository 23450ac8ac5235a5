/** `engram context compact --session S [--full]`: fold older messages into summaries now. */
import type { Command } from '../../command.ts'
import { hasCompactor } from '../../../../memory/context/provider.ts'
import { intOption, requireSession, SESSION_OPTION, unsupported, withContext } from './shared.ts'

export const contextCompactCommand: Command = {
  path: ['context', 'compact'],
  usage: '--session S [--full] [--fresh-tail K]',
  examples: ['engram context compact --session chat-42', 'engram context compact --session chat-42 --full'],
  options: {
    ...SESSION_OPTION,
    full: { type: 'boolean', description: 'repeat passes until nothing more can be compacted (at most 10 rounds)' },
    'fresh-tail': { type: 'string', description: 'newest messages protected (default context.freshTail)', valueName: 'K' },
  },
  async run(context) {
    return withContext(context, async (provider, mind) => {
      const session = await requireSession(context, mind, 'compact')
      if (!hasCompactor(provider)) throw unsupported(provider, 'compaction')
      const freshTail = intOption(context, 'fresh-tail', mind.config.values.context.freshTail)!
      const result = await provider.compact(session, { mode: context.options.full ? 'full' : 'incremental', freshTail })
      if (result.kind === 'skipped') return { data: result, human: `skipped: ${result.reason}` }
      const methods = Object.entries(result.methods).map(([method, n]) => `${n} ${method}`).join(', ')
      const lines = [
        `compacted (${result.mode}, ${result.rounds} round${result.rounds === 1 ? '' : 's'}): ${result.leafSummaries} leaf + ${result.condensedSummaries} condensed summaries (${methods}); window ${result.tokensBefore} → ${result.tokensAfter} tokens`,
      ]
      if (result.degraded) lines.push('degraded: some summaries were written by a fallback, not an LLM (they are labelled as such)')
      for (const warning of result.warnings) lines.push(`warning: ${warning.message.split('\n')[0]}`)
      return { data: result, human: lines.join('\n') }
    })
  },
}
