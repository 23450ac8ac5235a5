/**
 * The turns of one MCP connection (decision 0045). MCP has no turns: the client's model calls
 * tools while it works on a message, then goes quiet. So a turn opens at its first tool call
 * (`session.beginCalls`: counted in the store, for the connection's user) and ends at whichever
 * comes first — the client asks `primed_context` for a new message, `MCP_TURN_GAP_MS` pass
 * without a call, or the connection closes (client gone, DELETE, idle, SIGTERM). Ending it hands
 * the turn's failures and pattern events to the same durable end-of-turn work a library session's
 * `end` queues (`session.endCalls` → `lifecycle.endTurn`): the error learner's post-mortem and
 * the pattern monitor's rules run in the background, or in a later process's `maintain()`.
 *
 * The calls themselves are in the user's activity log as they happen (sleep replay and the episode
 * at the session's boundary read them there).
 */
import { describeError } from '../../core/errors.ts'
import type { MindInternals } from '../../mind-internals.ts'
import type { InjectedMemory } from '../../memory/priming/prime.ts'
import type { Session } from '../../session/session.ts'
import type { AgentToolsSession } from '../../tools/agent-tools.ts'
import type { ToolResult } from '../../tools/tool.ts'

/**
 * A quiet spell this long ends the client's turn (a model's tool rounds follow each other within
 * seconds; minutes of quiet mean a person is reading or typing).
 */
export const MCP_TURN_GAP_MS = 2 * 60_000

export interface McpTurns {
  /** Runs a call in the current turn, opening one when none is open or the last call was a gap ago. */
  execute(name: string, input: unknown): Promise<ToolResult>
  /** Ends the open turn, if any (its work is queued); resolves when it is queued. */
  end(): Promise<void>
  /**
   * The user's new message (`primed_context`), kept for the turn that answers it when facts are
   * extracted from turns (decision 0066): that turn opens at its first call, or — a message answered
   * without a call — at the next `end`.
   */
  heard(message: string): void
  /**
   * What the context of that message showed: its procedures and skills are credited a use when the
   * turn that answers the message bears them out (decision 0084).
   */
  showed(items: readonly Shown[]): void
}

/** A memory priming showed (its `kind` and `source`). */
type Shown = Pick<InjectedMemory, 'kind' | 'source'>

export function createMcpTurns(mind: MindInternals, ref: AgentToolsSession, offers?: (tool: string) => boolean): McpTurns {
  let open: { session: Session; number: Promise<number>; said?: string; shown: readonly Shown[] } | undefined
  // Only kept when it will be read: otherwise a message answered without a call opens no turn (as before).
  const extracting = mind.config.values.memory.extractFromTurns
  let unanswered: string | undefined
  // What the last primed_context showed of procedures and skills, for the turn that answers it.
  let shownForNext: readonly Shown[] = []
  let lastCallAt = Number.NEGATIVE_INFINITY
  let inFlight = 0
  let timer: NodeJS.Timeout | undefined
  // Ends queue behind each other, so a close waits for every turn ended before it.
  let ending: Promise<void> = Promise.resolve()

  const openTurn = (): NonNullable<typeof open> => {
    const session = mind.session(ref.sessionId, { ...(ref.user !== undefined ? { user: ref.user } : {}), ...(offers ? { offers } : {}) })
    const number = session.beginCalls()
    // Awaited where the turn ends; a failure to count it is reported there, and the call still runs.
    number.catch(() => {})
    const turn = { session, number, shown: shownForNext, ...(unanswered !== undefined ? { said: unanswered } : {}) }
    unanswered = undefined
    shownForNext = []
    return turn
  }

  const end = (): Promise<void> => {
    clearTimeout(timer)
    const turn = open ?? (unanswered !== undefined ? openTurn() : undefined)
    open = undefined
    if (turn) {
      ending = ending
        .then(async () => {
          await turn.session.endCalls(await turn.number, turn.said, turn.shown)
        })
        .catch((error: unknown) => mind.logger.warn({ session: ref.sessionId, error: describeError(error) }, 'engram mcp: the work of a turn could not be queued'))
    }
    return ending
  }

  // The idle end in real time (the clock check in `execute` covers clocks that do not move by themselves).
  const arm = (): void => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      if (inFlight === 0) void end()
    }, MCP_TURN_GAP_MS)
    timer.unref()
  }

  return {
    async execute(name, input) {
      const now = mind.clock.now().getTime()
      if (open && inFlight === 0 && now - lastCallAt >= MCP_TURN_GAP_MS) await end()
      if (!open) open = openTurn()
      const { session, number } = open
      lastCallAt = now
      inFlight++
      clearTimeout(timer)
      try {
        // Logged with the call: a turn whose process dies is rebuilt from the log (call-turns.ts).
        const turn = await number.catch(() => undefined)
        return await session.execute(name, input, turn !== undefined ? { turn } : {})
      } finally {
        inFlight--
        lastCallAt = mind.clock.now().getTime()
        if (inFlight === 0 && open?.session === session) arm()
      }
    },
    end,
    heard(message) {
      if (extracting) unanswered = message
    },
    showed(items) {
      const shown = items.filter((item) => item.kind === 'procedure' || item.kind === 'skill')
      // A call that came while the context was being computed opened the turn that answers it.
      if (open) open.shown = shown
      else shownForNext = shown
    },
  }
}
