/** `engram status`: what a mind holds, counted, and what it can do. */
import { readdirSync } from 'node:fs'
import { isAbsolute, join, relative, sep } from 'node:path'
import type { ResolvedConfig } from '../config/resolve.ts'
import { RULE_KINDS } from '../core/engram.ts'
import type { DocKind } from '../core/memory-doc.ts'
import { type CountKey, docKindsWhere, inListingOrder, kindSpec, type MemoryKindSpec } from '../core/memory-kinds.ts'
import { type Owner, ownerOfUser } from '../core/owner.ts'
import type { Backend, ParseProblem, UnitKind } from '../storage/contracts.ts'
import type { HomeLayout } from '../storage/home-layout.ts'
import type { OwnersStatus } from '../storage/owner-counts.ts'
import type { Embedder, Llm } from '../llm/contracts.ts'
import type { ReindexReport } from './retrieval/indexer.ts'
import { type LanguageSample, sampleLanguages } from './language-sample.ts'
import { type LegacyMigrationRecord, readLegacyRecord } from './engrams/import/legacy-migration-record.ts'

export interface ScopeCounts {
  rules: { always: number; never: number; when: number }
  lessons: number
  profile: number
  topics: number
}

/** What one owner's tree holds (decision 0073): its engram files by scope, its documents by kind, its activity days. */
export type OwnerMemory = {
  /** `agent`, `shared` or `user:<id>`. */
  owner: Owner
  global: ScopeCounts
  project: ScopeCounts | undefined
  activityDays: number
} & Partial<Record<CountKey<'status'>, number>>

export interface MindStatus {
  home: string
  agent: string
  project: string | undefined
  /**
   * Every owner's memory counted (decision 0073): the agent's tree, the shared one and each user's.
   * Engram files by scope and every kind counted in status under its key (core/memory-kinds.ts:
   * knowledge, procedures, episodes, users) summed over the owners, skills, the days with activity
   * in any owner's log, and `byOwner`: the same counts of each owner (the first `OWNERS_LISTED`).
   */
  memory: {
    global: ScopeCounts
    project: ScopeCounts | undefined
    skills: number
    activityDays: number
    byOwner: OwnerMemory[]
  } & Record<CountKey<'status'>, number>
  context: { conversations: number; messages: number }
  /** Memories the encoding gate holds for the user's yes/no (`engram confirm`). */
  pendingConfirmations: number
  /**
   * Who owns what (decision 0017): index units and memory files of the agent, the shared tree and
   * each user, and what the migration of a home written before owners assigned (decision 0024).
   * Absent for a backend that cannot tell.
   */
  owners?: OwnersStatus
  /** Old-layout folders (`context/`, `learnings/`) migrated when the home was opened (decision 0050), by folder. */
  legacyMigration: Record<string, LegacyMigrationRecord>
  index: { units: number; byKind: Record<UnitKind, number> }
  /** The languages of a sample of the index, and which get more than their words (decision 0076). */
  languages: LanguageSample
  capabilities: {
    backend: string
    /** What holds the memory, in words (`BackendCapabilities.describe`). */
    storage: string
    /** How full-text search ranks, in words. */
    fullTextRanking: string
    fullText: boolean
    vectors: string | false
    /** Why vectors are off, when the backend cannot keep them: memories are searched by their words only. */
    vectorsOff?: string
    llm: { provider: string; available: boolean; planningModel?: string; fastModel?: string }
    embedder: { id: string; kind: string; dimensions: number } | null
    memoryMode: string
  }
  facts: Record<string, string>
  /**
   * Queued work (the lifecycle's jobs): how many wait, which failed for good and which back off
   * before their next attempt (a model that timed out is not called again on every tick), and when
   * consolidation last ran.
   */
  jobs: {
    queued: number
    running: number
    retrying: Array<{ kind: string; attempts: number; maxAttempts: number; nextAttempt: string; error: string | undefined }>
    failed: Array<{ kind: string; attempts: number; at: string | undefined; error: string | undefined }>
    /** The latest finished run of each consolidation (`consolidation-daily`, `consolidation-weekly`, `consolidation-monthly`). */
    consolidation: Record<string, { at: string | undefined; status: string; reason?: string }>
  }
  /**
   * Lines and files that could not be read, of every owner's tree (what the last reindex found,
   * and the activity logs): kept as they are. `line` 0 is a whole file skipped (decision 0025).
   */
  problems: ParseProblem[]
}

