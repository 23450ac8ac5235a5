/** `engram context search QUERY [--session S]`: full-text search over messages and summaries. */
import { checkLength } from '../../../../config/limits.ts'
import type { Command } from '../../command.ts'
import { hasSearcher } from '../../../../memory/context/provider.ts'
import { intOption, readerOf, SESSION_OPTION, unsupported, usage, withContext } from './shared.ts'

export const contextSearchCommand: Command = {
  path: ['context', 'search'],
  usage: 'QUERY [--session S] [--limit N]',
  examples: ['engram context search "invoice" --session chat-42 --limit 5'],
  options: { ...SESSION_OPTION, limit: { type: 'string', description: 'most hits (default 10)', valueName: 'N' } },
  async run(context) {
    const query = context.args.join(' ').trim()
    if (query === '') throw usage('engram context search needs a query.', 'e.g. engram context search "postgres migration"')
    return withContext(context, async (provider, mind) => {
      if (!hasSearcher(provider)) throw unsupported(provider, 'search')
      checkLength('queryChars', 'The query', query, mind.config.values.limits.queryChars)
      const sessionId = typeof context.options.session === 'string' ? context.options.session : undefined
      const result = await provider.search(readerOf(context, mind), query, { limit: intOption(context, 'limit', 10, 1)!, ...(sessionId ? { sessionId } : {}) })
      const lines = result.hits.map((hit) => `${hit.id} [${hit.kind}, ${hit.sessionId}, ${hit.at}] ${hit.snippet}`)
      const note = result.via === 'scan' ? ' (substring scan — full-text search unavailable)' : ''
      return { data: result, human: `${result.hits.length} hits${note}\n${lines.join('\n')}` }
    })
  },
}
