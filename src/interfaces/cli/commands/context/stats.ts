/**
 * `engram context stats --session S`: messages, tokens and the shape of the context window, and
 * whether the window still stands for every stored message exactly once (lossless, checked from
 * the stored rows).
 */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { Command } from '../../command.ts'
import { ExitCode } from '../../io.ts'
import { checkContextConsistency } from '../../../../memory/context/consistency.ts'
import { providerCapabilities } from '../../../../memory/context/provider.ts'
import { requireSession, SESSION_OPTION, withContext } from './shared.ts'

export const contextStatsCommand: Command = {
  path: ['context', 'stats'],
  usage: '--session S',
  examples: ['engram context stats --session chat-42'],
  options: { ...SESSION_OPTION },
  async run(context) {
    return withContext(context, async (provider, mind) => {
      const session = await requireSession(context, mind, 'stats')
      // Counting the messages of a session that was never stored would report zeros as if it were there.
      if (!(await mind.backend.context.findConversation(session.sessionId, mind.agent))) {
        throw new EngramError({
          code: ErrorCode.notFound,
          category: 'user',
          message: `No conversation of ${mind.agent} has the session id ${JSON.stringify(session.sessionId)}.`,
          fix: 'check the id (`engram context search "<words said in it>"` shows the sessions its hits come from)',
          details: { session: session.sessionId },
        })
      }
      const stats = await provider.stats(session)
      const consistency = stats.conversationId === undefined ? undefined : await checkContextConsistency(mind.backend.context, stats.conversationId)
      const data = { ...stats, provider: provider.kind, capabilities: providerCapabilities(provider), ...(consistency ? { consistency } : {}) }
      const lines = [
        `${session.sessionId} (${provider.kind}): ${stats.messages} messages, ${stats.messageTokens} tokens stored`,
        `window: ${stats.items} items, ${stats.contextTokens} tokens, ${stats.summaries} summaries (max depth ${stats.maxDepth})${stats.degradedSummaries > 0 ? `, ${stats.degradedSummaries} written by a fallback` : ''}`,
      ]
      if (consistency?.ok) lines.push('lossless: every stored message is covered exactly once, in order')
      if (consistency && !consistency.ok) {
        lines.push(`NOT CONSISTENT (${consistency.problems.length} problems; every message is still stored, \`engram context search\` finds it):`)
        for (const problem of consistency.problems.slice(0, 10)) lines.push(`  ${problem}`)
      }
      return { data, human: lines.join('\n'), ...(consistency && !consistency.ok ? { exitCode: ExitCode.unhealthy } : {}) }
    })
  },
}
