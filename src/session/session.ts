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
import type { Clock } from '../core/clock.ts'
import { describeError } from '../core/errors.ts'
import { countTokens } from '../core/tokens.ts'
import type { ContextProvider, ContextSession } from '../memory/context/provider.ts'
import { hasCompactor, hasProfileStore } from '../memory/context/provider.ts'
import { buildPromptLayers } from '../memory/context/prompt-layers.ts'
import type { DeclarativeMemory } from '../memory/engrams/declarative-memory.ts'
import { buildMemoryContext, readProjectInstructions } from '../memory/engrams/memory-context.ts'
import type { ActivityRecorder } from '../memory/episodes/recorder.ts'
import type { SessionLifecycle } from '../memory/lifecycle/session-lifecycle.ts'
import type { StreamingJournal } from '../memory/journal/streaming-journal.ts'
import { createErrorLearner } from '../memory/learning/error-learner.ts'
import { createPatternMonitor } from '../memory/learning/pattern-monitor.ts'
import { isHeartbeatMessage } from '../memory/priming/classify.ts'
import type { Primer } from '../memory/priming/prime.ts'
import type { SkillStore } from '../memory/skills/skill-store.ts'
import { compactSkillList } from '../memory/skills/skill-prompt.ts'
import type { DocumentStore } from '../storage/contracts.ts'
import type { Llm } from '../llm/contracts.ts'
import { createToolDispatcher, type ToolDefinition, type ToolDispatcher, type ToolResult } from '../tools/dispatcher.ts'
import { toEngramTools } from '../tools/adapters.ts'
import type { EngramTool } from '../tools/tool.ts'
import type { SystemParts, Turn, TurnEnd, TurnMessage, TurnReply } from './turn.ts'

export interface SessionDeps {
  agent: string
  project: string | undefined
  clock: Clock
  llm: Llm
  context: ContextProvider
  primer: Primer
  memory: DeclarativeMemory
  documents: DocumentStore
  activity: ActivityRecorder
  /** Turn numbers, boundaries, the work after a turn, stored turns: state kept in the store. */
  lifecycle: SessionLifecycle
  journal: StreamingJournal
  skills: SkillStore
  contextBudget: number
  freshTail: number
  patternMonitorMode: 'off' | 'passive' | 'active'
  /** The agent tools for a session (memorize, recall, …). */
  agentTools(session: { sessionId: string; user?: string }): EngramTool[]
  warn(message: string): void
}

export interface SessionOptions {
  /** Who the agent is talking to: their profile is primed, their notes join the prompt. */
  user?: string
  /** Token budget of the assembled conversation (default `context.budget`). */
  budget?: number
  freshTail?: number
  /**
   * The agent's own tools. They run through the session's dispatcher (`session.execute`), where the
   * error learner and the pattern monitor watch them; engram's memory tools are added beside them.
   */
  tools?: ReadonlyArray<ToolDefinition<unknown>>
}

export interface Session {
  readonly id: string
  readonly user: string | undefined
  /** Store the user's message, assemble the conversation, prime memory: everything the model needs. */
  begin(message: string | { content: string; at?: string }): Promise<Turn>
  /** Run a tool call through the dispatcher (observed by the error learner and pattern monitor). Never throws. */
  execute(name: string, input: unknown, options?: { round?: number }): Promise<ToolResult & { nudges?: string[] }>
  /** Start streaming the reply into the crash-safe journal; `end` finalises it. */
  stream(turn: Turn): { write(text: string): void }
  /** Store the reply, log it, and queue the background work of the turn. */
  end(turn: Turn, reply: TurnReply): Promise<TurnEnd>
  /** Explicit end of the session: its episode is written now; sleep replay of a working session is queued. */
  close(): Promise<void>
}

const PART_ORDER: Array<keyof SystemParts> = ['base', 'identity', 'memory', 'primed', 'skills', 'userNotes', 'instructions']

