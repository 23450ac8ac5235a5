/**
 * Erasing a user on request (decision 0023): everything the user owns in the home, of
 * every agent — their trees (memories, knowledge, episodes, activity, state, their archive), their
 * profile with its versions, their conversations (messages, the summaries that stand for them),
 * index units, session records, stored turns, counters, queued work, pending confirmations,
 * journals, their lines of `shared/resolutions.jsonl`, and their tree of the open project.
 *
 * There is no archive of a whole user: an erasure that kept a copy would not be one. So it is
 * never implicit — only `{ purge: true }` (`engram forget --user <id> --purge`) runs it — and it is
 * logged in the agent's own activity log with the counts and a hash of the user id, never with
 * the user's content or id (the log must not be one more place that remembers them).
 */
import { createHash } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { readFile, rm, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode, messageOf } from '../../core/errors.ts'
import { validateUserId } from '../../core/owner.ts'
import { type ProgressOptions, startPhase } from '../../core/progress.ts'
import type { ActivityLog, Backend } from '../../storage/contracts.ts'
import { writeFileAtomic } from '../../storage/atomic-write.ts'
import type { HomeLayout } from '../../storage/home-layout.ts'
import { encodingJobName } from '../episodes/immediate-encoding.ts'
import { filesUnder, findUserFiles, isResolutionOf } from './user-files.ts'

export interface UserErasureDeps {
  backend: Backend
  layout: HomeLayout
  clock: Clock
  /** The agent's own activity log, where the erasure is recorded. */
  log: ActivityLog
}

/** What an erasure removed, by kind: counts only. */
export interface UserErasureCounts {
  /** The user's trees (one per agent) and the files in them (on PostgreSQL, the rows: engram files, documents, activity). */
  trees: number
  files: number
  /** Their profile, its archived copies and versions. */
  profileFiles: number
  /** Files of their tree in the open project. */
  projectFiles: number
  conversations: number
  messages: number
  summaries: number
  indexUnits: number
  sessions: number
  turns: number
  counters: number
  jobs: number
  jobRuns: number
  confirmations: number
  resolutions: number
  journals: number
}

export interface UserErasureReport {
  user: string
  /** The agents of the home (all were searched). */
  agents: string[]
  erased: UserErasureCounts
  /** Nothing of the user was found. */
  nothing: boolean
  /** What could not be done completely, with its fix. */
  warnings: string[]
}

/** A short hash that names the user in the log without naming them: who knows the id can check it. */
function userFingerprint(user: string): string {
  return `sha256:${createHash('sha256').update(user).digest('hex').slice(0, 16)}`
}

/**
 * Removes the lock files whose names carry the user's key (a user's documents are locked by their
 * tree's path): the lock file, its last holder's note and its waiters' stamp. A process still
 * writing for the erased user at this moment keeps its lock on the removed file, which only that
 * user's writes share.
 */
function dropLockTraces(layout: HomeLayout, key: string): void {
  const readable = key.replace(/[^A-Za-z0-9._-]+/g, '_')
  const pattern = new RegExp(`(^|_)users?_${readable.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(_|$)`)
  let names: string[]
  try {
    names = readdirSync(layout.locksDir)
  } catch {
    return
  }
  for (const name of names) {
    const match = /^(.*)-[0-9a-f]{12}\.(holder|waiting|lock\.db)$/.exec(name)
    if (match && pattern.test(match[1] as string)) unlink(join(layout.locksDir, name)).catch(() => {})
  }
}

/**
 * On a backend whose memory is rows (PostgreSQL), a user's engram files, topics, documents (with
 * their archived copies and versions) and activity log are erased by `Backend.purgeUserMemory`. A
 * row backend without it would leave them behind while reporting an erasure, so the whole erasure
 * is refused, naming what is missing.
 */
function erasureUnsupported(user: string, backend: string): EngramError {
  return new EngramError({
    code: ErrorCode.unsupported,
    category: 'user',
    message:
      `Forgetting user ${JSON.stringify(user)} is not available on the ${backend} backend: it cannot delete their engram files, topics, documents and activity log, ` +
      'so an erasure would leave them behind. Nothing was erased.',
    fix: `export what is theirs first (\`engram export --user ${user} DIR\`), then move the memory to an embedded home (\`engram migrate --to DIR\`) and run \`engram forget --user ${user} --purge\` there`,
    details: { user, backend },
  })
}

/**
 * Erases everything `user` owns in the home (every agent) and in the open project. Idempotent: a
 * second run (after a crash half-way) erases what is left and reports zeros for the rest.
 */
