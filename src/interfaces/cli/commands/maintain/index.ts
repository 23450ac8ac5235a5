import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'

export const maintainCommand: Command = {
  path: ['maintain'],
  examples: ['engram maintain', 'engram maintain --force-compaction'],
  options: {
    'force-compaction': { type: 'boolean', description: 'compact memory files now, even if done today or under the threshold' },
  },
  async run(context) {
    return withMind(context, async (mind) => {
      const report = await mind.maintain({ forceCompaction: Boolean(context.options['force-compaction']) })
      const lines = [
        `session boundaries: ${report.boundaries.length === 0 ? 'none due' : report.boundaries.map((b) => `${b.kind}${'session' in b ? ` (${b.session})` : ''}`).join(', ')}`,
        `memory-file compaction: ${report.compaction.length === 0 ? 'not due (no file over the threshold, or none changed since it was last compacted)' : report.compaction.map((c) => `${c.file} ${c.kind}${c.reason ? ` (${c.reason})` : ''}`).join('; ')}`,
        `jobs: ${report.jobs.length === 0 ? 'none due' : report.jobs.map((job) => `${job.kind}${job.session ? ` (${job.session})` : ''} ${job.status}${job.reason ? `: ${job.reason}` : ''}`).join('; ')}`,
        ...report.warnings.map((w) => `warning: ${w}`),
      ]
      return { data: report, human: lines.join('\n') }
    })
  },
}
