/**
 * What one viewer — a session's (agent, user) — may see of the memory (decision 0017): the trees
 * of its owners, most specific first (the user's, the agent's, the shared one), and the tree it
 * writes to by default. Every read path on behalf of a session goes through a view, so it is handed
 * only the stores it may read: another user's files are never opened.
 */
import { type Owner, ownerOfUser, type Viewer, visibleOwners } from '../core/owner.ts'
import type { ActivityLog, ActivityQuery, ActivityRecord, Backend, EngramStore, OwnedStores, ParseProblem } from '../storage/contracts.ts'
import { instantOf } from '../storage/activity-records.ts'
import { ownerNamespace } from '../storage/home-layout.ts'
import type { ViewerMemory } from './engrams/declarative-memory.ts'
import type { Encoder } from './engrams/encoder.ts'
import type { Recall } from './episodes/recall.ts'
import type { ActivityRecorder } from './episodes/recorder.ts'
import type { ProcedureStore } from './procedures/procedure-store.ts'

export interface ViewTree {
  owner: Owner
  stores: OwnedStores
  /** The tree's prefix in the agent's memory namespace: `''`, `users/<key>/` or `shared/`. */
  namespace: string
}

export interface MemoryView {
  readonly viewer: Viewer
  /** The owners the viewer sees, most specific first. */
  readonly owners: Owner[]
  /** The owner of what the viewer writes by default (its user, else the agent). */
  readonly owner: Owner
  /** Its own stores (the default write target). */
  readonly own: OwnedStores
  /** Every visible tree, most specific first. */
  readonly trees: ViewTree[]
  /** The engram stores of a scope across the visible trees, most specific first. */
  engramStores(scope: 'global' | 'project'): EngramStore[]
  /**
   * The visible activity logs read as one timeline; appends go to the viewer's own log. Records
   * of a tree other than the agent's carry its namespace in their `ref` (`users/ada/activity/…`).
   */
  readonly activity: ActivityLog
}

/** The view of `viewer` over a backend. */
export function createMemoryView(backend: Backend, viewer: Viewer): MemoryView {
  const owners = visibleOwners(viewer)
  const owner = ownerOfUser(viewer.user)
  const trees = owners.map((treeOwner) => ({ owner: treeOwner, stores: backend.owned(treeOwner), namespace: ownerNamespace(treeOwner) }))
  const own = backend.owned(owner)
  return {
    viewer,
    owners,
    owner,
    own,
    trees,
    engramStores: (scope) => trees.map((tree) => tree.stores.engrams(scope)).filter((store): store is EngramStore => store !== undefined),
    activity: mergedActivity(trees, own.activity),
  }
}

/** Several activity logs as one timeline (oldest first, or newest first with a limit). */
export function mergedActivity(trees: ReadonlyArray<Pick<ViewTree, 'stores' | 'namespace'>>, appendTo: ActivityLog): ActivityLog {
  if (trees.length === 1 && trees[0]?.namespace === '') return trees[0].stores.activity
  const prefixed = (records: ActivityRecord[], namespace: string): ActivityRecord[] =>
    namespace === '' ? records : records.map((record) => ({ ...record, ref: `${namespace}${record.ref}` }))
  return {
    append: (event) => appendTo.append(event),
    async read(query: ActivityQuery = {}) {
      const parts = await Promise.all(trees.map(async (tree) => prefixed(await tree.stores.activity.read(query), tree.namespace)))
      // Each time read once, not in every comparison (a stable sort of the records with their times).
      const all = parts.flat().map((record) => ({ record, at: instantOf(record.ts) }))
      if (query.limit === undefined) return all.sort((a, b) => a.at - b.at).map(({ record }) => record)
      return all
        .sort((a, b) => b.at - a.at)
        .slice(0, Math.max(0, Math.floor(query.limit)))
        .map(({ record }) => record)
    },
    async days() {
      const days = new Set<string>()
      for (const tree of trees) for (const day of await tree.stores.activity.days()) days.add(day)
      return [...days].sort()
    },
    async problems() {
      const problems: ParseProblem[] = []
      for (const tree of trees) problems.push(...(await tree.stores.activity.problems()).map((problem) => ({ ...problem, file: `${tree.namespace}${problem.file}` })))
      return problems
    },
  }
}

/**
 * Everything a session (or an interface acting for one (agent, user)) reads and writes through:
 * its view, the declarative memory it sees, the recorder of its own activity, the procedures and
 * episodes it may recall, and the encoder that makes what it learns its own.
 */
export interface ViewerScope {
  readonly viewer: Viewer
  readonly view: MemoryView
  readonly memory: ViewerMemory
  /** Records into the viewer's own activity log. */
  readonly activity: ActivityRecorder
  readonly procedures: ProcedureStore
  readonly recall: Recall
  /** Stamps the viewer's owner on what it encodes (decision 0017). */
  readonly encoder: Encoder
}
