/**
 * The storage seams. Each is a small interface: a required core plus capabilities the engine
 * checks once. Memory systems depend on these interfaces only, never on a concrete backend; one
 * contract suite per seam runs against every implementation (embedded files + SQLite always,
 * PostgreSQL when a server is given).
 *
 * All methods are async so that a networked backend fits the same seam; the embedded ones are
 * synchronous underneath.
 */
import type { ActivityEvent, ActivityType } from '../core/activity.ts'
import type { Engram, EngramEntry, EngramScope, RuleKind } from '../core/engram.ts'
import type { DocKind, Frontmatter, MemoryDoc } from '../core/memory-doc.ts'
import { type DocUnitKind, inListingOrder, memoryKinds } from '../core/memory-kinds.ts'
import type { ContextItem, MessageInput, StoredMessage, Summary, SummaryKind, SummaryMethod } from '../core/message.ts'
import type { Owner, Viewer } from '../core/owner.ts'
import type { OwnersStatus } from './owner-counts.ts'
import type { OwnersMigrationReport } from './owners-migration.ts'

/** A line a parser could not read. It is kept in the file as it is, and reported. */
export interface ParseProblem {
  /** Path relative to the engram home (or absolute for files outside it). */
  file: string
  line: number
  text: string
  reason: string
}

export type EncodeOutcome = { kind: 'added'; entry: EngramEntry } | { kind: 'duplicate'; existing: EngramEntry }

export const ENGRAM_FILES = ['profile', 'rules', 'lessons'] as const
export type EngramFile = (typeof ENGRAM_FILES)[number]

/**
 * Declarative memory of one scope (Anton's Hippocampus): `profile.md`, `rules.md`,
 * `lessons.md`, `topics/<slug>.md`. It stores and reads; it does not decide what to remember.
 */
export interface EngramStore {
  readonly scope: EngramScope
  /** Where the scope lives, for messages (a folder for files, a label for rows). */
  readonly location: string
  recallIdentity(): Promise<EngramEntry[]>
  recallRules(): Promise<Record<RuleKind, EngramEntry[]>>
  /** Lessons, most recent first, as many as fit in `tokenBudget` (all when omitted). */
  recallLessons(tokenBudget?: number): Promise<EngramEntry[]>
  /** The topic file's markdown, or null. */
  recallTopic(slug: string): Promise<string | null>
  listTopics(): Promise<string[]>
  /** Topic files that are listed but cannot be read (decision 0025: a folder, a pipe, a link leading out, too large); kept as they are. */
  topicProblems(): Promise<ParseProblem[]>
  /**
   * Tool wisdom: the "when" rules tagged for `tool` and the lessons tagged for it (by `tool`, or a
   * topic named like it); every tagged one when `tool` is omitted. Untagged rules are not tool wisdom.
   */
  recallToolWisdom(tool?: string): Promise<EngramEntry[]>
  /** Insert a rule under its `## Always/Never/When` section; deduplicated; under a lock. */
  encodeRule(entry: EngramEntry): Promise<EncodeOutcome>
  /** Append a lesson (and cross-file it into `topics/<topic>.md`); deduplicated; under a lock. */
  encodeLesson(entry: EngramEntry): Promise<EncodeOutcome>
  /** Replace the identity snapshot (profile.md) atomically. */
  rewriteIdentity(entries: EngramEntry[]): Promise<void>
  /**
   * Replace a whole file's entries atomically (compaction). Unreadable lines are kept. Given a
   * function, it is called with the entries as they are *inside the lock* and returns the new list
   * (or null to leave the file alone), so that nothing encoded meanwhile by another process is lost.
   */
  rewriteAll(file: EngramFile, entries: EngramEntry[] | ((current: EngramEntry[]) => EngramEntry[] | null)): Promise<void>
  /** Every entry of a file, plus the lines that could not be parsed. */
  read(file: EngramFile): Promise<{ entries: EngramEntry[]; problems: ParseProblem[] }>
  /**
   * Optional (a backend whose memory is rows; the embedded home keeps these as files that
   * forgetting moves itself): replace a topic file's free text under the lock `encodeLesson` files
   * lessons into it under. `change` gets the text (null when there is none) and returns the new
   * text, or null to leave the topic as it is. `slug` must be a topic slug.
   */
  writeTopic?(slug: string, change: (text: string | null) => string | null): Promise<void>
  /** Optional, with `writeTopic`: the archive where forgetting keeps this owner's forgotten entries and topics. */
  readonly archive?: EngramArchive
}

/**
 * What forgetting keeps of engram files (decision 0023), as the owner's tree has it under
 * `archive/`: `forgotten/<file>` (rules, lessons, profile) holds forgotten entries, each line with
 * a metadata comment, and `forgotten/topics/<slug>` a forgotten topic file (one forgotten before
 * under the same name set aside as `<slug>.<stamp>`); a project's memory under
 * `forgotten/project/…`. Names are relative to `archive/`, without `.md`. The archive is the
 * owner's, whatever scope's store reaches it (a project's forgotten memory is kept in the owner's
 * tree, not in the project). Every change is atomic and serialised with the store's own writes.
 */
