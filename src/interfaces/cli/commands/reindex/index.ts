import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { withProgress } from '../../progress.ts'

export const reindexCommand: Command = {
  path: ['reindex'],
  examples: ['engram reindex', 'engram reindex --full'],
  options: {
    full: { type: 'boolean', description: 'rebuild every unit (and its vector), not only changed ones' },
  },
  async run(context) {
    const full = Boolean(context.options.full)
    // Stopped, a reindex keeps the units it wrote (each with its hash): a plain reindex writes only the rest; a full one starts over.
    const resume = full
      ? 'The units rebuilt so far are kept. Run `engram reindex --full` again to rebuild every unit (it starts over).'
      : 'The units written so far are kept. Run `engram reindex` again to finish: it writes only what is not indexed yet.'
    return withMind(
      context,
      (mind) =>
        withProgress(context, { command: 'reindex', resume }, async (progress) => {
          const report = await mind.reindex({ full, ...progress })
          const lines = [
            `reindexed ${report.sources} files in ${report.ms} ms: ${report.added} added, ${report.updated} updated, ${report.removed} removed, ${report.unchanged} unchanged`,
          ]
          if (report.embedError) lines.push(`vectors skipped (degraded, words still searchable): ${report.embedError}`)
          for (const p of report.problems) lines.push(p.line === 0 ? `  skipped ${p.file}, kept as it is: ${p.reason}` : `  kept unreadable line ${p.file}:${p.line} (${p.reason})`)
          return { data: report, human: lines.join('\n') }
        }),
      { reindexOnOpen: false },
    )
  },
}
