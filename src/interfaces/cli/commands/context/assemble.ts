/** `engram context assemble --session S --budget N [--fresh-tail K]`: the context an agent would send. */
import type { Command } from '../../command.ts'
import { intOption, requireSession, SESSION_OPTION, withContext } from './shared.ts'

export const contextAssembleCommand: Command = {
  path: ['context', 'assemble'],
  usage: '--session S [--budget N] [--fresh-tail K] [--no-compact]',
  examples: ['engram context assemble --session chat-42 --budget 4000'],
  options: {
    ...SESSION_OPTION,
    budget: { type: 'string', description: 'token budget (default context.budget)', valueName: 'N' },
    'fresh-tail': { type: 'string', description: 'newest messages always kept (default context.freshTail)', valueName: 'K' },
    'no-compact': { type: 'boolean', description: 'do not compact first even past the threshold' },
  },
  async run(context) {
    return withContext(context, async (provider, mind) => {
      const session = await requireSession(context, mind, 'assemble')
      const budget = intOption(context, 'budget', mind.config.values.context.budget)!
      const freshTail = intOption(context, 'fresh-tail', mind.config.values.context.freshTail)!
      const assembled = await provider.assemble(session, budget, freshTail, { autoCompact: !context.options['no-compact'] })
      const lines = assembled.items.map((item) =>
        item.kind === 'message' ? `#${item.seq} ${item.name ?? item.role}: ${item.content}` : item.content,
      )
      const head = `${assembled.items.length} items, ${assembled.tokens}/${budget} tokens${assembled.overBudget ? ' (the fresh tail alone is over budget)' : ''}, ${assembled.omittedItems} older items left out`
      const compacted = assembled.compaction?.kind === 'compacted' ? `\ncompacted first: ${assembled.compaction.created.length} summaries` : ''
      return { data: assembled, human: `${head}${compacted}\n\n${lines.join('\n\n')}` }
    })
  },
}
