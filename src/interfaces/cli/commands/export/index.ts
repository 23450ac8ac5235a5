/** `engram export --user ID DIR`: everything a user owns, as files a person can read (decision 0023). */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

export const exportCommand: Command = {
  path: ['export'],
  summary: "Write everything a user owns (profile, memories, conversations, turns, resolutions) into a folder",
  usage: 'export --user ID DIR [--force]',
  options: {
    force: { type: 'boolean', description: 'write into a folder that is not empty (files of the same name are replaced)' },
  },
  async run(context) {
    const user = cliUser(context)
    const dir = context.args.join(' ').trim()
    if (user === undefined || dir === '') {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: `engram export needs ${user === undefined ? 'the user (--user ID)' : 'the folder to write to'}.`,
        fix: 'write e.g. `engram export --user ada ./ada-export`',
      })
    }
    return withMind(
      context,
      async (mind) => {
        const report = await mind.exportUser(user, dir, { force: context.options.force === true })
        const c = report.counts
        return {
          data: report,
          human: `Exported ${user} to ${report.dir}: ${c.files} memory file(s), profile ${c.profileFiles} file(s), ${c.conversations} conversation(s) with ${c.messages} message(s) and ${c.summaries} summar${c.summaries === 1 ? 'y' : 'ies'}, ${c.turns} turn(s), ${c.confirmations} confirmation(s), ${c.journals} journal(s), ${c.resolutions} resolution(s), ${c.projectFiles} project file(s). See README.md there.${report.skipped.length > 0 ? `\nNot copied (${report.skipped.length}): ${report.skipped.map((item) => `${item.path} (${item.reason})`).join(', ')}` : ''}`,
        }
      },
      { reindexOnOpen: false },
    )
  },
}
