/**
 * `engram export DIR`: the agent's whole memory as the seeds' file tree, from either backend
 * (decision 0036). `engram export --user ID DIR`: everything one user owns, as files a person can
 * read (decision 0023).
 */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { exportMemory } from '../../../../memory/portability/export-memory.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { withProgress } from '../../progress.ts'
import { ENGRAM_VERSION } from '../../version.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

export const exportCommand: Command = {
  path: ['export'],
  usage: ['DIR [--force]', '--user ID DIR [--force]'],
  examples: ['engram export ./memory-export', 'engram export --user ada ./ada-export --force'],
  options: {
    force: { type: 'boolean', description: 'write into a folder that is not empty (files of the same name are replaced)' },
  },
  async run(context) {
    const user = cliUser(context)
    const dir = context.args.join(' ').trim()
    if (dir === '') {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: 'engram export needs the folder to write to.',
        fix: 'write e.g. `engram export ./memory-export` (the whole memory) or `engram export --user ada ./ada-export` (one user)',
      })
    }
    const force = context.options.force === true
    if (user === undefined) {
      const resume = `The folder holds part of the export and no manifest.json yet. Run \`engram export ${/\s/.test(dir) ? JSON.stringify(dir) : dir} --force\` to write it whole.`
      return withMind(
        context,
        (mind) => withProgress(context, { command: 'export', resume }, async (progress) => {
          const report = await exportMemory({ backend: mind.backend, agent: mind.agent, clock: mind.clock, skills: mind.skills, home: mind.home, version: ENGRAM_VERSION }, dir, { force, ...progress })
          const c = report.counts
          return {
            data: report,
            human: `Exported the memory of ${report.agent} (${report.backend}) to ${report.dir}: ${c.files} file(s) — ${c.entries} entries in ${c.engramFiles} memory file(s), ${c.topics} topic(s), ${c.knowledge} knowledge, ${c.procedures} procedure(s), ${c.episodes} episode day(s), ${c.userProfiles} user profile(s), ${c.skills} skill(s). See README.md there.${report.problems.length > 0 ? `\nNot exported (${report.problems.length}): ${report.problems.map((item) => `${item.path} (${item.reason})`).join(', ')}` : ''}`,
          }
        }),
        { reindexOnOpen: false },
      )
    }
    return withMind(
      context,
      async (mind) => {
        const report = await mind.exportUser(user, dir, { force })
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
