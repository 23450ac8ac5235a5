/**
 * Daily consolidation as queued work (DESIGN §5; the seed's `daily_consolidate()`), keyed by the
 * day so that it runs once a day whichever process's `maintain()` looks first. What runs today,
 * offline, needing no model:
 *
 * - **Legacy migration**: knowledge and procedure files written without frontmatter (by hand, or
 *   imported) get the seed's — dates from the file, `version: 1`, `confidence: 0.5` (nothing
 *   validated it), `auto_consolidated` / `auto_distilled: false`, a procedure's zero counts and its
 *   description from its title — above their text, which is kept as it was. A file with a
 *   frontmatter of its own is left as written (its author chose its fields; readers take the
 *   defaults for the others), and so is one whose frontmatter cannot be read (decision 0025), a
 *   link, or a file whose bytes would not come back exactly (a byte-order mark, bytes that are not
 *   UTF-8). The old file is kept in `archive/versions/` by the one write path. On a backend whose
 *   memory is rows the document's text is the row's, so the same migration applies to what the store holds.
 * - **Synaptic downscaling**: which memories are low-activity today and when they would be
 *   forgotten (forgetting-policy.ts), written into each one's frontmatter as the seed marks it —
 *   `activity_level: low` and `low_activity_since: <day>` — and taken off again when the memory
 *   was used since. Only a change is written (through the one write path, the old version kept),
 *   and never the dates the verdict reads: a document without dates of its own gets
 *   `updated_at` from its file, so the mark's write does not make it look fresh. The weekly run
 *   reads the mark (low-activity merge); monthly forgetting recomputes the verdict.
 *
 * - **The model's steps** (knowledge-consolidation.ts): procedure distillation, knowledge
 *   extraction, validation, reconsolidation and contradictions over the episodes not consolidated
 *   yet. Without a model they are reported pending, with the reason, and done by a later run that
 *   has one, over the backlog window.
 */
