/**
 * Migrating a home written before owners (decision 0024): what is recorded as a user's becomes
 * that user's, once, when the home is first opened by an engram that knows owners.
 *
 * - The per-user-per-agent notes of wave 1 (`ctx_agent_memory`) join the user's one profile
 *   (`shared/users/<key>.md`) under `## Notes (from <agent>)`, then leave the table.
 * - Activity events in an agent's own log that belong to a conversation with a user (their
 *   `session` is one, or, without a session, a message from or a reply to a user of that agent) move
 *   to the user's log (`agents/<a>/users/<key>/activity/<day>.jsonl`); episode sections whose marker
 *   names such a session move to the user's episode file of the same day.
 * - Resolutions in `shared/resolutions.jsonl` written without a user get the user of their session.
 * - Index rows got their owners from SQLite migration 3; their count is reported here.
 *
 * Every step is idempotent (a line or section already at its destination is not written twice; a
 * note already in the profile is not merged twice), so a process that dies half way leaves work
 * the next open finishes. One process migrates (a named lock; the others wait, then read the
 * record), and the report is kept in `home_migrations`, where `engram status` reads it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Clock } from '../core/clock.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { userKey, validateUserId } from '../core/owner.ts'
import type { DocumentStore, Locks } from './contracts.ts'
import { writeFileAtomic } from './atomic-write.ts'
import { createFileDocumentStore } from './files/document-store.ts'
import { checkMemoryFile, DEFAULT_MAX_FILE_BYTES, MEMORY_FILE_OPEN_FLAGS } from './memory-file-read.ts'
import { homeLayout } from './home-layout.ts'
import type { SqliteHandle } from './sqlite/database.ts'

export interface OwnersMigrationReport {
  /** When the migration ran (ISO). */
  at: string
  /** Index rows owned by a user (SQLite migration 3 gave messages, summaries and profiles their conversation's user). */
  index: { userUnits: number; users: number }
  /** Wave 1's notes moved into profiles; `kept` are rows left in the table, with why. */
  notes: { moved: number; users: string[]; kept: Array<{ user: string; agent: string; reason: string }> }
  /** Activity events moved into users' logs, per user. */
  activity: { moved: number; byUser: Record<string, number> }
  /** Episode sections moved into users' episode files, per user. */
  episodes: { moved: number; byUser: Record<string, number> }
  /** Lines of shared/resolutions.jsonl that were given their session's user. */
  resolutions: { assigned: number }
}

export interface OwnersMigrationDeps {
  handle: SqliteHandle
  home: string
  locks: Locks
  clock: Clock
}

const NAME = 'owners'
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/
const EPISODE_FILE = /^(\d{4}-\d{2}-\d{2})\.md$/
/* The marker immediate encoding closes a section with (memory/episodes/episode-format.ts); only its session is read here. */
const EPISODE_MARKER = /<!-- episode (\{.*\}) -->/
/* A section starts at a `## ` heading line, as parseEpisodeSections reads it. */
const SECTION_HEADING = /^##\s+\S/

/** The recorded report, or undefined when this home was not migrated yet. */
export function readOwnersMigration(handle: SqliteHandle): OwnersMigrationReport | undefined {
  const row = handle.db.prepare('SELECT report FROM home_migrations WHERE name = ?').get(NAME) as { report: string } | undefined
  return row ? (JSON.parse(row.report) as OwnersMigrationReport) : undefined
}

/**
 * Migrate the home once; later calls return the recorded report with `ranNow: false` after one
 * indexed read. Waits up to two minutes for another process that is migrating the same home.
 */
