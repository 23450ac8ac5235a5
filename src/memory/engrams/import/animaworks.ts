/**
 * `engram import animaworks DIR`: brings an AnimaWorks anima folder (`~/.animaworks/animas/<name>`)
 * over, reading only:
 *
 * - `knowledge/*.md`, `procedures/*.md` → documents of the same kind, frontmatter kept;
 * - `episodes/<YYYY-MM-DD>.md` → episode documents (other names are reported, not guessed at);
 * - `activity_log/<date>.jsonl` → the unified activity log (`activity/`), fields as they are;
 * - `skills/` → copied as is into the agent's `skills/`;
 * - `shared/users/*.md` (in DIR, or in the AnimaWorks root two levels up) → user profiles.
 *
 * Idempotent: a document or event already there is a duplicate; a different document of the same
 * name is kept as ours and reported (the source keeps its copy).
 */
import { join } from 'node:path'
import type { DocKind } from '../../../core/memory-doc.ts'
import type { ActivityLog, DocumentStore } from '../../../storage/contracts.ts'
import { assertSafeSlug } from '../../../storage/document-paths.ts'
import { copyTree, filesIn, importActivityEvents, importDocument, isDirectory, parseActivityLines, readTextIfExists } from './import-files.ts'
import { type ImportReport, newImportReport } from './import-report.ts'

export interface AnimaWorksImportOptions {
  /** The anima folder (with knowledge/, procedures/, episodes/, …). */
  dir: string
  documents: DocumentStore
  activity: ActivityLog
  /** The agent's `skills/` folder. */
  skillsDir: string
}

const DATE_SLUG = /^\d{4}-\d{2}-\d{2}$/

async function importFolder(dir: string, folder: string, kind: DocKind, countKind: string, options: AnimaWorksImportOptions, report: ImportReport, accept: (slug: string) => string | undefined = () => undefined): Promise<void> {
  const path = join(dir, folder)
  for (const name of await filesIn(path, '.md')) {
    const file = `${folder}/${name}`
    const slug = name.slice(0, -3)
    const refusal = accept(slug) ?? safeSlugProblem(slug)
    if (refusal) {
      report.problems.push({ file, reason: `${refusal}; not imported` })
      continue
    }
    await importDocument(options.documents, kind, slug, (await readTextIfExists(join(path, name))) ?? '', report, countKind, file)
  }
}

function safeSlugProblem(slug: string): string | undefined {
  try {
    assertSafeSlug(slug)
    return undefined
  } catch {
    return `"${slug}" cannot be a file name here`
  }
}

/** Imports an AnimaWorks anima folder; see the file comment. The source is only read. */
export async function importAnimaWorks(options: AnimaWorksImportOptions): Promise<ImportReport> {
  const { dir } = options
  const report = newImportReport('animaworks', dir)
  await importFolder(dir, 'knowledge', 'knowledge', 'knowledge', options, report)
  await importFolder(dir, 'procedures', 'procedure', 'procedures', options, report)
  await importFolder(dir, 'episodes', 'episode', 'episodes', options, report, (slug) => (DATE_SLUG.test(slug) ? undefined : 'episode files are named by day (YYYY-MM-DD.md)'))

  for (const name of await filesIn(join(dir, 'activity_log'), '.jsonl')) {
    const file = `activity_log/${name}`
    const events = parseActivityLines((await readTextIfExists(join(dir, file))) ?? '', file, report)
    await importActivityEvents(options.activity, events, report, 'activity events')
  }

  if (await isDirectory(join(dir, 'skills'))) await copyTree(join(dir, 'skills'), options.skillsDir, report, 'skill files', dir)

  const usersHere = join(dir, 'shared', 'users')
  const usersAtRoot = join(dir, '..', '..', 'shared', 'users')
  if (await isDirectory(usersHere)) await importFolder(dir, 'shared/users', 'user', 'users', options, report)
  else if (await isDirectory(usersAtRoot)) await importFolder(join(dir, '..', '..'), 'shared/users', 'user', 'users', options, report)

  if (Object.keys(report.counts).length === 0 && report.problems.length === 0) {
    report.problems.push({ file: '.', reason: 'no knowledge/, procedures/, episodes/, activity_log/, skills/ or shared/users/ found: is this an AnimaWorks anima folder (~/.animaworks/animas/<name>)?' })
  }
  return report
}
