/**
 * The EngramStore on PostgreSQL (migration 5, `engram_files`): one scope's memory files —
 * `profile`, `rules`, `lessons`, `topics/<slug>` — each ONE row holding the file's markdown text.
 *
 * The entries behave as in the embedded backend by construction: the row's text is parsed and
 * rendered with the same codec (`core/markdown-entry.ts`) and edited with the same code
 * (`../engram-entries.ts`: dedupe, group writes, rewrites, lesson order, tool wisdom) as the file
 * store's, so unreadable lines are kept through every write and reported, rules stay under their
 * `## Always/Never/When` sections, lessons are cross-filed into their topic, and an export can write
 * a row's text as the file. Problems name the file as the embedded home has it
 * (`agents/<a>/memory/lessons.md`, `agents/<a>/users/<key>/memory/…`, `shared/memory/…`,
 * `project:.engram/memory/…`), as the indexer labels them.
 *
 * Rows are keyed by (agent, owner, scope, project, file). Owners as in `owner-rows.ts` (shared rows
 * have agent ''). A project's memory lives in the project's folder, which every agent that opens
 * the project reads (`home-layout.ts`), so project-scope rows have agent '' too and are keyed by
 * the project; shared memory has no project part.
 *
 * Every write is ONE transaction: the row is created if missing (`INSERT … ON CONFLICT DO
 * NOTHING`, a placeholder deleted again when nothing is written to it), locked (`SELECT … FOR
 * UPDATE`), parsed, changed and written back, so concurrent processes never lose an entry and never
 * add one twice. A lesson and its topic files are one transaction, rows locked in one order —
 * lessons, then topics by slug — so writers never deadlock. Entries encoded at once in one process
 * are written in groups, as the file store writes them (decision 0027). rewriteAll's function is
 * called with the entries as they are inside that transaction (again if the transaction is retried
 * after a deadlock: it must only compute).
 *
 * Forgetting's archive (`EngramArchive`) is rows of the same table named `archive/<name>`
 * (`archive/forgotten/rules`, `archive/forgotten/project/topics/<slug>`), kept with the owner's
 * global rows — the embedded home keeps it in the owner's tree, a project's part too — and never
 * listed as topics. `writeTopic` writes a topic's free text under the row lock lessons are filed under.
 *
 * PostgreSQL text cannot hold NUL: an entry's text is escaped by the codec (`\u0000`), but a NUL in
 * its metadata or topic name is refused with `invalid_argument`. A row larger than `maxFileBytes`
 * is skipped and reported as the file store skips such a file, and never written over.
 */
import type { Clock } from '../../core/clock.ts'
import { ENGRAM_SCOPES, type EngramEntry, type EngramScope } from '../../core/engram.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { emptyMemoryFile, entriesOf, type MemoryFileKind, parseMemoryFile, problemsOf, serializeMemoryFile } from '../../core/markdown-entry.ts'
import { type Owner, userKey, userOfOwner } from '../../core/owner.ts'
import { ENGRAM_FILES, type EncodeOutcome, type EngramArchive, type EngramFile, type EngramStore, type ParseProblem } from '../contracts.ts'
import { addEntries, checkLessonKind, checkRuleKind, entryRecalls, groupWrite, identityEntries, isArchiveNameOf, preparedEntry, type QueuedEntry, rewrittenText, toolWisdom, topicSlug } from '../engram-entries.ts'
import { assertSafeSlug } from '../document-paths.ts'
import { DEFAULT_MAX_FILE_BYTES, oversized } from '../memory-file-read.ts'
import type { PostgresHandle } from './connection.ts'
import type { PgQueryable } from './driver.ts'
import { invalid, requireText } from '../input-checks.ts'
import { ownerRows } from './owner-rows.ts'

export interface PostgresEngramStoreOptions {
  agent: string
  /** Whose memory (default the agent's). */
  owner?: Owner
  scope: EngramScope
  /** The project, for scope `project` (required there, refused for `global`). */
  project?: string
  clock: Clock
  /** Rows larger than this are skipped and reported, never read (`memory.maxFileBytes`). */
  maxFileBytes?: number
}

