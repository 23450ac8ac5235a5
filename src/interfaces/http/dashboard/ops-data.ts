/**
 * What the operations pages read, for one viewing (ops-viewer.ts), through the mind's own seams:
 * the owner's stores for a user's counts, the memory view's activity log (the one timeline a
 * session of that viewer reads), the stored turns (latency and what priming recalled), the
 * lifecycle's consolidation jobs and the changes they recorded in each owner's log, forgetting's
 * archive, and the confirmations queue. Nothing here writes.
 */
import { type ActivityType, eventContent } from '../../../core/activity.ts'
import { isRuleKind, ruleWithPolarity } from '../../../core/engram.ts'
import { parseFrontmatter } from '../../../core/frontmatter.ts'
import type { DocKind } from '../../../core/memory-doc.ts'
import { type CountKey, docKindsWhere, type ForgettableDocKind, memoryKinds } from '../../../core/memory-kinds.ts'
import { type Owner, ownerOfUser, userKey } from '../../../core/owner.ts'
import { profileFacts } from '../../../memory/engrams/user-profiles.ts'
import { DAILY_CONSOLIDATION_JOB } from '../../../memory/consolidation/daily-consolidation.ts'
import { MONTHLY_FORGETTING_JOB } from '../../../memory/consolidation/monthly-forgetting.ts'
import { WEEKLY_INTEGRATION_JOB } from '../../../memory/consolidation/weekly-integration.ts'
import { DOC_FOLDERS, forgottenEntries, forgottenMemoryOf, memoryPathOf } from '../../../memory/forgetting/forget-memory.ts'
import { mergedActivity } from '../../../memory/view.ts'
import type { MindInternals } from '../../../mind-internals.ts'
import { type ActivityLog, type ActivityRecord, ENGRAM_FILES, type EngramFile, type QueuedJob, type TurnRecord } from '../../../storage/contracts.ts'
import { forgettableOwners } from '../../../tools/forget-targets.ts'
import { memoryFileSource } from '../../../memory/tree/memory-file-source.ts'
import { locateMemoryPath } from '../../../memory/tree/memory-paths.ts'
import { instantOf } from '../../../storage/activity-records.ts'
import { ownerNamespace } from '../../../storage/home-layout.ts'
import type { Viewing } from './ops-viewer.ts'

/** What one owner holds, counted from their own stores (a user's overview). */
export type OwnCounts = {
  rules: number
  lessons: number
  profile: number
  topics: number
  activityDays: number
  pendingConfirmations: number
} & Record<CountKey<'dashboard'>, number>

/** The document kinds the dashboard counts, with their count key and label (core/memory-kinds.ts). */
export const DASHBOARD_COUNTED: ReadonlyArray<{ kind: DocKind; key: CountKey<'dashboard'>; label: string }> = memoryKinds().flatMap(([kind, spec]) =>
  spec.count?.in.includes('dashboard') ? [{ kind, key: spec.count.key as CountKey<'dashboard'>, label: spec.count.label }] : [],
)

/** The counts of `user`'s own memory (their tree only: not the agent's or shared memory they also read). */
export async function ownCounts(mind: MindInternals, user: string): Promise<OwnCounts> {
  const stores = mind.backend.owned(ownerOfUser(user))
  const documents = Object.fromEntries(DASHBOARD_COUNTED.map(({ key }) => [key, 0])) as Record<CountKey<'dashboard'>, number>
  const counts: OwnCounts = { rules: 0, lessons: 0, profile: 0, topics: 0, ...documents, activityDays: 0, pendingConfirmations: 0 }
  for (const scope of ['global', 'project'] as const) {
    const store = stores.engrams(scope)
    if (!store) continue
    for (const file of ENGRAM_FILES) counts[file] += (await store.read(file)).entries.length
    counts.topics += (await store.listTopics()).length
  }
  // A user's profile facts live in their one profile (`users/<key>.md`, shared by every agent), not in a profile.md of their tree.
  counts.profile += profileFacts((await mind.backend.documents.read('user', userKey(user)))?.body ?? '').length
  for (const { kind, key } of DASHBOARD_COUNTED) counts[key] = (await stores.documents.slugs(kind)).length
  counts.activityDays = (await stores.activity.days()).length
  counts.pendingConfirmations = (await mind.pendingConfirmations({ user })).length
  return counts
}

