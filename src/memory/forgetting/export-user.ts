/**
 * Exporting a user (decision 0023): everything `eraseUser` would remove, written out as
 * files a person can read, before it is erased (or on request, to hand to them):
 *
 *   README.md                         what is where, and the counts
 *   manifest.json                     the same, for programs
 *   profile/<key>.md                  their profile; profile/versions/, profile/archive/<reason>/
 *   agents/<a>/files/…                their tree of agent <a>, as it is (memory, knowledge,
 *                                     procedures, episodes, activity, state, archive)
 *   agents/<a>/conversations/<session>.messages.jsonl    one message per line: id, seq, role,
 *                                     name, at, content, meta (tool calls and results as parts)
 *   agents/<a>/conversations/<session>.summaries.jsonl   the summaries and what each folds
 *   agents/<a>/turns.jsonl            each stored turn and what it was given (its provenance)
 *   agents/<a>/confirmations.jsonl    memories that waited for their yes/no, and the answers
 *   agents/<a>/journals/…             journals of their streamed replies
 *   project/…                         their tree of the open project
 *   resolutions.jsonl                 the issues their sessions resolved
 *
 * On a backend whose memory is rows (PostgreSQL) the profile and the user's tree of the mind's
 * agent are rendered from the seams as `engram export` renders them (`exportRowsOfUser`), its
 * archive and the profile's versions read through them; other agents' trees are listed as skipped.
 */
import { copyFile, lstat, mkdir, readFile, writeFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { basename, join, } from 'node:path'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { type Owner, userKey, validateUserId } from '../../core/owner.ts'
import { serializeFrontmatter } from '../../core/frontmatter.ts'
import type { Summary } from '../../core/message.ts'
import type { Backend, Conversation } from '../../storage/contracts.ts'
import type { HomeLayout } from '../../storage/home-layout.ts'
import { collectOwnerTree, emptyCounts, renderActivityDay, type TreeProblem } from '../portability/memory-tree.ts'
import { allSummaryIds } from '../context/dag.ts'
import { checkExportFolder } from '../portability/export-memory.ts'
import { filesUnder, findUserFiles, isResolutionOf } from './user-files.ts'

export interface UserExportDeps {
  backend: Backend
  layout: HomeLayout
  clock: Clock
}

export interface UserExportReport {
  user: string
  /** The folder written, absolute. */
  dir: string
  agents: string[]
  counts: {
    files: number
    profileFiles: number
    projectFiles: number
    conversations: number
    messages: number
    summaries: number
    turns: number
    confirmations: number
    journals: number
    resolutions: number
  }
  /** Every file written, relative to `dir`. */
  written: string[]
  /**
   * What was under the user's folders but not copied, relative to `dir` as it would have been:
   * named pipes, sockets, devices and symbolic links (never followed: a link may lead out of the
   * home) and files that could not be read. Also listed in the manifest and the README.
   */
  skipped: Array<{ path: string; reason: string }>
}

/** All of a stored-turn history is exported; a user with more turns than this has them cut (noted in the manifest). */
const MAX_TURNS_PER_AGENT = 1_000_000

function _invalid(message: string, fix: string, details: Record<string, unknown> = {}): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix, details })
}

/** A session id as a file name: readable, reversible enough, bounded, unique. */
function sessionFileName(sessionId: string): string {
  const safe = encodeURIComponent(sessionId).replace(/^\./, '%2E').replace(/\*/g, '%2A')
  return safe.length <= 120 ? safe : `${safe.slice(0, 100)}-${createHash('sha256').update(sessionId).digest('hex').slice(0, 12)}`
}

function jsonl(records: readonly unknown[]): string {
  return records.map((record) => JSON.stringify(record)).join('\n') + (records.length > 0 ? '\n' : '')
}

