/**
 * Automatic outcome tracking of procedures (AnimaWorks' "framework auto-tracking"): at a session's
 * boundary, each procedure priming showed in a turn of the session's open period, that the session
 * followed (follow-evidence.ts, decision 0047: an incidental match has no outcome) and that the
 * agent did not report itself (`report_procedure_outcome`), is judged from what the stores hold —
 * offline, deterministically, without a model:
 *
 * - **failure** when a tool call failed (`ok: false`) or was stopped (`killed`) in a turn it was
 *   shown in or the turn after, or when the user's next message says it did not work (a small,
 *   conservative set of phrases: `negativeReply`);
 * - **success** when those turns made tool calls and every one of them succeeded cleanly, and no
 *   complaint followed;
 * - otherwise **unknown**, and nothing is counted: a procedure shown in a chat that used no tool,
 *   or whose calls ended with a warning or without an outcome, says nothing about the procedure.
 *
 * Engram's own memory tools (search_memory, recall_skill, …) are no evidence either way: looking a
 * procedure up is not following it. The outcome is counted through `ProcedureStore.reportOutcome`
 * (the one write path, under the procedure's lock) in the store of the procedure's own owner —
 * resolved among the trees the session's viewer sees, so another user's procedure is never
 * reachable — and recorded in the activity log of the session's owner. Each count is recorded
 * before the next is made, and a run skips what a previous run of the same period recorded, so a
 * retried job counts each procedure once.
 */
import type { ActivityEvent } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Owner } from '../../core/owner.ts'
import type { ActivityRecord, Lifecycle } from '../../storage/contracts.ts'
import { compareRecords } from '../episodes/session-events.ts'
import type { ViewerScope } from '../view.ts'
import { followedBecause, loggedTurns } from './follow-evidence.ts'
import type { ProcedureStore } from './procedure-store.ts'

/** The agent's own report; a procedure it names was judged by the agent, not by this tracker. */
export const REPORT_OUTCOME_TOOL = 'report_procedure_outcome'

/** `meta.origin` of the activity events this tracker writes (how a retried run finds what it counted). */
export const OUTCOME_TRACKING_ORIGIN = 'procedure_outcome_tracking'

/** A reply is read from its beginning only: a reaction comes first, a pasted log after it may say "error" about anything. */
const REPLY_CHARS = 600

/** One tool call of a turn, as the activity log has it. */
export interface ObservedCall {
  tool: string
  /** `undefined` when the host logged the call without saying how it ended. */
  ok: boolean | undefined
  killed: boolean
  warning: boolean
}

/** One turn of a session period: the user's message and the tool calls made before the next turn. */
export interface ObservedTurn {
  number: number
  message: string
  calls: ObservedCall[]
}

export type OutcomeDecision = { outcome: 'success' | 'failure'; reason: string } | { outcome: 'unknown'; reason: string }

/**
 * Phrases by which a user says that what the agent just did did not work. Kept small on purpose: a
 * false failure lowers a good procedure's confidence, a missed one only leaves it unknown.
 * `negatable` phrases do not count after a negation ("I didn't get an error this time").
 */
