/**
 * What an agent's memory is on a backend, as counts and digests that do not depend on the ids a
 * backend gives out (decision 0052): the memory tree per owner's tree (and per file, archived ones
 * too), each conversation (its messages, the summary DAG and the order of the context items), the
 * activity log per owner, confirmations, stored turns, job runs, the lifecycle's waiting jobs and
 * the access counts of recalled memory. `engram migrate` compares the source's with the target's
 * to say "complete" or "incomplete"; the same digest of two databases says whether they hold the
 * same memory row for row.
 */
import { createHash } from 'node:crypto'
import { dedupeKey } from '../../core/engram.ts'
import type { StoredMessage } from '../../core/message.ts'
import type { Backend, Conversation, PendingConfirmation, QueuedJob, QueuedJobStatus } from '../../storage/contracts.ts'
import { allSummaryIds } from '../context/dag.ts'
import type { SkillStore } from '../skills/skill-store.ts'
import { collectMemoryTree } from './memory-tree.ts'
import { accessOf, holdsAccess } from './migrate-access.ts'
import { archiveTexts } from './migrate-archive.ts'

/** How much of one kind there is, and a digest of all of it. */
export interface Tally {
  count: number
  digest: string
}

export interface ConversationDigest {
  messages: Tally
  summaries: Tally
  items: Tally
}

export interface AgentDigest {
  /** Each owner's tree (`agents/<a>`, `agents/<a>/users/<key>`, `shared`, `shared/users`, `project/…`): its files, its archive's too. */
  trees: Record<string, Tally>
  /** Every file of the tree → the digest of its text (to name what differs). */
  files: Record<string, string>
  /** Each conversation of the agent, by session id. */
  conversations: Record<string, ConversationDigest>
  /** The activity log of each owner. */
  activity: Record<string, Tally>
  /** Pending and answered confirmations, of the agent's queue and each user's. */
  confirmations: Tally
  turns: Tally
  jobRuns: Tally
  /** Jobs of the lifecycle's queue still waiting (or running) → how many: what a target must hold. */
  waitingJobs: Record<string, number>
  /** Every job of the queue, whatever its status → how many: what a target holds (a carried job may have run there since). */
  queuedJobs: Record<string, number>
  /** Each recalled memory unit (by id, the same on every backend): `<access count>@<last access>`. */
  access: Record<string, string>
}

/** Jobs of the queue that have not ended: a migration queues them again in the target. */
export const WAITING: QueuedJobStatus[] = ['queued', 'running']

/**
 * A queued job without its ids, times and attempts: its key when it has one (a queue holds one job
 * per key, whatever its status: the target's own job of that key is the same work), else what it
 * runs, with what, from when.
 */
export function queuedJobKey(job: QueuedJob): string {
  return job.key !== undefined ? JSON.stringify(['key', job.key]) : JSON.stringify([job.kind, job.payload, job.runAfter])
}

function counted(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const key of keys) out[key] = (out[key] ?? 0) + 1
  return out
}

/** The biggest listing a seam is asked for at once (stored turns per user, job runs). */
export const ALL = 1_000_000

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** A multiset of keys as a tally (order does not count: a target may hold them in another order). */
function tally(keys: string[]): Tally {
  return { count: keys.length, digest: hash(JSON.stringify([...keys].sort())) }
}

/** A message as an append takes it again: everything but the ids the store gives. */
export function replayable(message: StoredMessage) {
  return {
    role: message.role,
    content: message.content,
    at: message.at,
    tokenCount: message.tokenCount,
    ...(message.name !== undefined ? { name: message.name } : {}),
    ...(message.meta !== undefined ? { meta: message.meta } : {}),
  }
}

/** A confirmation as a comparable key: what it would save, and its answer. */
export function confirmationKey(confirmation: PendingConfirmation, status: string): string {
  const what = confirmation.engram
    ? `e\u0000${confirmation.engram.kind}\u0000${confirmation.engram.scope}\u0000${confirmation.engram.owner ?? 'agent'}\u0000${dedupeKey(confirmation.engram.text)}`
    : `d\u0000${JSON.stringify(confirmation.document)}`
  return `${status}\u0000${what}`
}