export async function eraseUser(deps: UserErasureDeps, user: string, options: { purge: boolean } & ProgressOptions): Promise<UserErasureReport> {
  validateUserId(user)
  if (options.purge !== true) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `Forgetting user ${JSON.stringify(user)} deletes everything they own, and there is no archive of a whole user: it needs the explicit purge.`,
      fix: `export it first if it is wanted (\`engram export --user ${user} DIR\`), then run \`engram forget --user ${user} --purge\` (mind.forgetUser(user, { purge: true }))`,
      details: { user },
    })
  }
  const { backend, layout } = deps
  // Refused before anything is erased: half an erasure that reports success would be worse than none.
  const rowBackend = backend.capabilities.memory === 'rows'
  if (rowBackend && !backend.purgeUserMemory) throw erasureUnsupported(user, backend.name)
  // On a row backend the home holds only this host's traces of the user (journals, resolutions, lock files).
  const files = findUserFiles(layout, user)
  const sessions = (await backend.context.listConversations()).filter((conversation) => conversation.user === user).map((conversation) => conversation.sessionId)

  // Step by step, each a whole kind of record or a whole tree: stopped between two (Ctrl-C), a run again erases what is left.
  const erasing = startPhase(options, 'erasing', 8 + files.trees.length)
  const step = async <T>(work: () => Promise<T>): Promise<T> => {
    await erasing.checkpoint()
    const value = await work()
    erasing.step()
    return value
  }
  const context = await step(() => backend.context.purgeUser(user))
  const indexUnits = await step(() => backend.index.purgeUser(user))
  const lifecycle = await step(() => backend.lifecycle.purgeUser(user))
  const confirmations = await step(() => backend.confirmations.purgeUser(user))
  const jobRuns = await step(() => backend.jobs.purgeRuns([...new Set(sessions)].map(encodingJobName)))

  const profileFiles = await step(async () => (await backend.documents.purge('user', files.key)).length)
  // Rows of every agent: engram files and topics, documents with their archive, activity (decision 0037).
  const rows = await step(async () => (rowBackend ? await backend.purgeUserMemory?.(user) : undefined))
  // The profile's history folder (document-store.ts) goes with it, empty or not.
  await rm(join(layout.sharedUsersDir, '.history', files.key), { recursive: true, force: true })
  let fileCount = 0
  for (const tree of files.trees) {
    await step(async () => {
      fileCount += filesUnder(tree.dir).length
      await rm(tree.dir, { recursive: true, force: true })
    })
  }
  let projectFiles = 0
  await step(async () => {
    if (!files.projectTree) return
    projectFiles = filesUnder(files.projectTree).length
    await rm(files.projectTree, { recursive: true, force: true })
  })
  for (const journal of files.journals) await unlink(journal.path).catch(() => {})

  // Appenders do not lock this file (one O_APPEND line each); a line appended between the read and
  // the rename would be lost, so the rewrite happens only when there is something to drop.
  let resolutions = 0
  const registry = await readFile(layout.resolutionsFile, 'utf8').catch(() => '')
  if (registry !== '') {
    const lines = registry.split('\n')
    const kept = lines.filter((line) => !isResolutionOf(line, user))
    resolutions = lines.length - kept.length
    if (resolutions > 0) await writeFileAtomic(layout.resolutionsFile, kept.join('\n'))
  }
  dropLockTraces(layout, files.key)
  const warnings: string[] = []
  try {
    await backend.scrub?.()
  } catch (error) {
    warnings.push(
      `the database could not be rewritten now (${messageOf(error)}): the erased rows are gone from every answer, but old copies of them may remain in its free space. Fix: run \`engram forget --user ${user} --purge\` again when no other engram process is writing.`,
    )
  }

  const erased: UserErasureCounts = {
    trees: new Set([...files.trees.map((tree) => tree.agent), ...(rows?.agents ?? [])]).size,
    files: fileCount + (rows?.rows ?? 0),
    profileFiles,
    projectFiles,
    ...context,
    indexUnits,
    ...lifecycle,
    jobRuns,
    confirmations,
    resolutions,
    journals: files.journals.length,
  }
  const nothing = Object.values(erased).every((count) => count === 0)
  const fingerprint = userFingerprint(user)
  await deps.log.append({
    ts: deps.clock.now().toISOString(),
    type: 'memory_write',
    content: `erased everything one user owned (${fingerprint})`,
    summary: Object.entries(erased)
      .filter(([, count]) => count > 0)
      .map(([kind, count]) => `${count} ${kind}`)
      .join(', ') || 'nothing was found',
    meta: { action: 'erase-user', user: fingerprint, agents: files.agents.length, ...erased },
  })
  return { user, agents: files.agents, erased, nothing, warnings }
}
