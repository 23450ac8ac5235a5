/**
 * A conversation with one user: the loop an agent runs on every turn (DESIGN.md §6).
 *
 *   const turn = await session.begin(userMessage)    // stores the message, assembles, primes
 *   … the agent calls its model with turn.system, turn.messages, turn.tools …
 *   await session.end(turn, reply)                   // stores the reply, logs, queues the rest
 *
 * `begin` never calls an LLM (recall must stay in milliseconds): compaction, the error learner's
 * post-mortem, the pattern monitor's rules and identity extraction are queued durably at `end`
 * and run in the background (`mind.idle()` waits for them), or by a later `maintain()`.
 *
 * A `Session` object holds nothing that matters beyond one turn: turn numbers, activity and
 * boundaries live in the store (the lifecycle), so a host may create `mind.session(id)` anew on
 * every turn, in a new process.
 */
import { checkLength } from '../config/limits.ts'
import type { Clock } from '../core/clock.ts'
import { describeError, EngramError, ErrorCode } from '../core/errors.ts'
import { checkDerivedSessionId } from '../core/session-ids.ts'
import { nameProblem } from '../core/well-formed-text.ts'
import { countTokens } from '../core/tokens.ts'
import type { ContextProvider, ContextSession } from '../memory/context/provider.ts'
import { hasCompactor } from '../memory/context/provider.ts'
import { buildPromptLayers } from '../memory/context/prompt-layers.ts'
import type { DeclarativeMemory } from '../memory/engrams/declarative-memory.ts'
import { instructionsBlock } from '../memory/engrams/memory-context.ts'
import type { ViewerScope } from '../memory/view.ts'
import type { Journals } from '../memory/journal/journal-folder.ts'
import type { ResolutionReader } from '../memory/episodes/resolutions.ts'
import { buildWorkingState } from '../memory/episodes/working-state.ts'
import type { SessionLifecycle } from '../memory/lifecycle/session-lifecycle.ts'
import type { TurnWork } from '../memory/lifecycle/turn-work.ts'
import { createErrorLearner } from '../memory/learning/error-learner.ts'
import { type HostEvent, observeHostEvent } from '../memory/learning/host-events.ts'
import { createPatternMonitor } from '../memory/learning/pattern-monitor.ts'
import { isHeartbeatMessage } from '../memory/priming/classify.ts'
import type { InjectedMemory, Primer } from '../memory/priming/prime.ts'
import type { SkillStore } from '../memory/skills/skill-store.ts'
import { compactSkillList } from '../memory/skills/skill-prompt.ts'
import type { DocumentStore, PendingConfirmation } from '../storage/contracts.ts'
import type { Llm } from '../llm/contracts.ts'
import { createToolDispatcher, type ToolDefinition, type ToolDispatcher, type ToolResult } from '../tools/dispatcher.ts'
import { toEngramTools } from '../tools/adapters.ts'
import { type EngramTool, engramErrorResult } from '../tools/tool.ts'
import { replyToMessages, saidText } from './reply-messages.ts'
import type { SystemParts, Turn, TurnEnd, TurnMessage, TurnReply } from './turn.ts'
import { toTurnMessages } from './turn-messages.ts'

export interface SessionDeps {
  agent: string
  clock: Clock
  llm: Llm
  context: ContextProvider
  primer: Primer
  memory: DeclarativeMemory
  /** The agent's document store (prompt layers). */
  documents: DocumentStore
  /** What a session of `user` reads and writes through (decision 0017); throws for an invalid user id. */
  scope(user: string | undefined): ViewerScope
  /** The resolved issues the prompt's "Recently resolved" section reads (filtered by the session's user). */
  resolutions: ResolutionReader
  /** Turn numbers, boundaries, the work after a turn, stored turns: state kept in the store. */
  lifecycle: SessionLifecycle
  journals: Journals
  skills: SkillStore
  contextBudget: number
  freshTail: number
  /** Longest message `begin` accepts, in characters (limits.messageChars): refused before the turn is counted. */
  maxMessageChars: number
  patternMonitorMode: 'off' | 'passive' | 'active'
  /** The agent tools for a session (memorize, recall, …). */
  agentTools(session: { sessionId: string; user?: string }, offered?: { offers(tool: string): boolean }): EngramTool[]
  warn(message: string): void
  /** LLM and embedder failures no turn has reported yet (of any process), one line each with its fix. */
  reportFailures(): Promise<string[]>
  /** What waits for `user`'s yes or no (the agent's own queue without one): a read. */
  pendingConfirmations(user: string | undefined): Promise<PendingConfirmation[]>
}

