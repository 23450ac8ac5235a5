/**
 * Crediting the procedures and skills a session was shown, when the session bore them out
 * (decision 0047). Priming no longer counts what it shows in the skills/procedures channel (or a
 * procedure among related memories) as recalled: an incidental match would otherwise keep itself
 * alive. Instead, each showing stored with its turn (the turn's provenance) is checked against what
 * the session did in that turn and the next (`followedBecause`), and a showing that was followed
 * records one access on the procedure's index unit — the use that monthly forgetting counts.
 *
 * Everything is read back from the store: the stored turns, and the session owner's activity log,
 * which also holds a record of each credit (`meta.origin: procedure_use`), so a showing is credited
 * once whichever process looks, however many Session objects the turns were run through. It runs
 * at the end of every turn (for the turn and the one before) and again at the session's boundary
 * (for its whole period), which catches a turn whose end never came.
 */
import type { ActivityEvent } from '../../core/activity.ts'
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { ActivityLog, Lifecycle, Locks, SearchIndex } from '../../storage/contracts.ts'
import { followedBecause, type LoggedTurn, loggedTurns, type ShownText } from './follow-evidence.ts'

/** `meta.origin` of the records of a credit (how a later run finds what was credited). */
export const PROCEDURE_USE_ORIGIN = 'procedure_use'

/** A host may date a message a little before the clock logs it: the log is read from this much earlier. */
const LOG_MARGIN_MS = 60 * 60_000
/** How far back the log is read for an MCP call turn's calls (it has no stored start). */
const CALL_TURN_LOG_MS = 24 * 60 * 60_000

export interface UseCreditingDeps {
  agent: string
  /** Stored turns: what priming showed in each. */
  lifecycle: Pick<Lifecycle, 'turn'>
  index: Pick<SearchIndex, 'hashes' | 'get' | 'recordAccess'>
  clock: Clock
  /** Engram's own memory tools: calling them follows nothing, except opening the procedure by name. */
  ignoredTools: readonly string[]
  /**
   * Serializes the runs of one session (a turn's end and the boundary job, in two processes at the
   * same moment): each reads what the other credited before it credits, so a showing counts once.
   */
  locks?: Pick<Locks, 'withLock'>
}

export interface UseCreditingInput {
  session: string
  user: string | undefined
  /** The session owner's activity log (its turns, and the record of each credit). */
  log: ActivityLog
  /**
   * The showings checked: those of this turn and the later ones (nothing is read when neither it nor
   * the next showed one), or of the turns logged since this instant (a session's period).
   */
  from: { turn: number } | { since: string }
}

export interface UseCreditingRun {
  /** Showings checked (one procedure in one turn). */
  shown: number
  /** …credited now, with why. */
  credited: Array<{ source: string; turn: number; reason: string }>
  /** …credited by an earlier run. */
  already: number
}

interface Shown {
  turn: number
  source: string
  kind: 'procedure' | 'skill'
}

/** The index source of a skill or procedure as priming named it (stages 1–2 name a skill `skills/<label>`). */
function indexSource(agent: string, source: string): string {
  const skill = /^skills\/([^/]+)$/.exec(source)
  return skill ? `agents/${agent}/skills/${skill[1]}/declarative.md` : source
}

/** The slug or label `source` names. */
function nameOf(source: string): string | undefined {
  return /(?:^|\/)procedures\/([^/]+)\.md$/.exec(source)?.[1] ?? /(?:^|\/)skills\/([^/]+)(?:\/declarative\.md)?$/.exec(source)?.[1]
}

