/**
 * Monthly forgetting as queued work (DESIGN §5 "Consolidation and forgetting"): once a month —
 * the month is the job's key, so whichever process's `maintain()` looks first queues it and the
 * others find it there — every knowledge and procedure document and every compressed episode of
 * every owner's tree is judged (forgetting-policy.ts), and those that stayed low-activity through
 * the grace period are moved to their tree's `archive/forgotten/` and out of the index, as forgetting
 * on request moves them (decision 0023): `engram restore` brings any of them back, and nothing is
 * deleted. Each act is recorded in the activity log of the memory's owner, with its reason; the
 * job's result lists them. Offline: no model is involved.
 *
 * Each owner's month is one unit (decision 0053): its moves, their records and its procedures'
 * version retention are planned in full and stored in the owner's tree before the first move, then
 * applied step by step, idempotently; a run killed anywhere is finished by the next consolidation
 * (or the next mind's first `maintain()`) and ends where an unkilled run ends.
 */
import { isoDay } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import type { MemoryDoc } from '../../core/memory-doc.ts'
import { type Owner, ownerOfUser } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { type HomeLayout, ownerNamespace, ownerTree } from '../../storage/home-layout.ts'
import type { Clock } from '../../core/clock.ts'
import { type ForgettableDocKind, forgottenDocumentEvent } from '../forgetting/forget-memory.ts'
import type { JobHandler } from '../lifecycle/job-runner.ts'
import { type ForgettingVerdict, judgeForgetting, type MemoryUse } from './forgetting-policy.ts'
import { compressEpisodeText, EPISODE_COMPRESSION_DAYS } from './episode-compression.ts'
import { oneConsolidationAtATime } from './one-at-a-time.ts'
import { everyOwnedDocument, type OwnedDocument } from './owned-documents.ts'
import { commitUnit, finishUnfinishedUnits, ownerDigest, type PlannedForgetting, stuckStep, type UnitPlan } from './unit-plan.ts'
import { retainProcedureVersions, type VersionRetentionRun } from './version-retention.ts'

export { MONTHLY_FORGETTING_JOB, monthlyForgettingJob } from './schedule.ts'
/** The job run recorded when one owner's month is done (its plan's completion). */
const MONTH_FORGOTTEN = 'consolidation-monthly-owner'

export interface ForgettingDeps {
  backend: Backend
  layout: HomeLayout
  clock: Clock
  /** Waits for index writes under way, so that none puts a forgotten unit back. */
  indexed(): Promise<void>
  reindex(): Promise<unknown>
}

/** One memory as the review judged it. */
export interface ReviewedMemory {
  /** Its memory path, as search_memory and `engram restore` name it (`users/ada/knowledge/x.md`). */
  path: string
  owner: Owner
  docKind: ForgettableDocKind
  slug: string
  /** Its index source (`agents/a/users/ada/knowledge/x.md`). */
  source: string
  use: MemoryUse
  verdict: ForgettingVerdict
}

/** How a document was used: the recalls of all its index units. */
async function useOf(backend: Backend, source: string): Promise<MemoryUse> {
  const ids = [...(await backend.index.hashes(source)).keys()]
  const units = ids.length === 0 ? [] : await backend.index.get(ids)
  let accessCount = 0
  let lastAccessAt: string | undefined
  for (const unit of units) {
    accessCount += unit.accessCount
    if (unit.lastAccessAt !== undefined && (lastAccessAt === undefined || unit.lastAccessAt > lastAccessAt)) lastAccessAt = unit.lastAccessAt
  }
  return { accessCount, lastAccessAt }
}

/**
 * Every owner's episode day files older than the compression age, judged at `now`
 * (forgetting-policy.ts: only compressed ones are candidates, counted from their day). Each read
 * once; a file whose frontmatter cannot be read is left alone (it could not have been compressed).
 */