export interface SessionOptions {
  /**
   * Who the agent is talking to. Everything written in the session is theirs and only their
   * sessions see it (decision 0017); their profile is in the memory context. A session id belongs
   * to the user it was first opened with.
   */
  user?: string
  /** Token budget of the assembled conversation (default `context.budget`). */
  budget?: number
  freshTail?: number
  /**
   * The agent's own tools. They run through the session's dispatcher (`session.execute`), where the
   * error learner and the pattern monitor watch them; engram's memory tools are added beside them.
   */
  tools?: ReadonlyArray<ToolDefinition<unknown>>
  /**
   * Which of engram's tools the host lists to its model (an MCP connection with the essential set,
   * decision 0067), so a tool's error names only tools the model can call. Default: all of them.
   */
  offers?: (tool: string) => boolean
}

export interface Session {
  readonly id: string
  readonly user: string | undefined
  /** Store the user's message, assemble the conversation, prime memory: everything the model needs. */
  begin(message: string | { content: string; at?: string }): Promise<Turn>
  /**
   * Run a tool call through the dispatcher (observed by the error learner and pattern monitor). Never
   * throws. In active mode `nudges` holds what the pattern monitor says about this call: show them
   * to the model after the result's text (the adapters over `turn.tools` do). `turn`: the number
   * `beginCalls` gave, logged with the call (a turn whose process died is rebuilt from the log).
   */
  execute(name: string, input: unknown, options?: { round?: number; turn?: number }): Promise<ToolResult>
  /**
   * Tell the pattern monitor what only the host's loop sees: it repaired the history, or stopped at
   * its round cap. Learned from at `end` like tool calls; in active mode the nudges that fired are
   * returned, for the host to put before the model's next call. Throws `invalid_argument` for
   * another kind.
   */
  report(event: HostEvent): { nudges: string[] }
  /** Start streaming the reply into the crash-safe journal; `end` finalises it. */
  stream(turn: Turn): { write(text: string): void }
  /** Store the reply, log it, and queue the background work of the turn. */
  end(turn: TurnRef, reply: TurnReply): Promise<TurnEnd>
  /**
   * Open a turn that has no message (an MCP client's tool calls, decision 0045): counted in the
   * store for the session's user; returns its number, for `endCalls`.
   */
  beginCalls(): Promise<number>
  /**
   * End a turn opened by `beginCalls`: the failures and pattern events of the calls made through
   * `execute` since are queued as its work, as `end` queues a begun turn's. Stores no message;
   * `said`, the user's message the turn answered when the host knows it (MCP's `primed_context`),
   * is read for facts when `memory.extractFromTurns` is on (decision 0066). `shown`, the procedures
   * and skills the host showed for the turn (the `kind` and `source` of priming's items), are
   * credited a use when the turn's calls bore them out (decision 0084).
   */
  endCalls(number: number, said?: string, shown?: ReadonlyArray<Pick<InjectedMemory, 'kind' | 'source'>>): Promise<string[]>
  /** Explicit end of the session: its episode is written now; sleep replay of a working session is queued. */
  close(): Promise<void>
}