/** The confirmations waiting in every queue of the mind: the agent's own and each user's, by queue (`undefined`: the agent's). */
export async function everyQueue(mind: MindInternals, users: readonly string[]): Promise<Array<{ user: string | undefined; waiting: number }>> {
  const queues: Array<{ user: string | undefined; waiting: number }> = []
  for (const user of [undefined, ...users]) queues.push({ user, waiting: (await mind.pendingConfirmations(user !== undefined ? { user } : {})).length })
  return queues
}

/**
 * The activity timeline of a viewing: a user's (or the agent's) memory view — the logs their
 * sessions read — or, for an administrator with no user picked, every owner's log.
 */
export function activityOf(mind: MindInternals, viewing: Viewing): ActivityLog {
  if (!viewing.everyone) return mind.scope(viewing.user).view.activity
  const owners: Owner[] = ['agent', 'shared', ...viewing.users.map((user) => ownerOfUser(user))]
  return mergedActivity(
    owners.map((owner) => ({ stores: mind.backend.owned(owner), namespace: ownerNamespace(owner) })),
    mind.backend.activity,
  )
}

/** One page of the timeline, newest first, with whether an older page exists. */
export async function activityPage(log: ActivityLog, query: { types?: ActivityType[]; day?: string; page: number; pageSize: number }): Promise<{ records: ActivityRecord[]; more: boolean }> {
  const upTo = query.page * query.pageSize
  const records = await log.read({
    ...(query.types ? { types: query.types } : {}),
    ...(query.day ? { since: `${query.day}T00:00:00.000Z`, until: `${query.day}T23:59:59.999Z` } : {}),
    limit: upTo + 1,
  })
  return { records: records.slice(upTo - query.pageSize, upTo), more: records.length > upTo }
}

