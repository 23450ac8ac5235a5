/**
 * Moving an agent's memory from one backend to another (`engram migrate --to`, decision 0036),
 * through the storage seams only, so any pair of backends works: the memory tree as `engram
 * export` / `engram import engram` carry it, each owner's archive (forgotten and merged documents,
 * earlier versions, forgotten entries and topics: migrate-archive.ts), then what a tree does not
 * hold — conversations (messages in order, then their summaries replayed in the order they were
 * made, so the context items come out the same), the activity log, confirmations, stored turns
 * and job runs — then a reindex on the target, the access counts of the memory it indexed
 * (migrate-access.ts), and last the target read back and compared with the source (counts and
 * digests per tree, file and conversation; decision 0052): `complete` only when it holds all of
 * it. Running it again adds nothing that is already there and finishes whatever a killed run left.
 */
import { messageOf } from '../../core/errors.ts'
import { type ProgressOptions, startPhase } from '../../core/progress.ts'
import type { Summary } from '../../core/message.ts'
import type { Backend, Conversation } from '../../storage/contracts.ts'
import type { SkillStore } from '../skills/skill-store.ts'
import { importMemoryTree, type MemoryImportReport } from './import-memory.ts'
import { moveAccess } from './migrate-access.ts'
import { type ArchiveMoveCounts, moveArchive } from './migrate-archive.ts'
import { collectMemoryTree, type TreeProblem } from './memory-tree.ts'
import { ALL, compareDigests, confirmationKey, type DigestDifference, digestAgent, queuedJobKey, replayable, WAITING } from './migration-digest.ts'
import { allSummaryIds } from '../context/dag.ts'

export interface MigrateBackendOptions {
  from: Backend
  to: Backend
  /** The agent whose memory moves (both backends are opened for it). */
  agent: string
  /** Skills go from one store to the other; left where they are when omitted (a target that keeps them in the same home). */
  skills?: { from: SkillStore; to: SkillStore }
  /** Reindex the target once everything is in (the caller's indexer: it knows the embedder), passing on `progress`. */
  reindex?: (progress: ProgressOptions) => Promise<unknown>
  /**
   * How far it is, and Ctrl-C: it stops between two items of a step (a file, a conversation, an
   * owner's log), and a run again finishes what this one left, as after a kill (decision 0052).
   */
  progress?: ProgressOptions
}

export interface MigrationReport {
  agent: string
  from: Backend['name']
  to: Backend['name']
  memory: MemoryImportReport['counts']
  /** Archived documents, saved versions and forgotten entries and topics, put as they are (migrate-archive.ts). */
  archive: ArchiveMoveCounts
  /** Recalled memory units whose access counts were raised to the source's, and those that held them already (migrate-access.ts). */
  access: { units: number; alreadyThere: number }
  conversations: { moved: number; alreadyThere: number; messages: number; summaries: number }
  activity: { events: number; alreadyThere: number }
  confirmations: { pending: number; decided: number; alreadyThere: number }
  turns: { moved: number; alreadyThere: number }
  jobRuns: { moved: number; alreadyThere: number }
  /** Jobs of the lifecycle's queue still waiting to run (or running), queued again in the target. */
  queuedJobs: { moved: number; alreadyThere: number }
  /**
   * `complete` when the target was checked against the source and holds all of it (decision 0052);
   * `incomplete` when anything differs or could not be moved — run it again, or read `problems`
   * and `verification.differences`.
   */
  status: 'complete' | 'incomplete'
  /** Where the target, read back after the migration, does not hold the source's memory. */
  verification: { differences: DigestDifference[] }
  /** What could not be moved, and why (the rest moved). */
  problems: TreeProblem[]
  /** What this migration does not carry, whatever the data (seams without a read or a write for it). */
  notMoved: string[]
}