export interface EngramArchive {
  /** Every name archived there, of both scopes, sorted. */
  list(): Promise<string[]>
  /** An archived file's text, or null when there is none (or it is too large to read). */
  read(name: string): Promise<string | null>
  /**
   * Changes this scope's archive of forgotten `file` entries: `change` gets its text ('' when
   * there is none) and returns the new text, or null to leave it.
   */
  updateEntries(file: EngramFile, change: (text: string) => string | null): Promise<void>
  /**
   * Moves this scope's topic `slug` into the archive, in one step with the store's lock of the
   * topic; an archived copy already there is first set aside as `<slug>.<stamp>`. False when there
   * is no live topic (nothing changes).
   */
  forgetTopic(slug: string, stamp: string): Promise<boolean>
  /** Moves an archived topic back: `missing` when none is archived, `occupied` when a live one is there (nothing changes then). */
  restoreTopic(slug: string): Promise<'restored' | 'missing' | 'occupied'>
  /** Deletes this scope's live topic `slug` and its archived copies (set-aside ones too); returns how many. */
  purgeTopic(slug: string): Promise<number>
  /**
   * Puts an archived file of this scope (a name `list` gave, of another store of the same memory:
   * `engram migrate`, decision 0052) with its text as it is. `there` when that text is there
   * already, `occupied` when another one is (nothing changes: an archive is never written over).
   * Throws invalid_argument for a name that is not one of this scope's archive.
   */
  put(name: string, text: string): Promise<'written' | 'there' | 'occupied'>
}

export interface DocRef {
  kind: DocKind
  slug: string
  path: string
  hash: string
  /** Last modification, ISO-8601. */
  modifiedAt: string
}

export type ArchiveReason = 'versions' | 'merged' | 'forgotten' | 'procedure_versions'

export interface DocWriteOptions {
  /** Why the document changed; recorded with the archived version. */
  reason?: string
  /**
   * The instant of the change (ISO-8601; default now): its saved version is stamped with it. A
   * write repeated with the same instant after a crash (a consolidation plan applied again,
   * unit-plan.ts) finds the version it had already saved, when that holds the current text, and
   * does not save it twice.
   */
  at?: string
}

/**
 * Documents with frontmatter (AnimaWorks' archive): knowledge, procedures, episodes, user
 * profiles, state and prompt layers. Every rewrite first saves the old version under `archive/`.
 */
export interface DocumentStore {
  list(kind: DocKind): Promise<DocRef[]>
  /** The slugs `list` would return, sorted, without reading the documents (a listing that stays cheap as episodes pile up). */
  slugs(kind: DocKind): Promise<string[]>
  read(kind: DocKind, slug: string): Promise<MemoryDoc | null>
  /** Create or replace; an existing file is versioned into `archive/versions/` first. */
  write(kind: DocKind, slug: string, frontmatter: Frontmatter, body: string, options?: DocWriteOptions): Promise<MemoryDoc>
  /** Append text to the body (episodes, logs); creates the file when missing. No versioning. */
  append(kind: DocKind, slug: string, text: string, frontmatter?: Frontmatter): Promise<MemoryDoc>
  /** Move a document out of the live set into `archive/<reason>/`; returns the archive path. */
  archive(kind: DocKind, slug: string, reason: Exclude<ArchiveReason, 'versions'>): Promise<string>
  /** Bring an archived document back; returns it. */
  restore(kind: DocKind, slug: string, reason: Exclude<ArchiveReason, 'versions'>): Promise<MemoryDoc>
  /** Archived copies of a document, newest first. */
  versions(kind: DocKind, slug: string): Promise<Array<{ path: string; archivedAt: string }>>
  /**
   * Erase a document for real (decision 0023): the live file, its copies under `archive/<reason>/`
   * and its saved versions (and their lines in the versions log). Only `engram forget … --purge`
   * calls it. Returns the paths removed.
   */
  purge(kind: DocKind, slug: string): Promise<string[]>
  /**
   * Version retention (the seed's monthly "keep the 5 most recent versions"; decision 0034): keeps
   * the `keep` newest saved versions of a document where `versions()` lists them and moves the
   * older ones to `archive/forgotten/versions/<kind>/`, same file names — nothing is deleted
   * (decision 0023): `purge` still removes them, and moving a file back brings it back. Records
   * each move in the versions log. Returns the paths the moved versions have now, oldest last; a
   * second call with the same `keep` returns `[]`. `keep` is a whole number ≥ 0.
   */
  retainVersions(kind: DocKind, slug: string, keep: number): Promise<string[]>
  /** Files whose frontmatter could not be parsed (kept as they are, body read as plain text); of `kinds` only, when given. */
  problems(kinds?: readonly DocKind[]): Promise<ParseProblem[]>
  /**
   * Optional: the file text of an archived copy or saved version of this store's documents by the
   * path `archive`, `versions` or `retainVersions` gave it (`agents/a/archive/versions/knowledge/x.<stamp>.md`),
   * or null when nothing is archived there.
   */
  readArchived?(path: string): Promise<string | null>
  /**
   * Optional, with `readArchived` (a backend whose archive is rows, where no folder lists it): the
   * paths of every archived copy and saved version of this owner's documents, sorted.
   */
  archivedPaths?(): Promise<string[]>
  /**
   * Optional, with `archivedPaths`: puts an archived copy or saved version, with its file text as it
   * is, at the path another store of the same memory gave it (`engram migrate`, decision 0052), so
   * that `restore` and `versions` find it there. A version's time is the stamp its name carries (a
   * copy's: now). `there` when that text is there already, `occupied` when another one is (nothing
   * changes: an archive is never written over). Throws invalid_argument for a path that is not
   * this store's archive (the paths `archivedPaths` lists).
   */
  putArchived?(path: string, text: string): Promise<'written' | 'there' | 'occupied'>
}

