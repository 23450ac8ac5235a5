/**
 * A conversation with one user: the loop an agent runs on every turn (DESIGN.md §6).
 *
 *   const turn = await session.begin(userMessage)    // stores the message, assembles, primes
 *   … the agent calls its model with turn.system, turn.messages, turn.tools …
 *   await session.end(turn, reply)                   // stores the reply, logs, schedules the rest
 *
 * `begin` never calls an LLM (recall must stay in milliseconds): compaction, the error learner's
 * post-mortem, the pattern monitor's rules and identity extraction run as background work after
 * `end`, and `mind.idle()` waits for them.
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
import type { SessionTracker } from '../memory/episodes/boundaries.ts'
import type { StreamingJournal } from '../memory/journal/streaming-journal.ts'
import { createErrorLearner } from '../memory/learning/error-learner.ts'
import { createPatternMonitor, knownRulesPredicate } from '../memory/learning/pattern-monitor.ts'
import { replayAndExtract, replayDecision, type SessionStep } from '../memory/learning/sleep-replay.ts'
import type { Primer } from '../memory/priming/prime.ts'
import type { SkillStore } from '../memory/skills/skill-store.ts'
import { compactSkillList } from '../memory/skills/skill-prompt.ts'
import type { DocumentStore } from '../storage/contracts.ts'
import type { Llm } from '../llm/contracts.ts'
import { createToolDispatcher, type ToolDefinition, type ToolDispatcher, type ToolResult } from '../tools/dispatcher.ts'
import { toEngramTools } from '../tools/adapters.ts'
import type { EngramTool } from '../tools/tool.ts'
import { replyToMessages, saidText } from './reply-messages.ts'
import type { SystemParts, Turn, TurnEnd, TurnMessage, TurnReply } from './turn.ts'
import { toTurnMessages } from './turn-messages.ts'

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
  tracker: SessionTracker
  journal: StreamingJournal
  skills: SkillStore
  contextBudget: number
  freshTail: number
  patternMonitorMode: 'off' | 'passive' | 'active'
  /** The agent tools for a session (memorize, recall, …). */
  agentTools(session: { sessionId: string; user?: string }): EngramTool[]
  /** Queue work after the turn; errors become warnings, never failures of `end`. */
  background(label: string, task: () => Promise<unknown>): void
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
  /** Store the reply, log it, and schedule the background work of the turn. */
  end(turn: Turn, reply: TurnReply): Promise<TurnEnd>
  /** Explicit end of the session: its episode is written now; a working session is replayed for lessons. */
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
  const steps: SessionStep[] = []
  let turns = 0
  let streaming = false
  const recent: Array<{ role: string; content: string }> = []

  const session: Session = {
    id: sessionId,
    user,

    async begin(input) {
      const content = typeof input === 'string' ? input : input.content
      const at = (typeof input === 'string' ? undefined : input.at) ?? deps.clock.now().toISOString()
      const warnings: string[] = []
      turns++
      // The message is stored before anything else: if the turn dies, it is not lost.
      const [stored] = await deps.context.append(contextSession, [{ role: 'user', content, at, ...(user !== undefined ? { name: user } : {}) }])
      await deps.activity.messageReceived(content, { session: sessionId, ...(user !== undefined ? { from: user } : {}) })
      recent.push({ role: 'user', content })

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
      const messages: TurnMessage[] = toTurnMessages(assembled.items)
      return {
        sessionId,
        number: turns,
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
    },

    async execute(name, input, executeOptions = {}) {
      const result = await dispatcher.execute(name, input, executeOptions)
      steps.push({
        description: `${name} ${safeJson(input).slice(0, 200)}`,
        status: result.killed ? 'cancelled' : result.isError ? 'error' : result.warning ? 'warning' : 'ok',
        input: safeJson(input).slice(0, 500),
        output: result.text.slice(0, 500),
        ...(result.isError ? { error: result.text.slice(0, 500) } : {}),
      })
      await deps.activity.toolUse(name, { input, result: result.text, ok: !result.isError }, { session: sessionId })
      const nudges = monitor.atRoundN().map((nudge) => nudge.text)
      return nudges.length > 0 ? { ...result, nudges } : result
    },

    stream(turn) {
      deps.journal.open({ trigger: 'chat', ...(user !== undefined ? { from: user } : {}), sessionId: turn.sessionId })
      streaming = true
      return { write: (text: string) => deps.journal.writeText(text) }
    },

    async end(turn, reply) {
      // Text, or the AI SDK's response messages as they are: tool calls and results kept (decision 0019).
      const replies = replyToMessages(reply, deps.clock.now().toISOString())
      const stored = await deps.context.append(contextSession, replies)
      if (streaming) {
        deps.journal.finalize()
        streaming = false
      }
      for (const message of replies) {
        const said = message.role === 'assistant' ? saidText(message) : ''
        if (said !== '') {
          await deps.activity.responseSent(said, { session: sessionId, ...(user !== undefined ? { to: user } : {}) })
          recent.push({ role: 'assistant', content: said })
        }
      }
      while (recent.length > 20) recent.shift()

      const scheduled: string[] = []
      const schedule = (label: string, task: () => Promise<unknown>): void => {
        scheduled.push(label)
        deps.background(label, task)
      }
      if (learner.bufferedCount > 0) schedule('error-learner', () => learner.flush())
      if (monitor.events.length > 0) {
        schedule('pattern-monitor', async () =>
          monitor.flush({ encoder: deps.memory.encoder, hasSimilarLesson: await knownRulesPredicate([deps.memory.global, deps.memory.project]) }),
        )
      }
      const snapshot = [...recent]
      schedule('identity', () => deps.memory.identity.maybeUpdateIdentity(snapshot, turn.number))
      const context = deps.context
      if (hasCompactor(context) && (await context.needsCompaction(contextSession, budget))) {
        schedule('context-compaction', () => context.compact(contextSession, { mode: 'incremental', freshTail }))
      }
      return { messageIds: stored.map((message) => message.id), scheduled }
    },

    async close() {
      await deps.tracker.end(sessionId)
      const decision = replayDecision(steps)
      if (decision.replay && deps.llm.available) {
        const captured = [...steps]
        deps.background('sleep-replay', async () => {
          const result = await replayAndExtract(captured, deps.llm)
          if (result.kind === 'extracted' && result.engrams.length > 0) await deps.memory.encoder.encode(result.engrams)
          return result
        })
      }
      steps.length = 0
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

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