/** What no seam lets a migration read or write yet; said in every report and in `engram migrate --help` (decisions 0036, 0052). */
const NOT_MOVED = [
  'why each earlier version of a document was saved (the reasons of archive/versions/versions.jsonl) and when a document was archived: the target stamps a copy when it is put',
  'lines of memory files that could not be parsed, and topic files that cannot be read (reported, left in the source)',
  'skill times (created_at, updated_at): the skill store sets them on save',
  'summary creation times, confirmation queue times and decision times: the target stamps them when they are replayed',
  "answered confirmations of the agent's own queue (sessions without a user): ConfirmationQueue reads decided ones per user only",
  'session records, counters and heartbeats of the lifecycle, and the jobs of its queue that ended (no seam lists or writes them as they are); jobs still waiting are queued again',
  "per-user-per-agent notes, session info and review marks of the context store (no seam reads them)",
  'the search index itself (rebuilt by the reindex on the target), and the access counts of messages and summaries (the target indexes them afresh at the first search of a conversation)',
  'write-ahead journals and resolutions (files of the home, not of a backend)',
]

/** How many times each key is there: the target holds a thing as many times as the source, not once. */
export function multiset(keys: string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

/** Takes one `key` out of `present`; false when none is left (so the source's next one is moved). */
function take(present: Map<string, number>, key: string): boolean {
  const left = present.get(key) ?? 0
  if (left === 0) return false
  present.set(key, left - 1)
  return true
}

function describe(error: unknown): string {
  return messageOf(error)
}

/** Every summary of a conversation (the current ones and every one they fold), in the order it was made (then depth, then id). */
async function summariesOf(backend: Backend, conversation: Conversation): Promise<Summary[]> {
  const summaries = await backend.context.summariesById(await allSummaryIds(backend.context, await backend.context.items(conversation.id)))
  return summaries.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.depth - b.depth || a.id.localeCompare(b.id))
}

/** What a summary says and what it folds (as ids of the target), to find a replayed one again. */
function summaryKey(summary: Omit<Summary, 'id' | 'conversationId' | 'createdAt'>, folds: { messageIds: number[]; summaryIds: string[] }): string {
  const { kind, depth, content, tokenCount, sourceTokenCount, earliestAt, latestAt, method } = summary
  return JSON.stringify({ kind, depth, content, tokenCount, sourceTokenCount, earliestAt, latestAt, method, m: folds.messageIds, s: folds.summaryIds })
}

/**
 * Replays one conversation into `to`: its messages in seq order, then its summaries in the order
 * they were made, each folding the items its children became. Returns the old→new message ids.
 *
 * It resumes whatever an earlier run left (decision 0052): the target's messages must be the
 * source's first ones (the rest are appended), and a summary the target already holds — the same
 * text folding the same target items — is taken as replayed, so a run killed anywhere is finished
 * by the next one. A target whose messages are not a prefix of the source's is reported, not
 * touched.
 */