export interface Conversation {
  id: number
  sessionId: string
  agent: string
  user: string | undefined
  createdAt: string
}

export interface NewSummary {
  kind: SummaryKind
  depth: number
  content: string
  tokenCount: number
  sourceTokenCount: number
  earliestAt: string
  latestAt: string
  method: SummaryMethod
  /** For a leaf: the messages it folds. */
  messageIds?: number[]
  /** For a condensed summary: the summaries it folds. */
  parentIds?: string[]
}

/**
 * The lossless context store (anna's `ctx_*` tables): conversations, messages (never deleted),
 * summaries and their DAG edges, the ordered context items.
 */
/** A page of a context window (ContextStore.items): positions strictly between `after` and `before`. */
export interface ItemRange {
  after?: number
  before?: number
  limit?: number
  /** Take the newest `limit` items of the range rather than the oldest (they are still returned in order). */
  newest?: boolean
}

/** What `ContextStore.appendMessagesIndexed` writes to the index beside the messages. */
export interface AppendIndexing {
  index: SearchIndex
  /**
   * The units to write, given `window`: up to `before` stored messages preceding the appended ones
   * (read inside the transaction, so another writer's messages are seen), then the appended ones as stored.
   */
  units(window: StoredMessage[], appended: number): IndexUnit[]
  before: number
}

export interface ContextStore {
  /** Find or create the conversation of a session. */
  conversation(sessionId: string, owner: { agent: string; user?: string }): Promise<Conversation>
  findConversation(sessionId: string, agent: string): Promise<Conversation | null>
  listConversations(agent?: string): Promise<Conversation[]>
  /** Append messages in order and add one context item each; atomic. */
  appendMessages(conversationId: number, messages: Array<MessageInput & { at: string; tokenCount: number }>): Promise<StoredMessage[]>
  /**
   * Optional capability: `appendMessages` and the search-index units `indexing.units` makes of the
   * stored messages written in the SAME transaction, when `indexing.index` keeps its units in this
   * store's database — an acknowledged append is then findable, and a crash leaves neither. Returns
   * undefined, having written nothing, for any other index: the caller appends, then indexes.
   */
  appendMessagesIndexed?(
    conversationId: number,
    messages: Array<MessageInput & { at: string; tokenCount: number }>,
    indexing: AppendIndexing,
  ): Promise<StoredMessage[] | undefined>
  messages(conversationId: number, range?: { fromSeq?: number; toSeq?: number; limit?: number }): Promise<StoredMessage[]>
  messagesById(ids: number[]): Promise<StoredMessage[]>
  messageCount(conversationId: number): Promise<number>
  /**
   * The current context window, in order; with a range, a page of it: the items after position
   * `after` and before `before` (both exclusive), at most `limit` — the oldest of them, or the
   * newest with `newest: true` — still in order. A long window is read page by page this way.
   */
  items(conversationId: number, range?: ItemRange): Promise<ContextItem[]>
  /** How many items the window has (before position `before`, exclusive, when given). */
  countItems(conversationId: number, before?: number): Promise<number>
  /** Items, stored tokens (messages' and summaries' own counts) and last position of the window, in one read. */
  windowStats(conversationId: number): Promise<{ items: number; tokens: number; lastPosition: number }>
  /**
   * Record a summary and make it replace the context items at `positions` (contiguous), in one
   * transaction: either the DAG and the items change together or nothing changes.
   */
  replaceWithSummary(conversationId: number, positions: number[], summary: NewSummary): Promise<Summary>
  /**
   * Several `replaceWithSummary` in one transaction, in order (a compaction slice's summaries):
   * all of them or, when any one is refused, none.
   */
  replaceWithSummaries(conversationId: number, replacements: Array<{ positions: number[]; summary: NewSummary }>): Promise<Summary[]>
  summary(id: string): Promise<Summary | null>
  summariesById(ids: string[]): Promise<Summary[]>
  /** Edges of the DAG: the messages a leaf folds, the summaries a condensed summary folds. */
  summaryChildren(id: string): Promise<{ messageIds: number[]; summaryIds: string[] }>
  /** The summaries that fold this summary or message (upwards edges). */
  summaryParents(target: { summaryId: string } | { messageId: number }): Promise<string[]>
  /**
   * Erase a user (decision 0023): every conversation of `user`, of every agent, with its messages,
   * summaries, context items, DAG edges, review marks and session info, and the user's per-agent
   * notes. The one way a message is ever deleted; only `engram forget --user … --purge` calls it.
   */
  purgeUser(user: string): Promise<{ conversations: number; messages: number; summaries: number }>
}