export async function migrateHomeToOwners(deps: OwnersMigrationDeps): Promise<OwnersMigrationReport & { ranNow: boolean }> {
  const done = readOwnersMigration(deps.handle)
  if (done) return { ...done, ranNow: false }
  const outcome = await deps.locks.withLock(
    'home-migration:owners',
    async () => {
      const meanwhile = readOwnersMigration(deps.handle)
      if (meanwhile) return { ...meanwhile, ranNow: false }
      const report = await migrate(deps)
      deps.handle.transaction(() => {
        deps.handle.db.prepare('INSERT INTO home_migrations (name, done_at, report) VALUES (?, ?, ?)').run(NAME, report.at, JSON.stringify(report))
      })
      return { ...report, ranNow: true }
    },
    { wait: true, timeoutMs: 120_000 },
  )
  if (outcome.kind === 'done') return outcome.value
  throw new EngramError({
    code: ErrorCode.lockBusy,
    category: 'system',
    message: 'Another process has been migrating this home to owners for more than two minutes.',
    fix: 'wait for it to finish and open the home again (the lock of an engram process that died is released at once)',
  })
}

async function migrate(deps: OwnersMigrationDeps): Promise<OwnersMigrationReport> {
  const { handle } = deps
  const report: OwnersMigrationReport = {
    at: deps.clock.now().toISOString(),
    index: { userUnits: 0, users: 0 },
    notes: { moved: 0, users: [], kept: [] },
    activity: { moved: 0, byUser: {} },
    episodes: { moved: 0, byUser: {} },
    resolutions: { assigned: 0 },
  }
  const indexed = handle.db.prepare("SELECT count(*) AS units, count(DISTINCT owner) AS users FROM index_units WHERE owner LIKE 'user:%'").get() as { units: number; users: number }
  report.index = { userUnits: indexed.units, users: indexed.users }

  await moveNotes(deps, report)
  const sessionsByAgent = new Map<string, Map<string, string>>()
  for (const agent of agentsOf(deps.home)) {
    const sessions = userSessions(handle, agent)
    sessionsByAgent.set(agent, sessions)
    if (sessions.size === 0) continue
    await moveActivity(deps, agent, sessions, report)
    await moveEpisodes(deps, agent, sessions, report)
  }
  await assignResolutions(deps, sessionsByAgent, report)
  return report
}

function isUserId(user: string): boolean {
  try {
    validateUserId(user)
    return true
  } catch {
    return false
  }
}