async function moveConversation(from: Backend, to: Backend, conversation: Conversation, report: MigrationReport): Promise<Map<number, number> | undefined> {
  const where = `conversation ${conversation.sessionId} (${conversation.agent})`
  const messages = await from.context.messages(conversation.id)
  const target = await to.context.conversation(conversation.sessionId, { agent: conversation.agent, ...(conversation.user !== undefined ? { user: conversation.user } : {}) })
  const messageIds = new Map<number, number>()
  const present = await to.context.messages(target.id)
  const prefix = present.length <= messages.length && present.every((message, i) => JSON.stringify(replayable(message)) === JSON.stringify(replayable(messages[i] as (typeof messages)[number])))
  if (!prefix) {
    report.problems.push({ path: where, reason: `the target already holds a different conversation for this session (${present.length} message(s)); not replayed` })
    return undefined
  }
  const rest = messages.slice(present.length)
  const stored = [...present, ...(rest.length > 0 ? await to.context.appendMessages(target.id, rest.map(replayable)) : [])]
  for (const [i, message] of messages.entries()) messageIds.set(message.id, (stored[i] as (typeof stored)[number]).id)

  // The summaries an earlier run replayed already, by what they say and fold in the target.
  const replayed = new Map<string, string[]>()
  for (const summary of await to.context.summariesById(await allSummaryIds(to.context, await to.context.items(target.id)))) {
    const key = summaryKey(summary, await to.context.summaryChildren(summary.id))
    replayed.set(key, [...(replayed.get(key) ?? []), summary.id])
  }
  const summaryIds = new Map<string, string>()
  let added = 0
  for (const summary of await summariesOf(from, conversation)) {
    const children = await from.context.summaryChildren(summary.id)
    const newMessages = children.messageIds.map((id) => messageIds.get(id))
    const newSummaries = children.summaryIds.map((id) => summaryIds.get(id))
    const there = replayed.get(summaryKey(summary, { messageIds: newMessages as number[], summaryIds: newSummaries as string[] }))
    const again = there?.shift()
    if (again !== undefined) {
      summaryIds.set(summary.id, again)
      continue
    }
    const wanted = new Set<string>([...newMessages.map((id) => `m${id}`), ...newSummaries.map((id) => `s${id}`)])
    const positions = (await to.context.items(target.id)).filter((item) => wanted.has(item.kind === 'message' ? `m${item.messageId}` : `s${item.summaryId}`)).map((item) => item.position)
    if (newMessages.includes(undefined) || newSummaries.includes(undefined) || positions.length !== wanted.size) {
      report.problems.push({ path: `${where}, summary ${summary.id}`, reason: 'what it folds is not a run of current items in the target; this summary and the ones made after it are not replayed' })
      break
    }
    try {
      const made = await to.context.replaceWithSummary(target.id, positions, {
        kind: summary.kind,
        depth: summary.depth,
        content: summary.content,
        tokenCount: summary.tokenCount,
        sourceTokenCount: summary.sourceTokenCount,
        earliestAt: summary.earliestAt,
        latestAt: summary.latestAt,
        method: summary.method,
        ...(children.messageIds.length > 0 ? { messageIds: newMessages as number[] } : {}),
        ...(children.summaryIds.length > 0 ? { parentIds: newSummaries as string[] } : {}),
      })
      summaryIds.set(summary.id, made.id)
      added++
    } catch (error) {
      report.problems.push({ path: `${where}, summary ${summary.id}`, reason: `not replayed: ${describe(error)}; the ones made after it are not either` })
      break
    }
  }
  if (rest.length === 0 && added === 0) report.conversations.alreadyThere++
  else report.conversations.moved++
  report.conversations.messages += rest.length
  report.conversations.summaries += added
  return messageIds
}

/**
 * Moves the memory of `agent` from `from` into `to` (see the module comment). Never stops at one
 * thing that cannot be moved: it is reported, and the rest moves.
 */