/** Unit kinds that are not documents: conversations, activity, engram entries and topics, skills. */
type EntryUnitKind = 'message' | 'summary' | 'activity' | 'lesson' | 'rule' | 'profile' | 'topic' | 'skill'
export type UnitKind = EntryUnitKind | DocUnitKind
/*
 * The order people read them in (`--kinds`, `search_memory`, the dashboard's picker); a document
 * kind's unit is taken from the registry (core/memory-kinds.ts) and one it adds follows these.
 */
const UNIT_KIND_ORDER = ['message', 'summary', 'episode', 'activity', 'lesson', 'rule', 'profile', 'topic', 'knowledge', 'procedure', 'skill', 'user'] as const satisfies readonly UnitKind[]
const ENTRY_UNIT_KINDS: readonly EntryUnitKind[] = ['message', 'summary', 'activity', 'lesson', 'rule', 'profile', 'topic', 'skill']
/** Every unit kind of the index. Typed as a non-empty tuple for `z.enum`. */
export const UNIT_KINDS = inListingOrder(UNIT_KIND_ORDER, [
  ...ENTRY_UNIT_KINDS,
  ...memoryKinds().flatMap(([, spec]) => (spec.unit === null ? [] : [spec.unit as DocUnitKind])),
]) as [UnitKind, ...UnitKind[]]

/** One retrievable unit in the search index. */
export interface IndexUnit {
  /** Stable id, e.g. `msg:12`, `doc:knowledge/tea#2`, `rule:global:<hash>`. */
  id: string
  kind: UnitKind
  text: string
  /** Where it came from: a file path relative to the home, or `conv:<id>`. */
  source: string
  /** Ids of the messages or documents this unit stands for (for expansion and scoring). */
  provenance: string[]
  scope?: EngramScope
  /** The agent that wrote it; undefined for what every agent of the home shares (shared memory, user profiles). */
  agent?: string
  user?: string
  /** Whose memory it is (decision 0017); `agent` when omitted. */
  owner?: Owner
  /** ISO-8601 instant the memory is about (message time, document creation). */
  createdAt: string
  updatedAt?: string
  /** sha256 of `text` plus anything else that, when changed, needs re-embedding. */
  hash: string
  vector?: Float32Array
  /** Explicit links (`[[slug]]`) to other units' ids or sources. */
  links?: string[]
  meta?: Record<string, unknown>
  /**
   * Text around the unit that should also find it, down-weighted (a message's neighbours in its
   * session: `near` = the turns just before and after, `far` = two away). Indexed, never returned.
   */
  context?: { near?: string; far?: string }
}

export interface IndexFilter {
  kinds?: UnitKind[]
  scope?: EngramScope
  agent?: string
  user?: string
  /** Only what this viewer may see (decision 0017): its owners, of its agent or of every agent. */
  viewer?: Viewer
  /** Only units created at or after this instant. */
  since?: string
  until?: string
  sources?: string[]
}

export interface IndexQuery extends IndexFilter {
  /** Full-text query (plain words; the index escapes it). */
  text?: string
  /** Terms already analysed by the index's own analysis (stems); when given, `text` is not analysed again. */
  terms?: string[]
  /** Weights of the down-weighted fields against the unit's own text (1): neighbours near/far, related words. */
  fieldWeights?: { near: number; far: number; related: number }
  vector?: Float32Array
  /** How many candidates each channel returns. */
  limit: number
}

export interface IndexCandidate {
  id: string
  kind: UnitKind
  /** Lexical score, higher is better (BM25 negated), when the unit matched the text. */
  lexical?: number
  /** Cosine similarity in [-1, 1], when a vector was given and the unit has one. */
  dense?: number
  /** The unit itself, when the index read it while ranking (callers then need no `get` for it). */
  unit?: StoredUnit
}

export interface StoredUnit extends Omit<IndexUnit, 'vector' | 'owner'> {
  owner: Owner
  accessCount: number
  lastAccessAt: string | undefined
}

