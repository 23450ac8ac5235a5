import { checkLength } from '../../../../config/limits.ts'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { RECALL_DEFAULT_DAYS, RECALL_DEFAULT_LIMIT, RECALL_MAX_LIMIT } from '../../../../memory/episodes/recall.ts'
import { formatRecallResults } from '../../../../tools/recall-tool.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

function numberOption(value: unknown, flag: string, fallback: number, example: string): number {
  if (value === undefined) return fallback
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN
  if (!Number.isFinite(parsed)) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${flag} expects a number, got ${JSON.stringify(value)}.`,
      fix: `Write e.g. ${flag} ${example}.`,
    })
  }
  return parsed
}

/** `engram recall QUERY [--days N] [--limit N]`: search episodes and the activity log. */
export const recallCommand: Command = {
  path: ['recall'],
  usage: 'QUERY [--days N] [--limit N]',
  examples: ['engram recall "deploy failed"', 'engram recall "tea" --days 7 --limit 5'],
  options: {
    days: { type: 'string', description: `only the last N days (default ${RECALL_DEFAULT_DAYS})`, valueName: 'N' },
    limit: { type: 'string', description: `most results, 1-${RECALL_MAX_LIMIT} (default ${RECALL_DEFAULT_LIMIT})`, valueName: 'N' },
  },
  async run(context) {
    const query = context.args.join(' ').trim()
    if (query === '') {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: 'engram recall needs a query.',
        fix: 'Write the words to look for, e.g. `engram recall "deploy token" --days 7`.',
      })
    }
    const daysBack = numberOption(context.options.days, '--days', RECALL_DEFAULT_DAYS, '7')
    const limit = numberOption(context.options.limit, '--limit', RECALL_DEFAULT_LIMIT, '10')
    return withMind(
      context,
      async (mind) => {
        checkLength('queryChars', 'The query', query, mind.config.values.limits.queryChars)
        // The episodes and activity of the user it acts for (--user), the agent's and shared (decision 0017).
        const results = await mind.scope(cliUser(context)).recall(query, { daysBack, limit })
        return { data: { query, daysBack, limit, results }, human: formatRecallResults(query, results) }
      },
      // Recall reads the episode and activity files directly; the search index is not needed.
      { reindexOnOpen: false },
    )
  },
}
