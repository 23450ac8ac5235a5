/**
 * The one registry of document kinds (decision 0060): for each kind of memory filed as markdown
 * documents, where its files live and what every layer does with it — indexed for search, primed,
 * forgotten, versioned, written by the agent, counted. Every list of kinds elsewhere is derived
 * from `MEMORY_KINDS` (`memoryKinds`, `docKindsWhere`), every place that decides per kind reads a
 * field of the entry, the counts are records over the derived count keys, and a place that cannot
 * follow a new value yet holds a record over the kinds it serves (version retention), so adding a
 * kind is one entry here and the compiler names the rest (docs/adding-a-memory-kind.md).
 *
 * It sits in core/ so that storage, memory, tools and the interfaces can all read it. Literals such
 * as `'procedure'` stay where code means that one kind (the procedure matcher, episode compression).
 */

/** Where a kind's files live. */
export type KindHome =
  /** `<tree>/<folder>/<slug>.md` in each owner's tree (the agent's, each user's, the shared one when `shared`). */
  | 'tree'
  /** The agent's own folder (`agents/<agent>/<slug>.md`): the prompt layers. */
  | 'agent'
  /** The home's shared profiles (`shared/users/<slug>.md`), one per user and read by every agent. */
  | 'shared-users'

/**
 * How forgetting treats a kind: the rules of forgetting-policy.ts it is judged by (monthly
 * forgetting and daily downscaling), which also makes it forgettable on request (`forget_memory`,
 * `engram forget`) and restorable from `archive/forgotten/<kind>/`. `episode` is its own path:
 * compressed first, forgotten monthly, restored on request but never forgotten on request.
 */
export type ForgettingRule = 'knowledge' | 'procedure' | 'episode'

/**
 * The priming channel whose search reaches a kind's index units (memory/priming/settings.ts).
 * `gathered`: read whole (no index units) and recalled, members first, only when a message asks for
 * order, change or the whole story (memory/threads/gathering-question.ts, decision 0080).
 */
export type KindChannel = 'related' | 'profile' | 'gathered'

/** Where a kind is counted: `engram status`, the dashboard's counts of a user's memory, the export report. */
export type CountedIn = 'status' | 'dashboard' | 'export'

export interface MemoryKindSpec {
  readonly home: KindHome
  /** The folder (`home: 'tree'`): also the memory path's root (`knowledge/tea.md`) and the export's. */
  readonly folder: string
  /** Filed in the shared tree as well (`shared/<folder>/`), not only the agent's and each user's. */
  readonly shared: boolean
  /**
   * The unit kind its documents are in the search index (`search_memory`, `engram search --kinds`),
   * or null when it is read whole and never searched. Indexed from every owner's tree when `home`
   * is `tree`; profiles (`shared-users`) are indexed by the indexer's own profile pass.
   */
  readonly unit: string | null
  /** The channel priming recalls its units through, or null (state and prompt layers are read whole). */
  readonly primedBy: KindChannel | null
  /** The forgetting rules it is judged by; null: never forgotten. */
  readonly forgetting: ForgettingRule | null
  /**
   * Versions of a document kept in `archive/versions/<kind>/` by the monthly version retention;
   * null keeps them all. Every write of every kind saves the version it replaces.
   */
  readonly versionsKept: number | null
  /** The agent may write `<folder>/<name>.md` with `write_memory_file` (home `tree` only). */
  readonly agentWritable: boolean
  /** The key its count has in the status, dashboard and export reports, the label people read, and which of them count it. */
  readonly count: { readonly key: string; readonly label: string; readonly in: readonly CountedIn[] } | null
}

/** The kinds, in the order every derived list keeps (the order of the former DOC_KINDS). */
export const MEMORY_KINDS = {
  knowledge: {
    home: 'tree',
    folder: 'knowledge',
    shared: true,
    unit: 'knowledge',
    primedBy: 'related',
    forgetting: 'knowledge',
    versionsKept: null,
    agentWritable: true,
    count: { key: 'knowledge', label: 'knowledge', in: ['status', 'dashboard', 'export'] },
  },
  procedure: {
    home: 'tree',
    folder: 'procedures',
    shared: true,
    unit: 'procedure',
    // Also matched by the skills channel's procedure matcher (memory/procedures/matching.ts).
    primedBy: 'related',
    forgetting: 'procedure',
    // The seed's monthly "retain only the 5 most recent versions per procedure file" (decision 0034).
    versionsKept: 5,
    agentWritable: true,
    count: { key: 'procedures', label: 'procedures', in: ['status', 'dashboard', 'export'] },
  },
  episode: {
    home: 'tree',
    folder: 'episodes',
    shared: false,
    unit: 'episode',
    primedBy: 'related',
    forgetting: 'episode',
    versionsKept: null,
    agentWritable: false,
    count: { key: 'episodes', label: 'episode days', in: ['status', 'dashboard', 'export'] },
  },
  user: {
    home: 'shared-users',
    folder: 'users',
    shared: false,
    unit: 'user',
    primedBy: 'profile',
    forgetting: null,
    versionsKept: null,
    agentWritable: false,
    count: { key: 'users', label: 'user profiles', in: ['status'] },
  },
  state: {
    home: 'tree',
    folder: 'state',
    shared: false,
    unit: null,
    primedBy: null,
    forgetting: null,
    versionsKept: null,
    agentWritable: true,
    count: { key: 'state', label: 'state', in: ['export'] },
  },
  prompt: {
    home: 'agent',
    folder: '',
    shared: false,
    unit: null,
    primedBy: null,
    forgetting: null,
    versionsKept: null,
    agentWritable: false,
    count: null,
  },
  thread: {
    // What was said about one subject, in time order with dates, pointing back to its turns
    // (memory/threads/, decision 0080): gathered at session boundaries, grown by appending. Not in the
    // search index — its units would share the other kinds' word statistics — but read whole by a
    // question that gathers, and scored over the threads alone (gathering-question.ts).
    home: 'tree',
    folder: 'threads',
    shared: false,
    unit: null,
    primedBy: 'gathered',
    forgetting: null,
    versionsKept: null,
    agentWritable: false,
    count: { key: 'threads', label: 'threads', in: ['status', 'dashboard', 'export'] },
  },
} as const satisfies Record<string, MemoryKindSpec>