/** A row's file: `profile`, `rules`, `lessons`, `topics/<slug>`, or `archive/<name>` (the owner's archive: `EngramArchive`). */
type RowFile = EngramFile | `topics/${string}` | `archive/${string}`

/** A row as a reader finds it: its text, nothing, or skipped (too large). */
type RowText = { kind: 'text'; text: string } | { kind: 'missing' } | { kind: 'skipped'; reason: string }

const TOPICS = 'topics/'
const ARCHIVE = 'archive/'

/** Whether an entry's metadata holds a NUL, which no row can store (its text is escaped by the codec). */
function holdsNul(entry: EngramEntry): boolean {
  const values = [entry.topic, entry.tool, entry.ts, entry.confidence, entry.source, ...Object.values(entry.meta ?? {})]
  return values.some((value) => typeof value === 'string' && value.includes('\u0000'))
}

function refuseNul(): EngramError {
  return invalid(
    'The memory entry holds a NUL character in its metadata or topic, which PostgreSQL text cannot store.',
    'Remove the NUL characters (\\u0000) from the metadata values and the topic name.',
  )
}

/** The engram files of one scope of `options.owner` (the agent's by default) for `options.agent` over `handle`. */
export function createPostgresEngramStore(handle: PostgresHandle, options: PostgresEngramStoreOptions): EngramStore {
  const { pool } = handle
  const { scope, clock } = options
  const owner = options.owner ?? 'agent'
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES
  assertSafeSlug(options.agent, 'agent')
  if (!(ENGRAM_SCOPES as readonly string[]).includes(scope)) throw invalid(`Unknown engram scope ${JSON.stringify(scope)}.`, `Use one of: ${ENGRAM_SCOPES.join(', ')}.`)
  const own = ownerRows(options.agent, owner)
  let project = ''
  if (scope === 'project') {
    project = requireText(options.project as string, 'project')
    if (owner === 'shared') throw invalid('Shared memory has no project scope.', "Open the shared store with scope 'global', or a project store for the agent or a user.")
    if (project.includes('\u0000')) throw invalid('The project name holds a NUL character.', 'Name the project without NUL characters.')
  } else if (options.project !== undefined) {
    throw invalid('A project was given for a global store.', "Open the store with scope 'project' to use the project's memory, or leave project out.")
  }
  // A project's memory folder is every agent's that opens the project (home-layout.ts).
  const key = [scope === 'project' ? '' : own.agent, own.owner, scope, project]
  /** The owner's archive (`archive/…` rows) is in its global rows, whatever the scope (as the embedded home keeps it in the owner's tree). */
  const archiveKey = [own.agent, own.owner, 'global', '']
  /** The archive names of this scope's part: `forgotten/…`, or `forgotten/project/…`. */
  const forgottenDir = scope === 'project' ? 'forgotten/project/' : 'forgotten/'
  const KEY = 'agent = $1 AND owner = $2 AND scope = $3 AND project = $4'

  const user = userOfOwner(owner)
  const treeRel = owner === 'shared' ? 'shared' : user === undefined ? `agents/${options.agent}` : `agents/${options.agent}/users/${userKey(user)}`
  const memoryRel = scope === 'global' ? `${treeRel}/memory` : user === undefined ? 'project:.engram/memory' : `project:.engram/users/${userKey(user)}/memory`
  /** The file as the embedded home names it (indexer.ts `engramSource`). */
  const fileLabel = (file: RowFile): string => (file.startsWith(ARCHIVE) ? `${treeRel}/${file}.md` : `${memoryRel}/${file}.md`)

  function checkFile(file: EngramFile): void {
    if (!(ENGRAM_FILES as readonly string[]).includes(file)) throw invalid(`Unknown engram file ${JSON.stringify(file)}.`, `Use one of: ${ENGRAM_FILES.join(', ')}.`)
  }

  const SELECT_TEXT = `SELECT octet_length(text) AS bytes, CASE WHEN octet_length(text) <= $6 THEN text END AS text FROM engram_files WHERE ${KEY} AND file = $5`

  function rowText(row: { bytes: number; text: string | null } | undefined): RowText {
    if (!row) return { kind: 'missing' }
    if (row.text === null) return { kind: 'skipped', reason: oversized(BigInt(row.bytes), maxBytes).reason }
    return { kind: 'text', text: row.text }
  }

  async function readRow(file: RowFile, rowKey = key): Promise<RowText> {
    const { rows } = await pool.query<{ bytes: number; text: string | null }>(SELECT_TEXT, [...rowKey, file, maxBytes])
    return rowText(rows[0])
  }

  async function entriesIn(file: EngramFile): Promise<EngramEntry[]> {
    const found = await readRow(file)
    return found.kind === 'text' ? entriesOf(parseMemoryFile(found.text, file)) : []
  }

  /**
   * Locks `file`'s row in `db`'s transaction, creating it first when missing: its text, or null
   * when this transaction created it (a file that is not there yet). A row readers skip is never
   * written over.
   */
  async function lockRow(db: PgQueryable, file: RowFile, rowKey = key): Promise<string | null> {
    let found: RowText = { kind: 'missing' }
    // A row deleted between the insert that found it and the lock (a placeholder given up, a
    // forgotten file) is inserted again.
    for (let attempt = 0; attempt < 3 && found.kind === 'missing'; attempt++) {
      const created = await db.query(
        `INSERT INTO engram_files (agent, owner, scope, project, file, text, updated_at) VALUES ($1, $2, $3, $4, $5, '', $6) ON CONFLICT DO NOTHING RETURNING file`,
        [...rowKey, file, clock.now().toISOString()],
      )
      if (created.rows.length > 0) return null
      const { rows } = await db.query<{ bytes: number; text: string | null }>(`${SELECT_TEXT} FOR UPDATE`, [...rowKey, file, maxBytes])
      found = rowText(rows[0])
    }
    if (found.kind === 'text') return found.text
    const reason = found.kind === 'skipped' ? found.reason : 'deleted as often as it was created'
    throw new EngramError({
      code: ErrorCode.storageUnavailable,
      category: 'user',
      message: `Cannot write to memory file ${fileLabel(file)} (${handle.location}): it is ${reason}.`,
      fix: 'Split or shorten that file (engram keeps it as it is and writes nothing over it), or raise ENGRAM_MEMORY_MAX_FILE_BYTES (memory.maxFileBytes); then save the memory again.',
      details: { file: fileLabel(file), reason },
    })
  }

  /** Stores `after` as `file`'s text (locked by `lockRow`, which found `before`); null: unchanged, and a placeholder row is removed. */
  async function storeRow(db: PgQueryable, file: RowFile, before: string | null, after: string | null, rowKey = key): Promise<void> {
    if (after === null) {
      if (before === null) await db.query(`DELETE FROM engram_files WHERE ${KEY} AND file = $5`, [...rowKey, file])
      return
    }
    // Entries are checked before they are queued; this guards what a rewrite's function returns.
    if (after.includes('\u0000')) throw refuseNul()
    await db.query(`UPDATE engram_files SET text = $6, updated_at = $7 WHERE ${KEY} AND file = $5`, [...rowKey, file, after, clock.now().toISOString()])
  }

  function checkTopicSlug(slug: string): `topics/${string}` {
    if (typeof slug !== 'string' || slug === '' || topicSlug(slug) !== slug) throw invalid(`${JSON.stringify(slug)} is not a topic slug.`, 'Name the topic in lower case with a-z, 0-9 and - (topicSlug gives it).')
    return `${TOPICS}${slug}`
  }

  /** Whether `file`'s row is there, locked in `db`'s transaction (a row deleted meanwhile is not). */
  async function lockExisting(db: PgQueryable, file: RowFile, rowKey = key): Promise<boolean> {
    const { rows } = await db.query(`SELECT file FROM engram_files WHERE ${KEY} AND file = $5 FOR UPDATE`, [...rowKey, file])
    return rows.length > 0
  }

  /*
   * The owner's archive. A topic moves between its scope's rows and the archive's in one
   * transaction that locks the live row first, as encodeLesson does, so a lesson filed meanwhile is
   * either moved with the topic or starts a new one after it; the text is moved by the database,
   * never read (a row too large to read moves too, as a file would).
   */
  const archive: EngramArchive = {
    async list() {
      const { rows } = await pool.query<{ file: string }>(`SELECT file FROM engram_files WHERE ${KEY} AND starts_with(file, $5) ORDER BY file COLLATE "C"`, [...archiveKey, ARCHIVE])
      return rows.map((row) => row.file.slice(ARCHIVE.length))
    },

    async read(name) {
      const found = await readRow(`${ARCHIVE}${requireText(name, 'name')}`, archiveKey)
      return found.kind === 'text' ? found.text : null
    },

    async updateEntries(file, change) {
      checkFile(file)
      await handle.transaction(async (db) => {
        const row: RowFile = `${ARCHIVE}${forgottenDir}${file}`
        const before = await lockRow(db, row, archiveKey)
        await storeRow(db, row, before, change(before ?? ''), archiveKey)
      })
    },

    async put(name, text) {
      if (!isArchiveNameOf(scope, name)) throw invalid(`${JSON.stringify(name)} is not a name of the ${scope} scope's archive.`, 'Pass a name list() gives.')
      if (text.includes('\u0000')) throw refuseNul()
      const row: RowFile = `${ARCHIVE}${name}`
      return handle.transaction(async (db) => {
        const created = await db.query(
          `INSERT INTO engram_files (agent, owner, scope, project, file, text, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING file`,
          [...archiveKey, row, text, clock.now().toISOString()],
        )
        if (created.rows.length > 0) return 'written' as const
        const { rows } = await db.query<{ text: string }>(`SELECT text FROM engram_files WHERE ${KEY} AND file = $5`, [...archiveKey, row])
        return rows[0]?.text === text ? ('there' as const) : ('occupied' as const)
      })
    },

    async forgetTopic(slug, stamp) {
      const live = checkTopicSlug(slug)
      const archived: RowFile = `${ARCHIVE}${forgottenDir}topics/${slug}`
      const aside = `${archived}.${requireText(stamp, 'stamp')}`
      return handle.transaction(async (db) => {
        if (!(await lockExisting(db, live))) return false
        // A topic forgotten before under the same name stays archived beside it, never overwritten.
        if (await lockExisting(db, archived, archiveKey)) await db.query(`UPDATE engram_files SET file = $6 WHERE ${KEY} AND file = $5`, [...archiveKey, archived, aside])
        await db.query(
          `INSERT INTO engram_files (agent, owner, scope, project, file, text, updated_at) SELECT $6::text, $7::text, $8::text, $9::text, $10::text, text, $11::timestamptz FROM engram_files WHERE ${KEY} AND file = $5`,
          [...key, live, ...archiveKey, archived, clock.now().toISOString()],
        )
        await db.query(`DELETE FROM engram_files WHERE ${KEY} AND file = $5`, [...key, live])
        return true
      })
    },

    async restoreTopic(slug) {
      const live = checkTopicSlug(slug)
      const archived: RowFile = `${ARCHIVE}${forgottenDir}topics/${slug}`
      return handle.transaction(async (db) => {
        if (!(await lockExisting(db, archived, archiveKey))) return 'missing' as const
        const put = await db.query(
          `INSERT INTO engram_files (agent, owner, scope, project, file, text, updated_at) SELECT $6::text, $7::text, $8::text, $9::text, $10::text, text, $11::timestamptz FROM engram_files WHERE ${KEY} AND file = $5 ON CONFLICT DO NOTHING RETURNING file`,
          [...archiveKey, archived, ...key, live, clock.now().toISOString()],
        )
        if (put.rows.length === 0) return 'occupied' as const
        await db.query(`DELETE FROM engram_files WHERE ${KEY} AND file = $5`, [...archiveKey, archived])
        return 'restored' as const
      })
    },

    async purgeTopic(slug) {
      const live = checkTopicSlug(slug)
      const archived: RowFile = `${ARCHIVE}${forgottenDir}topics/${slug}`
      return handle.transaction(async (db) => {
        const gone = await db.query(`DELETE FROM engram_files WHERE ${KEY} AND file = $5 RETURNING file`, [...key, live])
        const aside = await db.query(`DELETE FROM engram_files WHERE ${KEY} AND (file = $5 OR starts_with(file, $6)) RETURNING file`, [...archiveKey, archived, `${archived}.`])
        return gone.rows.length + aside.rows.length
      })
    },
  }

  /** Adds a group to a locked row's text: the new text (null when nothing was added) and each entry's outcome or error. */
  function addGroup(before: string | null, kind: MemoryFileKind, group: QueuedEntry[], topic?: string) {
    const outcomes = new Map<QueuedEntry, EncodeOutcome>()
    const errors = new Map<QueuedEntry, unknown>()
    const recorded = group.map((item): QueuedEntry => ({ entry: item.entry, resolve: (outcome) => outcomes.set(item, outcome), reject: (error) => errors.set(item, error) }))
    const { doc, added, settle } = addEntries(before === null ? emptyMemoryFile(kind, topic) : parseMemoryFile(before, kind), recorded, topic)
    for (const done of settle) done()
    return { after: added > 0 ? serializeMemoryFile(doc) : null, outcomes, errors }
  }

  /** Settles each entry of a committed group with its outcome, or the error that kept it out. */
  function settleGroup(group: QueuedEntry[], outcomes: Map<QueuedEntry, EncodeOutcome>, errors: Map<QueuedEntry, unknown>): void {
    for (const item of group) {
      const outcome = outcomes.get(item)
      if (errors.has(item) || outcome === undefined) item.reject(errors.get(item) ?? new Error('the entry was not settled'))
      else item.resolve(outcome)
    }
  }

  /** Entries waiting for their file's next group write (`groupWrite`), by row file. */
  const queued = new Map<string, QueuedEntry[]>()

  function encodeRuleGroup(take: () => QueuedEntry[]): Promise<void> {
    return handle
      .transaction(async (db) => {
        const before = await lockRow(db, 'rules')
        const group = take()
        const { after, outcomes, errors } = addGroup(before, 'rules', group)
        await storeRow(db, 'rules', before, after)
        return { group, outcomes, errors }
      })
      .then(({ group, outcomes, errors }) => settleGroup(group, outcomes, errors))
  }

  /** One transaction for a group of lessons: lessons.md, then each of their topic files by slug. */
  function encodeLessonGroup(take: () => QueuedEntry[]): Promise<void> {
    return handle
      .transaction(async (db) => {
        const before = await lockRow(db, 'lessons')
        const group = take()
        const { after, outcomes, errors } = addGroup(before, 'lessons', group)
        // Cross-filed even when lessons.md already had it: a hand-deleted topic is repaired by
        // encoding the lesson again. A topic file gets the title of its group's first topic name.
        const topics = new Map<string, { topic: string; items: QueuedEntry[] }>()
        for (const item of group) {
          const { topic } = item.entry
          const slug = topic === undefined || errors.has(item) ? '' : topicSlug(topic)
          if (topic === undefined || slug === '') continue
          const found = topics.get(slug)
          if (found) found.items.push(item)
          else topics.set(slug, { topic, items: [item] })
        }
        for (const slug of [...topics.keys()].sort()) {
          const { topic, items } = topics.get(slug) as { topic: string; items: QueuedEntry[] }
          const file: RowFile = `${TOPICS}${slug}`
          const topicBefore = await lockRow(db, file)
          const filed = addGroup(topicBefore, 'topic', items, topic)
          for (const [item, error] of filed.errors) errors.set(item, error)
          await storeRow(db, file, topicBefore, filed.after)
        }
        await storeRow(db, 'lessons', before, after)
        return { group, outcomes, errors }
      })
      .then(({ group, outcomes, errors }) => settleGroup(group, outcomes, errors))
  }

  async function rewrite(file: EngramFile, entries: EngramEntry[] | ((current: EngramEntry[]) => EngramEntry[] | null)): Promise<void> {
    checkFile(file)
    await handle.transaction(async (db) => {
      const before = await lockRow(db, file)
      const after = rewrittenText(before, file, entries)
      // Left alone: a row this transaction created is removed again.
      await storeRow(db, file, before, after)
    })
  }

  const location = `postgres:${handle.location}#${options.agent}/${owner}/${scope}${scope === 'project' ? `/${project}` : ''}`

  const store: EngramStore = {
    scope,
    location,

    ...entryRecalls(entriesIn),

    async recallTopic(slug) {
      const clean = topicSlug(slug)
      if (clean === '') return null
      const found = await readRow(`${TOPICS}${clean}`)
      return found.kind === 'text' ? found.text : null
    },

    async listTopics() {
      const { rows } = await pool.query<{ file: string }>(`SELECT file FROM engram_files WHERE ${KEY} AND starts_with(file, $5) ORDER BY file COLLATE "C"`, [...key, TOPICS])
      return rows.map((row) => row.file.slice(TOPICS.length))
    },

    async topicProblems() {
      const { rows } = await pool.query<{ file: string; bytes: number }>(
        `SELECT file, octet_length(text) AS bytes FROM engram_files WHERE ${KEY} AND starts_with(file, $5) ORDER BY file COLLATE "C"`,
        [...key, TOPICS],
      )
      const problems: ParseProblem[] = []
      for (const row of rows) {
        const slug = row.file.slice(TOPICS.length)
        // Only a row edited by hand can have a name that is not a slug, or be over the limit.
        const reason =
          topicSlug(slug) !== slug ? 'a topic file name that is not a topic slug (lower case, a-z, 0-9 and -)' : row.bytes > maxBytes ? oversized(BigInt(row.bytes), maxBytes).reason : undefined
        if (reason !== undefined) problems.push({ file: fileLabel(row.file as RowFile), line: 0, text: '', reason })
      }
      return problems
    },

    async recallToolWisdom(tool) {
      return toolWisdom(await entriesIn('rules'), await store.recallLessons(), tool)
    },

    async encodeRule(entry) {
      checkRuleKind(entry)
      const rule = preparedEntry(entry, clock)
      if (holdsNul(rule)) throw refuseNul()
      return groupWrite(queued, 'rules', rule, encodeRuleGroup)
    },

    async encodeLesson(entry) {
      checkLessonKind(entry)
      const lesson = preparedEntry(entry, clock)
      if (holdsNul(lesson)) throw refuseNul()
      return groupWrite(queued, 'lessons', lesson, encodeLessonGroup)
    },

    async rewriteIdentity(entries) {
      await rewrite('profile', identityEntries(entries))
    },

    async rewriteAll(file, entries) {
      await rewrite(file, entries)
    },

    async writeTopic(slug, change) {
      const file = checkTopicSlug(slug)
      await handle.transaction(async (db) => {
        const before = await lockRow(db, file)
        await storeRow(db, file, before, change(before))
      })
    },

    archive,

    async read(file) {
      checkFile(file)
      const found = await readRow(file)
      if (found.kind === 'missing') return { entries: [], problems: [] }
      if (found.kind === 'skipped') return { entries: [], problems: [{ file: fileLabel(file), line: 0, text: '', reason: found.reason }] }
      const doc = parseMemoryFile(found.text, file)
      return { entries: entriesOf(doc), problems: problemsOf(doc).map((problem) => ({ file: fileLabel(file), ...problem })) }
    },
  }
  return store
}
