/**
 * One unit of consolidation work (one owner's day for the daily run, one owner's week for the
 * weekly run, one owner's month for monthly forgetting) written so that a crash changes nothing but time (DESIGN principle 12, decision
 * 0053). The unit is planned in full — every model call made, every document's new text, every
 * activity record, every move to `archive/merged/`, and the record that says it is done — and the
 * plan is stored in the owner's own tree (`state/consolidation-plan`, one atomic write) before
 * the first change. Then it is applied, step by step, each step idempotent: a document already
 * holding its planned text is not written again, an activity record already in the log is not
 * appended again, a document already archived is not archived again, a completion already
 * recorded is not recorded again. Only then is the plan removed.
 *
 * A process killed at any point leaves either no plan (nothing of the unit was written) or the
 * plan; the next consolidation of the agent, before it plans anything, applies every plan it
 * finds to the end. The writes carry the plan's instant (`DocWriteOptions.at`), so a version
 * a killed write had already saved is found under its stamp instead of being saved twice, and
 * the recovered tree ends byte for byte where an unkilled run ends.
 *
 * The plan lives in the owner's tree (not in the agent's job rows) because it holds that owner's
 * memories: it is read only by its owner's consolidation and erased with the user.
 */
import { serializeFrontmatter } from '../../core/frontmatter.ts'
import { contentHash } from '../../core/hash.ts'
import type { ActivityEvent } from '../../core/activity.ts'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import type { Frontmatter } from '../../core/memory-doc.ts'
import { type Owner, ownerOfUser } from '../../core/owner.ts'
import type { ActivityLog, Backend, DocumentStore, JobRun } from '../../storage/contracts.ts'
import { ownerNamespace } from '../../storage/home-layout.ts'
import type { PendingStep } from './knowledge-consolidation.ts'
import { consolidationLockName } from './one-at-a-time.ts'

/** The state document that holds an owner's unfinished unit. */
const PLAN_SLUG = 'consolidation-plan'
const PLAN_FORMAT = 1

/** A document as the unit leaves it, and the record of why in the owner's activity log. */
export interface PlannedChange {
  kind: 'knowledge' | 'procedure'
  slug: string
  frontmatter: Frontmatter
  body: string
  /** Recorded with the version the write saves. */
  reason: string
  activity: ActivityEvent
}

export interface UnitPlan {
  /** What the unit is (`daily 2026-03-02`, `weekly 2026-W10`); also in each activity record's meta, so that a record is recognised as this unit's. */
  unit: string
  /** The unit's instant: its versions' stamp and its records' time. */
  at: string
  changes: PlannedChange[]
  /** Documents moved to `archive/merged/` once every change is written (each was written with `merged_into` first). */
  merged: Array<{ kind: 'knowledge'; slug: string }>
  /** Monthly forgetting: documents moved to `archive/forgotten/` and out of the index (`source`), each with its record. */
  forgotten?: PlannedForgetting[]
  /** Monthly version retention: procedures whose versions beyond the `keep` newest move to `archive/forgotten/versions/`. */
  retained?: Array<{ slug: string; keep: number }>
  /** The run recorded last, which says the unit is done (its `details.unit` identifies it). */
  completion: Omit<JobRun, 'id'>
}

/** A document monthly forgetting moves to the archive, and the record of it in the owner's activity log. */
export interface PlannedForgetting {
  kind: 'knowledge' | 'procedure' | 'episode'
  slug: string
  /** Its index source, whose units leave the index. */
  source: string
  activity: ActivityEvent
}

export type OwnerStores = { documents: DocumentStore; activity: ActivityLog }

/** An owner as job rows name it: a digest of its tree, since a user's name is theirs and job rows are the agent's. */
export const ownerDigest = (owner: Owner): string => contentHash(`owner:${ownerNamespace(owner)}`).slice(0, 16)

const textOf = (frontmatter: Frontmatter, body: string): string => serializeFrontmatter(frontmatter, body)

/** The same event, whatever the store added when it was written (`ref`). */
const sameEvent = (a: ActivityEvent, b: ActivityEvent): boolean =>
  a.ts === b.ts && a.type === b.type && a.content === b.content && a.summary === b.summary && JSON.stringify(a.meta ?? {}) === JSON.stringify(b.meta ?? {})

/** Whether `completion` (identified by its `details.unit`) is among the recent runs of its job. */
async function recorded(backend: Backend, completion: UnitPlan['completion']): Promise<boolean> {
  const runs = await backend.jobs.runs({ job: completion.job, agent: completion.agent, limit: 50 })
  const { unit, owner, run: id } = completion.details
  return runs.some((run) => run.details.unit === unit && run.details.owner === owner && run.details.run === id)
}

/** Applies `plan` to the owner's stores; every step is skipped when it is already done (see the module comment). */
async function apply(backend: Backend, stores: OwnerStores, plan: UnitPlan): Promise<void> {
  const merged = new Set(plan.merged.map((item) => `${item.kind}/${item.slug}`))
  let logged: ActivityEvent[] | undefined
  const log = async (activity: ActivityEvent): Promise<void> => {
    logged ??= await stores.activity.read({ since: plan.at, until: plan.at })
    if (logged.some((event) => sameEvent(event, activity))) return
    await stores.activity.append(activity)
    logged.push(activity)
  }
  for (const change of plan.changes) {
    const current = await stores.documents.read(change.kind, change.slug)
    const done = current ? textOf(current.frontmatter, current.body) === textOf(change.frontmatter, change.body) : merged.has(`${change.kind}/${change.slug}`)
    // A document the plan merges away and that is no longer live was written and archived already.
    if (!done) await stores.documents.write(change.kind, change.slug, change.frontmatter, change.body, { reason: change.reason, at: plan.at })
    await log(change.activity)
  }
  for (const item of plan.merged) {
    if (await stores.documents.read(item.kind, item.slug)) await stores.documents.archive(item.kind, item.slug, 'merged')
  }
  for (const item of plan.forgotten ?? []) {
    // A planned document no longer live was archived already; removing a source's units twice removes nothing.
    if (await stores.documents.read(item.kind, item.slug)) await stores.documents.archive(item.kind, item.slug, 'forgotten')
    await backend.index.removeSource(item.source)
    await log(item.activity)
  }
  // Retention moves only what is beyond the newest `keep`, so a second pass finishes a cut one (the store logs a cut move's line).
  for (const item of plan.retained ?? []) await stores.documents.retainVersions('procedure', item.slug, item.keep)
  if (!(await recorded(backend, plan.completion))) await backend.jobs.record(plan.completion)
}

