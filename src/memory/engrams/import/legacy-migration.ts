/**
 * Legacy migration when a home is opened (Anton's `needs_reconsolidation()` + `reconsolidate()`,
 * ../shared/seeds/001 "Reconsolidation — Legacy Migration"; decision 0050). The old layout keeps
 * memory as `context/*.md` and `learnings/*.md` (with `learnings/index.json`) beside `memory/`; the
 * seed converts them at startup, synchronously and without a model, into lessons (each file a
 * topic) and never deletes the old files. engram looks for them where its own memory roots are:
 *
 * - the agent's folder (`agents/<a>/context/`, `learnings/`) and the home itself (a home that is an
 *   old memory folder) → the agent's global memory;
 * - the open project's `.engram/` (and `.anton/`, where the seed keeps a project's memory) → its
 *   project memory.
 *
 * Safe: the old files are only read; every lesson goes through the one write path with the gate
 * bypassed, as `engram import anton` does (duplicates are counted, not written again), so a crash
 * mid-way leaves work the next open redoes without doubling anything. A record in the agent's
 * `state/legacy-migration.json` marks a root started, then done: a done root is not read again
 * (a lesson forgotten later is not brought back), a started one is redone. One process migrates
 * (a named lock; the others wait, then read the record). Unlike the seed, which migrates only into
 * an empty `memory/` (its way of running once), engram runs once by its record, so an old folder
 * found beside memory that already holds entries is migrated too.
 */
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Clock } from '../../../core/clock.ts'
import type { EngramScope } from '../../../core/engram.ts'
import { describeError, EngramError, ErrorCode } from '../../../core/errors.ts'
import type { Logger } from '../../../core/logger.ts'
import type { ActivityLog, Locks } from '../../../storage/contracts.ts'
import { writeFileAtomic } from '../../../storage/atomic-write.ts'
import type { HomeLayout } from '../../../storage/home-layout.ts'
import type { EngramEncoder } from '../encode.ts'
import { importLegacyFolders } from './anton.ts'
import { filesIn } from './import-files.ts'
import { legacyRecordPath, readLegacyRecord } from './legacy-migration-record.ts'
import { type ImportReport, newImportReport } from './import-report.ts'

const LEGACY_FOLDERS = ['context', 'learnings'] as const

export interface LegacyMigrationDeps {
  layout: HomeLayout
  locks: Locks
  clock: Clock
  encoder: EngramEncoder
  /** The agent's own log: each migration is recorded there (the agent's memory is what it wrote). */
  activity: ActivityLog
}

/** One old-layout folder migrated by this open. */
export interface LegacyMigration {
  /** The folder holding `context/` and `learnings/` (absolute). */
  root: string
  scope: EngramScope
  /** Lessons written, and lessons that were already there (a redone migration). */
  lessons: number
  duplicates: number
  /** Files and lines that could not be read (left as they are). */
  problems: ImportReport['problems']
}

/** The old-layout roots of this layout, each with the scope its lessons go to. */
function legacyRoots(layout: HomeLayout): Array<{ root: string; scope: EngramScope }> {
  const roots: Array<{ root: string; scope: EngramScope }> = [
    { root: layout.agentDir, scope: 'global' },
    { root: layout.home, scope: 'global' },
  ]
  if (layout.projectMemoryDir) {
    const engramDir = dirname(layout.projectMemoryDir)
    // The project's own folder, and the seed's: Anton keeps a project's memory in `<project>/.anton/`.
    roots.push({ root: engramDir, scope: 'project' }, { root: join(dirname(engramDir), '.anton'), scope: 'project' })
  }
  return roots
}

/** Whether `root` holds a legacy folder with markdown files (two directory reads; what every open costs). */
async function hasLegacyFiles(root: string): Promise<boolean> {
  for (const folder of LEGACY_FOLDERS) if ((await filesIn(join(root, folder), '.md')).length > 0) return true
  return false
}