import { lstat, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import type { Frontmatter } from '../../core/memory-doc.ts'
import { type ProgressOptions, startPhase } from '../../core/progress.ts'
import { describeError } from '../../core/errors.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { Backend } from '../../storage/contracts.ts'
import type { HomeLayout } from '../../storage/home-layout.ts'
import type { JobHandler } from '../lifecycle/job-runner.ts'
import { type ForgettingVerdict, LOW_ACTIVITY_FIELDS } from './forgetting-policy.ts'
import { reviewDocument } from './monthly-forgetting.ts'
import { oneConsolidationAtATime } from './one-at-a-time.ts'
import { everyOwnedDocument, type OwnedDocument } from './owned-documents.ts'
import { type ConsolidationSettings, type KnowledgeConsolidationRun, runKnowledgeConsolidation } from './knowledge-consolidation.ts'

export { DAILY_CONSOLIDATION_JOB, dailyConsolidationJob } from './schedule.ts'

/** Larger files are left for a person (a document pasted whole is not a memory to annotate). */
const MAX_MIGRATED_BYTES = 1_000_000

export interface DailyConsolidationDeps {
  backend: Backend
  layout: HomeLayout
  clock: Clock
  indexed(): Promise<void>
  agent: string
  llm: Llm
  settings: ConsolidationSettings
}

export interface Migrated {
  path: string
  /** The fields it was given. */
  added: string[]
}

/** The seed's frontmatter fields a document of `kind` lacks, with the values migration gives them. */
export function missingFrontmatter(kind: 'knowledge' | 'procedure', frontmatter: Frontmatter, body: string, modifiedAt: string): Frontmatter {
  const defaults: Frontmatter =
    kind === 'knowledge'
      ? { created_at: modifiedAt, updated_at: modifiedAt, source_episodes: 0, confidence: 0.5, auto_consolidated: false, version: 1 }
      : {
          description: titleOf(body),
          confidence: 0.5,
          success_count: 0,
          failure_count: 0,
          version: 1,
          created_at: modifiedAt,
          updated_at: modifiedAt,
          auto_distilled: false,
          protected: false,
        }
  const missing: Frontmatter = {}
  for (const [key, value] of Object.entries(defaults)) if (!(key in frontmatter) && value !== undefined) missing[key] = value
  return missing
}

/** A procedure's description from its first heading or first line, cut to 200 characters. */
function titleOf(body: string): string | undefined {
  const line = body.split('\n').find((candidate) => candidate.trim() !== '')
  if (line === undefined) return undefined
  const text = line.replace(/^#+\s*/, '').trim()
  return text === '' ? undefined : text.slice(0, 200)
}

/** Gives a document without frontmatter the seed's, above its text (see the module comment); what it added, else undefined. */
async function migrateDocument(deps: { backend: Backend; layout: HomeLayout }, entry: OwnedDocument, dryRun: boolean, at: string): Promise<Migrated | undefined> {
  const { doc, ref, docKind } = entry
  // Kept as they are: a file whose frontmatter cannot be read, and one with a block of its own
  // (rewriting an author's block could reword its lines).
  if (entry.unreadable || Object.keys(doc.frontmatter).length > 0) return undefined
  if (deps.backend.capabilities.memory === 'files') {
    // Only a regular file whose text the store reads back byte for byte (no byte-order mark, no bytes
    // that are not UTF-8): the block goes above it, the text stays exactly as it was.
    const absolute = join(deps.layout.home, ...doc.path.split('/'))
    const info = await lstat(absolute).catch(() => undefined)
    if (!info?.isFile() || info.size > MAX_MIGRATED_BYTES) return undefined
    if (!(await readFile(absolute)).equals(Buffer.from(doc.body, 'utf8'))) return undefined
  } else if (Buffer.byteLength(doc.body, 'utf8') > MAX_MIGRATED_BYTES) {
    // On a row backend the body the store returns is the document's text itself: nothing to compare with a file.
    return undefined
  }
  const missing = missingFrontmatter(entry.judgedAs, doc.frontmatter, doc.body, ref.modifiedAt)
  const added = Object.keys(missing)
  if (added.length === 0) return undefined
  if (!dryRun) await entry.documents.write(docKind, ref.slug, missing, doc.body, { reason: `legacy migration: added ${added.join(', ')}`, at })
  return { path: entry.path, added }
}

/**
 * Writes the low-activity mark of `verdict` into the document's frontmatter, or takes it off a
 * document in use again; what changed, else undefined (see the module comment).
 */
async function markActivity(deps: { backend: Backend; layout: HomeLayout }, entry: OwnedDocument, verdict: ForgettingVerdict, migrated: boolean, dryRun: boolean, at: string): Promise<'marked' | 'cleared' | undefined> {
  if (entry.unreadable) return undefined
  if (deps.backend.capabilities.memory === 'files') {
    // As migration: only a regular file (never through a link), and not one pasted whole.
    const info = await lstat(join(deps.layout.home, ...entry.doc.path.split('/'))).catch(() => undefined)
    if (!info?.isFile() || info.size > MAX_MIGRATED_BYTES) return undefined
  }
  const doc = migrated && !dryRun ? ((await entry.documents.read(entry.docKind, entry.ref.slug)) ?? entry.doc) : entry.doc
  const fm = doc.frontmatter
  const { level, since } = LOW_ACTIVITY_FIELDS
  const low = verdict.state === 'low-activity' || verdict.state === 'forget'
  if (low) {
    if (fm[level] === 'low' && fm[since] === verdict.since) return undefined
    const dated = fm.updated_at !== undefined || fm.created_at !== undefined ? {} : { updated_at: entry.ref.modifiedAt }
    if (!dryRun) await entry.documents.write(entry.docKind, entry.ref.slug, { ...fm, ...dated, [level]: 'low', [since]: verdict.since }, doc.body, { reason: `downscaling: low-activity since ${verdict.since} (${verdict.why})`, at })
    return 'marked'
  }
  if (fm[level] === undefined && fm[since] === undefined) return undefined
  const { [level]: _level, [since]: _since, ...rest } = fm
  if (!dryRun) await entry.documents.write(entry.docKind, entry.ref.slug, rest, doc.body, { reason: `downscaling: in use again (${verdict.why})`, at })
  return 'cleared'
}

export interface DailyConsolidationRun {
  migrated: Migrated[]
  /** Low-activity today (downscaling), with the day each would be forgotten. */
  lowActivity: Array<{ path: string; why: string; forgetOn: string }>
  /** Memories whose low-activity mark this run wrote (`marked`) or took off (`cleared`), by path. */
  marks: { marked: string[]; cleared: string[] }
  /** The model's steps: what was learned, distilled, reconsolidated, superseded; what is pending and why. */
  knowledge: KnowledgeConsolidationRun
}

/** One day's consolidation (see the module comment); `includeToday` also takes today's episodes. */
export async function runDailyConsolidation(deps: DailyConsolidationDeps, options: { dryRun?: boolean; includeToday?: boolean } & ProgressOptions = {}): Promise<DailyConsolidationRun> {
  return oneConsolidationAtATime(deps.backend, deps.agent, () => dailyRun(deps, options))
}

async function dailyRun(deps: DailyConsolidationDeps, options: { dryRun?: boolean; includeToday?: boolean } & ProgressOptions): Promise<DailyConsolidationRun> {
  await deps.indexed()
  const now = deps.clock.now()
  // The model's steps first: a failure (thrown, the job fails) leaves every file as it was.
  const knowledge = await runKnowledgeConsolidation(deps, options)
  const run: DailyConsolidationRun = { migrated: [], lowActivity: [], marks: { marked: [], cleared: [] }, knowledge }
  // One pass, each document read once. Migration only adds the dates the verdict would take from
  // the file anyway, so judging what was read is judging what was written. Each write is one
  // document's and carries the run's instant: a run killed between saving a version and
  // replacing the file is finished by the next without saving the version twice, and a change
  // already written is not a change any more. So it may also stop between two documents (Ctrl-C):
  // the next run finds the done ones done.
  const reviewing = startPhase(options, 'reviewing documents')
  for await (const entry of everyOwnedDocument(deps)) {
    await reviewing.checkpoint()
    const migrated = await migrateDocument(deps, entry, options.dryRun === true, now.toISOString())
    if (migrated) run.migrated.push(migrated)
    const { verdict, path } = await reviewDocument(deps.backend, entry, now)
    if (verdict.state === 'low-activity') run.lowActivity.push({ path, why: verdict.why, forgetOn: verdict.forgetOn })
    const mark = await markActivity(deps, entry, verdict, migrated !== undefined, options.dryRun === true, now.toISOString())
    if (mark) run.marks[mark].push(path)
    reviewing.step()
  }
  return run
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1
  return counts
}

/**
 * The job handler. Its result, kept in the agent's job rows, holds counts only: a user's memory
 * paths name what they wrote, and `engram forget --user --purge` does not look into job rows.
 */
export function dailyConsolidationHandler(deps: DailyConsolidationDeps): JobHandler {
  return async () => {
    let run: DailyConsolidationRun
    try {
      run = await runDailyConsolidation(deps)
    } catch (error) {
      return { status: 'retry', error: `daily consolidation: ${describeError(error)}; nothing was written for the day it failed on` }
    }
    const k = run.knowledge
    const result = {
      migrated: run.migrated.length,
      lowActivity: run.lowActivity.length,
      marked: run.marks.marked.length,
      cleared: run.marks.cleared.length,
      sections: k.sections,
      learned: k.learned.length,
      rejected: k.rejected.length,
      // Which path of validation decided, counted (the paths themselves are in the user's files and log).
      validation: countBy([...k.learned.map((item) => item.validation), ...k.rejected.map((item) => item.validation)]),
      distilled: k.distilled.length,
      reconsolidated: k.reconsolidated.length,
      contradictions: k.contradictions.length,
      ...(k.model ? { model: k.model } : {}),
      calls: k.calls,
      tokens: k.tokens,
      pending: k.pending.map((item) => `${item.step}: ${item.reason} (${item.waiting} waiting)`),
    }
    const changed = run.migrated.length + run.marks.marked.length + run.marks.cleared.length + k.learned.length + k.distilled.length + k.reconsolidated.length + k.contradictions.length
    if (changed === 0) return { status: 'skipped', reason: k.pending[0] ? `${k.pending[0].step} pending: ${k.pending[0].reason}` : `nothing to consolidate; ${run.lowActivity.length} low-activity`, result }
    return { status: 'done', result }
  }
}
