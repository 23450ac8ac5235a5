import { resolve } from 'node:path'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { importAnimaWorks } from '../../../../memory/engrams/import/animaworks.ts'
import { importAnton } from '../../../../memory/engrams/import/anton.ts'
import { describeImport, type ImportReport } from '../../../../memory/engrams/import/import-report.ts'
import { importMemory, type MemoryImportReport } from '../../../../memory/portability/import-memory.ts'
import type { Command } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { withProgress } from '../../progress.ts'
import { withDeclarativeMemory } from '../memory/open-declarative-memory.ts'

function describeMemoryImport(report: MemoryImportReport): string {
  const c = report.counts
  const lines = [
    `Imported ${report.dir} (memory of ${report.sourceAgent}): ${c.entries} entr${c.entries === 1 ? 'y' : 'ies'}, ${c.topicEntries} topic entr${c.topicEntries === 1 ? 'y' : 'ies'}, ${c.documents} document(s), ${c.skills} skill(s); ${c.unchanged} file(s) already there.`,
  ]
  if (report.problems.length > 0) lines.push(`Not imported (${report.problems.length}):`, ...report.problems.map((problem) => `  ${problem.path}${problem.line ? `:${problem.line}` : ''} — ${problem.reason}`))
  return lines.join('\n')
}

export const importCommand: Command = {
  path: ['import'],
  usage: 'engram|anton|animaworks DIR [--scope global|project]',
  examples: ['engram import engram ./memory-export', 'engram import anton ~/anton/memory --scope project'],
  home: 'creates',
  options: {
    scope: { type: 'string', description: 'anton: where rules and lessons go, global (default) or project', valueName: 'SCOPE' },
  },
  async run(context) {
    const [format, dir] = context.args
    if ((format !== 'engram' && format !== 'anton' && format !== 'animaworks') || !dir) {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: 'import needs a format (engram, anton or animaworks) and a folder.',
        fix: 'engram import engram ./memory-export   or   engram import anton ~/.anton   or   engram import animaworks ~/.animaworks/animas/NAME',
      })
    }
    if (format === 'engram') {
      const source = resolve(context.io.cwd, dir)
      // Importing twice changes nothing (what is there is not written again): a stopped import resumes by running again.
      const resume = `What was imported so far is kept. Run \`engram import engram ${/\s/.test(dir) ? JSON.stringify(dir) : dir}\` again to finish: it skips what is there already.`
      // Opened without the reindex of hand edits: the reindex after the import does it, with progress.
      return withMind(
        context,
        (mind) =>
          withProgress(context, { command: 'import', resume }, async (progress) => {
            const report = await importMemory({ backend: mind.backend, agent: mind.agent, skills: mind.skills }, source, { maxFileBytes: mind.config.values.memory.maxFileBytes, ...progress })
            // What was imported is new to the search index; bring it up to date now.
            await mind.reindex(progress)
            return { data: report, human: describeMemoryImport(report) }
          }),
        { reindexOnOpen: false },
      )
    }
    const scope = context.options.scope ?? 'global'
    if (scope !== 'global' && scope !== 'project') {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `--scope must be global or project, not "${String(scope)}".`, fix: 'Pass --scope global or --scope project (with --project DIR or ENGRAM_PROJECT).' })
    }
    const source = resolve(context.io.cwd, dir)
    return withDeclarativeMemory(context, async (memory, mind) => {
      let report: ImportReport
      if (format === 'anton') {
        const store = scope === 'project' ? memory.project : memory.global
        if (!store) {
          throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: '--scope project needs an open project.', fix: 'Pass --project DIR or set ENGRAM_PROJECT.' })
        }
        report = await importAnton({ dir: source, encoder: memory.encoder, store, scope, activity: mind.backend.activity, skillsDir: mind.layout.skillsDir })
      } else {
        report = await importAnimaWorks({ dir: source, documents: mind.backend.documents, activity: mind.backend.activity, skillsDir: mind.layout.skillsDir })
      }
      // The imported files are new to the search index; bring it up to date now.
      await mind.reindex()
      return { data: report, human: describeImport(report) }
    })
  },
}