/** The procedures and skills priming showed in a stored turn's provenance, by their indexed file (once each). */
function shownIn(agent: string, turn: number, provenance: Record<string, unknown>): Shown[] {
  const primed = Array.isArray(provenance.primed) ? (provenance.primed as unknown[]) : []
  const out: Shown[] = []
  for (const item of primed) {
    if (typeof item !== 'object' || item === null) continue
    const { kind, source } = item as { kind?: unknown; source?: unknown }
    if ((kind !== 'procedure' && kind !== 'skill') || typeof source !== 'string') continue
    const indexed = indexSource(agent, source)
    if (!out.some((shown) => shown.source === indexed)) out.push({ turn, source: indexed, kind })
  }
  return out
}

/**
 * Credits each procedure or skill shown in turn `fromTurn` or later of `session` that the session
 * followed and that no earlier run credited. A showing whose evidence lies in the next turn is
 * credited only when that turn did not show it again (the later showing takes the credit), so one
 * act of following counts once.
 */
export async function creditFollowedProcedures(deps: UseCreditingDeps, input: UseCreditingInput): Promise<UseCreditingRun> {
  const run: UseCreditingRun = { shown: 0, credited: [], already: 0 }
  let since: string
  let fromTurn = 1
  if ('turn' in input.from) {
    fromTurn = Math.max(1, input.from.turn)
    const first = await deps.lifecycle.turn(deps.agent, { sessionId: input.session, turn: fromTurn })
    if (!first) return run
    // The end of a turn asks about that turn and the one before: most turns show no procedure, and
    // then the log is not read at all.
    const second = await deps.lifecycle.turn(deps.agent, { sessionId: input.session, turn: fromTurn + 1 })
    if (shownIn(deps.agent, first.turn, first.provenance).length === 0 && (!second || shownIn(deps.agent, second.turn, second.provenance).length === 0)) return run
    since = new Date(Date.parse(first.startedAt) - LOG_MARGIN_MS).toISOString()
  } else since = input.from.since
  if (!deps.locks) return creditSince(deps, input, since, fromTurn, run)
  const outcome = await deps.locks.withLock(`procedure-use:${deps.agent}:${input.session}`, () => creditSince(deps, input, since, fromTurn, run))
  if (outcome.kind === 'done') return outcome.value
  throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Another process is crediting the procedures of session ${input.session}.`, fix: 'It runs again at the session boundary.' })
}

/**
 * Credits each procedure or skill an MCP client was shown (its `primed_context`, which is no stored
 * turn) and opened or bore out in the call turn that followed (decision 0084). The same rule and the
 * same once-per-showing record as a library turn's; only the turn itself is read (an MCP turn ends at
 * the next message, which is shown anew).
 */
export async function creditShownInCallTurn(deps: UseCreditingDeps, input: Omit<UseCreditingInput, 'from'> & { turn: number; shown: ReadonlyArray<{ kind: string; source: string }> }): Promise<UseCreditingRun> {
  const run: UseCreditingRun = { shown: 0, credited: [], already: 0 }
  const shown = shownIn(deps.agent, input.turn, { primed: input.shown })
  if (shown.length === 0) return run
  // A call turn lasts minutes (two quiet minutes end it); its calls are in the log of the last day.
  const since = new Date(deps.clock.now().getTime() - CALL_TURN_LOG_MS).toISOString()
  const credit = (): Promise<UseCreditingRun> => creditShowings(deps, input, since, input.turn, run, async () => new Map([[input.turn, shown]]))
  if (!deps.locks) return credit()
  const outcome = await deps.locks.withLock(`procedure-use:${deps.agent}:${input.session}`, credit)
  if (outcome.kind === 'done') return outcome.value
  throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `Another process is crediting the procedures of session ${input.session}.`, fix: 'Open the procedure again in a later turn to have it counted.' })
}

/** The credit run itself, over the log from `since` and the showings from turn `fromTurn`. */
function creditSince(deps: UseCreditingDeps, input: UseCreditingInput, since: string, fromTurn: number, run: UseCreditingRun): Promise<UseCreditingRun> {
  return creditShowings(deps, input, since, fromTurn, run, async (turns) => {
    const shown = new Map<number, Shown[]>()
    for (const turn of turns) {
      const stored = await deps.lifecycle.turn(deps.agent, { sessionId: input.session, turn: turn.number })
      // A session belongs to the user it was opened with; a turn of anyone else is never read.
      if (stored && stored.user === input.user) shown.set(turn.number, shownIn(deps.agent, turn.number, stored.provenance))
    }
    return shown
  })
}

/** Credits the showings `showingsOf` gives for the logged turns from `fromTurn`, each once. */
async function creditShowings(
  deps: UseCreditingDeps,
  input: Pick<UseCreditingInput, 'session' | 'log'>,
  since: string,
  fromTurn: number,
  run: UseCreditingRun,
  showingsOf: (turns: readonly LoggedTurn[]) => Promise<Map<number, Shown[]>>,
): Promise<UseCreditingRun> {
  const records = await input.log.read({ since, types: ['message_received', 'tool_use', 'response_sent', 'memory_write'] })
  const turns = loggedTurns(records, input.session).filter((turn) => turn.number >= fromTurn)
  const byNumber = new Map(turns.map((turn) => [turn.number, turn]))
  const credited = new Set(
    records
      .filter((record) => record.type === 'memory_write' && record.meta?.origin === PROCEDURE_USE_ORIGIN && record.meta.session === input.session)
      .map((record) => `${String(record.meta?.turn)}\u0000${String(record.meta?.path)}`),
  )
  const shown = await showingsOf(turns)
  const ignored = new Set(deps.ignoredTools)
  const texts = new Map<string, { text: string; unit: string } | null>()
  for (const [number, items] of shown) {
    const turn = byNumber.get(number)
    // A showing whose turn left nothing in the log (no call, no reply) was followed by nothing.
    if (turn === undefined) continue
    for (const item of items) {
      run.shown++
      if (credited.has(`${number}\u0000${item.source}`)) {
        run.already++
        continue
      }
      const source = item.source
      const name = nameOf(source)
      if (name === undefined) continue
      let found = texts.get(source)
      if (found === undefined) {
        found = await unitText(deps.index, source)
        texts.set(source, found)
      }
      // Gone from the index since (forgotten, renamed): nothing to credit.
      if (found === null) continue
      const next = byNumber.get(number + 1)
      const nextShowsIt = shown.get(number + 1)?.some((other) => other.source === item.source) === true
      const shownText: ShownText = { kind: item.kind, name, text: found.text }
      const reason = followedBecause(shownText, turn, nextShowsIt ? undefined : next, ignored)
      if (reason === undefined) continue
      await deps.index.recordAccess([found.unit], deps.clock.now().toISOString())
      await input.log.append(creditRecord(deps.clock.now().toISOString(), input.session, number, item, name, reason))
      credited.add(`${number}\u0000${item.source}`)
      run.credited.push({ source: item.source, turn: number, reason })
    }
  }
  return run
}

/** The text of a source's units and the unit an access is recorded on (its first), or null when it has none. */
async function unitText(index: UseCreditingDeps['index'], source: string): Promise<{ text: string; unit: string } | null> {
  const ids = [...(await index.hashes(source)).keys()]
  if (ids.length === 0) return null
  const units = (await index.get(ids)).sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }))
  const [head] = units
  if (!head) return null
  return { text: units.map((unit) => unit.text).join('\n'), unit: head.id }
}

function creditRecord(ts: string, session: string, turn: number, item: Shown, name: string, reason: string): ActivityEvent {
  return {
    ts,
    type: 'memory_write',
    content: `${item.kind} ${name} used: ${reason}`,
    summary: `credited a use of ${item.source}`,
    // The session in meta, not as the event's: a record of this bookkeeping is no activity of the session (it would reopen it).
    meta: { origin: PROCEDURE_USE_ORIGIN, action: 'procedure_use', kind: item.kind, path: item.source, session, turn, reason },
  }
}
