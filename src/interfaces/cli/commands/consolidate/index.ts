/**
 * `engram consolidate daily|monthly [--dry-run]`: consolidation now rather than at the day's or the
 * month's first `maintain`. `daily` (consolidation/daily-consolidation.ts): legacy migration of
 * frontmatter and today's low-activity marks. `monthly` (consolidation/monthly-forgetting.ts):
 * active forgetting; dry, it lists what would be forgotten, what is low-activity (and when it would
 * go), and how many memories are protected or active.
 */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { DailyConsolidationRun } from '../../../../memory/consolidation/daily-consolidation.ts'
import type { ForgettingRun } from '../../../../memory/consolidation/monthly-forgetting.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

const PERIODS = ['daily', 'monthly'] as const

function renderDaily(run: DailyConsolidationRun, dryRun: boolean): string {
  const lines = [`${dryRun ? 'would migrate' : 'migrated'} ${run.migrated.length} file(s) to the seed's frontmatter${run.migrated.length > 0 ? ':' : ''}`]
  for (const item of run.migrated) lines.push(`  ${item.path} — ${item.added.join(', ')}`)
  lines.push(`low-activity ${run.lowActivity.length}${run.lowActivity.length > 0 ? ' (forgotten on the day shown unless recalled before):' : ''}`)
  for (const item of run.lowActivity) lines.push(`  ${item.path} — ${item.why}; ${item.forgetOn}`)
  return lines.join('\n')
}

function render(run: ForgettingRun, dryRun: boolean): string {
  const lines: string[] = []
  const verb = dryRun ? 'would forget' : 'forgot'
  lines.push(`${verb} ${run.forgotten.length}: ${run.forgotten.length === 0 ? 'nothing stayed low-activity through the grace period' : ''}`.trimEnd())
  for (const item of run.forgotten) lines.push(`  ${item.path} — ${item.why}${item.archive ? ` → ${item.archive} (engram restore ${JSON.stringify(item.archive)})` : ''}`)
  lines.push(`low-activity ${run.lowActivity.length}${run.lowActivity.length > 0 ? ' (forgotten on the day shown unless recalled before):' : ''}`)
  for (const item of run.lowActivity) lines.push(`  ${item.path} — ${item.why}; ${item.forgetOn}`)
  lines.push(`protected ${run.protected}, active ${run.active}`)
  for (const item of run.failed) lines.push(`could not archive ${item.path}: ${item.error}`)
  return lines.join('\n')
}

export const consolidateCommand: Command = {
  path: ['consolidate'],
  summary: 'Consolidate now: daily = frontmatter migration and low-activity marks; monthly = active forgetting (low-activity knowledge and procedures to archive/forgotten/, restorable); --dry-run shows what it would do',
  usage: 'consolidate daily|monthly [--dry-run]',
  options: {
    'dry-run': { type: 'boolean', description: 'say what would be forgotten, change nothing' },
  },
  async run(context) {
    const period = context.args[0]
    if (!PERIODS.includes(period as (typeof PERIODS)[number])) {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: period === undefined ? 'Say which consolidation to run.' : `There is no ${JSON.stringify(period)} consolidation.`, fix: 'Run engram consolidate daily or engram consolidate monthly (add --dry-run to see what it would do).' })
    }
    const dryRun = Boolean(context.options['dry-run'])
    return withMind(context, async (mind) => {
      if (period === 'daily') {
        const run = await mind.consolidate('daily', { dryRun })
        return { data: { period, dryRun, ...run }, human: renderDaily(run, dryRun) }
      }
      const run = await mind.consolidate('monthly', { dryRun })
      return { data: { period, dryRun, ...run }, human: render(run, dryRun) }
    })
  },
}