async function* reviewEpisodes(deps: { backend: Backend; layout: HomeLayout }, now: Date): AsyncGenerator<ReviewedMemory> {
  const compressedBefore = isoDay(new Date(now.getTime() - EPISODE_COMPRESSION_DAYS * 86_400_000))
  const owners: Owner[] = ['agent', 'shared', ...(await deps.backend.users()).map((user) => ownerOfUser(user))]
  for (const owner of owners) {
    const documents = deps.backend.owned(owner).documents
    const tree = ownerTree(deps.layout, owner).rel
    // Only days old enough to have been compressed are read (the listing itself reads no file).
    const old = (await documents.slugs('episode')).filter((slug) => /^\d{4}-\d{2}-\d{2}$/.test(slug) && slug < compressedBefore)
    if (old.length === 0) continue
    const unreadable = new Set((await documents.problems(['episode'])).map((problem) => problem.file))
    for (const slug of old) {
      const doc = await documents.read('episode', slug)
      if (!doc || unreadable.has(doc.path)) continue
      const source = `${tree}/episodes/${slug}.md`
      const use = await useOf(deps.backend, source)
      const verdict = judgeForgetting({ docKind: 'episode', frontmatter: doc.frontmatter, body: doc.body, modifiedAt: `${slug}T00:00:00.000Z`, use, compressed: compressedEnough(doc) }, now)
      yield { path: `${ownerNamespace(owner)}episodes/${slug}.md`, owner, docKind: 'episode', slug, source, use, verdict }
    }
  }
}

/**
 * Whether an episode old enough to compress is as short as compression makes it: compressed by
 * the weekly run, or one the run left alone because there was nothing to cut (a short day).
 */
function compressedEnough(doc: MemoryDoc): boolean {
  if (doc.frontmatter.compressed === true) return true
  const { body, dropped } = compressEpisodeText(doc.body)
  return !dropped || Buffer.byteLength(body) >= Buffer.byteLength(doc.body)
}

/** Every knowledge and procedure document, then every compressed episode, judged at `now`. */
async function* reviewEverything(deps: { backend: Backend; layout: HomeLayout }, now: Date): AsyncGenerator<ReviewedMemory> {
  for await (const entry of everyOwnedDocument(deps)) yield await reviewDocument(deps.backend, entry, now)
  yield* reviewEpisodes(deps, now)
}

/** One document judged at `now`, from its frontmatter and the recalls of its index units. */
export async function reviewDocument(backend: Backend, entry: OwnedDocument, now: Date): Promise<ReviewedMemory> {
  const { owner, docKind, ref, doc } = entry
  const use = await useOf(backend, entry.source)
  const verdict = judgeForgetting({ docKind: entry.judgedAs, frontmatter: doc.frontmatter, body: doc.body, modifiedAt: ref.modifiedAt, use }, now)
  return { path: entry.path, owner, docKind, slug: ref.slug, source: entry.source, use, verdict }
}

export interface ForgettingRun {
  /** Moved to `archive/forgotten/`, with the archived path and why. */
  forgotten: Array<{ path: string; archive: string; why: string }>
  /** Marked low-activity: forgotten on `forgetOn` unless used before. */
  lowActivity: Array<{ path: string; why: string; forgetOn: string }>
  protected: number
  active: number
  /** Memories that could not be moved (left as they were), with the reason. */
  failed: Array<{ path: string; error: string }>
  /** Procedure versions beyond the five newest, moved to `archive/forgotten/versions/` (never deleted). */
  versions: Pick<VersionRetentionRun, 'moved' | 'procedures' | 'problems'>
}

/** Judge every memory and forget those whose verdict is `forget` (or, dry, only say so). */
export async function runForgetting(deps: ForgettingDeps, options: { dryRun?: boolean } = {}): Promise<ForgettingRun> {
  return oneConsolidationAtATime(deps.backend, deps.layout.agent, () => forgettingRun(deps, options))
}

async function forgettingRun(deps: ForgettingDeps, options: { dryRun?: boolean }): Promise<ForgettingRun> {
  await deps.indexed()
  const now = deps.clock.now()
  const run: ForgettingRun = { forgotten: [], lowActivity: [], protected: 0, active: 0, failed: [], versions: { moved: 0, procedures: [], problems: [] } }
  if (options.dryRun) {
    for await (const memory of reviewEverything(deps, now)) {
      if (tally(run, memory)) run.forgotten.push({ path: memory.path, archive: '', why: memory.verdict.why })
    }
    const retention = await retainProcedureVersions(deps, { dryRun: true })
    run.versions = { moved: retention.moved, procedures: retention.procedures, problems: retention.problems }
    return run
  }
  // What a killed run left planned is finished first; an owner whose plan cannot be is not planned over it.
  const { stuck } = await finishUnfinishedUnits(deps.backend)
  for (const unit of stuck) run.failed.push({ path: unit.path, error: stuckStep(unit).reason })
  const held = new Set(stuck.map((unit) => unit.owner))
  const due = new Map<Owner, ReviewedMemory[]>()
  for await (const memory of reviewEverything(deps, now)) {
    if (tally(run, memory) && !held.has(memory.owner)) due.set(memory.owner, [...(due.get(memory.owner) ?? []), memory])
  }
  const owners: Owner[] = ['agent', 'shared', ...(await deps.backend.users()).map((user) => ownerOfUser(user))]
  for (const owner of owners) {
    if (held.has(owner)) continue
    // The seed keeps each procedure's five newest versions; older ones move (decision 0034), never deleted.
    const retention = await retainProcedureVersions(deps, { dryRun: true, owners: [owner] })
    run.versions.problems.push(...retention.problems)
    const forgetting = await Promise.all((due.get(owner) ?? []).map((memory) => plannedForgetting(deps.backend, memory, now)))
    if (forgetting.length === 0 && retention.procedures.length === 0) continue
    const plan = monthlyUnitPlan(owner, deps.layout.agent, now, forgetting, retention)
    try {
      await commitUnit(deps.backend, owner, plan)
      for (const item of forgetting) run.forgotten.push({ path: item.memory.path, archive: item.archive, why: item.memory.verdict.why })
      run.versions.moved += retention.moved
      run.versions.procedures.push(...retention.procedures.map((procedure) => ({ ...procedure, moved: procedure.moved.map((path) => path.replace('/archive/versions/', '/archive/forgotten/versions/')) })))
    } catch (error) {
      for (const item of forgetting) run.failed.push({ path: item.memory.path, error: describeError(error) })
      for (const procedure of retention.procedures) run.versions.problems.push({ path: procedure.path, error: describeError(error) })
    }
  }
  return run
}

