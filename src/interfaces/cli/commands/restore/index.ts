/** `engram restore TARGET`: bring a forgotten memory back from `archive/forgotten/` (decision 0023). */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { shownText } from '../forget/index.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

export const restoreCommand: Command = {
  path: ['restore'],
  usage: 'TARGET [--user ID]   (the path or text `engram forget` showed, e.g. knowledge/tea.md or "archive/forgotten/rules.md#<id>")',
  examples: ['engram restore knowledge/tea.md', 'engram restore "archive/forgotten/rules.md#0123456789abcdef"'],
  async run(context) {
    const target = context.args.join(' ').trim()
    if (target === '') {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: 'engram restore needs what to restore.',
        fix: 'name it as `engram forget` reported it, e.g. `engram restore knowledge/tea.md` or `engram restore "archive/forgotten/rules.md#<id>"`',
      })
    }
    const user = cliUser(context)
    return withMind(
      context,
      async (mind) => {
        const outcome = await mind.restore(target, user !== undefined ? { user } : {})
        return { data: outcome, human: `Restored ${outcome.path}${shownText(outcome)} from ${outcome.archive}; it is in memory and the index again.` }
      },
      { reindexOnOpen: false },
    )
  },
}
