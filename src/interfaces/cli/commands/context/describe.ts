/** `engram context describe ID` and `engram context expand ID`: inspect the summary DAG. */
import type { Command } from '../../command.ts'
import { hasExplorer } from '../../../../memory/context/provider.ts'
import { intOption, readerOf, unsupported, usage, withContext } from './shared.ts'

export const contextDescribeCommand: Command = {
  path: ['context', 'describe'],
  usage: 'ID',
  examples: ['engram context describe sum_0123456789abcdef', 'engram context describe msg:12'],
  async run(context) {
    const id = context.args[0]
    if (!id) throw usage('engram context describe needs an id.', 'Pass a summary id (sum_…) or a message id (msg:<n>).')
    return withContext(context, async (provider, mind) => {
      if (!hasExplorer(provider)) throw unsupported(provider, 'describe')
      const description = await provider.describe(readerOf(context, mind), id)
      const human =
        description.kind === 'message'
          ? `message msg:${description.id} #${description.seq} (${description.role}) in ${description.sessionId} at ${description.at}; folded by: ${description.foldedBy.join(', ') || 'none'}`
          : [
              `summary ${description.id} in ${description.sessionId}: ${description.summaryKind}, depth ${description.depth}, method ${description.method}${description.degraded ? ' (fallback, not LLM-written)' : ''}`,
              `${description.messageCount} messages${description.seqRange ? ` #${description.seqRange.from}–#${description.seqRange.to}` : ''}, ${description.earliestAt} → ${description.latestAt}`,
              `${description.tokenCount} tokens for ${description.sourceTokenCount}; folds ${description.children.summaryIds.length} summaries + ${description.children.messageIds.length} messages; folded by: ${description.foldedBy.join(', ') || 'none'}${description.inContext ? '; in the context window' : ''}`,
            ].join('\n')
      return { data: description, human }
    })
  },
}

export const contextExpandCommand: Command = {
  path: ['context', 'expand'],
  usage: 'ID [--messages] [--limit N]',
  examples: ['engram context expand sum_0123456789abcdef --messages --limit 20'],
  options: {
    messages: { type: 'boolean', description: 'go all the way down to the raw messages' },
    limit: { type: 'string', description: 'most nodes returned', valueName: 'N' },
  },
  async run(context) {
    const id = context.args[0]
    if (!id) throw usage('engram context expand needs a summary id.', 'Pass a summary id (sum_…), from assemble or search.')
    return withContext(context, async (provider, mind) => {
      if (!hasExplorer(provider)) throw unsupported(provider, 'expand')
      const limit = intOption(context, 'limit', undefined, 1)
      const expansion = await provider.expand(readerOf(context, mind), id, { toMessages: Boolean(context.options.messages), ...(limit !== undefined ? { limit } : {}) })
      const lines = expansion.nodes.map((node) =>
        node.kind === 'message' ? `msg:${node.id} #${node.seq} [${node.at}] ${node.name ?? node.role}: ${node.content}` : `${node.id} [depth ${node.depth}, ${node.method}]\n${node.content}`,
      )
      if (expansion.truncated) lines.push('… (more: raise --limit)')
      return { data: expansion, human: lines.join('\n') }
    })
  },
}