/** What `end` needs of a turn: the whole `Turn` from `begin`, or a stored turn's keys (`engram serve` ends a turn begun by another request). */
export type TurnRef = Pick<Turn, 'sessionId' | 'number' | 'messageId'>

const PART_ORDER: Array<keyof SystemParts> = ['base', 'identity', 'memory', 'state', 'primed', 'skills', 'instructions']

/** Open a session (used by `mind.session()`). */
export function createSession(deps: SessionDeps, sessionId: string, options: SessionOptions = {}): Session {
  // A session id names the conversation in every store: one that a store would change (half a
  // character becomes U+FFFD) or PostgreSQL refuses (a NUL) is refused here, on every backend alike.
  const idProblem = typeof sessionId === 'string' ? nameProblem(sessionId) : 'no text: it is not a string'
  if (idProblem) {
    throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: `The session id ${JSON.stringify(sessionId)} holds ${idProblem}.`, fix: 'name the session with whole characters, without NUL or control characters, e.g. "chat-42"', details: { sessionId } })
  }
  const user = options.user
  const scope = deps.scope(user)
  // An id an interface derives for another user (`mcp:<user>`, `http:<user>`) is refused before
  // anything is stored or ended, on its first use too (decision 0054); a later store check could
  // only refuse the rightful user once another had taken it.
  const checkId = (): void => checkDerivedSessionId(sessionId, user)
  const contextSession: ContextSession = { sessionId, agent: deps.agent, ...(user !== undefined ? { user } : {}) }
  const budget = options.budget ?? deps.contextBudget
  const freshTail = options.freshTail ?? deps.freshTail
  const learner = createErrorLearner({ encoder: scope.encoder, llm: deps.llm })
  const monitor = createPatternMonitor({ mode: deps.patternMonitorMode })
  const memoryTools = deps.agentTools({ sessionId, ...(user !== undefined ? { user } : {}) }, options.offers ? { offers: options.offers } : undefined)
  const ownTools = toEngramTools([...(options.tools ?? [])])
  const dispatcher: ToolDispatcher = createToolDispatcher({
    tools: [...(options.tools ?? []), ...memoryTools.map(asDefinition)],
    observers: [learner],
    monitor,
    onObserverError: (error, where) => deps.warn(`${where}: ${describeError(error)}`),
  })

  // The turn's work is queued with what it needs (a job runs in whichever process claims it).
  // The detectors are pure and cheap: run them here, and queue the events only when one fired.
  const turnWork = (number: number, compactContext: boolean, messageId?: number): TurnWork => {
    const events = monitor.atEndOfTurn().length > 0 ? monitor.events : []
    monitor.clear()
    return { sessionId, user, turn: number, failures: learner.drain(), patterns: { mode: monitor.mode, events }, compactContext, ...(messageId !== undefined ? { messageId } : {}) }
  }

  const session: Session = {
    id: sessionId,
    user,

    async begin(input) {
      checkId()
      const started = performance.now()
      const content = typeof input === 'string' ? input : input.content
      const at = (typeof input === 'string' ? undefined : input.at) ?? deps.clock.now().toISOString()
      if (typeof content === 'string') checkLength('messageChars', 'The message', content, deps.maxMessageChars)
      const warnings: string[] = []
      // The turn's number comes from the store: it survives new Session objects and restarts.
      const { number } = await deps.lifecycle.beginTurn(sessionId, user)
      // The message is stored before anything else: if the turn dies, it is not lost.
      const [stored] = await deps.context.append(contextSession, [{ role: 'user', content, at, ...(user !== undefined ? { name: user } : {}) }])
      // With its turn number: what the session did in each turn is read back from the log (procedure outcome tracking).
      await scope.activity.messageReceived(content, { session: sessionId, ...(user !== undefined ? { from: user } : {}), meta: { turn: number } })
      // A heartbeat (after its own activity is recorded, so this session is never the quiet one).
      if (isHeartbeatMessage(content)) await deps.lifecycle.heartbeatArrived()
      // Model failures since a turn last reported them (background work of earlier turns, any process).
      warnings.push(...(await deps.reportFailures()))

      const assembled = await deps.context.assemble(contextSession, budget, freshTail, { autoCompact: false })
      const inConversation = assembled.items.flatMap((item) => item.messageIds)
      let primingMs = 0
      const [primed, memoryContext, layers, skillSummaries, workingState, confirmations] = await Promise.all([
        timed((ms) => (primingMs = ms), () => deps.primer.prime({
          message: content,
          viewer: scope.viewer,
          activity: scope.view.activity,
          procedures: scope.procedures,
          // The user's profile is the memory context's identity section.
          skipProfile: true,
          sessionId,
          asOf: at,
          excludeMessageIds: inConversation,
        })),
        scope.memory.buildContext(),
        buildPromptLayers({ documents: deps.documents }),
        deps.skills.listSummaries(),
        buildWorkingState({ documents: scope.view.own.documents, resolutions: deps.resolutions, ...(user !== undefined ? { user } : {}) }, { now: new Date(at) }),
        // Those the last turn's background work queued after its `end` reported: the host shows them before this prompt.
        deps.pendingConfirmations(user),
      ])
      warnings.push(...primed.warnings)
      // Read once, with the memory context: the instructions are their own part, last, never also inside the memory part.
      const instructions = memoryContext.instructions
      // Tools handed to the model run through this session's dispatcher, so the error learner and the
      // pattern monitor see every call, whichever way the host exposes them (AI SDK, OpenAI, MCP).
      const { tools: decorated, wisdom } = await scope.memory.decorateTools([...ownTools, ...memoryTools])
      const tools: EngramTool[] = decorated.map((tool) => ({ ...tool, execute: (input: unknown) => session.execute(tool.name, input) }))

      const systemParts: SystemParts = {
        base: layers.base.text,
        identity: layers.identity ? `## Who you are\n${layers.identity.text}` : '',
        memory: memoryContext.memory,
        state: workingState.text,
        primed: primed.text,
        skills: compactSkillList(skillSummaries),
        instructions: instructions ? instructionsBlock(instructions) : '',
      }
      const messages: TurnMessage[] = toTurnMessages(assembled.items)
      const turn: Turn = {
        sessionId,
        number,
        user,
        message: content,
        messageId: stored?.id ?? -1,
        startedAt: at,
        type: primed.type,
        system: PART_ORDER.map((part) => systemParts[part]).filter((text) => text !== '').join('\n\n'),
        systemParts,
        messages,
        tools,
        provenance: {
          primed: primed.injected,
          ...(primed.degraded.length > 0 ? { degraded: primed.degraded } : {}),
          conversation: assembled.items.map((item) => ({ kind: item.kind, messageIds: item.messageIds, ...(item.summaryId ? { summaryId: item.summaryId } : {}), ...(item.degraded ? { degraded: true } : {}) })),
          memory: memoryContext.sections.filter((section) => section.name !== 'Project instructions').map(({ name, tokens, entries, truncated }) => ({ name, tokens, entries, truncated })),
          layers: {
            base: layers.base.source,
            ...(layers.identity ? { identity: layers.identity.source } : {}),
            ...(instructions ? { instructions: instructions.path } : {}),
          },
          toolWisdom: wisdom.shares,
          state: workingState.sections,
        },
        budgets: {
          context: { budget, tokens: assembled.tokens, overBudget: assembled.overBudget },
          priming: { budget: primed.budget, tokens: primed.tokens },
          memory: { tokens: countTokens(memoryContext.memory) },
          toolWisdom: { budget: wisdom.budget, tokens: wisdom.tokens },
          state: { tokens: countTokens(workingState.text) },
        },
        warnings,
        confirmations,
      }
      turn.provenance.timing = { primingMs: roundMs(primingMs), beginMs: roundMs(performance.now() - started) }
      // Stored with the turn, so "why did the agent know that?" has an answer for any past turn.
      await deps.lifecycle.saveTurn({ sessionId, turn: number, user, messageId: turn.messageId, startedAt: at, type: turn.type, provenance: { ...turn.provenance } })
      return turn
    },

    async execute(name, input, executeOptions = {}) {
      try {
        checkId()
      } catch (error) {
        // execute never throws: the refusal is the call's result, and nothing of it is logged.
        if (EngramError.is(error)) return engramErrorResult(error)
        throw error
      }
      // A call made while a reply streams is journaled, so a crash mid-call still shows it.
      const journal = deps.journals.find({ sessionId })
      const callId = journal?.toolStart({ tool: name, input })
      const result = await dispatcher.execute(name, input, executeOptions)
      if (callId !== undefined) journal?.toolEnd({ id: callId, tool: name, ok: !result.isError, result: result.text })
      // The log entry is the step sleep replay sees at the session's boundary (stepsFromActivity).
      await scope.activity.toolUse(
        name,
        { input, result: result.text, ok: !result.isError, ...(result.killed ? { killed: true } : {}), ...(result.warning ? { warning: result.warning } : {}) },
        { session: sessionId, ...(executeOptions.turn !== undefined ? { meta: { turn: executeOptions.turn } } : {}) },
      )
      return result
    },

    report(event) {
      observeHostEvent(monitor, event)
      return { nudges: monitor.atRoundN().map((nudge) => nudge.text) }
    },

    stream(turn) {
      const journal = deps.journals.open({ trigger: 'chat', ...(user !== undefined ? { from: user } : {}), sessionId: turn.sessionId, turn: turn.messageId })
      return { write: (text: string) => journal.writeText(text) }
    },

    async end(turn, reply) {
      checkId()
      // Text, or the AI SDK's response messages as they are: tool calls and results kept (decision 0019).
      const replies = replyToMessages(reply, deps.clock.now().toISOString())
      const stored = await deps.context.append(contextSession, replies)
      // Found by the turn, not kept on this object: a host may end a turn on a new `mind.session(id)`.
      deps.journals.find({ sessionId: turn.sessionId, turn: turn.messageId })?.finalize()
      for (const message of replies) {
        const said = message.role === 'assistant' ? saidText(message) : ''
        if (said !== '') await scope.activity.responseSent(said, { session: sessionId, ...(user !== undefined ? { to: user } : {}) })
      }

      const context = deps.context
      const compactContext = hasCompactor(context) && (await context.needsCompaction(contextSession, budget))
      const scheduled = await deps.lifecycle.endTurn(turnWork(turn.number, compactContext, turn.messageId), stored.map((message) => message.id))
      const [warnings, confirmations] = await Promise.all([deps.reportFailures(), deps.pendingConfirmations(user)])
      return { messageIds: stored.map((message) => message.id), scheduled, warnings, confirmations }
    },

    async beginCalls() {
      checkId()
      return deps.lifecycle.beginCalls(sessionId, user)
    },

    async endCalls(number, said, shown) {
      checkId()
      return deps.lifecycle.endCalls({ ...turnWork(number, false), ...(said !== undefined ? { said } : {}), ...(shown !== undefined ? { shown } : {}) })
    },

    async close() {
      checkId()
      await deps.lifecycle.endSession(sessionId)
    },
  }
  return session
}

function asDefinition(tool: EngramTool): ToolDefinition<unknown> {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    run: (input) => tool.execute(input),
  }
}

/** `run()`'s result, handing how long it took (milliseconds) to `took` — priming's latency, for the dashboard. */
async function timed<T>(took: (ms: number) => void, run: () => Promise<T>): Promise<T> {
  const started = performance.now()
  try {
    return await run()
  } finally {
    took(performance.now() - started)
  }
}

/** Milliseconds to a tenth: finer is noise, and the stored turn stays short. */
function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10
}
