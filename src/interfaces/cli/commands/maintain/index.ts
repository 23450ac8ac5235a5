import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

export const maintainCommand: Command = {
  path: ['maintain'],
  summary: 'Run the background work that is due: session boundaries (episodes), memory-file compaction, reindex',
  options: {
    'force-compaction': { type: 'boolean', description: 'compact memory files now, even if done today' },
  },
  async run(context) {
    return withMind(context, async (mind) => {
      const report = await mind.maintain({ forceCompaction: Boolean(context.options['force-compaction']) })
      const lines = [
        `session boundaries: ${report.boundaries.length === 0 ? 'none due' : report.boundaries.map((b) => `${b.kind}${'session' in b ? ` (${b.session})` : ''}`).join(', ')}`,
        `memory-file compaction: ${report.compaction.length === 0 ? 'not due (runs once a day)' : report.compaction.map((c) => `${c.file} ${c.kind}${c.reason ? ` (${c.reason})` : ''}`).join('; ')}`,
        ...report.warnings.map((w) => `warning: ${w}`),
      ]
      return { data: report, human: lines.join('\n') }
    })
  },
}