/**
 * Migrates every old-layout root of the home not migrated yet (see the file comment); returns what
 * this call migrated (empty when there was nothing, or another process did it).
 */
async function migrateLegacyLayout(deps: LegacyMigrationDeps): Promise<LegacyMigration[]> {
  const found: Array<{ root: string; scope: EngramScope }> = []
  for (const candidate of legacyRoots(deps.layout)) if (await hasLegacyFiles(candidate.root)) found.push(candidate)
  if (found.length === 0) return []
  const recordPath = legacyRecordPath(deps.layout)
  const known = await readLegacyRecord(deps.layout)
  if (found.every((candidate) => known[candidate.root]?.status === 'done')) return []
  const outcome = await deps.locks.withLock(
    `legacy-migration:${deps.layout.agent}`,
    async () => {
      const migrated: LegacyMigration[] = []
      await mkdir(deps.layout.stateDir, { recursive: true })
      for (const { root, scope } of found) {
        const record = await readLegacyRecord(deps.layout)
        if (record[root]?.status === 'done') continue
        await writeFileAtomic(recordPath, `${JSON.stringify({ ...record, [root]: { status: 'started', at: deps.clock.now().toISOString() } }, null, 2)}\n`)
        const report = newImportReport('anton', root)
        await importLegacyFolders(root, { encoder: deps.encoder }, scope, report)
        const counts = Object.values(report.counts)
        const lessons = counts.reduce((sum, count) => sum + count.imported, 0)
        const duplicates = counts.reduce((sum, count) => sum + count.duplicates + count.conflicts, 0)
        const at = deps.clock.now().toISOString()
        await writeFileAtomic(recordPath, `${JSON.stringify({ ...(await readLegacyRecord(deps.layout)), [root]: { status: 'done', at, lessons, duplicates } }, null, 2)}\n`)
        const from = LEGACY_FOLDERS.map((folder) => join(root, folder)).join(', ')
        const summary = `legacy migration: ${lessons} lesson${lessons === 1 ? '' : 's'} from ${from} into ${scope} memory (${duplicates} already there; the old files are kept)`
        await deps.activity.append({ ts: at, type: 'memory_write', summary, meta: { action: 'legacy-migration', root, scope, lessons, duplicates, problems: report.problems.length } })
        migrated.push({ root, scope, lessons, duplicates, problems: report.problems })
      }
      return migrated
    },
    { wait: true, timeoutMs: 120_000 },
  )
  if (outcome.kind === 'done') return outcome.value
  throw new EngramError({
    code: ErrorCode.lockBusy,
    category: 'system',
    message: 'Another process has been migrating the legacy context/ and learnings/ folders of this home for more than two minutes.',
    fix: 'wait for it to finish; the next open migrates whatever is left (nothing is written twice)',
  })
}

/**
 * What `createMind` runs as the home opens: the migration, reported in engram's log (info, with
 * each problem a warning) and in the agent's activity; a failure is a warning and the home opens as
 * it is — the next open tries again.
 */
export async function migrateLegacyOnOpen(deps: LegacyMigrationDeps, logger: Logger, warn: (message: string) => void): Promise<LegacyMigration[]> {
  try {
    const migrated = await migrateLegacyLayout(deps)
    for (const item of migrated) {
      logger.info({ root: item.root, scope: item.scope, lessons: item.lessons, duplicates: item.duplicates }, `legacy layout migrated: ${item.lessons} lessons from ${item.root} (context/, learnings/) into ${item.scope} memory; the old files are kept`)
      for (const problem of item.problems) warn(`legacy migration of ${item.root}: ${problem.file}${problem.line ? `:${problem.line}` : ''}: ${problem.reason}`)
    }
    return migrated
  } catch (error) {
    warn(`the legacy context/ and learnings/ folders could not be migrated (tried again on the next open): ${describeError(error)}`)
    return []
  }
}