export interface IndexCapabilities {
  fullText: boolean
  /** How vectors are searched: a native extension, plain TypeScript, or not at all. */
  vectors: 'sqlite-vec' | 'pgvector' | 'typescript' | false
}

/**
 * One index over every retrievable unit. It returns raw candidates per channel (lexical, dense);
 * fusion and spreading activation are done above it, in memory/retrieval.
 */
export interface SearchIndex {
  readonly capabilities: IndexCapabilities
  upsert(units: IndexUnit[]): Promise<void>
  remove(ids: string[]): Promise<void>
  /** Remove every unit of a source (a file that was deleted or rewritten). */
  removeSource(source: string): Promise<number>
  /**
   * Erase a user (decision 0023): every unit they own (`user:<id>`) or that records them
   * (`user`), of every agent, and the speaker names no remaining message carries. Returns how many units.
   */
  purgeUser(user: string): Promise<number>
  /** Ids and hashes of the units of a source, to skip unchanged ones on reindex. */
  hashes(source: string): Promise<Map<string, string>>
  sources(): Promise<string[]>
  search(query: IndexQuery): Promise<IndexCandidate[]>
  /**
   * Units matching `filter`, by source (in code-point order) and then as they were first written,
   * `offset` of them skipped, at most `limit`: a listing without a query (the dashboard's), read a
   * page at a time whatever the size of the index.
   */
  list(filter: IndexFilter, page: { limit: number; offset?: number }): Promise<StoredUnit[]>
  get(ids: string[]): Promise<StoredUnit[]>
  /** Count a recall of `ids` at `at`. May be written later (batched); this index's reads include it at once. */
  recordAccess(ids: string[], at: string): Promise<void>
  /** Optional: write what is buffered (access counts) now. Closing the backend calls it. */
  flush?(): Promise<void>
  /**
   * Optional: raises units' access counts to at least `count` and their last access to at least
   * `lastAccessAt`, written at once (a migration carrying another index's counts, decision 0052:
   * running it twice changes nothing, and no count goes down). Unknown ids are skipped. Returns how
   * many units changed.
   */
  raiseAccess?(units: Array<{ id: string; count: number; lastAccessAt?: string }>): Promise<number>
  count(): Promise<Record<UnitKind, number>>
  /** Optional: the distinct analysed terms of the index (query expansion looks for neighbours among them). */
  vocabulary?(): Promise<ReadonlySet<string>>
  /** Optional: how many units hold each analysed term in their own text (query expansion weighs its terms by IDF). */
  documentFrequencies?(terms: readonly string[]): Promise<Map<string, number>>
  /** Speaker names seen on message units (of `agent`, when given): the participants of its conversations. */
  participants?(agent?: string): Promise<string[]>
  /**
   * Optional: a stamp of the units of `kinds`. Two equal stamps mean that no unit of those kinds was
   * added, changed or removed in between, through this index or by another process — a reader may
   * keep what it listed of them until the stamp changes (access counts are not covered: read them
   * again). Absent where a backend cannot tell cheaply; readers then list every time.
   */
  stamp?(kinds: readonly UnitKind[]): Promise<string>
}

export interface ActivityQuery {
  /** Inclusive ISO instants. */
  since?: string
  until?: string
  types?: ActivityType[]
  /** Newest first when set. */
  limit?: number
}

export interface ActivityRecord extends ActivityEvent {
  /** Where the event is stored: `activity/<date>.jsonl#L<line>`. */
  ref: string
}

/** The unified activity log, one JSONL file per day. */
export interface ActivityLog {
  /** Append one event. Never throws into the caller: failures are reported by `onError`. */
  append(event: ActivityEvent): Promise<void>
  /** Events in chronological order (or newest first when `limit` is given). */
  read(query?: ActivityQuery): Promise<ActivityRecord[]>
  /** Days that have a log, `YYYY-MM-DD`, ascending. */
  days(): Promise<string[]>
  /** Lines that could not be parsed (a cut-off last line after a crash), kept and reported. */
  problems(): Promise<ParseProblem[]>
}

export type LockOutcome<T> = { kind: 'done'; value: T } | { kind: 'busy'; holder?: string }

/** Named exclusive locks, safe across processes sharing a home. */
export interface Locks {
  /**
   * Run `fn` holding `name`. With `wait` (default) it queues behind the other holders and throws
   * `lock_busy` only when the lock has not changed hands for `timeoutMs` (a holder that stays);
   * without, it returns `{ kind: 'busy' }` at once when someone else holds it.
   */
  withLock<T>(name: string, fn: () => Promise<T>, options?: { wait?: boolean; timeoutMs?: number }): Promise<LockOutcome<T>>
}

export type JobStatus = 'ok' | 'skipped' | 'failed'

export interface JobRun {
  id: number
  job: string
  agent: string
  startedAt: string
  finishedAt: string
  status: JobStatus
  details: Record<string, unknown>
}