/** Agents with a folder in the home and a valid name. */
function agentsOf(home: string): string[] {
  let names: string[]
  try {
    names = readdirSync(join(home, 'agents'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
  } catch {
    return []
  }
  return names.filter((name) => {
    try {
      homeLayout(home, name)
      return true
    } catch {
      return false
    }
  })
}

/** Session id → user, for the sessions of `agent` recorded with a user (conversations and lifecycle records). */
function userSessions(handle: SqliteHandle, agent: string): Map<string, string> {
  const rows = handle.db
    .prepare(
      `SELECT session_id, user_id FROM ctx_conversations WHERE agent_id = ? AND user_id IS NOT NULL AND user_id <> ''
       UNION SELECT session_id, user_id FROM lifecycle_sessions WHERE agent = ? AND user_id IS NOT NULL AND user_id <> ''`,
    )
    .all(agent, agent) as Array<{ session_id: string; user_id: string }>
  const sessions = new Map<string, string>()
  for (const row of rows) if (isUserId(row.user_id)) sessions.set(row.session_id, row.user_id)
  return sessions
}

function documentsOf(deps: OwnersMigrationDeps, agent: string, user?: string): DocumentStore {
  return createFileDocumentStore({ home: deps.home, agent, clock: deps.clock, locks: deps.locks, ...(user !== undefined ? { owner: `user:${user}` as const } : {}) })
}

function count(into: Record<string, number>, user: string, n = 1): void {
  into[user] = (into[user] ?? 0) + n
}

async function moveNotes(deps: OwnersMigrationDeps, report: OwnersMigrationReport): Promise<void> {
  const { db } = deps.handle
  const rows = db.prepare('SELECT user_id, agent_id, content FROM ctx_agent_memory ORDER BY user_id, agent_id').all() as Array<{ user_id: string; agent_id: string; content: string }>
  const users = new Set<string>()
  for (const row of rows) {
    const remove = (): void => {
      deps.handle.transaction(() => {
        db.prepare('DELETE FROM ctx_agent_memory WHERE user_id = ? AND agent_id = ?').run(row.user_id, row.agent_id)
      })
    }
    if (!isUserId(row.user_id)) {
      report.notes.kept.push({ user: row.user_id, agent: row.agent_id, reason: 'not a valid user id: no profile can hold it' })
      continue
    }
    const notes = row.content.trim()
    if (notes === '') {
      remove()
      continue
    }
    // The agent's name is only a heading here; any valid store opens the shared profiles.
    const documents = documentsOf(deps, 'default')
    const key = userKey(row.user_id)
    const block = `## Notes (from ${row.agent_id})\n\n${notes}\n`
    const existing = await documents.read('user', key)
    const body = existing?.body ?? ''
    if (!body.includes(block)) {
      const next = body === '' ? block : `${body.replace(/\n*$/, '\n')}\n${block}`
      await documents.write('user', key, { ...(existing?.frontmatter ?? {}), user: row.user_id, updated_at: report.at }, next, {
        reason: `notes of agent ${row.agent_id} moved from ctx_agent_memory (owners migration)`,
      })
    }
    remove()
    report.notes.moved++
    users.add(row.user_id)
  }
  report.notes.users = [...users].sort()
}

/** Lines of a text file, without the empty string after a final line break. */
function linesOf(text: string): string[] {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/**
 * A file's text, or undefined when there is none — or when it is nothing engram reads (a pipe, a
 * folder, a link out of its folder, a file over the limit: decision 0025), which stays as it is.
 */
function readText(path: string): string | undefined {
  const checked = checkMemoryFile(path, { root: dirname(path), maxBytes: DEFAULT_MAX_FILE_BYTES })
  if (checked.kind !== 'file') return undefined
  try {
    return readFileSync(checked.path, { encoding: 'utf8', flag: MEMORY_FILE_OPEN_FLAGS })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** The user an event of `agent`'s own log is recorded as belonging to, if any. */
function userOfEvent(line: string, sessions: Map<string, string>, users: Set<string>): string | undefined {
  let event: unknown
  try {
    event = JSON.parse(line)
  } catch {
    return undefined // An unreadable line stays where it is, reported as it was.
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return undefined
  const { session, type, from, to } = event as Record<string, unknown>
  if (typeof session === 'string' && session !== '') return sessions.get(session)
  if (type === 'message_received' && typeof from === 'string' && users.has(from)) return from
  if (type === 'response_sent' && typeof to === 'string' && users.has(to)) return to
  return undefined
}

/**
 * Moves the events of `agent`'s log that belong to its users' sessions. Each user's day file gets
 * the lines it does not hold yet, appended in their order; the agent's day file is rewritten last,
 * without them. Events keep their times, so the log reads in the same order.
 */
async function moveActivity(deps: OwnersMigrationDeps, agent: string, sessions: Map<string, string>, report: OwnersMigrationReport): Promise<void> {
  const layout = homeLayout(deps.home, agent)
  const users = new Set(sessions.values())
  let days: string[]
  try {
    days = readdirSync(layout.activityDir).filter((name) => DAY_FILE.test(name)).sort()
  } catch {
    return
  }
  for (const file of days) {
    const path = join(layout.activityDir, file)
    const text = readText(path)
    if (text === undefined) continue
    const kept: string[] = []
    const moving = new Map<string, string[]>()
    for (const line of linesOf(text)) {
      const user = line.trim() === '' ? undefined : userOfEvent(line, sessions, users)
      if (user === undefined) kept.push(line)
      else moving.set(user, [...(moving.get(user) ?? []), line])
    }
    if (moving.size === 0) continue
    for (const [user, lines] of moving) {
      const target = join(layout.usersDir, userKey(user), 'activity', file)
      const existing = readText(target) ?? ''
      const present = new Map<string, number>()
      for (const line of linesOf(existing)) present.set(line, (present.get(line) ?? 0) + 1)
      const missing = lines.filter((line) => {
        const n = present.get(line) ?? 0
        if (n > 0) present.set(line, n - 1)
        return n === 0
      })
      if (missing.length > 0) await writeFileAtomic(target, `${existing === '' || existing.endsWith('\n') ? existing : `${existing}\n`}${missing.join('\n')}\n`)
      count(report.activity.byUser, user, lines.length)
      report.activity.moved += lines.length
    }
    await writeFileAtomic(path, kept.length === 0 ? '' : `${kept.join('\n')}\n`)
  }
}

/** An episode body cut before each `## ` heading; the first part is what precedes any section. */
function sectionsOf(body: string): string[] {
  const parts: string[][] = [[]]
  for (const line of body.split('\n')) {
    if (SECTION_HEADING.test(line) && !line.startsWith('###')) parts.push([])
    parts.at(-1)!.push(line)
  }
  return parts.map((lines) => lines.join('\n'))
}

function sessionOfSection(section: string): string | undefined {
  const match = EPISODE_MARKER.exec(section)
  if (!match?.[1]) return undefined
  try {
    const marker = JSON.parse(match[1]) as { session?: unknown }
    return typeof marker.session === 'string' ? marker.session : undefined
  } catch {
    return undefined
  }
}

/** Moves the episode sections of `agent` whose marker names a user's session into that user's file of the same day. */
async function moveEpisodes(deps: OwnersMigrationDeps, agent: string, sessions: Map<string, string>, report: OwnersMigrationReport): Promise<void> {
  const layout = homeLayout(deps.home, agent)
  let days: string[]
  try {
    days = readdirSync(layout.episodesDir)
      .map((name) => EPISODE_FILE.exec(name)?.[1])
      .filter((day): day is string => day !== undefined)
      .sort()
  } catch {
    return
  }
  const own = documentsOf(deps, agent)
  for (const day of days) {
    const doc = await own.read('episode', day)
    if (!doc) continue
    const [preamble = '', ...sections] = sectionsOf(doc.body)
    const kept: string[] = [preamble]
    const moving = new Map<string, string[]>()
    for (const section of sections) {
      const session = sessionOfSection(section)
      const user = session === undefined ? undefined : sessions.get(session)
      if (user === undefined) kept.push(section)
      else moving.set(user, [...(moving.get(user) ?? []), section])
    }
    if (moving.size === 0) continue
    for (const [user, moved] of moving) {
      const theirs = documentsOf(deps, agent, user)
      const existing = await theirs.read('episode', day)
      let body = existing?.body ?? `# ${day}\n`
      const missing = moved.filter((section) => !body.includes(section.trim()))
      for (const section of missing) body = `${body.replace(/\n*$/, '\n')}\n${section.trim()}\n`
      if (missing.length > 0) await theirs.write('episode', day, existing?.frontmatter ?? {}, body, { reason: `sections of ${agent}'s own episode file moved here (owners migration)` })
      count(report.episodes.byUser, user, moved.length)
      report.episodes.moved += moved.length
    }
    await own.write('episode', day, doc.frontmatter, `${kept.join('\n').replace(/\n*$/, '')}\n`, {
      reason: `sections of users' sessions moved to their own episode files (owners migration)`,
    })
  }
}

/** Gives each resolution written without a user the user of its session, when that session had one. */
async function assignResolutions(deps: OwnersMigrationDeps, sessionsByAgent: Map<string, Map<string, string>>, report: OwnersMigrationReport): Promise<void> {
  const path = join(deps.home, 'shared', 'resolutions.jsonl')
  const text = readText(path)
  if (text === undefined) return
  let assigned = 0
  const lines = linesOf(text).map((line) => {
    let record: Record<string, unknown>
    try {
      const value = JSON.parse(line) as unknown
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return line
      record = value as Record<string, unknown>
    } catch {
      return line
    }
    if (record.user !== undefined || typeof record.agent !== 'string' || typeof record.session !== 'string') return line
    const user = sessionsByAgent.get(record.agent)?.get(record.session)
    if (user === undefined) return line
    assigned++
    return JSON.stringify({ ...record, user })
  })
  if (assigned === 0) return
  await writeFileAtomic(path, `${lines.join('\n')}\n`)
  report.resolutions.assigned = assigned
}