/** Every summary of a conversation (the current ones and every one they fold), with what each folds. */
async function summariesOf(backend: Backend, conversation: Conversation): Promise<Array<Summary & { folds: { messageIds: number[]; summaryIds: string[] } }>> {
  const summaries = await backend.context.summariesById(await allSummaryIds(backend.context, await backend.context.items(conversation.id)))
  const out = await Promise.all(summaries.map(async (summary) => ({ ...summary, folds: await backend.context.summaryChildren(summary.id) })))
  return out.sort((a, b) => a.depth - b.depth || a.earliestAt.localeCompare(b.earliestAt) || a.id.localeCompare(b.id))
}

/**
 * A user's memory on a backend whose memory is rows (PostgreSQL), through the seams: their
 * profile, and their tree of `agent` — engram files, topics and documents rendered as the export
 * renders them (memory-tree.ts), each day of their activity log as its JSONL file, and their
 * archive (archived documents, saved versions, forgotten entries and topics) as the seams read it.
 * The trees of other agents are listed as skipped (a backend is opened for one agent), and so is
 * what a backend's seams do not read.
 */
async function exportRowsOfUser(
  backend: Backend,
  agent: string,
  user: string,
  put: (rel: string, text: string) => Promise<void>,
): Promise<{ profileFiles: number; files: number; projectFiles: number; skipped: UserExportReport['skipped'] }> {
  const key = userKey(user)
  const out = { profileFiles: 0, files: 0, projectFiles: 0, skipped: [] as UserExportReport['skipped'] }
  const profile = await backend.documents.read('user', key)
  if (profile) {
    await put(`profile/${key}.md`, serializeFrontmatter(profile.frontmatter, profile.body))
    out.profileFiles++
  }
  const versions = await backend.documents.versions('user', key)
  for (const version of versions) {
    const text = await backend.documents.readArchived?.(version.path)
    if (text === undefined || text === null) {
      out.skipped.push({ path: `profile/versions/${basename(version.path)}`, reason: `an earlier version of the profile: a row of the ${backend.name} backend that its storage seams do not read` })
      continue
    }
    await put(`profile/versions/${basename(version.path)}`, text)
    out.profileFiles++
  }
  const owner: Owner = `user:${user}`
  const tree = { files: new Map<string, string>(), counts: emptyCounts(), problems: [] as TreeProblem[] }
  await collectOwnerTree(backend, owner, agent, tree)
  const own = `agents/${agent}/users/${key}/`
  const project = `project/.engram/users/${key}/`
  for (const path of [...tree.files.keys()].sort()) {
    const text = tree.files.get(path) as string
    if (path.startsWith(own)) {
      await put(`agents/${agent}/files/${path.slice(own.length)}`, text)
      out.files++
    } else if (path.startsWith(project)) {
      await put(`project/${path.slice(project.length)}`, text)
      out.projectFiles++
    }
  }
  const log = backend.owned(owner).activity
  for (const day of await log.days()) {
    const text = await renderActivityDay(log, day)
    if (text === undefined || text === '') continue
    await put(`agents/${agent}/files/activity/${day}.jsonl`, text)
    out.files++
  }
  out.skipped.push(...tree.problems.map((problem) => ({ path: problem.path, reason: problem.reason })))
  // The archive, under the paths the embedded home has it: documents' copies and versions, forgotten entries and topics.
  const { documents } = backend.owned(owner)
  const forgotten = backend.owned(owner).engrams('global')?.archive
  if (documents.readArchived && documents.archivedPaths && forgotten) {
    for (const path of await documents.archivedPaths()) {
      const text = path.startsWith(`${own}archive/`) ? await documents.readArchived(path) : null
      if (text === null) continue
      await put(`agents/${agent}/files/${path.slice(own.length)}`, text)
      out.files++
    }
    for (const name of await forgotten.list()) {
      const text = await forgotten.read(name)
      if (text === null) continue
      await put(`agents/${agent}/files/archive/${name}.md`, text)
      out.files++
    }
  } else {
    out.skipped.push({ path: `agents/${agent}/files/archive/`, reason: `on the ${backend.name} backend the archive is rows that its storage seams do not read` })
  }
  out.skipped.push({
    path: `agents/*/files/`,
    reason: `on the ${backend.name} backend only agent "${agent}"'s tree is exported (run the export with ENGRAM_AGENT set to each other agent)`,
  })
  return out
}