/** The tree a file belongs to: the owner's folder (user profiles and a project's users apart). */
function treeOf(path: string): string {
  const match = /^(agents\/[^/]+\/users\/[^/]+|agents\/[^/]+|shared\/users|shared|project\/\.engram\/users\/[^/]+|project)(\/|$)/.exec(path)
  return match?.[1] ?? path
}

/**
 * One conversation without ids: messages in order; each summary as what it says and what it folds
 * (messages by seq, summaries by their own digest), so the DAG is compared, not the ids; the items
 * of the context window in order.
 */
async function digestConversation(backend: Backend, conversation: Conversation, messages: StoredMessage[]): Promise<ConversationDigest> {
  const seqOf = new Map(messages.map((message) => [message.id, message.seq]))
  const items = await backend.context.items(conversation.id)
  // allSummaryIds lists children before parents, so each child's digest is known when its parent is made.
  const ids = await allSummaryIds(backend.context, items)
  const byId = new Map((await backend.context.summariesById(ids)).map((summary) => [summary.id, summary]))
  const digests = new Map<string, string>()
  for (const id of ids) {
    const summary = byId.get(id)
    const children = await backend.context.summaryChildren(id)
    const { kind, depth, content, tokenCount, sourceTokenCount, earliestAt, latestAt, method } = summary ?? ({} as Partial<NonNullable<typeof summary>>)
    const folds = [...children.messageIds.map((m) => `m${seqOf.get(m) ?? `?${m}`}`), ...children.summaryIds.map((s) => `s${digests.get(s) ?? '?'}`)]
    digests.set(id, hash(JSON.stringify({ kind, depth, content, tokenCount, sourceTokenCount, earliestAt, latestAt, method, folds })))
  }
  const messageKeys = messages.map((message) => JSON.stringify(replayable(message)))
  return {
    messages: { count: messages.length, digest: hash(JSON.stringify(messageKeys)) },
    summaries: tally([...digests.values()]),
    items: { count: items.length, digest: hash(JSON.stringify(items.map((item) => (item.kind === 'message' ? `m${seqOf.get(item.messageId)}` : `s${digests.get(item.summaryId)}`)))) },
  }
}

/**
 * The digest of `agent`'s memory on `backend` (see the module comment). `skills` are part of the
 * tree when given; access counts unless `access` is false. Deterministic: the same memory on any backend gives the same digest.
 */
export async function digestAgent(backend: Backend, agent: string, skills?: SkillStore, options: { access?: boolean } = {}): Promise<AgentDigest> {
  const tree = await collectMemoryTree({ backend, agent, ...(skills ? { skills } : {}) })
  const files: Record<string, string> = {}
  const byTree = new Map<string, string[]>()
  // Each owner's archive is part of its tree, under the paths the embedded home has it.
  const archive = await archiveTexts(backend, tree.owners, agent)
  for (const [path, text] of [...tree.files, ...archive].sort(([a], [b]) => a.localeCompare(b))) {
    files[path] = hash(text)
    const keys = byTree.get(treeOf(path)) ?? []
    keys.push(`${path}\u0000${files[path]}`)
    byTree.set(treeOf(path), keys)
  }
  const trees = Object.fromEntries([...byTree].map(([name, keys]) => [name, tally(keys)]))

  const conversations: Record<string, ConversationDigest> = {}
  const users = new Set<string>(await backend.users())
  const sessionOf = new Map<number, { sessionId: string; seq: number }>()
  for (const conversation of await backend.context.listConversations(agent)) {
    if (conversation.user !== undefined) users.add(conversation.user)
    const messages = await backend.context.messages(conversation.id)
    conversations[conversation.sessionId] = await digestConversation(backend, conversation, messages)
    for (const message of messages) sessionOf.set(message.id, { sessionId: conversation.sessionId, seq: message.seq })
  }

  const activity: Record<string, Tally> = {}
  for (const owner of tree.owners) {
    const events = (await backend.owned(owner).activity.read()).map(({ ref: _ref, ...event }) => JSON.stringify(event))
    if (events.length > 0) activity[owner] = tally(events)
  }

  const confirmations: string[] = []
  const turns: string[] = []
  const message = (id: number): string => {
    const where = sessionOf.get(id)
    return where ? `${where.sessionId}#${where.seq}` : `?${id}`
  }
  for (const user of [undefined, ...[...users].sort()]) {
    for (const item of await backend.confirmations.pending(user)) confirmations.push(`${user ?? ''}\u0000${confirmationKey(item, 'pending')}`)
    if (user !== undefined) {
      for (const item of await backend.confirmations.ofUser(user)) {
        if (item.agent === agent && item.status !== 'pending' && item.askedBy === user) confirmations.push(`${user}\u0000${confirmationKey(item, item.status)}`)
      }
    }
    for (const turn of await backend.lifecycle.recentTurns(agent, user, ALL)) {
      const { messageId, replyIds, ...record } = turn
      turns.push(JSON.stringify({ ...record, message: message(messageId), replies: replyIds.map(message).sort() }))
    }
  }
  const runs = (await backend.jobs.runs({ agent, limit: ALL })).map(({ id: _id, ...run }) => JSON.stringify(run))
  const jobs = await backend.lifecycle.jobs(agent)
  const waitingJobs = counted(jobs.filter((job) => WAITING.includes(job.status)).map(queuedJobKey))
  const queuedJobs = counted(jobs.map(queuedJobKey))
  return { trees, files, conversations, activity, confirmations: tally(confirmations), turns: tally(turns), jobRuns: tally(runs), waitingJobs, queuedJobs, access: options.access === false ? {} : await accessOf(backend, agent) }
}