export async function migrateBackend(options: MigrateBackendOptions): Promise<MigrationReport> {
  const { from, to, agent } = options
  const problems: TreeProblem[] = []
  const report: MigrationReport = {
    agent,
    from: from.name,
    to: to.name,
    memory: { files: 0, entries: 0, topicEntries: 0, documents: 0, skills: 0, unchanged: 0 },
    archive: { documents: 0, forgotten: 0, alreadyThere: 0 },
    access: { units: 0, alreadyThere: 0 },
    conversations: { moved: 0, alreadyThere: 0, messages: 0, summaries: 0 },
    activity: { events: 0, alreadyThere: 0 },
    confirmations: { pending: 0, decided: 0, alreadyThere: 0 },
    turns: { moved: 0, alreadyThere: 0 },
    jobRuns: { moved: 0, alreadyThere: 0 },
    queuedJobs: { moved: 0, alreadyThere: 0 },
    status: 'incomplete',
    verification: { differences: [] },
    problems,
    notMoved: NOT_MOVED,
  }

  const progress = options.progress ?? {}
  // 1. The memory tree: engram files, topics, documents, profiles, prompt layers, skills.
  const tree = await collectMemoryTree({ backend: from, agent, ...(options.skills ? { skills: options.skills.from } : {}), reading: startPhase(progress, `${agent}: reading memory`) })
  problems.push(...tree.problems)
  const imported = await importMemoryTree({ backend: to, agent, ...(options.skills ? { skills: options.skills.to } : {}) }, tree.files, problems, progress)
  report.memory = imported.counts
  // 1b. What each owner's archive keeps: forgotten and merged documents, earlier versions, forgotten entries and topics.
  await startPhase(progress, `${agent}: moving archives`).checkpoint()
  report.archive = await moveArchive(from, to, tree.owners, agent, problems)

  // 2. Conversations of this agent, with the old→new message ids the stored turns need.
  const messageIds = new Map<number, number>()
  const users = new Set<string>(await from.users())
  const conversations = (await from.context.listConversations(agent)).sort((a, b) => a.id - b.id)
  const moving = startPhase(progress, `${agent}: moving conversations`, conversations.length)
  for (const conversation of conversations) {
    await moving.checkpoint()
    moving.step()
    if (conversation.user !== undefined) users.add(conversation.user)
    try {
      const moved = await moveConversation(from, to, conversation, report)
      for (const [before, after] of moved ?? []) messageIds.set(before, after)
    } catch (error) {
      problems.push({ path: `conversation ${conversation.sessionId}`, reason: `not moved: ${describe(error)}` })
    }
  }

  // 3. The activity log of each owner, in order; events the target holds already are not added again.
  const logs = startPhase(progress, `${agent}: moving activity logs`, tree.owners.length)
  for (const owner of tree.owners) {
    await logs.checkpoint()
    logs.step()
    try {
      const source = await from.owned(owner).activity.read()
      const present = multiset((await to.owned(owner).activity.read()).map(({ ref: _ref, ...event }) => JSON.stringify(event)))
      for (const { ref: _ref, ...event } of source) {
        if (take(present, JSON.stringify(event))) {
          report.activity.alreadyThere++
          continue
        }
        await to.owned(owner).activity.append(event)
        report.activity.events++
      }
      for (const problem of await from.owned(owner).activity.problems()) problems.push({ path: problem.file, line: problem.line, reason: `${problem.reason} (not moved)` })
    } catch (error) {
      problems.push({ path: `activity of ${owner}`, reason: `not moved: ${describe(error)}` })
    }
  }

  // 4. Confirmations: the pending ones of each queue, then the decided ones each user's record keeps.
  const queues = startPhase(progress, `${agent}: moving confirmations`, users.size + 1)
  for (const user of [undefined, ...[...users].sort()]) {
    await queues.checkpoint()
    queues.step()
    try {
      const present = new Set((await to.confirmations.pending(user)).map((item) => confirmationKey(item, 'pending')))
      for (const item of await from.confirmations.pending(user)) {
        if (present.has(confirmationKey(item, 'pending'))) {
          report.confirmations.alreadyThere++
          continue
        }
        if (item.engram) await to.confirmations.enqueue(item.engram, item.reason, user)
        else if (item.document) await to.confirmations.enqueueDocument(item.document, item.reason, user)
        report.confirmations.pending++
      }
      if (user === undefined) continue
      const decided = multiset((await to.confirmations.ofUser(user)).filter((item) => item.agent === agent && item.status !== 'pending' && item.askedBy === user).map((item) => confirmationKey(item, item.status)))
      for (const item of (await from.confirmations.ofUser(user)).filter((c) => c.agent === agent && c.status !== 'pending' && c.askedBy === user)) {
        // A run killed between queueing and answering left it pending: queueing it again returns that one, which is answered now.
        if (take(decided, confirmationKey(item, item.status))) {
          report.confirmations.alreadyThere++
          continue
        }
        const queued = item.engram ? await to.confirmations.enqueue(item.engram, item.reason, user) : item.document ? await to.confirmations.enqueueDocument(item.document, item.reason, user) : undefined
        if (!queued) continue
        if (item.status === 'accepted') await to.confirmations.accept([queued.id], user)
        else await to.confirmations.reject([queued.id], user)
        report.confirmations.decided++
      }
    } catch (error) {
      problems.push({ path: `confirmations of ${user ?? 'the agent'}`, reason: `not moved: ${describe(error)}` })
    }
  }

  // 5. Stored turns (what each turn was given), on the moved messages.
  const turns = startPhase(progress, `${agent}: moving stored turns`, users.size + 1)
  for (const user of [undefined, ...[...users].sort()]) {
    await turns.checkpoint()
    turns.step()
    try {
      for (const turn of (await from.lifecycle.recentTurns(agent, user, ALL)).reverse()) {
        const replies = turn.replyIds.flatMap((id) => (messageIds.has(id) ? [messageIds.get(id) as number] : []))
        const there = await to.lifecycle.turn(agent, { sessionId: turn.sessionId, turn: turn.turn })
        if (there) {
          // A run killed between the turn and its replies left it without them: they are added now.
          const missing = replies.filter((id) => !there.replyIds.includes(id))
          if (missing.length > 0) await to.lifecycle.addTurnReplies(agent, turn.sessionId, turn.turn, missing)
          report.turns.alreadyThere++
          continue
        }
        const messageId = messageIds.get(turn.messageId)
        if (messageId === undefined) {
          problems.push({ path: `turn ${turn.turn} of ${turn.sessionId}`, reason: 'its message was not moved; not moved' })
          continue
        }
        const { replyIds: _replyIds, ...record } = turn
        await to.lifecycle.saveTurn({ ...record, messageId })
        if (replies.length > 0) await to.lifecycle.addTurnReplies(agent, turn.sessionId, turn.turn, replies)
        report.turns.moved++
      }
    } catch (error) {
      problems.push({ path: `turns of ${user ?? 'the agent'}`, reason: `not moved: ${describe(error)}` })
    }
  }

  // 6. Job runs (so scheduled work neither repeats nor forgets when it last ran).
  await startPhase(progress, `${agent}: moving job runs`).checkpoint()
  try {
    const key = (run: { job: string; startedAt: string; finishedAt: string; status: string }): string => `${run.job}\u0000${run.startedAt}\u0000${run.finishedAt}\u0000${run.status}`
    const present = multiset((await to.jobs.runs({ agent, limit: ALL })).map(key))
    for (const run of (await from.jobs.runs({ agent, limit: ALL })).sort((a, b) => a.id - b.id)) {
      if (take(present, key(run))) {
        report.jobRuns.alreadyThere++
        continue
      }
      const { id: _id, ...record } = run
      await to.jobs.record(record)
      report.jobRuns.moved++
    }
  } catch (error) {
    problems.push({ path: 'job runs', reason: `not moved: ${describe(error)}` })
  }

  // 6b. Work still waiting in the lifecycle's queue (a closed session's boundary work, a scheduled job), so a move drops none of it.
  try {
    const present = multiset((await to.lifecycle.jobs(agent)).map(queuedJobKey))
    for (const job of (await from.lifecycle.jobs(agent, { status: WAITING })).sort((a, b) => a.id - b.id)) {
      if (take(present, queuedJobKey(job))) {
        report.queuedJobs.alreadyThere++
        continue
      }
      await to.lifecycle.enqueue({ agent, kind: job.kind, ...(job.key !== undefined ? { key: job.key } : {}), payload: job.payload, runAfter: job.runAfter, maxAttempts: job.maxAttempts })
      report.queuedJobs.moved++
    }
  } catch (error) {
    problems.push({ path: 'queued jobs', reason: `not moved: ${describe(error)}` })
  }

  // 7. Access counts, on the units the reindex made (their ids are the same on both backends); none without a reindex.
  if (options.reindex) {
    await options.reindex(progress)
    try {
      report.access = await moveAccess(from, to, agent, problems)
    } catch (error) {
      problems.push({ path: 'access counts', reason: `not moved: ${describe(error)}` })
    }
  } else report.notMoved = [...NOT_MOVED, 'access counts of memory: without a reindex of the target it has no units to carry them']

  // 8. The target against the source: counts and digests per tree, file, conversation, log and kind.
  await startPhase(progress, `${agent}: checking the target against the source`).checkpoint()
  const access = options.reindex !== undefined
  const differences = compareDigests(await digestAgent(from, agent, options.skills?.from, { access }), await digestAgent(to, agent, options.skills?.to, { access }))
  report.verification = { differences }
  report.status = differences.length === 0 ? 'complete' : 'incomplete'
  return report
}
