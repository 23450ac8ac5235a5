/** `engram context stats --session S`: messages, tokens and the shape of the context window. */
import type { Command } from '../../command.ts'
import { providerCapabilities } from '../../../../memory/context/provider.ts'
import { requireSession, SESSION_OPTION, withContext } from './shared.ts'

export const contextStatsCommand: Command = {
  path: ['context', 'stats'],
  summary: 'Show a conversation’s message and token counts and its summaries',
  usage: 'context stats --session S',
  options: { ...SESSION_OPTION },
  async run(context) {
    return withContext(context, async (provider, mind) => {
      const session = await requireSession(context, mind, 'stats')
      const stats = await provider.stats(session)
      const data = { ...stats, provider: provider.kind, capabilities: providerCapabilities(provider) }
      const human = [
        `${session.sessionId} (${provider.kind}): ${stats.messages} messages, ${stats.messageTokens} tokens stored`,
        `window: ${stats.items} items, ${stats.contextTokens} tokens, ${stats.summaries} summaries (max depth ${stats.maxDepth})${stats.degradedSummaries > 0 ? `, ${stats.degradedSummaries} written by a fallback` : ''}`,
      ].join('\n')
      return { data, human }
    })
  },
}