/**
 * Stores `plan` in the owner's tree, applies it, removes it. A crash anywhere in between is
 * finished by `finishUnfinishedUnits` at the next consolidation.
 */
export async function commitUnit(backend: Backend, owner: Owner, plan: UnitPlan): Promise<void> {
  const stores = backend.owned(owner)
  // finishUnfinishedUnits ran first: a plan still here is one it could not read, and a new one must not be appended to it.
  const left = await stores.documents.read('state', PLAN_SLUG)
  if (left) {
    throw new EngramError({
      code: ErrorCode.storageCorrupt,
      category: 'system',
      message: `${left.path} holds a consolidation plan that cannot be read (cut, or written by another engram version)`,
      fix: 'move it away to consolidate this owner again',
    })
  }
  // `append` creates the state document in one atomic write, and keeps no version of it (a plan is not a memory).
  await stores.documents.append('state', PLAN_SLUG, `${JSON.stringify({ format: PLAN_FORMAT, ...plan })}\n`, { kind: PLAN_SLUG })
  await apply(backend, stores, plan)
  await stores.documents.purge('state', PLAN_SLUG)
}

function parsePlan(body: string): UnitPlan | undefined {
  try {
    const value = JSON.parse(body) as Partial<UnitPlan> & { format?: unknown }
    if (value.format !== PLAN_FORMAT || typeof value.unit !== 'string' || typeof value.at !== 'string' || !Array.isArray(value.changes) || !Array.isArray(value.merged) || typeof value.completion !== 'object') return undefined
    return value as UnitPlan
  } catch {
    return undefined
  }
}

/** An owner whose unit could not be finished: not consolidated until a person moves the plan away. */
export interface StuckUnit {
  owner: Owner
  path: string
  why: string
}

/**
 * Finishes every unit a killed consolidation left planned, in every owner's tree, before anything
 * new is planned (the caller holds the consolidation lock). A plan that cannot be read (cut by
 * hand, written by another version) or applied (a write refused) is kept where it is and its
 * owner is returned as stuck: the caller consolidates the other owners and reports this one, so
 * one broken plan neither stops everyone's consolidation nor is planned over twice.
 */
export async function finishUnfinishedUnits(backend: Backend): Promise<{ finished: string[]; stuck: StuckUnit[] }> {
  const owners: Owner[] = ['agent', 'shared', ...(await backend.users()).map((user) => ownerOfUser(user))]
  const finished: string[] = []
  const stuck: StuckUnit[] = []
  for (const owner of owners) {
    const outcome = await finishOwner(backend, owner)
    if (outcome === undefined) continue
    if ('why' in outcome) stuck.push(outcome)
    else finished.push(outcome.unit)
  }
  return { finished, stuck }
}

/** Finishes the unit `owner`'s tree holds, if any: the unit finished, or why it could not be. */
async function finishOwner(backend: Backend, owner: Owner): Promise<{ unit: string } | StuckUnit | undefined> {
  const stores = backend.owned(owner)
  const doc = await stores.documents.read('state', PLAN_SLUG)
  if (!doc) return undefined
  const plan = parsePlan(doc.body)
  if (!plan) return { owner, path: doc.path, why: 'it cannot be read (cut, or written by another engram version)' }
  try {
    await apply(backend, stores, plan)
    await stores.documents.purge('state', PLAN_SLUG)
    return { unit: plan.unit }
  } catch (error) {
    return { owner, path: doc.path, why: describeError(error) }
  }
}

/**
 * Finishes one owner's unfinished unit before a new one of that owner is planned (the caller
 * holds the consolidation lock); a plan that cannot be finished is left, and `commitUnit` then
 * refuses to plan over it.
 */
export async function finishOwnerUnit(backend: Backend, owner: Owner): Promise<void> {
  await finishOwner(backend, owner)
}

/** The pending step that reports a stuck owner (what waits is the plan). */
export function stuckStep(unit: StuckUnit): PendingStep {
  return { step: 'unfinished unit', reason: `${unit.path} holds a consolidation plan that could not be finished (${unit.why}); move it away to consolidate this owner again`, waiting: 1 }
}

/**
 * `finishUnfinishedUnits` now unless a consolidation holds the agent's consolidation lock (it
 * finishes them itself before anything else): what a mind's first `maintain()` calls, so that
 * `engram consolidate` killed in one process is finished by `engram maintain` in the next, even
 * on a day whose scheduled consolidation already ran. What could not be finished is returned.
 */
export async function finishUnfinishedUnitsIfIdle(backend: Backend, agent: string): Promise<StuckUnit[]> {
  const outcome = await backend.locks.withLock(consolidationLockName(agent), () => finishUnfinishedUnits(backend), { wait: false })
  return outcome.kind === 'done' ? outcome.value.stuck : []
}
