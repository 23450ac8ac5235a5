import { resolve } from 'node:path'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { importAnimaWorks } from '../../../../memory/engrams/import/animaworks.ts'
import { importAnton } from '../../../../memory/engrams/import/anton.ts'
import { describeImport, type ImportReport } from '../../../../memory/engrams/import/import-report.ts'
import type { Command } from '../../command.ts'
import { withDeclarativeMemory } from '../memory/open-declarative-memory.ts'

export const importCommand: Command = {
  path: ['import'],
  summary: 'Import an Anton or AnimaWorks memory folder (the source is only read; re-import skips duplicates)',
  usage: 'engram import anton|animaworks DIR [--scope global|project]',
  options: {
    scope: { type: 'string', description: 'anton: where rules and lessons go, global (default) or project', valueName: 'SCOPE' },
  },
  async run(context) {
    const [format, dir] = context.args
    if ((format !== 'anton' && format !== 'animaworks') || !dir) {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'import needs a format (anton or animaworks) and a folder.', fix: 'engram import anton ~/.anton   or   engram import animaworks ~/.animaworks/animas/NAME' })
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
