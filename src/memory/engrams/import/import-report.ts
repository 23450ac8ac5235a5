/**
 * What an import did, per kind of memory: how many came over, how many were already there
 * (re-import is idempotent), and how many could not be brought over because a different file of
 * the same name already exists (ours is kept, theirs stays at the source; nothing is lost).
 * Lines or files that could not be read are listed as problems, never dropped silently.
 */
import type { EncodeReport } from '../encoder.ts'

export interface ImportCount {
  imported: number
  duplicates: number
  conflicts: number
}

export interface ImportProblem {
  /** Path relative to the import folder. */
  file: string
  line?: number
  reason: string
}

export interface ImportReport {
  source: 'anton' | 'animaworks'
  dir: string
  counts: Record<string, ImportCount>
  problems: ImportProblem[]
}

export function newImportReport(source: ImportReport['source'], dir: string): ImportReport {
  return { source, dir, counts: {}, problems: [] }
}

export function countOf(report: ImportReport, kind: string): ImportCount {
  let count = report.counts[kind]
  if (!count) {
    count = { imported: 0, duplicates: 0, conflicts: 0 }
    report.counts[kind] = count
  }
  return count
}

/** Adds an encode report's outcome to the count of `kind`; refusals become problems. */
export function addEncodeOutcome(report: ImportReport, kind: string, encoded: EncodeReport, file: string): void {
  const count = countOf(report, kind)
  count.imported += encoded.saved.length
  count.duplicates += encoded.duplicates.length
  for (const { engram, reason } of encoded.rejected) report.problems.push({ file, reason: `not imported: ${reason}: ${engram.text.slice(0, 80)}` })
}

/** One line per kind, for the CLI. */
export function describeImport(report: ImportReport): string {
  const lines = [`imported from ${report.source} folder ${report.dir}:`]
  for (const [kind, count] of Object.entries(report.counts)) {
    const extra = count.conflicts > 0 ? `, ${count.conflicts} kept as they were (a different file of that name exists)` : ''
    lines.push(`  ${kind}: ${count.imported} imported, ${count.duplicates} already there${extra}`)
  }
  for (const problem of report.problems) lines.push(`  ! ${problem.file}${problem.line ? `:${problem.line}` : ''}: ${problem.reason}`)
  return lines.join('\n')
}
