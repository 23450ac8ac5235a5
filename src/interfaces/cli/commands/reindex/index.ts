import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

export const reindexCommand: Command = {
  path: ['reindex'],
  examples: ['engram reindex', 'engram reindex --full'],
  options: {
    full: { type: 'boolean', description: 'rebuild every unit (and its vector), not only changed ones' },
  },
  async run(context) {
    return withMind(
      context,
      async (mind) => {
        const report = await mind.reindex({ full: Boolean(context.options.full) })
        const lines = [
          `reindexed ${report.sources} files in ${report.ms} ms: ${report.added} added, ${report.updated} updated, ${report.removed} removed, ${report.unchanged} unchanged`,
        ]
        if (report.embedError) lines.push(`vectors skipped (degraded, words still searchable): ${report.embedError}`)
        for (const p of report.problems) lines.push(p.line === 0 ? `  skipped ${p.file}, kept as it is: ${p.reason}` : `  kept unreadable line ${p.file}:${p.line} (${p.reason})`)
        return { data: report, human: lines.join('\n') }
      },
      { reindexOnOpen: false },
    )
  },
}