export interface StatusDeps {
  backend: Backend
  layout: HomeLayout
  llm: Llm
  embedder: Embedder | null
  config: ResolvedConfig
  lastReindex: ReindexReport | undefined
  owners?: () => Promise<OwnersStatus>
}

/** The kinds `engram status` counts (core/memory-kinds.ts). */
const STATUS_KINDS = docKindsWhere((spec) => spec.count?.in.includes('status') === true)
/** Of those, the kinds filed in each owner's tree (counted per owner); the others (user profiles) are the home's. */
const TREE_KINDS = STATUS_KINDS.filter((kind) => (kindSpec(kind) as MemoryKindSpec).home === 'tree')
const countKeyOf = (kind: DocKind): CountKey<'status'> => (kindSpec(kind) as MemoryKindSpec).count?.key as CountKey<'status'>
/** Owners listed one by one at most (the totals count them all): a home serving thousands of users keeps its status readable. */
const OWNERS_LISTED = 100

const emptyScope = (): ScopeCounts => ({ rules: { always: 0, never: 0, when: 0 }, lessons: 0, profile: 0, topics: 0 })

function addScope(into: ScopeCounts, counts: ScopeCounts): void {
  into.rules.always += counts.rules.always
  into.rules.never += counts.rules.never
  into.rules.when += counts.rules.when
  into.lessons += counts.lessons
  into.profile += counts.profile
  into.topics += counts.topics
}

/** The memory counts in the order status has always shown them (`--json` included); a kind added since comes after them. */
function inStatusOrder<T extends MindStatus['memory']>(memory: T): T {
  const keys = inListingOrder(['global', 'project', 'knowledge', 'procedures', 'skills', 'episodes', 'users', 'activityDays', 'byOwner'], Object.keys(memory))
  return Object.fromEntries(keys.map((key) => [key, memory[key as keyof T]])) as unknown as T
}

