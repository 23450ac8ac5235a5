/**
 * Stores what the orphaned journals of dead writers hold, exactly once (docs/decisions/0018):
 * the text a crash cut off goes back into the conversation it belonged to, as an assistant message
 * marked as recovered, with the tool calls the turn made in its meta.
 *
 * Exactly once across processes: each orphan is claimed by an atomic rename (journal-folder.ts);
 * storing a claimed journal happens under the agent's recovery lock and first looks in the
 * conversation for a message recovered from the same stream — there when a recoverer stored it
 * and died before moving the file on. Lossless: the file leaves `recovering/` only after its text
 * is stored, and is kept in `recovered/`.
 */
import type { Clock } from '../../core/clock.ts'
import { describeError } from '../../core/errors.ts'
import type { StoredMessage } from '../../core/message.ts'
import { countTokens } from '../../core/tokens.ts'
import type { ContextStore, Locks } from '../../storage/contracts.ts'
import type { ClaimedJournal, Journals } from './journal-folder.ts'
import type { JournalRecovery, RecoveredToolCall } from './journal-recovery.ts'

/** What happened to one recovered journal. */
export type RecoveryOutcome =
  | { kind: 'stored'; conversationId: number; messageId: number }
  /** A recoverer that died had stored it already; only the file was moved on. */
  | { kind: 'already-stored'; conversationId: number; messageId: number }
  | { kind: 'skipped'; reason: string }

/** A journal this process recovered: what it held, where it is kept, and what was stored. */
export interface RecoveredJournal extends JournalRecovery {
  stream: string
  /** Where the journal is kept, relative to the journal folder (`recovered/<stream>.jsonl`). */
  archivedTo: string
  outcome: RecoveryOutcome
}

/** What the meta of a recovered message records. */
interface RecoveredMessageMeta {
  recovered: true
  finished: false
  /** The stream's id; the journal is kept at `journal`. */
  stream: string
  journal: string
  toolCalls: RecoveredToolCall[]
}

export interface RecoverOrphansOptions {
  journals: Journals
  context: ContextStore
  locks: Locks
  agent: string
  clock: Clock
  warn(message: string): void
}

const LOCK_PREFIX = 'journal-recovery:'
/** Messages read per step while looking back through a conversation. */
const PAGE = 100

/**
 * Claims the journals of dead writers and stores each one's text in its conversation. Never
 * throws: a journal that cannot be stored stays in `recovering/` and is retried at the next open.
 */
export async function recoverOrphanedJournals(options: RecoverOrphansOptions): Promise<RecoveredJournal[]> {
  const { journals, warn } = options
  let claimed: ClaimedJournal[]
  try {
    claimed = journals.claimOrphans()
  } catch (error) {
    warn(`journal recovery: ${describeError(error)}`)
    return []
  }
  const recovered: RecoveredJournal[] = []
  for (const claim of claimed) {
    try {
      const outcome = await options.locks.withLock(`${LOCK_PREFIX}${options.agent}`, async () => {
        const recovery = journals.readClaimed(claim)
        // Another process stored and settled it while this one waited for the lock.
        if (!recovery) return undefined
        const journal = journals.settledPath(claim)
        const stored = await store(options, claim.id, journal, recovery)
        return { ...recovery, stream: claim.id, archivedTo: journals.settle(claim), outcome: stored }
      })
      if (outcome.kind === 'done' && outcome.value) recovered.push(outcome.value)
    } catch (error) {
      warn(`journal recovery of ${claim.id}: ${describeError(error)}; it stays in journal/recovering/ and is retried at the next open`)
    }
  }
  return recovered
}

async function store(options: RecoverOrphansOptions, stream: string, journal: string, recovery: JournalRecovery): Promise<RecoveryOutcome> {
  const sessionId = recovery.session?.sessionId
  if (!sessionId) return { kind: 'skipped', reason: 'the journal names no session' }
  // `done` is written after session.end stored the reply: only the deletion of the file was lost.
  if (recovery.finished) return { kind: 'skipped', reason: 'the turn had finished and its reply was stored' }
  if (recovery.text.trim() === '' && recovery.toolCalls.length === 0) return { kind: 'skipped', reason: 'nothing was streamed' }
  const user = recovery.session?.from
  const conversation = await options.context.conversation(sessionId, { agent: options.agent, ...(user !== undefined ? { user } : {}) })
  const existing = await findRecovered(options.context, conversation.id, stream, recovery)
  if (existing) return { kind: 'already-stored', conversationId: conversation.id, messageId: existing.id }
  const content = recovery.text.trim() !== '' ? recovery.text : `(the reply was cut off before any text; it had called ${recovery.toolCalls.map((call) => call.tool).join(', ')})`
  const meta: RecoveredMessageMeta = { recovered: true, finished: false, stream, journal, toolCalls: recovery.toolCalls }
  const stored = await options.context.appendMessages(conversation.id, [
    {
      role: 'assistant',
      content,
      at: recovery.lastEventAt ?? options.clock.now().toISOString(),
      tokenCount: countTokens(content),
      meta: { ...meta },
    },
  ])
  // appendMessages returns one stored message per input, in order.
  return { kind: 'stored', conversationId: conversation.id, messageId: stored[0]!.id }
}

/**
 * The message already recovered from `stream`, looking back from the end of the conversation no
 * further than the turn's user message (the reply is stored after it), or, for a journal that does
 * not name its turn, than the messages older than the stream's start.
 */
async function findRecovered(context: ContextStore, conversationId: number, stream: string, recovery: JournalRecovery): Promise<StoredMessage | undefined> {
  const startedAt = recovery.session?.startedAt
  let toSeq = await context.messageCount(conversationId)
  while (toSeq >= 1) {
    const fromSeq = Math.max(1, toSeq - PAGE + 1)
    const page = await context.messages(conversationId, { fromSeq, toSeq })
    for (let i = page.length - 1; i >= 0; i--) {
      const message = page[i]!
      if (message.meta?.stream === stream) return message
      if (recovery.turn !== undefined ? message.id === recovery.turn : startedAt !== undefined && message.at < startedAt) return undefined
    }
    toSeq = fromSeq - 1
  }
  return undefined
}