/** One way a target does not hold what its source holds. */
export interface DigestDifference {
  /** What differs: `tree agents/default`, `file …`, `conversation chat-1`, `activity agent`, `confirmations`, `turns`, `job runs`. */
  what: string
  source: string
  target: string
}

const show = (t: Tally | undefined): string => (t ? `${t.count} (${t.digest.slice(0, 12)})` : 'missing')

/**
 * Where `target` does not hold `source`'s memory: each file, owner's tree, conversation and
 * activity log of the source must be in the target with the same digest (a target may hold more
 * besides: files, conversations and owners of its own); confirmations, turns and job runs too when
 * the source has any. Empty when the target holds everything.
 */
export function compareDigests(source: AgentDigest, target: AgentDigest): DigestDifference[] {
  const out: DigestDifference[] = []
  for (const [path, digest] of Object.entries(source.files)) {
    if (target.files[path] !== digest) out.push({ what: `file ${path}`, source: digest.slice(0, 12), target: target.files[path]?.slice(0, 12) ?? 'missing' })
  }
  for (const [name, t] of Object.entries(source.trees)) {
    // A tree of the target with files of its own has another digest; its files are compared above.
    const files = Object.keys(source.files).filter((path) => treeOf(path) === name)
    if (files.some((path) => target.files[path] !== source.files[path])) out.push({ what: `tree ${name}`, source: show(t), target: show(target.trees[name]) })
  }
  for (const [sessionId, conversation] of Object.entries(source.conversations)) {
    const there = target.conversations[sessionId]
    for (const part of ['messages', 'summaries', 'items'] as const) {
      if (there?.[part].digest !== conversation[part].digest) out.push({ what: `conversation ${sessionId}: ${part}`, source: show(conversation[part]), target: show(there?.[part]) })
    }
  }
  for (const [owner, t] of Object.entries(source.activity)) {
    if (target.activity[owner]?.digest !== t.digest) out.push({ what: `activity of ${owner}`, source: show(t), target: show(target.activity[owner]) })
  }
  const missingJobs = Object.entries(source.waitingJobs).filter(([key, n]) => (target.queuedJobs[key] ?? 0) < n)
  if (missingJobs.length > 0) out.push({ what: `queued jobs: ${missingJobs.length} waiting job(s) of the source, e.g. ${missingJobs[0]?.[0]}`, source: String(missingJobs[0]?.[1]), target: String(target.queuedJobs[missingJobs[0]?.[0] ?? ''] ?? 0) })
  // A target recalled since may hold more recalls, never fewer.
  const lacking = Object.keys(source.access).filter((id) => !holdsAccess(source.access[id] as string, target.access[id]))
  if (lacking.length > 0) {
    const first = lacking[0] as string
    out.push({ what: `access counts of ${lacking.length} unit(s), e.g. ${first}`, source: source.access[first] as string, target: target.access[first] ?? 'missing' })
  }
  for (const part of ['confirmations', 'turns', 'jobRuns'] as const) {
    if (source[part].count > 0 && target[part].digest !== source[part].digest) out.push({ what: part === 'jobRuns' ? 'job runs' : part, source: show(source[part]), target: show(target[part]) })
  }
  return out
}