type Kinds = typeof MEMORY_KINDS
export type DocKind = keyof Kinds
/** The unit kinds documents have in the search index. */
export type DocUnitKind = NonNullable<Kinds[DocKind]['unit']>
/** The kinds forgetting judges (and `forget_memory` forgets). */
export type ForgettableDocKind = { [K in DocKind]: Kinds[K]['forgetting'] extends null ? never : K }[DocKind]
/** The count keys of the kinds counted in `where`. */
export type CountKey<Where extends CountedIn> = {
  [K in DocKind]: Kinds[K]['count'] extends { key: infer Key; in: readonly (infer In)[] } ? (Where extends In ? Key : never) : never
}[DocKind]

/*
 * The live registry: the table above, plus what `registerMemoryKind` adds before the lists are
 * derived. Registering at run time is how the test of decision 0060 adds a kind without a second
 * table: a kind so registered is known to every layer but not to the types (`'goal' as DocKind`).
 */
const registry = new Map<string, MemoryKindSpec>()
let derived = false

/**
 * Adds a kind to the registry. Throws when a list was already derived from it (modules that derive
 * their lists at load were imported first: register before importing them) or when the kind's
 * name, folder or unit kind is already another kind's.
 */
export function registerMemoryKind(kind: string, spec: MemoryKindSpec): void {
  const taken = (what: string): Error => new Error(`Cannot register the memory kind "${kind}": ${what}.`)
  if (!/^[a-z][a-z0-9-]*$/.test(kind)) throw taken('a kind is lower-case letters, digits and "-"')
  if (spec.home === 'tree' && !/^[a-z][a-z0-9-]*$/.test(spec.folder)) throw taken('a tree kind needs a folder of lower-case letters, digits and "-"')
  for (const [name, other] of registry) {
    if (name === kind) throw taken('the kind exists')
    if (spec.home === 'tree' && other.home === 'tree' && other.folder === spec.folder) throw taken(`the folder "${spec.folder}" is the ${name} kind's`)
    if (spec.unit !== null && other.unit === spec.unit) throw taken(`the unit kind "${spec.unit}" is the ${name} kind's`)
  }
  if (derived) throw taken('lists of kinds were already derived from the registry; register before importing the modules that read it')
  registry.set(kind, spec)
}
for (const [kind, spec] of Object.entries(MEMORY_KINDS)) registerMemoryKind(kind, spec)

/** Every kind with its spec, in registry order. */
export function memoryKinds(): ReadonlyArray<readonly [DocKind, MemoryKindSpec]> {
  derived = true
  return [...registry].map(([kind, spec]) => [kind as DocKind, spec] as const)
}

/** The spec of a kind (undefined for a string that names no kind). */
export function kindSpec(kind: string): MemoryKindSpec | undefined {
  derived = true
  return registry.get(kind)
}

/** The kinds whose spec passes `test`, in registry order. */
export function docKindsWhere(test: (spec: MemoryKindSpec) => boolean): DocKind[] {
  return memoryKinds()
    .filter(([, spec]) => test(spec))
    .map(([kind]) => kind)
}

/** The tree kind filed in `folder` (`knowledge` → knowledge), if any. */
export function treeKindOfFolder(folder: string): DocKind | undefined {
  return memoryKinds().find(([, spec]) => spec.home === 'tree' && spec.folder === folder)?.[0]
}

/**
 * `members` in the order of `order` (a list people see in that order: the folders a listing shows,
 * the rows of `engram status`), then the members `order` does not name (a kind added since) in
 * their own order. Names of `order` that are not members are left out.
 */
export function inListingOrder<T extends string>(order: readonly string[], members: readonly T[]): T[] {
  const set = new Set<string>(members)
  const listed = order.filter((name): name is T => set.has(name))
  const seen = new Set<string>(listed)
  return [...listed, ...members.filter((name) => !seen.has(name))]
}

/**
 * The home-relative folder of a kind's documents for an owner whose tree is `tree` (`agents/a`,
 * `agents/a/users/ada`, `shared`) of the agent folder `agent` (`agents/a`).
 */
export function kindFolderRel(spec: MemoryKindSpec, tree: string, agent: string): string {
  if (spec.home === 'tree') return `${tree}/${spec.folder}`
  return spec.home === 'agent' ? agent : `shared/${spec.folder}`
}