/** Counts `memory`'s verdict into `run`; whether it is due to be forgotten. */
function tally(run: ForgettingRun, memory: ReviewedMemory): boolean {
  const { verdict } = memory
  if (verdict.state === 'protected') run.protected++
  else if (verdict.state === 'active') run.active++
  else if (verdict.state === 'low-activity') run.lowActivity.push({ path: memory.path, why: verdict.why, forgetOn: verdict.forgetOn })
  return verdict.state === 'forget'
}

/** One memory to forget as the plan holds it: the move, its index source, and its record (with the index units it will take out). */
async function plannedForgetting(backend: Backend, memory: ReviewedMemory, now: Date): Promise<{ memory: ReviewedMemory; archive: string; step: PlannedForgetting }> {
  const unitsRemoved = (await backend.index.hashes(memory.source)).size
  const target = { kind: 'document' as const, owner: memory.owner, docKind: memory.docKind, slug: memory.slug }
  const { archive, event } = forgottenDocumentEvent(target, { unitsRemoved, reason: `monthly forgetting: ${memory.verdict.why}`, at: now.toISOString() })
  return { memory, archive, step: { kind: memory.docKind, slug: memory.slug, source: memory.source, activity: event } }
}

/**
 * One owner's month as a unit (decision 0053): every memory it forgets and every procedure whose
 * old versions it retires, stored before the first move, so that a kill leaves all or nothing of it.
 */
function monthlyUnitPlan(owner: Owner, agent: string, now: Date, forgetting: Array<{ step: PlannedForgetting }>, retention: VersionRetentionRun): UnitPlan {
  const at = now.toISOString()
  const unit = `monthly ${isoDay(now).slice(0, 7)}`
  return {
    unit,
    at,
    changes: [],
    merged: [],
    forgotten: forgetting.map((item) => item.step),
    retained: retention.procedures.map((procedure) => ({ slug: procedure.slug, keep: retention.keep })),
    completion: { job: MONTH_FORGOTTEN, agent, startedAt: at, finishedAt: at, status: 'ok', details: { unit, owner: ownerDigest(owner), run: at } },
  }
}

/**
 * The job handler: one run; `done` when it forgot something, `skipped` when nothing was due. The
 * result, kept in the agent's job rows, holds counts only — what was forgotten is named in each
 * owner's own activity log — and `onRun` hands this process the whole run (`mind.consolidate`).
 */
export function monthlyForgettingHandler(deps: ForgettingDeps, onRun?: (run: ForgettingRun) => void): JobHandler {
  return async () => {
    const run = await runForgetting(deps)
    onRun?.(run)
    const result = { forgotten: run.forgotten.length, lowActivity: run.lowActivity.length, protected: run.protected, active: run.active, failed: run.failed.length, versionsMoved: run.versions.moved }
    if (run.failed.length > 0 && run.forgotten.length === 0) return { status: 'failed', error: `could not archive ${run.failed.length} memor${run.failed.length === 1 ? 'y' : 'ies'}; engram consolidate monthly says which and why` }
    if (run.forgotten.length === 0 && run.versions.moved === 0) return { status: 'skipped', reason: 'nothing stayed low-activity through the grace period', result }
    return { status: 'done', result }
  }
}