/** Open a session (used by `mind.session()`). */
export function createSession(deps: SessionDeps, sessionId: string, options: SessionOptions = {}): Session {
  const user = options.user
  const contextSession: ContextSession = { sessionId, agent: deps.agent, ...(user !== undefined ? { user } : {}) }
  const budget = options.budget ?? deps.contextBudget
  const freshTail = options.freshTail ?? deps.freshTail
  const learner = createErrorLearner({ encoder: deps.memory.encoder, llm: deps.llm })
  const monitor = createPatternMonitor({ mode: deps.patternMonitorMode })
  const memoryTools = deps.agentTools({ sessionId, ...(user !== undefined ? { user } : {}) })
  const ownTools = toEngramTools([...(options.tools ?? [])])
  const dispatcher: ToolDispatcher = createToolDispatcher({
    tools: [...(options.tools ?? []), ...memoryTools.map(asDefinition)],
    observers: [learner],
    monitor,
    onObserverError: (error, where) => deps.warn(`${where}: ${describeError(error)}`),
  })
  let streaming = false

  const session: Session = {
    id: sessionId,
    user,

    async begin(input) {
      const content = typeof input === 'string' ? input : input.content
      const at = (typeof input === 'string' ? undefined : input.at) ?? deps.clock.now().toISOString()
      const warnings: string[] = []
      // The turn's number comes from the store: it survives new Session objects and restarts.
      const { number } = await deps.lifecycle.beginTurn(sessionId, user)
      // The message is stored before anything else: if the turn dies, it is not lost.
      const [stored] = await deps.context.append(contextSession, [{ role: 'user', content, at, ...(user !== undefined ? { name: user } : {}) }])
      await deps.activity.messageReceived(content, { session: sessionId, ...(user !== undefined ? { from: user } : {}) })
      // A heartbeat (after its own activity is recorded, so this session is never the quiet one).
      if (isHeartbeatMessage(content)) await deps.lifecycle.heartbeatArrived()

      const assembled = await deps.context.assemble(contextSession, budget, freshTail, { autoCompact: false })
      const inConversation = assembled.items.flatMap((item) => item.messageIds)
      const profiles = hasProfileStore(deps.context) ? deps.context : undefined
      const [primed, memoryContext, layers, skillSummaries, instructions] = await Promise.all([
        deps.primer.prime({ message: content, ...(user !== undefined ? { user } : {}), sessionId, asOf: at, excludeMessageIds: inConversation }),
        buildMemoryContext({ global: deps.memory.global, ...(deps.memory.project ? { project: deps.memory.project } : {}) }),
        buildPromptLayers({ documents: deps.documents, ...(profiles ? { profiles } : {}) }, contextSession),
        deps.skills.listSummaries(),
        deps.project ? readProjectInstructions(deps.project) : Promise.resolve(undefined),
      ])
      warnings.push(...primed.warnings)
      // Tools handed to the model run through this session's dispatcher, so the error learner and the
      // pattern monitor see every call, whichever way the host exposes them (AI SDK, OpenAI, MCP).
      const decorated = await Promise.all([...ownTools, ...memoryTools].map((tool) => deps.memory.decorateToolDescription(tool)))
      const tools: EngramTool[] = decorated.map((tool) => ({ ...tool, execute: (input: unknown) => session.execute(tool.name, input) }))

      const systemParts: SystemParts = {
        base: layers.base.text,
        identity: layers.identity ? `## Who you are\n${layers.identity.text}` : '',
        memory: memoryContext.text,
        primed: primed.text,
        skills: compactSkillList(skillSummaries),
        userNotes: layers.userNotes ? `## Your memory — notes about ${user}\n${layers.userNotes.text.replaceAll('\n## ', '\n### ')}` : '',
        instructions: instructions ? `## Project instructions (${instructions.path}, written by the user; they take precedence over your memory)\n${instructions.text}` : '',
      }
      const messages: TurnMessage[] = assembled.items.map((item) => ({ role: item.role, content: item.content, ...(item.name !== undefined && item.kind === 'message' ? { name: item.name } : {}) }))
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
          conversation: assembled.items.map((item) => ({ kind: item.kind, messageIds: item.messageIds, ...(item.summaryId ? { summaryId: item.summaryId } : {}), ...(item.degraded ? { degraded: true } : {}) })),
          memory: memoryContext.sections.map(({ name, tokens, entries, truncated }) => ({ name, tokens, entries, truncated })),
          layers: {
            base: layers.base.source,
            ...(layers.identity ? { identity: layers.identity.source } : {}),
            ...(layers.userNotes ? { userNotes: layers.userNotes.source } : {}),
            ...(instructions ? { instructions: instructions.path } : {}),
          },
        },
        budgets: {
          context: { budget, tokens: assembled.tokens, overBudget: assembled.overBudget },
          priming: { budget: primed.budget, tokens: primed.tokens },
          memory: { tokens: countTokens(memoryContext.text) },
        },
        warnings,
      }
      // Stored with the turn, so "why did the agent know that?" has an answer for any past turn.
      await deps.lifecycle.saveTurn({ sessionId, turn: number, user, messageId: turn.messageId, startedAt: at, type: turn.type, provenance: { ...turn.provenance } })
      return turn
    },

    async execute(name, input, executeOptions = {}) {
      const result = await dispatcher.execute(name, input, executeOptions)
      // The log entry is the step sleep replay sees at the session's boundary (stepsFromActivity).
      await deps.activity.toolUse(
        name,
        { input, result: result.text, ok: !result.isError, ...(result.killed ? { killed: true } : {}), ...(result.warning ? { warning: result.warning } : {}) },
        { session: sessionId },
      )
      const nudges = monitor.atRoundN().map((nudge) => nudge.text)
      return nudges.length > 0 ? { ...result, nudges } : result
    },

    stream(turn) {
      deps.journal.open({ trigger: 'chat', ...(user !== undefined ? { from: user } : {}), sessionId: turn.sessionId })
      streaming = true
      return { write: (text: string) => deps.journal.writeText(text) }
    },

    async end(turn, reply) {
      const replies = typeof reply === 'string' ? [{ role: 'assistant' as const, content: reply }] : reply
      const at = deps.clock.now().toISOString()
      const stored = await deps.context.append(
        contextSession,
        replies.map((message) => ({ role: message.role, content: message.content, at, ...(message.name !== undefined ? { name: message.name } : {}) })),
      )
      if (streaming) {
        deps.journal.finalize()
        streaming = false
      }
      for (const message of replies) {
        if (message.role === 'assistant') await deps.activity.responseSent(message.content, { session: sessionId, ...(user !== undefined ? { to: user } : {}) })
      }

      // The turn's work is queued with what it needs (a job runs in whichever process claims it).
      // The detectors are pure and cheap: run them here, and queue the events only when one fired.
      const events = monitor.atEndOfTurn().length > 0 ? monitor.events : []
      monitor.clear()
      const context = deps.context
      const scheduled = await deps.lifecycle.endTurn(
        {
          sessionId,
          user,
          turn: turn.number,
          failures: learner.drain(),
          patterns: { mode: monitor.mode, events },
          compactContext: hasCompactor(context) && (await context.needsCompaction(contextSession, budget)),
        },
        stored.map((message) => message.id),
      )
      return { messageIds: stored.map((message) => message.id), scheduled }
    },

    async close() {
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