/**
 * Writes everything `user` owns into `dir` (created when missing). Refuses a folder that is not
 * empty unless `force`, and a folder inside the home (the copy would be memory again).
 */
export async function exportUser(deps: UserExportDeps, user: string, dir: string, options: { force?: boolean } = {}): Promise<UserExportReport> {
  validateUserId(user)
  const { backend, layout } = deps
  const target = await checkExportFolder(dir, layout.home, options.force === true, `engram export --user ${user} DIR`)
  await mkdir(target, { recursive: true })
  const written: string[] = []
  const put = async (rel: string, text: string | Buffer): Promise<void> => {
    const path = join(target, ...rel.split('/'))
    await mkdir(join(path, '..'), { recursive: true })
    await writeFile(path, text)
    written.push(rel)
  }
  const skipped: UserExportReport['skipped'] = []
  /** Copies the regular files of a tree one by one; anything else is listed as skipped (decision 0025). */
  const copyTree = async (from: string, toRel: string): Promise<number> => {
    let copied = 0
    for (const file of filesUnder(from)) {
      const rel = `${toRel}/${file}`
      const source = join(from, ...file.split('/'))
      try {
        const info = await lstat(source)
        if (!info.isFile()) {
          skipped.push({ path: rel, reason: info.isSymbolicLink() ? 'a symbolic link (not followed)' : info.isFIFO() ? 'a named pipe' : info.isSocket() ? 'a socket' : 'not a regular file' })
          continue
        }
        const path = join(target, ...rel.split('/'))
        await mkdir(join(path, '..'), { recursive: true })
        await copyFile(source, path)
        written.push(rel)
        copied++
      } catch (error) {
        skipped.push({ path: rel, reason: `could not be copied (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` })
      }
    }
    return copied
  }
  /** The bytes of a file the stores listed, as they are (not decoded: a line that is not UTF-8 stays as it is). */
  const copyBytes = async (rel: string, source: string): Promise<boolean> => {
    try {
      const info = await lstat(source)
      if (!info.isFile()) {
        skipped.push({ path: rel, reason: 'not a regular file' })
        return false
      }
      await put(rel, await readFile(source))
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      skipped.push({ path: rel, reason: `could not be copied (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` })
      return false
    }
  }

  const counts: UserExportReport['counts'] = { files: 0, profileFiles: 0, projectFiles: 0, conversations: 0, messages: 0, summaries: 0, turns: 0, confirmations: 0, journals: 0, resolutions: 0 }
  let found = findUserFiles(layout, user)
  if (backend.capabilities.memory === 'files') {
    // The profile, its archived copies and versions.
    const profile = await backend.documents.read('user', found.key)
    if (profile && (await copyBytes(`profile/${found.key}.md`, join(layout.home, ...profile.path.split('/'))))) counts.profileFiles++
    for (const version of await backend.documents.versions('user', found.key)) {
      if (await copyBytes(`profile/versions/${basename(version.path)}`, join(layout.home, ...version.path.split('/')))) counts.profileFiles++
    }
    for (const reason of ['forgotten', 'merged', 'procedure_versions']) {
      if (await copyBytes(`profile/archive/${reason}/${found.key}.md`, join(layout.sharedDir, 'archive', reason, 'user', `${found.key}.md`))) counts.profileFiles++
    }
    for (const tree of found.trees) counts.files += await copyTree(tree.dir, `agents/${tree.agent}/files`)
    if (found.projectTree) counts.projectFiles = await copyTree(found.projectTree, 'project')
  } else {
    // Memory is rows: the user's tree of this agent is written from the seams, as `engram export` renders it.
    found = { ...found, agents: [...new Set([layout.agent, ...found.agents])].sort(), trees: [], projectTree: undefined }
    const written = await exportRowsOfUser(backend, layout.agent, user, put)
    counts.profileFiles += written.profileFiles
    counts.files += written.files
    counts.projectFiles += written.projectFiles
    skipped.push(...written.skipped)
  }

  const conversations = (await backend.context.listConversations()).filter((conversation) => conversation.user === user)
  for (const conversation of conversations) {
    const base = `agents/${conversation.agent}/conversations/${sessionFileName(conversation.sessionId)}`
    const messages = await backend.context.messages(conversation.id)
    await put(
      `${base}.messages.jsonl`,
      jsonl(messages.map((message) => ({ session: conversation.sessionId, id: message.id, seq: message.seq, role: message.role, ...(message.name !== undefined ? { name: message.name } : {}), at: message.at, content: message.content, ...(message.meta !== undefined ? { meta: message.meta } : {}) }))),
    )
    const summaries = await summariesOf(backend, conversation)
    if (summaries.length > 0) {
      await put(
        `${base}.summaries.jsonl`,
        jsonl(summaries.map((summary) => ({ id: summary.id, kind: summary.kind, depth: summary.depth, method: summary.method, earliestAt: summary.earliestAt, latestAt: summary.latestAt, createdAt: summary.createdAt, content: summary.content, folds: summary.folds }))),
      )
    }
    counts.conversations++
    counts.messages += messages.length
    counts.summaries += summaries.length
  }

  for (const agent of found.agents) {
    const turns = (await backend.lifecycle.recentTurns(agent, user, MAX_TURNS_PER_AGENT)).reverse()
    if (turns.length > 0) {
      await put(`agents/${agent}/turns.jsonl`, jsonl(turns))
      counts.turns += turns.length
    }
  }
  const confirmations = await backend.confirmations.ofUser(user)
  for (const agent of new Set(confirmations.map((confirmation) => confirmation.agent))) {
    const mine = confirmations.filter((confirmation) => confirmation.agent === agent)
    await put(`agents/${agent}/confirmations.jsonl`, jsonl(mine))
    counts.confirmations += mine.length
  }
  for (const journal of found.journals) {
    if (await copyBytes(`agents/${journal.agent}/journals/${journal.rel.split('/journal/')[1]}`, journal.path)) counts.journals++
  }
  const resolutions = (await readFile(layout.resolutionsFile, 'utf8').catch(() => '')).split('\n').filter((line) => isResolutionOf(line, user))
  if (resolutions.length > 0) {
    await put('resolutions.jsonl', `${resolutions.join('\n')}\n`)
    counts.resolutions = resolutions.length
  }

  const exportedAt = deps.clock.now().toISOString()
  const manifest = { user, exportedAt, home: layout.home, agents: found.agents, counts, files: [...written].sort(), skipped }
  await put('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`)
  await put(
    'README.md',
    [
      `# Everything engram kept for ${user}`,
      '',
      `Exported ${exportedAt} from ${layout.home} (agents: ${found.agents.join(', ') || 'none'}).`,
      '',
      `- profile/ — the profile every agent of the home reads (${counts.profileFiles} file(s), with its earlier versions)`,
      `- agents/<agent>/files/ — memories, knowledge, procedures, episodes, activity and archive kept for ${user} (${counts.files} file(s))`,
      `- agents/<agent>/conversations/ — ${counts.conversations} conversation(s): ${counts.messages} message(s) as JSON lines, ${counts.summaries} summar${counts.summaries === 1 ? 'y' : 'ies'}`,
      `- agents/<agent>/turns.jsonl — ${counts.turns} turn(s) and what each was given from memory`,
      `- agents/<agent>/confirmations.jsonl — ${counts.confirmations} memory(ies) that waited for a yes or no`,
      `- agents/<agent>/journals/ — ${counts.journals} journal(s) of streamed replies`,
      `- project/ — ${counts.projectFiles} file(s) of the open project`,
      `- resolutions.jsonl — ${counts.resolutions} resolved issue(s)`,
      '',
      'manifest.json lists every file.',
      ...(skipped.length > 0 ? ['', `Not copied (${skipped.length}): ${skipped.map((item) => `${item.path} — ${item.reason}`).join('; ')}`] : []),
      '',
    ].join('\n'),
  )
  return { user, dir: target, agents: found.agents, counts, written: written.sort(), skipped }
}