export async function collectStatus(deps: StatusDeps): Promise<MindStatus> {
  const { backend, layout } = deps
  const problems: ParseProblem[] = []
  const scopeCounts = async (owner: Owner, scope: 'global' | 'project'): Promise<ScopeCounts | undefined> => {
    const store = backend.owned(owner).engrams(scope)
    if (!store) return undefined
    const rules = await store.read('rules')
    const lessons = await store.read('lessons')
    const profile = await store.read('profile')
    problems.push(...rules.problems, ...lessons.problems, ...profile.problems)
    const byKind = { always: 0, never: 0, when: 0 }
    for (const entry of rules.entries) if ((RULE_KINDS as readonly string[]).includes(entry.kind)) byKind[entry.kind as 'always']++
    return { rules: byKind, lessons: lessons.entries.length, profile: profile.entries.length, topics: (await store.listTopics()).length }
  }
  // Every owner's tree: the agent's, the shared one, each user's (decision 0073).
  const owners: Owner[] = ['agent', 'shared', ...(await backend.users()).map((user) => ownerOfUser(user))]
  const byOwner: OwnerMemory[] = []
  const days = new Set<string>()
  for (const owner of owners) {
    const stores = backend.owned(owner)
    const ownDays = await stores.activity.days()
    for (const day of ownDays) days.add(day)
    const documents: Partial<Record<CountKey<'status'>, number>> = {}
    for (const kind of TREE_KINDS) documents[countKeyOf(kind)] = (await stores.documents.slugs(kind)).length
    byOwner.push({ owner, global: (await scopeCounts(owner, 'global')) ?? emptyScope(), project: await scopeCounts(owner, 'project'), ...documents, activityDays: ownDays.length })
  }
  const documents = {} as Record<CountKey<'status'>, number>
  for (const kind of STATUS_KINDS) {
    const key = countKeyOf(kind)
    documents[key] = TREE_KINDS.includes(kind) ? byOwner.reduce((sum, counts) => sum + (counts[key] ?? 0), 0) : (await backend.documents.slugs(kind)).length
  }
  const global = emptyScope()
  let project: ScopeCounts | undefined
  for (const counts of byOwner) {
    addScope(global, counts.global)
    if (!counts.project) continue
    project ??= emptyScope()
    addScope(project, counts.project)
  }
  problems.push(...(await backend.documents.problems()), ...(await backend.activity.problems()))

  let messages = 0
  const conversations = await backend.context.listConversations(layout.agent)
  for (const conversation of conversations) messages += await backend.context.messageCount(conversation.id)
  const byKind = await backend.index.count()
  const units = Object.values(byKind).reduce((a, b) => a + b, 0)
  const open = await backend.lifecycle.jobs(layout.agent, { status: ['queued', 'running', 'failed'], limit: 1_000 })
  const consolidation: MindStatus['jobs']['consolidation'] = {}
  for (const kind of ['consolidation-daily', 'consolidation-weekly', 'consolidation-monthly']) {
    const [latest] = await backend.lifecycle.jobs(layout.agent, { status: ['done', 'skipped', 'failed'], kind, limit: 1 })
    if (latest) consolidation[kind] = { at: latest.finishedAt, status: latest.status, ...(typeof latest.result?.reason === 'string' ? { reason: latest.result.reason } : {}) }
  }

  return {
    home: layout.home,
    agent: layout.agent,
    project: deps.config.values.project,
    memory: inStatusOrder({
      global,
      project,
      ...documents,
      skills: countDirs(layout.skillsDir),
      activityDays: days.size,
      byOwner: byOwner.slice(0, OWNERS_LISTED),
    }),
    context: { conversations: conversations.length, messages },
    pendingConfirmations: (await backend.confirmations.pending()).length,
    ...(deps.owners ? { owners: await deps.owners() } : {}),
    legacyMigration: await readLegacyRecord(layout),
    index: { units, byKind },
    languages: await sampleLanguages(backend.index, units),
    capabilities: {
      backend: backend.name,
      storage: backend.capabilities.describe.storage,
      fullTextRanking: backend.capabilities.describe.fullText,
      fullText: backend.capabilities.fullText,
      vectors: backend.capabilities.vectors,
      ...(backend.capabilities.vectorsOff !== undefined ? { vectorsOff: backend.capabilities.vectorsOff } : {}),
      llm: {
        provider: deps.llm.provider,
        available: deps.llm.available,
        planningModel: deps.llm.modelFor('planning'),
        fastModel: deps.llm.modelFor('fast'),
      },
      embedder: deps.embedder ? { id: deps.embedder.id, kind: deps.embedder.kind, dimensions: deps.embedder.dimensions } : null,
      memoryMode: deps.config.values.memory.mode,
    },
    facts: backend.capabilities.facts,
    jobs: {
      queued: open.filter((job) => job.status === 'queued').length,
      running: open.filter((job) => job.status === 'running').length,
      retrying: open
        .filter((job) => job.status === 'queued' && job.attempts > 0 && job.error !== undefined)
        .map((job) => ({ kind: job.kind, attempts: job.attempts, maxAttempts: job.maxAttempts, nextAttempt: job.runAfter, error: shownError(job.error) })),
      failed: open.filter((job) => job.status === 'failed').map((job) => ({ kind: job.kind, attempts: job.attempts, at: job.finishedAt, error: shownError(job.error) })),
      consolidation,
    },
    // The last reindex read every owner's tree and the skills (decision 0025); the reads above add
    // what changed since in the agent's own files and every activity log problem.
    problems: dedupeProblems([...(deps.lastReindex?.problems ?? []), ...problems].map((problem) => ({ ...problem, file: sourceLabel(problem.file, layout) }))),
  }
}

/**
 * A job's error as status shows it: its first line, without the excerpt of a model's answer that
 * some failures carry ("Answer began: …" may hold what a user said).
 */
function shownError(error: string | undefined): string | undefined {
  if (error === undefined) return undefined
  return (error.split('\n')[0] ?? '').replace(/\s*Answer began:.*$/s, '').slice(0, 300)
}

/** A problem's file as the index names its source: home-relative, or `project:` for the project's memory. */
function sourceLabel(file: string, layout: HomeLayout): string {
  if (!isAbsolute(file)) return file
  const projectRoot = layout.projectMemoryDir ? join(layout.projectMemoryDir, '..', '..') : undefined
  const inside = (root: string): string | undefined => {
    const rel = relative(root, file)
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : undefined
  }
  const inProject = projectRoot === undefined ? undefined : inside(projectRoot)
  if (inProject?.startsWith('.engram/')) return `project:${inProject}`
  return inside(layout.home) ?? file
}

function countDirs(dir: string): number {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).length
  } catch {
    return 0
  }
}

function dedupeProblems(problems: ParseProblem[]): ParseProblem[] {
  const seen = new Set<string>()
  return problems.filter((p) => {
    const key = `${p.file}:${p.line}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