/** Scheduled background work: which runs happened, so jobs are idempotent and catch up. */
export interface Jobs {
  record(run: Omit<JobRun, 'id'>): Promise<JobRun>
  lastRun(job: string, agent: string, status?: JobStatus): Promise<JobRun | null>
  runs(options?: { job?: string; agent?: string; limit?: number }): Promise<JobRun[]>
  /** Delete the records of these jobs, of every agent (erasing a user removes the runs named after their sessions); returns how many. */
  purgeRuns(jobs: string[]): Promise<number>
}

/** Whether a session is in a conversation (`open`) or past a boundary (`closed`). */
export type SessionStatus = 'open' | 'closed'

/** A session as the lifecycle sees it: who it is with, when it was active, how many turns it had. */
export interface SessionRecord {
  agent: string
  sessionId: string
  /** The user the session is with (set by the first turn that names one). */
  user: string | undefined
  status: SessionStatus
  /** First activity of the current open period (a closed session that becomes active again starts a new one). */
  openedAt: string
  lastActivityAt: string
  /** Turns begun in the session over all its periods: the number of the latest turn. */
  turns: number
  closedAt: string | undefined
  /** Why the last boundary closed it (`idle`, `heartbeat`, `end`). */
  closeReason: string | undefined
}

export type QueuedJobStatus = 'queued' | 'running' | 'done' | 'skipped' | 'failed'

/** Work to do later, by whichever process claims it first. */
export interface JobInput {
  agent: string
  /** What to run (`immediate-encoding`, `sleep-replay`, `identity`, …); the runner maps it to a handler. */
  kind: string
  /** At most one job per (agent, key), whatever its status: enqueueing a key again does nothing. */
  key?: string
  /** Everything the handler needs, as JSON: a job never depends on the memory of the process that queued it. */
  payload: Record<string, unknown>
  /** Not before this instant. */
  runAfter: string
  /** Claims (including ones whose lease expired) before the job is given up as failed; default 3. */
  maxAttempts?: number
}

export interface QueuedJob {
  id: number
  agent: string
  kind: string
  key: string | undefined
  payload: Record<string, unknown>
  status: QueuedJobStatus
  runAfter: string
  /** How many times it was claimed. */
  attempts: number
  maxAttempts: number
  /** Who holds it while `running`, and until when; an expired lease makes it claimable again. */
  leaseOwner: string | undefined
  leaseUntil: string | undefined
  createdAt: string
  updatedAt: string
  finishedAt: string | undefined
  result: Record<string, unknown> | undefined
  /** The last failure, kept when the job is retried. */
  error: string | undefined
}

/** How a claimed job ended. `failed` with `retryAt` is queued again while attempts remain. */
export type JobSettlement =
  | { status: 'done' | 'skipped'; at: string; result?: Record<string, unknown> }
  | { status: 'failed'; at: string; error: string; retryAt?: string }

/** What a turn was given, stored with it so that "why did the agent know that?" has an answer later. */
export interface TurnRecord {
  agent: string
  sessionId: string
  /** 1-based turn number in the session. */
  turn: number
  user: string | undefined
  /** The user message that opened the turn. */
  messageId: number
  /** The stored replies of the turn (added when it ends). */
  replyIds: number[]
  startedAt: string
  /** How priming classified the message. */
  type: string
  /** The turn's provenance (`TurnProvenance`), as JSON. */
  provenance: Record<string, unknown>
}

/**
 * Lifecycle state (DESIGN principle 9): everything that decides future work lives here, not in a
 * process — session activity and turn counts, the previous heartbeat, per-(agent, user) counters,
 * a durable queue of due work with atomic claims and leases, and what each turn injected. Any
 * process may be the one that closes a session, claims a job or answers for a past turn.
 *
 * Instants are ISO-8601; implementations store them normalised (`toISOString()`), so they compare.
 */