const NEGATIVE_REPLIES: ReadonlyArray<{ label: string; pattern: RegExp; negatable?: boolean }> = [
  { label: "didn't work", pattern: /\b(?:did|does|do|would|will|wo)\s*(?:n't|not)\s+(?:work|help|fix)/ },
  { label: 'not working', pattern: /\b(?:is|are|was|were|it's|still)\s+not\s+working\b|\b(?:isn't|aren't|wasn't|weren't)\s+working\b/ },
  { label: "that's wrong", pattern: /\b(?:that's|that\s+is|this\s+is|it's|it\s+is|you're|you\s+are|that\s+was|this\s+was)\s+(?:wrong|incorrect|not\s+right)\b/ },
  { label: 'still failing', pattern: /\bstill\s+(?:fails|failing|failed|broken|erroring|crashing|not\s+working|the\s+same\s+error|(?:does|do)\s*(?:n't|not)\s+work)\b/ },
  { label: 'it failed', pattern: /\b(?:it|that|this)\s+(?:failed|fails|broke)\b/, negatable: true },
  {
    label: 'error',
    pattern: /\b(?:got|get|getting|gives|gave|giving|threw|throws|throwing|returned|returns|shows|showed|see|seeing)\s+(?:an?\s+|the\s+|this\s+|that\s+|the\s+same\s+|same\s+|another\s+)?(?:error|exception)\b|(?:^|\n)\s*(?:error|exception)\s*:|(?:^|\n)\s*traceback\b/,
    negatable: true,
  },
]

/** A negation in the few words before a match: "no", "not", "never", "without", "…n't". */
const NEGATION_BEFORE = /(?:\b(?:no|not|never|without)|n't)\s+(?:\S+\s+){0,2}$/

/** The label of the first negative phrase in `message` (its first few hundred characters), if any. */
export function negativeReply(message: string): string | undefined {
  const text = message.slice(0, REPLY_CHARS).toLowerCase().replace(/[\u2018\u2019]/g, "'")
  for (const { label, pattern, negatable } of NEGATIVE_REPLIES) {
    const match = pattern.exec(text)
    if (!match) continue
    if (negatable && NEGATION_BEFORE.test(text.slice(0, match.index))) continue
    return label
  }
  return undefined
}

/**
 * The outcome of a procedure shown in turns `shownIn` of a period whose turns are `turns`. Pure:
 * the same turns give the same decision. Tools in `ignoredTools` are no evidence.
 */
export function decideOutcome(shownIn: readonly number[], turns: readonly ObservedTurn[], ignoredTools: ReadonlySet<string> = new Set()): OutcomeDecision {
  const byNumber = new Map(turns.map((turn) => [turn.number, turn]))
  const shown = [...new Set(shownIn)].filter((number) => byNumber.has(number)).sort((a, b) => a - b)
  if (shown.length === 0) return { outcome: 'unknown', reason: 'none of the turns it was shown in is in the log' }
  const window = new Set<number>()
  for (const number of shown) {
    window.add(number)
    if (byNumber.has(number + 1)) window.add(number + 1)
  }
  const followed = shown.some((number) => byNumber.has(number + 1))
  const calls = [...window]
    .sort((a, b) => a - b)
    .flatMap((number) => byNumber.get(number)?.calls ?? [])
    .filter((call) => !ignoredTools.has(call.tool))
  const failed = calls.find((call) => call.ok === false || call.killed)
  if (failed) return { outcome: 'failure', reason: `${failed.tool} ${failed.killed ? 'was stopped' : 'failed'} in the turn it was shown in or the next` }
  for (const number of shown) {
    const next = byNumber.get(number + 1)
    const label = next ? negativeReply(next.message) : undefined
    if (label) return { outcome: 'failure', reason: `the user's next message said it did not work ("${label}")` }
  }
  if (calls.length === 0) return { outcome: 'unknown', reason: 'no tool call in the turn it was shown in or the next' }
  const unclear = calls.find((call) => call.ok !== true || call.warning)
  if (unclear) return { outcome: 'unknown', reason: `${unclear.tool} ${unclear.warning ? 'ended with a warning' : 'has no recorded outcome'}` }
  return {
    outcome: 'success',
    reason: `${calls.length} tool call${calls.length === 1 ? '' : 's'} succeeded in the turn it was shown in${followed ? ' and the next, and the user did not say it failed' : ''}`,
  }
}

/** The procedure a `report_procedure_outcome` call named, read from its logged input (which may be cut at 500 characters). */
function reportedProcedure(record: ActivityRecord): string | undefined {
  const input = record.meta?.input
  if (typeof input !== 'string') return undefined
  const match = /"procedure"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(input)
  if (!match) return undefined
  try {
    return (JSON.parse(`"${match[1]}"`) as string).trim()
  } catch {
    return undefined
  }
}

/** What the log says about a session's period: its turns (numbered by the turn that logged them) and the agent's own reports. */
export interface PeriodLog {
  turns: ObservedTurn[]
  /** Procedures the agent reported itself (successful report calls only). */
  reported: Set<string>
  /** A successful report whose procedure cannot be read from the log: every procedure counts as reported. */
  reportedUnreadable: boolean
}

/**
 * The turns of `sessionId` in `records`: each `message_received` the session logged with its turn
 * number opens one, and the tool calls after it are its own. Messages without a number (logged
 * before turns were numbered in the log) open nothing, and their calls belong to no turn.
 */
export function periodLog(records: readonly ActivityRecord[], sessionId: string): PeriodLog {
  const events = records.filter((record) => record.session === sessionId && (record.type === 'message_received' || record.type === 'tool_use')).sort(compareRecords)
  const turns: ObservedTurn[] = []
  const reported = new Set<string>()
  let reportedUnreadable = false
  let current: ObservedTurn | undefined
  for (const event of events) {
    if (event.type === 'message_received') {
      const number = event.meta?.turn
      current = typeof number === 'number' && Number.isInteger(number) && number > 0 ? { number, message: event.content ?? '', calls: [] } : undefined
      if (current) turns.push(current)
      continue
    }
    const tool = event.tool ?? ''
    if (tool === REPORT_OUTCOME_TOOL && event.meta?.ok !== false) {
      const procedure = reportedProcedure(event)
      if (procedure === undefined) reportedUnreadable = true
      else reported.add(procedure)
    }
    current?.calls.push({ tool, ok: typeof event.meta?.ok === 'boolean' ? event.meta.ok : undefined, killed: event.meta?.killed === true, warning: typeof event.meta?.warning === 'string' })
  }
  return { turns, reported, reportedUnreadable }
}

/** The slug of a procedure file, from its path relative to the home (`…/procedures/<slug>.md`). */
function slugOf(source: string): string | undefined {
  return /(?:^|\/)procedures\/([^/]+)\.md$/.exec(source)?.[1]
}

export interface OutcomeTrackingDeps {
  agent: string
  /** Stored turns: what priming showed in each. */
  lifecycle: Pick<Lifecycle, 'turn'>
  /** What the session's user sees (decision 0017): whose procedures it may count on, and its own log. */
  scope(user: string | undefined): ViewerScope
  /** The procedures of one owner's tree. */
  procedures(owner: Owner): ProcedureStore
  clock: Clock
  /** Tools that say nothing about a procedure (engram's own memory tools). */
  ignoredTools: readonly string[]
}

/** One open period of a session, as its boundary saw it. */
export interface SessionPeriod {
  session: string
  user: string | undefined
  /** First and last activity of the period (inclusive). */
  from: string
  until: string
}

/** What a run did, in counts (the job's row keeps no slug or path: those stay in the owner's log). */
export interface OutcomeTrackingRun {
  /** Procedures shown in the period. */
  shown: number
  /** …reported by the agent itself, so left alone. */
  reported: number
  success: number
  failure: number
  /** …with no outcome to count. */
  unknown: number
  /** …of which not followed (decision 0047): what the session did says nothing about a procedure it did not use. */
  notFollowed: number
  /** …counted by an earlier run of this period (a retried job). */
  already: number
  /** …no longer there (forgotten, renamed), or whose counters cannot be written. */
  skipped: number
}

interface Holder {
  owner: Owner
  slug: string
  store: ProcedureStore
}

/** Counts the outcome of each procedure shown in `period` and not reported by the agent. */
export async function trackProcedureOutcomes(deps: OutcomeTrackingDeps, period: SessionPeriod): Promise<OutcomeTrackingRun> {
  const run: OutcomeTrackingRun = { shown: 0, reported: 0, success: 0, failure: 0, unknown: 0, notFollowed: 0, already: 0, skipped: 0 }
  const scope = deps.scope(period.user)
  const log = scope.view.own.activity
  const records = await log.read({ since: period.from, until: period.until, types: ['message_received', 'tool_use', 'response_sent'] })
  const { turns, reported, reportedUnreadable } = periodLog(records, period.session)
  const logged = new Map(loggedTurns(records, period.session).map((turn) => [turn.number, turn]))

  // Which procedure files each turn showed, by their path.
  const shown = new Map<string, number[]>()
  for (const turn of turns) {
    const stored = await deps.lifecycle.turn(deps.agent, { sessionId: period.session, turn: turn.number })
    // A session belongs to the user it was opened with; a turn of anyone else is never read.
    if (!stored || stored.user !== period.user) continue
    const primed = Array.isArray(stored.provenance.primed) ? (stored.provenance.primed as unknown[]) : []
    for (const item of primed) {
      if (typeof item !== 'object' || item === null) continue
      const { kind, source } = item as { kind?: unknown; source?: unknown }
      if (kind !== 'procedure' || typeof source !== 'string') continue
      const numbers = shown.get(source) ?? []
      if (!numbers.includes(turn.number)) numbers.push(turn.number)
      shown.set(source, numbers)
    }
  }
  run.shown = shown.size
  if (shown.size === 0) return run

  const counted = new Set(
    (await log.read({ since: period.from, types: ['memory_write'] }))
      .filter((record) => record.meta?.origin === OUTCOME_TRACKING_ORIGIN && record.meta.session === period.session && record.meta.period === period.until)
      .map((record) => `${String(record.meta?.owner)}\u0000${String(record.meta?.procedure)}`),
  )
  const ignored = new Set(deps.ignoredTools)

  // The tree that holds the file: only among those the session's viewer sees (another user's never is).
  async function holderOf(source: string): Promise<Holder | undefined> {
    const slug = slugOf(source)
    if (slug === undefined) return undefined
    for (const tree of scope.view.trees) {
      const store = deps.procedures(tree.owner)
      if ((await store.get(slug))?.path === source) return { owner: tree.owner, slug, store }
    }
    return undefined
  }

  for (const [source, shownIn] of shown) {
    const holder = await holderOf(source)
    if (!holder) {
      run.skipped++
      continue
    }
    if (reportedUnreadable || reported.has(holder.slug)) {
      run.reported++
      continue
    }
    // Only a procedure the session followed has an outcome: the calls of a turn that showed an
    // incidental match were about something else, and must not keep that match alive.
    const procedure = await holder.store.get(holder.slug)
    const shownText = { kind: 'procedure' as const, name: holder.slug, text: procedure?.body ?? '' }
    const followed = shownIn.some((number) => {
      const turn = logged.get(number)
      return turn !== undefined && followedBecause(shownText, turn, logged.get(number + 1), ignored) !== undefined
    })
    if (!followed) {
      run.unknown++
      run.notFollowed++
      continue
    }
    const decision = decideOutcome(shownIn, turns, ignored)
    if (decision.outcome === 'unknown') {
      run.unknown++
      continue
    }
    if (counted.has(`${holder.owner}\u0000${holder.slug}`)) {
      run.already++
      continue
    }
    const success = decision.outcome === 'success'
    let outcome: Awaited<ReturnType<ProcedureStore['reportOutcome']>>
    try {
      // The note names the method and the evidence only: an agent's procedure is read by every user, so nothing of this session goes into it.
      outcome = await holder.store.reportOutcome(holder.slug, success, `auto: ${decision.reason}`)
    } catch (error) {
      // Gone since, or a frontmatter a person must repair: nothing to count. A busy lock is tried again with the job.
      if (EngramError.is(error) && (error.code === ErrorCode.notFound || error.code === ErrorCode.storageCorrupt)) {
        run.skipped++
        continue
      }
      throw error
    }
    run[decision.outcome]++
    const event: ActivityEvent = {
      ts: deps.clock.now().toISOString(),
      type: 'memory_write',
      content: `procedure ${holder.slug}: ${decision.outcome}, tracked automatically (${decision.reason})`,
      summary: `auto-tracked ${decision.outcome} of ${source}: ${outcome.successCount} of ${outcome.successCount + outcome.failureCount} runs succeeded`,
      meta: {
        origin: OUTCOME_TRACKING_ORIGIN,
        action: 'procedure_outcome',
        procedure: holder.slug,
        path: source,
        owner: holder.owner,
        success,
        reason: decision.reason,
        // In meta, not as the event's session: a record of the boundary's work is no activity of the session (it would reopen it).
        session: period.session,
        period: period.until,
        turns: [...shownIn].sort((a, b) => a - b),
        successCount: outcome.successCount,
        failureCount: outcome.failureCount,
        confidence: outcome.confidence,
      },
    }
    await log.append(event)
  }
  return run
}
