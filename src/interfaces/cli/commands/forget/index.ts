/**
 * `engram forget`: retire a memory on request (decision 0023). `engram forget TARGET` moves one
 * memory to `archive/forgotten/` (restorable with `engram restore`); `--purge` deletes it for real;
 * `engram forget --user ID --purge` erases everything that user owns. Every act is logged.
 */
import { isRuleKind, ruleWithPolarity } from '../../../../core/engram.ts'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { ForgetOutcome } from '../../../../memory/forgetting/forget-memory.ts'
import type { UserErasureReport } from '../../../../memory/forgetting/forget-user.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { withProgress } from '../../progress.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

/** An entry's text as a person reads it (a rule with its polarity). */
export function shownText(outcome: ForgetOutcome): string {
  if (outcome.text === undefined) return ''
  const text = outcome.entryKind !== undefined && isRuleKind(outcome.entryKind) ? ruleWithPolarity(outcome.entryKind, outcome.text) : outcome.text
  return ` ("${text}")`
}

/** The flag that repeats a command as the same user. */
function userFlag(user: string | undefined): string {
  return user === undefined ? '' : ` --user ${JSON.stringify(user)}`
}

function erasureText(report: UserErasureReport): string {
  if (report.nothing) return `Nothing of ${report.user} was found in this home (agents searched: ${report.agents.join(', ') || 'none'}).`
  const counts = Object.entries(report.erased)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${count} ${kind}`)
  const warnings = report.warnings.map((warning) => `\nwarning: ${warning}`).join('')
  return `Erased everything ${report.user} owned (agents searched: ${report.agents.join(', ')}): ${counts.join(', ')}.\nThe erasure is logged in the agent's activity log (counts only, the user named by a hash).${warnings}`
}

export const forgetCommand: Command = {
  path: ['forget'],
  usage: ['TARGET [--user ID] [--reason TEXT] [--purge]', '--user ID --purge'],
  examples: ['engram forget "Never: Use tabs"', 'engram forget knowledge/tea.md --reason "out of date"', 'engram forget --user ada --purge'],
  options: {
    purge: { type: 'boolean', description: 'delete for real: the memory and its archived copies (with --user and no TARGET: everything that user owns); logged' },
    reason: { type: 'string', description: 'why it is forgotten (kept with the archived copy and in the log)', valueName: 'TEXT' },
  },
  async run(context) {
    const target = context.args.join(' ').trim()
    const user = cliUser(context)
    const purge = context.options.purge === true
    const reason = typeof context.options.reason === 'string' && context.options.reason.trim() !== '' ? context.options.reason.trim() : undefined
    if (target === '') {
      if (user === undefined) {
        throw new EngramError({
          code: ErrorCode.invalidArgument,
          category: 'user',
          message: 'engram forget needs what to forget: a memory, or a user.',
          fix: 'name a memory (`engram forget "Never: Use tabs"`, `engram forget knowledge/tea.md`), or erase a user with `engram forget --user ID --purge`',
        })
      }
      // An erasure is idempotent: stopped, a run again erases what is left (decision 0023).
      const resume = `Part of what ${user} owned is erased. Run \`engram forget --user ${JSON.stringify(user)} --purge\` again to erase the rest.`
      return withMind(
        context,
        (mind) =>
          withProgress(context, { command: 'forget', resume }, async (progress) => {
            const report = await mind.forgetUser(user, { purge, ...progress })
            return { data: report, human: erasureText(report) }
          }),
        { reindexOnOpen: false },
      )
    }
    return withMind(
      context,
      async (mind) => {
        const outcome = await mind.forget(target, { ...(user !== undefined ? { user } : {}), ...(reason ? { reason } : {}), purge })
        const human =
          outcome.action === 'purged'
            ? `Deleted ${outcome.path} for real: ${outcome.deleted} live or archived cop${outcome.deleted === 1 ? 'y' : 'ies'}, ${outcome.unitsRemoved} index unit(s). Logged (without its text).`
            : `Forgot ${outcome.path}${shownText(outcome)}: moved to ${outcome.archive}, out of the index.\nBring it back with: engram restore ${JSON.stringify(outcome.archive && outcome.path.includes('#') ? `${outcome.archive}#${outcome.path.split('#')[1]}` : outcome.path)}${userFlag(user)}`
        return { data: outcome, human }
      },
      { reindexOnOpen: false },
    )
  },
}