export interface Lifecycle {
  /** Note activity in a session at `at`: creates it, keeps it open, or reopens a closed one (a new period). */
  touchSession(agent: string, sessionId: string, options: { at: string; user?: string }): Promise<{ session: SessionRecord; opened: boolean }>
  /** `touchSession` that also counts a turn: `session.turns` is the new turn's number. Atomic. */
  beginTurn(agent: string, sessionId: string, options: { at: string; user?: string }): Promise<{ session: SessionRecord; opened: boolean }>
  session(agent: string, sessionId: string): Promise<SessionRecord | null>
  /** Open sessions, least recently active first; with `quietSince`, only those without activity after it. */
  openSessions(agent: string, options?: { quietSince?: string }): Promise<SessionRecord[]>
  /**
   * Close a session and queue its boundary work in one transaction. With `ifLastActivityAt` it
   * closes only an open session whose last activity is still exactly that (activity arriving
   * meanwhile keeps it open: a live conversation is never cut); without, it closes an open session
   * or one it has never seen. True when this call closed it (and so queued `enqueue`).
   */
  closeSession(
    agent: string,
    sessionId: string,
    options: { at: string; reason: string; ifLastActivityAt?: string; enqueue?: Array<Omit<JobInput, 'agent'>> },
  ): Promise<boolean>
  /** Record a heartbeat at `at`; returns the previous heartbeat's instant (undefined for the first). */
  recordHeartbeat(agent: string, at: string): Promise<string | undefined>
  /** Add one to a named counter of (agent, user) and return the new value (1 the first time). */
  increment(agent: string, user: string | undefined, name: string, at: string): Promise<number>
  /** Queue a job; `created` is false when a job with its key already exists (that job is returned). */
  enqueue(job: JobInput): Promise<{ job: QueuedJob; created: boolean }>
  /**
   * Atomically take the next due job of `agent` (queued and due, or running with an expired lease)
   * for `owner` until `now + leaseMs`; only job `id` when given. Null when nothing is claimable.
   * A job whose lease expired after its last attempt is marked failed instead of claimed.
   */
  claim(agent: string, options: { owner: string; now: string; leaseMs: number; id?: number }): Promise<QueuedJob | null>
  /** End a claimed job. False when `owner` no longer holds it (its lease expired and another process took it). */
  settle(id: number, owner: string, settlement: JobSettlement): Promise<boolean>
  /** Jobs of `agent`, newest first. */
  jobs(agent: string, options?: { status?: QueuedJobStatus[]; kind?: string; limit?: number }): Promise<QueuedJob[]>
  /** Delete jobs of `agent` that ended `done` or `skipped` before `finishedBefore` (failed ones stay for inspection); returns how many. */
  pruneJobs(agent: string, finishedBefore: string): Promise<number>
  /** Store (or replace) what a turn was given. */
  saveTurn(record: Omit<TurnRecord, 'replyIds'>): Promise<void>
  /** Add the stored replies of a turn; each message id then finds the turn too. */
  addTurnReplies(agent: string, sessionId: string, turn: number, messageIds: number[]): Promise<void>
  /** A stored turn, by session and number or by the id of any of its messages (the user's or a reply). */
  turn(agent: string, ref: { sessionId: string; turn: number } | { messageId: number }): Promise<TurnRecord | null>
  /** The latest turns of (agent, user) over all their sessions, newest first (`undefined`: sessions without a user). */
  recentTurns(agent: string, user: string | undefined, limit: number): Promise<TurnRecord[]>
  /**
   * Erase a user (decision 0023), of every agent: their session records, stored turns (and the
   * messages linked to them), counters, and the queued jobs whose payload names them.
   */
  purgeUser(user: string): Promise<{ sessions: number; turns: number; counters: number; jobs: number }>
}

/**
 * A memory file a user's session asked to write for the agent or for everyone (a promotion,
 * decision 0017), held for that user's yes in copilot mode.
 */
export interface PendingDocument {
  /** The memory path it is written to (`knowledge/x.md`, `shared/knowledge/x.md`). */
  path: string
  owner: Owner
  content: string
  mode: 'overwrite' | 'append'
}

/** An engram (or a promoted memory file) the encoding gate holds until the user says yes or no (copilot mode). */
export interface PendingConfirmation {
  /** Stable id used to accept or reject it. */
  id: string
  /** The engram, with the owner it will be saved for; absent for a memory file. */
  engram?: Engram
  /** The memory file to write, when that is what waits. */
  document?: PendingDocument
  /** ISO instant it was queued. */
  queuedAt: string
  /** Why it waits (e.g. `copilot mode: confidence medium`). */
  reason: string
  /** The user whose session asked for it (they answer it); undefined for a session without a user. */
  askedBy?: string
}

/** A pending confirmation of an engram (what the encoder queues). */
export type PendingMemory = PendingConfirmation & { engram: Engram }

/** Which pending confirmations an answer is about: some ids, or every one still pending. */
export type ConfirmationSelection = string[] | 'all'

/**
 * Pending confirmations that survive a restart, kept per (agent, user) (decision 0017): a user
 * sees and answers only what their own sessions asked. A UI reads them only after an answer,
 * before the next prompt; nothing here pushes anything at the user mid-turn. `user` undefined is
 * the agent's own queue (sessions without a user, the CLI without --user).
 */
export interface ConfirmationQueue {
  /** Still waiting, oldest first. A read: calling it changes nothing. */
  pending(user?: string): Promise<PendingConfirmation[]>
  /** Queue an engram; the same engram already pending (same scope, owner, kind and text) is returned instead. */
  enqueue(engram: Engram, reason: string, user?: string): Promise<PendingMemory>
  /** Queue a memory file write; the same write already pending is returned instead. */
  enqueueDocument(document: PendingDocument, reason: string, user?: string): Promise<PendingConfirmation>
  /** Mark pending ones accepted and return them; unknown or already decided ids are ignored. */
  accept(selection: ConfirmationSelection, user?: string): Promise<PendingConfirmation[]>
  /** Mark pending ones rejected and return them; unknown or already decided ids are ignored. */
  reject(selection: ConfirmationSelection, user?: string): Promise<PendingConfirmation[]>
  /** Every confirmation `user` asked for or that would save memory they own, of every agent, decided ones too (export, decision 0023). */
  ofUser(user: string): Promise<UserConfirmation[]>
  /** Erase those confirmations (decision 0023); returns how many. */
  purgeUser(user: string): Promise<number>
}