/** The kind of memory a `memory_write` event names, with the file it is in (undefined: not a memory it adds or removes). */
export function growthOf(record: ActivityRecord): { kind: string; path: string | undefined; action: string } | undefined {
  if (record.type !== 'memory_write') return undefined
  const meta = record.meta ?? {}
  const action = typeof meta.action === 'string' ? meta.action : 'write'
  if (action === 'procedure_outcome') return undefined
  // An entry the encoder saved names its kind; a file written (by a tool, by consolidation) its path.
  if (typeof meta.kind === 'string') return { kind: isRuleKind(meta.kind) ? 'rule' : meta.kind, path: undefined, action }
  const path = typeof meta.path === 'string' ? meta.path.replace(/#.*$/, '') : undefined
  if (path === undefined) return undefined
  const entry = typeof meta.path === 'string' && meta.path.includes('#')
  const kind = documentKindOfPath(path) ?? (/\/topics\//.test(path) ? 'topic' : /rules\.md$/.test(path) ? 'rule' : /lessons\.md$/.test(path) ? 'lesson' : /profile\.md$/.test(path) ? 'profile' : undefined)
  if (kind === undefined) return undefined
  return { kind, path: entry ? String(meta.path) : path, action }
}

/**
 * The kind of a document forgetting judges one by one (core/memory-kinds.ts) that a written path
 * names, by a folder of the path: its live folder (`knowledge/`, `procedures/`) or its archive's
 * (`archive/forgotten/procedure/`).
 */
function documentKindOfPath(path: string): string | undefined {
  const folders = path.split('/').slice(0, -1)
  return REVIEWED_KINDS.find((kind) => folders.includes(kind) || folders.includes(DOC_FOLDERS[kind]))
}

/**
 * How many memories of each kind there were, day by day, over the records given (oldest first):
 * each entry saved adds one; a file adds one the first time it is written (a rewrite by
 * consolidation or an overwrite changes a memory, it adds none); forgetting or purging takes one
 * away, a restore brings it back.
 */
export function growthSeries(records: readonly ActivityRecord[]): Array<{ name: string; points: Array<{ x: number; y: number }> }> {
  const totals = new Map<string, number>()
  const live = new Set<string>()
  const byKind = new Map<string, Map<number, number>>()
  for (const record of records) {
    const growth = growthOf(record)
    if (!growth) continue
    const day = Date.parse(`${record.ts.slice(0, 10)}T00:00:00.000Z`)
    if (Number.isNaN(day)) continue
    let delta = 0
    if (growth.action === 'forget' || growth.action === 'purge') {
      // A purge of what was forgotten already takes nothing more away.
      const wasLive = growth.path !== undefined && live.delete(growth.path)
      delta = wasLive || growth.action === 'forget' || growth.path === undefined ? -1 : 0
    } else if (growth.path === undefined) delta = 1
    else if (!live.has(growth.path)) {
      live.add(growth.path)
      delta = 1
    }
    if (delta === 0) continue
    const total = Math.max(0, (totals.get(growth.kind) ?? 0) + delta)
    totals.set(growth.kind, total)
    const points = byKind.get(growth.kind) ?? new Map<number, number>()
    points.set(day, total)
    byKind.set(growth.kind, points)
  }
  return [...byKind.entries()]
    .sort((a, b) => (totals.get(b[0]) ?? 0) - (totals.get(a[0]) ?? 0))
    .map(([name, points]) => ({ name, points: [...points.entries()].sort((a, b) => a[0] - b[0]).map(([x, y]) => ({ x, y })) }))
}

/** How many of the latest turns the latency and recall pictures read (per user). */
export const TURNS_READ = 200

/** The latest stored turns of a viewing (every user's, for an administrator with no user picked), newest first. */
export async function turnsOf(mind: MindInternals, viewing: Viewing): Promise<TurnRecord[]> {
  const users: Array<string | undefined> = viewing.everyone ? [undefined, ...viewing.users] : [viewing.user]
  const turns: TurnRecord[] = []
  for (const user of users) turns.push(...(await mind.backend.lifecycle.recentTurns(mind.agent, user, TURNS_READ)))
  return turns.sort((a, b) => instantOf(b.startedAt) - instantOf(a.startedAt))
}

/** A stored turn's timing (`provenance.timing`), when it was recorded. */
export function timingOf(turn: TurnRecord): { primingMs: number; beginMs: number } | undefined {
  const timing = turn.provenance.timing as { primingMs?: unknown; beginMs?: unknown } | undefined
  if (typeof timing?.primingMs !== 'number' || typeof timing.beginMs !== 'number') return undefined
  return { primingMs: timing.primingMs, beginMs: timing.beginMs }
}

export interface Recalled {
  id: string
  kind: string
  source: string
  /** How many of the turns read had it primed. */
  turns: number
  /** The unit's text and all-time recall count from the search index, when it is a unit still there. */
  text?: string
  accessCount?: number
}

/** How much of an activity line's text is shown as its label. */
const ACTIVITY_TEXT_CHARS = 160

/**
 * What priming injected most often over `turns`, most first, with the index's text and access
 * count; an activity line (not a unit of the index) with what it says, read from `log` (the
 * viewing's timeline: a line the viewing cannot read keeps its reference only).
 */
export async function mostRecalled(mind: MindInternals, turns: readonly TurnRecord[], log: ActivityLog, limit = 10): Promise<Recalled[]> {
  const counted = new Map<string, Recalled & { refs: string[] }>()
  for (const turn of turns) {
    const primed = Array.isArray(turn.provenance.primed) ? (turn.provenance.primed as Array<{ id?: unknown; kind?: unknown; source?: unknown; provenance?: unknown }>) : []
    const seen = new Set<string>()
    for (const item of primed) {
      if (typeof item.id !== 'string' || seen.has(item.id)) continue
      seen.add(item.id)
      const refs = Array.isArray(item.provenance) ? item.provenance.filter((ref): ref is string => typeof ref === 'string') : []
      const entry = counted.get(item.id) ?? { id: item.id, kind: String(item.kind ?? ''), source: String(item.source ?? ''), turns: 0, refs }
      entry.turns++
      counted.set(item.id, entry)
    }
  }
  const top = [...counted.values()].sort((a, b) => b.turns - a.turns || a.id.localeCompare(b.id)).slice(0, limit)
  const units = new Map((await mind.backend.index.get(top.map((item) => item.id))).map((unit) => [unit.id, unit]))
  const lines = await activityLines(log, top.filter((item) => item.kind === 'activity').flatMap((item) => item.refs))
  return top.map(({ refs, ...item }) => {
    const unit = units.get(item.id)
    if (unit) return { ...item, text: unit.text, accessCount: unit.accessCount }
    const said = refs.flatMap((ref) => lines.get(ref) ?? [])
    if (said.length === 0) return item
    const text = said.join(' / ')
    return { ...item, text: text.length > ACTIVITY_TEXT_CHARS ? `${text.slice(0, ACTIVITY_TEXT_CHARS - 1)}…` : text }
  })
}

/** What the activity lines `refs` (`…activity/<day>.jsonl#L3`) say, by ref: their event and text, read day by day from `log`. */
export async function activityLines(log: ActivityLog, refs: readonly string[]): Promise<Map<string, string>> {
  const wanted = new Set(refs)
  const days = new Set(refs.flatMap((ref) => /(\d{4}-\d{2}-\d{2})\.jsonl#/.exec(ref)?.[1] ?? []))
  const lines = new Map<string, string>()
  for (const day of days) {
    for (const record of await log.read({ since: `${day}T00:00:00.000Z`, until: `${day}T23:59:59.999Z` })) {
      if (!wanted.has(record.ref)) continue
      const text = (eventContent(record) ?? record.summary ?? '').replace(/\s+/g, ' ').trim()
      lines.set(record.ref, `${ACTIVITY_WORDS[record.type]}${text ? `: ${text}` : ''}`)
    }
  }
  return lines
}

/** An activity event's kind, as a reader says it. */
const ACTIVITY_WORDS: Record<ActivityType, string> = {
  message_received: 'message received',
  response_sent: 'reply sent',
  dm_sent: 'direct message sent',
  dm_received: 'direct message received',
  channel_post: 'posted to a channel',
  channel_read: 'read a channel',
  human_notify: 'notified a person',
  tool_use: 'used a tool',
  heartbeat_start: 'heartbeat began',
  heartbeat_end: 'heartbeat ended',
  cron_executed: 'scheduled task ran',
  memory_write: 'memory written',
  error: 'error',
  issue_resolved: 'issue resolved',
}

/** The consolidation jobs, by period. */
export const CONSOLIDATION_JOBS: Record<string, 'daily' | 'weekly' | 'monthly'> = {
  [DAILY_CONSOLIDATION_JOB]: 'daily',
  [WEEKLY_INTEGRATION_JOB]: 'weekly',
  [MONTHLY_FORGETTING_JOB]: 'monthly',
}

/** One change a consolidation recorded in an owner's log (what it wrote, merged, superseded or forgot). */
export interface ConsolidationChange {
  period: 'daily' | 'weekly' | 'monthly'
  at: string
  path: string
  action: string
  reason: string
  ref: string
}

/** A consolidation's change recorded in the activity log, or undefined for any other event. */
export function consolidationChangeOf(record: ActivityRecord): ConsolidationChange | undefined {
  if (record.type !== 'memory_write') return undefined
  const meta = record.meta ?? {}
  const path = typeof meta.path === 'string' ? meta.path : (record.content ?? '')
  const reason = typeof meta.reason === 'string' ? meta.reason : ''
  if (meta.action === 'consolidate' && (meta.period === 'daily' || meta.period === 'weekly')) {
    const action = reason.startsWith('compressed') ? 'compressed' : /\bmerged\b/.test(reason) ? 'merged' : /\bsupersede/.test(reason) ? 'superseded' : 'wrote'
    return { period: meta.period, at: record.ts, path, action, reason, ref: record.ref }
  }
  if (meta.action === 'forget' && reason.startsWith('monthly forgetting')) return { period: 'monthly', at: record.ts, path, action: 'forgot', reason: reason.replace(/^monthly forgetting:\s*/, ''), ref: record.ref }
  return undefined
}

/** A consolidation run: a finished job of the lifecycle, or changes made by `engram consolidate` outside one. */
export interface ConsolidationRunView {
  period: 'daily' | 'weekly' | 'monthly'
  /** When it finished (a job), or when its changes were recorded. */
  at: string
  status: string
  reason?: string
  /** The job's recorded counts (whole-mind: shown to the agent and administrators only). */
  counts?: Record<string, unknown>
  changes: ConsolidationChange[]
  scheduled: boolean
}

/**
 * The consolidation runs, newest first: the lifecycle's finished consolidation jobs, each with the
 * changes of the viewing's logs recorded between its start and its end; changes outside any job
 * (`engram consolidate daily|weekly`, which runs without the queue) are grouped by period and instant.
 */
export async function consolidationRuns(mind: MindInternals, log: ActivityLog, limit = 30): Promise<ConsolidationRunView[]> {
  const jobs: QueuedJob[] = []
  for (const kind of Object.keys(CONSOLIDATION_JOBS)) jobs.push(...(await mind.backend.lifecycle.jobs(mind.agent, { status: ['done', 'skipped', 'failed'], kind, limit })))
  const changes = (await log.read({ types: ['memory_write'] })).flatMap((record) => consolidationChangeOf(record) ?? [])
  const runs: ConsolidationRunView[] = jobs.map((job) => ({
    period: CONSOLIDATION_JOBS[job.kind] ?? 'daily',
    at: job.finishedAt ?? job.updatedAt,
    status: job.status,
    ...(typeof job.result?.reason === 'string' ? { reason: job.result.reason } : job.error ? { reason: job.error } : {}),
    ...(job.result ? { counts: Object.fromEntries(Object.entries(job.result).filter(([key]) => key !== 'reason')) } : {}),
    changes: [],
    scheduled: true,
  }))
  const windows = jobs.map((job, i) => ({ run: runs[i] as ConsolidationRunView, from: instantOf(job.createdAt), to: instantOf(job.finishedAt ?? job.updatedAt) }))
  const loose = new Map<string, ConsolidationRunView>()
  for (const change of changes) {
    const at = instantOf(change.at)
    const owner = windows.find((window) => window.run.period === change.period && at >= window.from && at <= window.to)
    if (owner) {
      owner.run.changes.push(change)
      continue
    }
    const key = `${change.period} ${change.at}`
    const run = loose.get(key) ?? { period: change.period, at: change.at, status: 'done', changes: [], scheduled: false }
    run.changes.push(change)
    loose.set(key, run)
  }
  return [...runs, ...loose.values()].sort((a, b) => instantOf(b.at) - instantOf(a.at)).slice(0, limit)
}

/**
 * When and why each forgotten item of `owner` was forgotten, from the `forget` events of the
 * owner's own activity log (the record every forgetting writes: on request, and monthly forgetting's
 * plan, decision 0053): an archived document carries no date or reason of its own (its move keeps
 * its bytes as they were), and an archived entry's reason is stored with `_` for spaces. Keyed by
 * the entry's path, or the document's archive path; the latest forgetting wins (forgotten again after a restore).
 */
async function datedFromLog(mind: MindInternals, owner: Owner, items: ArchivedMemory[]): Promise<void> {
  if (!items.some((item) => item.why === 'forgotten')) return
  const forgot = new Map<string, { at: string; reason: string | undefined }>()
  for (const record of await mind.backend.owned(owner).activity.read({ types: ['memory_write'] })) {
    const meta = record.meta ?? {}
    if (meta.action !== 'forget') continue
    const told = { at: record.ts, reason: typeof meta.reason === 'string' && meta.reason !== '' ? meta.reason : undefined }
    for (const key of [meta.path, meta.archive]) {
      if (typeof key !== 'string') continue
      const known = forgot.get(key)
      if (known === undefined || instantOf(known.at) <= instantOf(told.at)) forgot.set(key, told)
    }
  }
  for (const item of items) {
    const told = item.why === 'forgotten' ? forgot.get(item.target) : undefined
    if (told === undefined) continue
    item.forgottenAt ??= told.at
    if (told.reason !== undefined) item.reason = told.reason
  }
}

/** One forgotten or merged memory of the viewing's archive, with what restores it. */
export interface ArchivedMemory {
  /** What `POST /v1/restore` takes as `target` (as `engram restore` does). */
  target: string
  what: 'rule' | 'lesson' | 'profile fact' | 'topic' | Exclude<ForgettableDocKind, 'episode'>
  /** The entry's text, or the first lines of the archived file. */
  text: string
  owner: Owner
  forgottenAt?: string
  reason?: string
  /** `forgotten` (on request or by monthly forgetting) or `merged` (by weekly consolidation). */
  why: 'forgotten' | 'merged'
}

/** The owners whose archive a viewing shows: the memories it may restore (a user's own; the agent's and shared for the agent). */
export function archiveOwners(viewing: Viewing): Owner[] {
  if (viewing.everyone) return ['agent', 'shared', ...viewing.users.map((user) => ownerOfUser(user))]
  return forgettableOwners(viewing.viewer)
}

const ENTRY_WHAT: Record<EngramFile, ArchivedMemory['what']> = { rules: 'rule', lessons: 'lesson', profile: 'profile fact' }

/** The kinds forgetting judges one document at a time (core/memory-kinds.ts): knowledge and procedures. */
const REVIEWED_KINDS = docKindsWhere((spec) => spec.forgetting === 'knowledge' || spec.forgetting === 'procedure') as Array<Exclude<ForgettableDocKind, 'episode'>>
/*
 * The archive folders of a tree that `engram restore` brings back from, with what they hold: the
 * documents of every kind forgetting judges one by one (core/memory-kinds.ts; archived episodes are
 * not listed here), topics, and documents consolidation merged.
 */
const ARCHIVE_FOLDERS: ReadonlyArray<{ folder: string; what: ArchivedMemory['what']; why: ArchivedMemory['why'] }> = [
  ...REVIEWED_KINDS.map((kind) => ({ folder: `archive/forgotten/${kind}`, what: kind, why: 'forgotten' as const })),
  { folder: 'archive/forgotten/topics', what: 'topic', why: 'forgotten' },
  { folder: 'archive/forgotten/project/topics', what: 'topic', why: 'forgotten' },
  ...REVIEWED_KINDS.map((kind) => ({ folder: `archive/merged/${kind}`, what: kind, why: 'merged' as const })),
]

/** A copy set aside when the same topic was forgotten again (`<slug>.<stamp>.md`): kept, not restorable by name. */
const SET_ASIDE = /\.\d{4}-\d{2}-\d{2}T[\d-]+Z\.md$/

/** How much of an archived file is shown. */
const SHOWN_CHARS = 600

/**
 * The forgotten and merged memories of the viewing's owners, as forgetting keeps them: entries of
 * rules, lessons and profile from each tree's archive of forgotten entries (`forgottenEntries`),
 * documents and topics from the archive folders of the memory namespace (files on the embedded
 * home, the seams' rows on PostgreSQL). Each with the target `engram restore` takes.
 */
export async function archivedMemories(mind: MindInternals, viewing: Viewing): Promise<ArchivedMemory[]> {
  const deps = { backend: mind.backend, layout: mind.layout }
  const source = memoryFileSource(mind.layout, mind.backend)
  const items: ArchivedMemory[] = []
  for (const owner of archiveOwners(viewing)) {
    const start = items.length
    for (const scope of ['global', 'project'] as const) {
      if (!mind.backend.owned(owner).engrams(scope)) continue
      for (const file of ENGRAM_FILES) {
        for (const found of await forgottenEntries(deps, owner, scope, file)) {
          const { entry } = found
          items.push({
            // A user's forgotten profile fact is restored into their profile (users/<key>.md#<id>).
            target: memoryPathOf(forgottenMemoryOf(owner, scope, file, found)),
            what: ENTRY_WHAT[file],
            text: isRuleKind(entry.kind) ? ruleWithPolarity(entry.kind, entry.text) : entry.text,
            owner,
            ...(found.forgottenAt ? { forgottenAt: found.forgottenAt } : {}),
            ...(found.reason ? { reason: found.reason } : {}),
            why: 'forgotten',
          })
        }
      }
    }
    const ns = ownerNamespace(owner)
    for (const { folder, what, why } of ARCHIVE_FOLDERS) {
      if (owner === 'shared' && folder.includes('/project/')) continue
      const location = locateMemoryPath(`${ns}${folder}`, mind.layout)
      for (const name of await source.entries(location)) {
        if (!name.endsWith('.md') || SET_ASIDE.test(name)) continue
        const path = `${ns}${folder}/${name}`
        const opened = await source.open(locateMemoryPath(path, mind.layout))
        const text = opened.kind === 'file' ? (await opened.read()).toString('utf8') : ''
        const { frontmatter, body } = parseFrontmatter(text)
        items.push({
          target: path,
          what,
          text: body.trim().slice(0, SHOWN_CHARS),
          owner,
          ...(typeof frontmatter.forgotten_at === 'string' ? { forgottenAt: frontmatter.forgotten_at } : {}),
          ...(typeof frontmatter.merged_into === 'string' ? { reason: `merged into ${frontmatter.merged_into}` } : {}),
          why,
        })
      }
    }
    await datedFromLog(mind, owner, items.slice(start))
  }
  return items.sort((a, b) => (b.forgottenAt ?? '').localeCompare(a.forgottenAt ?? '') || a.target.localeCompare(b.target))
}
