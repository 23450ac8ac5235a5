/**
 * File-level helpers shared by the importers. They only ever read the source folder; nothing at
 * the source is moved, changed or deleted.
 */
import { mkdir, readdir, readFile, stat } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import type { ActivityEvent } from '../../../core/activity.ts'
import { isActivityType } from '../../../core/activity.ts'
import type { Frontmatter } from '../../../core/memory-doc.ts'
import type { DocKind } from '../../../core/memory-doc.ts'
import { parseFrontmatter } from '../../../core/frontmatter.ts'
import type { ActivityLog, DocumentStore } from '../../../storage/contracts.ts'
import { writeFileAtomic } from '../../../storage/atomic-write.ts'
import { countOf, type ImportReport } from './import-report.ts'

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false
  }
}

export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Regular files directly in `dir` whose name ends with `suffix`, sorted; [] when `dir` is missing. */
export async function filesIn(dir: string, suffix: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true })
    return entries
      .filter((entry) => entry.isFile() && entry.name.endsWith(suffix) && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** Subfolders of `dir`, sorted; [] when it is missing. */
export async function foldersIn(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true })
    return entries
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/**
 * Copies a folder tree file by file, as it is. A file already at the destination with the same
 * bytes counts as a duplicate; one with different bytes is left alone and counted as a conflict.
 */
export async function copyTree(source: string, destination: string, report: ImportReport, kind: string, root: string): Promise<void> {
  const count = countOf(report, kind)
  const entries = await readdir(source, { withFileTypes: true })
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const from = join(source, entry.name)
    const to = join(destination, entry.name)
    if (entry.isDirectory()) {
      await copyTree(from, to, report, kind, root)
    } else if (entry.isFile()) {
      const bytes = await readFile(from)
      let existing: Buffer | undefined
      try {
        existing = await readFile(to)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
      if (existing === undefined) {
        await mkdir(dirname(to), { recursive: true })
        await writeFileAtomic(to, bytes)
        count.imported++
      } else if (existing.equals(bytes)) {
        count.duplicates++
      } else {
        count.conflicts++
        report.problems.push({ file: relative(root, from), reason: `kept the existing ${to}; it differs from this file` })
      }
    } else {
      report.problems.push({ file: relative(root, from), reason: 'not a regular file or folder; skipped' })
    }
  }
}

function eventKey(event: ActivityEvent): string {
  // Tool contents are cut when logged, so only a prefix identifies an event across imports.
  return JSON.stringify([event.ts, event.type, event.session ?? '', event.tool ?? '', (event.content ?? '').slice(0, 200), (event.summary ?? '').slice(0, 200)])
}

/** Appends events not already in the log (same time, type, session, tool and content). */
export async function importActivityEvents(activity: ActivityLog, events: ActivityEvent[], report: ImportReport, kind: string): Promise<void> {
  const count = countOf(report, kind)
  if (events.length === 0) return
  const existing = new Set((await activity.read()).map(eventKey))
  for (const event of events) {
    const key = eventKey(event)
    if (existing.has(key)) {
      count.duplicates++
      continue
    }
    existing.add(key)
    await activity.append(event)
    count.imported++
  }
}

/** Reads an AnimaWorks-style activity JSONL file (the seed's fields); bad lines become problems. */
export function parseActivityLines(text: string, file: string, report: ImportReport): ActivityEvent[] {
  const events: ActivityEvent[] = []
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return
    try {
      const value = JSON.parse(line) as Record<string, unknown>
      if (typeof value.ts !== 'string' || !isActivityType(value.type)) {
        report.problems.push({ file, line: index + 1, reason: 'not an activity event (needs ts and a known type)' })
        return
      }
      events.push(value as unknown as ActivityEvent)
    } catch {
      report.problems.push({ file, line: index + 1, reason: 'not JSON' })
    }
  })
  return events
}

/**
 * Imports one markdown document with its frontmatter kept. An existing document of that slug
 * with the same frontmatter and body is a duplicate; a different one is kept (conflict).
 */
export async function importDocument(documents: DocumentStore, kind: DocKind, slug: string, text: string, report: ImportReport, countKind: string, file: string): Promise<void> {
  const count = countOf(report, countKind)
  const parsed = parseFrontmatter(text)
  if (parsed.problem) report.problems.push({ file, line: parsed.problem.line, reason: `frontmatter unreadable (${parsed.problem.reason}); imported with the whole text as body` })
  const frontmatter: Frontmatter = parsed.frontmatter
  const existing = await documents.read(kind, slug)
  if (existing) {
    const same = existing.body.trimEnd() === parsed.body.trimEnd() && JSON.stringify(existing.frontmatter) === JSON.stringify(frontmatter)
    if (same) count.duplicates++
    else {
      count.conflicts++
      report.problems.push({ file, reason: `kept the existing ${existing.path}; it differs from this file` })
    }
    return
  }
  await documents.write(kind, slug, frontmatter, parsed.body, { reason: 'import' })
  count.imported++
}