/** A confirmation as the record of one user keeps it: whose agent asked, and what was answered. */
export interface UserConfirmation extends PendingConfirmation {
  agent: string
  status: 'pending' | 'accepted' | 'rejected'
  decidedAt?: string
}

/**
 * The memory stores of one owner (decision 0017): the agent's, one user's, or the home's shared
 * memory. Each is opened on that owner's own tree or rows, so a store cannot reach another
 * owner's memories.
 */
export interface OwnedStores {
  readonly owner: Owner
  engrams(scope: EngramScope): EngramStore | undefined
  readonly documents: DocumentStore
  readonly activity: ActivityLog
}

/** What a backend can do, checked once by the engine. */
export interface BackendCapabilities {
  fullText: boolean
  vectors: IndexCapabilities['vectors']
  /**
   * Why vectors are off when the backend cannot keep them (PostgreSQL without pgvector): memories
   * are then indexed and searched by their words, and status, doctor and a warning on open say so.
   */
  vectorsOff?: string
  transactions: boolean
  /**
   * Where memory — engram files and topics, documents, their versions and archive — is held
   * (decision 0059). Code that differs between backends asks this, never the backend's name.
   * - `'files'`: markdown files at the home's paths (`home-layout.ts`). Code may stat, read and copy
   *   them byte for byte, and find what no seam lists (versions of a procedure no longer live).
   * - `'rows'`: records behind the seams only; nothing of it is at the home's paths, so code reads
   *   and writes through the seams (`memory/tree/memory-seam-source.ts` shows them as files).
   */
  memory: 'files' | 'rows'
  /** How a person is told what the storage is: `engram status` and `engram doctor` print these. */
  describe: {
    /** What holds the memory: "SQLite + markdown files". */
    storage: string
    /** How full-text search ranks, when it is on: "FTS5 with BM25". */
    fullText: string
  }
  /** Human-readable facts for `engram doctor` (SQLite version, extension versions). */
  facts: Record<string, string>
  /** The backend's own checks for `engram doctor` (its server, its extensions), worked out on open. */
  checks: BackendCheck[]
}

/** One line of `engram doctor` about the storage: what was found, and the fix when it is a warning. */
export interface BackendCheck {
  name: string
  status: 'ok' | 'warn'
  detail: string
  fix?: string
}

/** A storage backend: every seam for one home (or database). */
export interface Backend {
  /** A label for people (status, export manifests, messages); code never branches on it — it asks `capabilities`. */
  readonly name: string
  readonly capabilities: BackendCapabilities
  engrams(scope: EngramScope): EngramStore | undefined
  readonly documents: DocumentStore
  readonly context: ContextStore
  readonly index: SearchIndex
  readonly activity: ActivityLog
  readonly locks: Locks
  readonly jobs: Jobs
  /** Session records, heartbeats, counters, the queue of due work, stored turns. */
  readonly lifecycle: Lifecycle
  /** Pending confirmations of this agent (and its open project). */
  readonly confirmations: ConfirmationQueue
  /** The stores of one owner; `owned('agent')` holds the same stores as `engrams`, `documents` and `activity`. */
  owned(owner: Owner): OwnedStores
  /** Users that have memory of this agent (their own tree), sorted. */
  users(): Promise<string[]>
  /**
   * Optional: erase the memory `user` owns where a backend keeps it as rows (PostgreSQL), of
   * every agent — engram files and topics, documents with their archived copies and versions,
   * the activity log (decision 0023). The embedded backend keeps these as files in the user's
   * trees, which the erasure removes itself. Returns the agents that had some and how many rows went.
   */
  purgeUserMemory?(user: string): Promise<{ agents: string[]; rows: number }>
  /**
   * Optional: rewrite the stored data so that nothing deleted is left in it, not even in free
   * space (an erasure calls it last, decision 0023). SQLite: VACUUM, then an emptied log.
   */
  scrub?(): Promise<void>
  /**
   * Optional, a backend whose homes were written before owners (the embedded one): moves what
   * such a home recorded as a user's into that user's tree, once per home (decision 0024); later
   * calls return the recorded report. `openMindCore` calls it on open when present.
   */
  migrateToOwners?(): Promise<OwnersMigrationReport & { ranNow: boolean }>
  /** Optional: index units and memory files per owner as this agent sees them, and what the migration assigned (`engram status`). */
  owners?(): Promise<OwnersStatus>
  close(): Promise<void>
}
