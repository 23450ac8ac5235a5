/**
 * `engram consolidate daily|weekly|monthly [--dry-run]`: consolidation now rather than at the day's,
 * week's or month's first `maintain`. `daily` (consolidation/daily-consolidation.ts): legacy
 * migration of frontmatter, the model's steps over the episodes not consolidated yet (today's
 * included) and today's low-activity marks (written into the frontmatter). `weekly`
 * (weekly-integration.ts): duplicate merge, the low-activity merge (with a model), episode
 * compression, pattern distillation, the full contradiction scan. `monthly` (consolidation/monthly-forgetting.ts):
 * active forgetting; dry, it lists what would be forgotten, what is low-activity (and when it would
 * go), and how many memories are protected or active.
 */
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { DailyConsolidationRun } from '../../../../memory/consolidation/daily-consolidation.ts'
import type { PendingStep } from '../../../../memory/consolidation/knowledge-consolidation.ts'
import type { ForgettingRun } from '../../../../memory/consolidation/monthly-forgetting.ts'
import type { WeeklyIntegrationRun } from '../../../../memory/consolidation/weekly-integration.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { withProgress } from '../../progress.ts'

const PERIODS = ['daily', 'weekly', 'monthly'] as const

function pendingLines(pending: readonly PendingStep[]): string[] {
  return pending.map((item) => `pending: ${item.step} — ${item.reason} (${item.waiting} waiting)`)
}

function section<T>(lines: string[], title: string, items: readonly T[], line: (item: T) => string): void {
  lines.push(`${title} ${items.length}${items.length > 0 ? ':' : ''}`)
  for (const item of items) lines.push(`  ${line(item)}`)
}

function renderDaily(run: DailyConsolidationRun, dryRun: boolean): string {
  const lines = [`${dryRun ? 'would migrate' : 'migrated'} ${run.migrated.length} file(s) to the seed's frontmatter${run.migrated.length > 0 ? ':' : ''}`]
  for (const item of run.migrated) lines.push(`  ${item.path} — ${item.added.join(', ')}`)
  const k = run.knowledge
  lines.push(`episode sections consolidated ${k.sections}${k.model ? ` (model ${k.model}, ${k.calls} calls, ${k.tokens} tokens)` : ''}`)
  section(lines, dryRun ? 'would learn' : 'learned', k.learned, (item) => `${item.path} — ${item.title} (confidence ${item.confidence}, validation ${item.validation}; from ${item.sources.join(', ')})`)
  section(lines, 'rejected', k.rejected, (item) => `${item.title} — ${item.why} (${item.validation})`)
  section(lines, 'already known', k.known, (item) => `${item.title} — ${item.path}`)
  section(lines, dryRun ? 'would distil' : 'distilled', k.distilled, (item) => `${item.path} — ${item.description}`)
  section(lines, 'not distilled (a similar procedure exists)', k.similarProcedures, (item) => `${item.description} — ${item.path} (${item.similarity})`)
  section(lines, dryRun ? 'would reconsolidate' : 'reconsolidated', k.reconsolidated, (item) => `${item.path} → version ${item.version}: ${item.why}`)
  section(lines, 'contradictions', k.contradictions, (item) => `${item.strategy}: ${item.old} → ${item.new}: ${item.why}`)
  lines.push(...pendingLines(k.pending))
  lines.push(`low-activity ${run.lowActivity.length}${run.lowActivity.length > 0 ? ' (forgotten on the day shown unless recalled before):' : ''}`)
  for (const item of run.lowActivity) lines.push(`  ${item.path} — ${item.why}; ${item.forgetOn}`)
  section(lines, dryRun ? 'would mark low-activity (activity_level: low)' : 'marked low-activity (activity_level: low)', run.marks.marked, (path) => path)
  section(lines, dryRun ? 'would take the mark off (used again)' : 'mark taken off (used again)', run.marks.cleared, (path) => path)
  return lines.join('\n')
}

function renderWeekly(run: WeeklyIntegrationRun, dryRun: boolean): string {
  const lines: string[] = []
  if (run.model) lines.push(`model ${run.model}: ${run.calls} calls, ${run.tokens} tokens`)
  section(lines, dryRun ? 'would merge' : 'merged', run.merged, (item) => `${item.merged.join(', ')} → ${item.survivor} (${item.method}; engram restore brings each back from archive/merged/)`)
  section(lines, dryRun ? 'would compress' : 'compressed', run.compressed, (item) => `${item.path} (${item.before} → ${item.after} bytes; the full text stays in archive/versions/)`)
  section(lines, dryRun ? 'would distil' : 'distilled', run.distilled, (item) => `${item.path} — ${item.description} (seen in ${item.sessions} sessions)`)
  section(lines, 'contradictions', run.contradictions, (item) => `${item.strategy}: ${item.old} → ${item.new}: ${item.why}`)
  lines.push(...pendingLines(run.pending))
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
  if (run.versions.moved > 0) {
    lines.push(`${dryRun ? 'would move' : 'moved'} ${run.versions.moved} procedure version(s) beyond the newest five to archive/forgotten/versions/:`)
    for (const item of run.versions.procedures) lines.push(`  ${item.path} — kept ${item.kept}, moved ${item.moved.length}`)
  }
  for (const item of run.versions.problems) lines.push(`could not keep the versions of ${item.path}: ${item.error}`)
  return lines.join('\n')
}

export const consolidateCommand: Command = {
  path: ['consolidate'],
  usage: 'daily|weekly|monthly [--dry-run]',
  examples: ['engram consolidate daily', 'engram consolidate weekly --dry-run'],
  options: {
    'dry-run': { type: 'boolean', description: 'say what would change, change nothing (daily and weekly still ask the model, when one is configured)' },
  },
  async run(context) {
    const period = context.args[0]
    if (!PERIODS.includes(period as (typeof PERIODS)[number])) {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: period === undefined ? 'Say which consolidation to run.' : `There is no ${JSON.stringify(period)} consolidation.`, fix: 'Run engram consolidate daily, weekly or monthly (add --dry-run to see what it would do).' })
    }
    const dryRun = Boolean(context.options['dry-run'])
    // Each document's change is written with the run's instant (decision 0053): a run stopped between two is finished by the next.
    const resume = `What was consolidated so far is kept. Run \`engram consolidate ${period}${dryRun ? ' --dry-run' : ''}\` again to finish: what is done is not done twice.`
    // The reindex of hand edits that opening a mind does, done first here where its progress shows.
    return withMind(
      context,
      (mind) =>
        withProgress(context, { command: 'consolidate', resume }, async (progress) => {
          await mind.reindex(progress)
          // Daily reports each document it reviews; weekly and monthly say when they start.
          progress.onProgress?.({ phase: `${period} consolidation`, done: 0 })
          if (period === 'daily') {
            const run = await mind.consolidate('daily', { dryRun, ...progress })
            return { data: { period, dryRun, ...run }, human: renderDaily(run, dryRun) }
          }
          if (period === 'weekly') {
            const run = await mind.consolidate('weekly', { dryRun })
            return { data: { period, dryRun, ...run }, human: renderWeekly(run, dryRun) }
          }
          const run = await mind.consolidate('monthly', { dryRun })
          return { data: { period, dryRun, ...run }, human: render(run, dryRun) }
        }),
      { reindexOnOpen: false },
    )
  },
}
