/** What `session.begin()` hands the agent, and what `session.end()` reports. */
import type { ToolWisdomShare } from '../memory/engrams/tool-wisdom.ts'
import type { WorkingStateSection } from '../memory/episodes/working-state.ts'
import type { DegradedNote, InjectedMemory } from '../memory/priming/prime.ts'
import type { MessageType } from '../memory/priming/classify.ts'
import type { JsonValue, PartProviderOptions } from '../core/message-parts.ts'
import type { PendingConfirmation } from '../storage/contracts.ts'
import type { EngramTool } from '../tools/tool.ts'

/**
 * One message of `turn.messages`. Written structurally so that `messages: turn.messages` type-checks
 * against the AI SDK's `ModelMessage[]` without the core importing `ai` (a type test holds it to
 * that): user and system text, assistant text and tool calls, tool results (decision 0019).
 */
export type TurnMessage = TurnSystemMessage | TurnUserMessage | TurnAssistantMessage | TurnToolMessage

export interface TurnSystemMessage {
  role: 'system'
  content: string
}

export interface TurnUserMessage {
  role: 'user'
  /** The user's words, or a summary of older turns (recalled memory, labelled as such). */
  content: string
  /** Who spoke (the session's user). */
  name?: string
}

export interface TurnAssistantMessage {
  role: 'assistant'
  /** Text, or text and tool calls when the stored reply had them. */
  content: string | Array<TurnTextPart | TurnToolCallPart>
  name?: string
}

export interface TurnToolMessage {
  role: 'tool'
  content: TurnToolResultPart[]
}

export interface TurnTextPart {
  type: 'text'
  text: string
  providerOptions?: PartProviderOptions
}

export interface TurnToolCallPart {
  type: 'tool-call'
  toolCallId: string
  toolName: string
  input: JsonValue
  providerExecuted?: boolean
  providerOptions?: PartProviderOptions
}

export interface TurnToolResultPart {
  type: 'tool-result'
  toolCallId: string
  toolName: string
  output: TurnToolOutput
  providerOptions?: PartProviderOptions
}

/** A tool's output as the model reads it again (the AI SDK's `ToolResultOutput`, text content only). */
export type TurnToolOutput =
  | { type: 'text'; value: string }
  | { type: 'json'; value: JsonValue }
  | { type: 'error-text'; value: string }
  | { type: 'error-json'; value: JsonValue }
  | { type: 'execution-denied'; reason?: string }
  | { type: 'content'; value: Array<{ type: 'text'; text: string }> }

/** Where each part of the prompt came from, for the dashboard and for tests. */
export interface TurnProvenance {
  /** What priming injected, from where, and why (score terms). */
  primed: InjectedMemory[]
  /**
   * Why some primed memories are degraded (episodes summarised without an LLM), each reason once
   * with the memories it concerns; the primed text says so in one line, not on every memory.
   * Absent when nothing primed is degraded.
   */
  degraded?: DegradedNote[]
  /** The conversation as assembled: raw messages and summaries, with the message ids each stands for. */
  conversation: Array<{ kind: 'message' | 'summary'; messageIds: number[]; summaryId?: string; degraded?: boolean }>
  /** Sections of the memory context (identity, rules, lessons) with their token counts. */
  memory: Array<{ name: string; tokens: number; entries: number; truncated: boolean }>
  /** Files the prompt layers came from (`SYSTEM.md`, `SOUL.md`, `default`, …). */
  layers: { base: string; identity?: string; instructions?: string }
  /** What each tool's description gained from the lessons and rules tagged for it. */
  toolWisdom: ToolWisdomShare[]
  /** The working state: the current task and the recently resolved issues, with their sources. */
  state: WorkingStateSection[]
  /**
   * How long the turn's preparation took, in milliseconds, measured in the process that began it:
   * priming alone, and `begin` from the call to the stored turn (the dashboard's recall latency).
   * Absent on turns stored before it was recorded.
   */
  timing?: { primingMs: number; beginMs: number }
}

export interface SystemParts {
  /** SYSTEM.md or the built-in default. */
  base: string
  /** SOUL.md or configuration. */
  identity: string
  /** The labelled memory context: who the user is (their one profile; the agent's profile.md without a user), rules, lessons. */
  memory: string
  /** The working state: the current task and the issues resolved lately. */
  state: string
  /** Automatic recall for this message. */
  primed: string
  /** The compact list of skills. */
  skills: string
  /** The project's instructions file, last so it wins. */
  instructions: string
}

export interface Turn {
  sessionId: string
  /** 1-based turn number in the session, counted in the store (new Session objects and restarts go on counting). */
  number: number
  user: string | undefined
  message: string
  /** The stored id of the user's message (it is stored at once: nothing is lost if the turn dies). */
  messageId: number
  startedAt: string
  /** How priming classified the message. */
  type: MessageType
  /** The system prompt, parts joined in order. */
  system: string
  systemParts: SystemParts
  /** The conversation within its budget, chronological, ending with the user's message. */
  messages: TurnMessage[]
  /** The agent tools for this session (memorize, recall, search_memory, …), descriptions carrying tool wisdom. */
  tools: EngramTool[]
  provenance: TurnProvenance
  budgets: {
    context: { budget: number; tokens: number; overBudget: boolean }
    priming: { budget: number; tokens: number }
    memory: { tokens: number }
    /** Tool wisdom added to the tool descriptions, all tools together (the seed's ~500 tokens). */
    toolWisdom: { budget: number; tokens: number }
    state: { tokens: number }
  }
  /**
   * Things that degraded this turn (a channel that failed, an embedder that was down), and the
   * LLM and embedder failures of background work since a turn last reported them, each with its fix.
   */
  warnings: string[]
  /**
   * Memories waiting for this session's user's yes or no (copilot mode; empty otherwise), oldest
   * first: the ones still unanswered when the turn began. Show them to the user with the answer,
   * before their next message, and pass the answer to `mind.confirm({ accept, reject, user })`.
   */
  confirmations: PendingConfirmation[]
}

/** A past turn as stored with its provenance (`mind.turnProvenance`): what the agent was given, and why. */
export interface StoredTurn {
  sessionId: string
  number: number
  user: string | undefined
  /** The user message that opened the turn. */
  messageId: number
  /** The stored replies (empty while the turn has not ended). */
  replyIds: number[]
  startedAt: string
  type: MessageType
  provenance: TurnProvenance
}

/**
 * A reply as the agent hands it back: text, or the messages of a tool-using turn — the AI SDK's
 * `result.responseMessages` as they are (text, tool calls, tool results, reasoning, files; AI SDK 7's
 * `result.response.messages` holds the final step's only). Stored losslessly; see decision 0019.
 */
export type TurnReply = string | ReadonlyArray<ReplyMessage>

export interface ReplyMessage {
  role: 'assistant' | 'tool'
  /** Text, or parts (`{ type: 'text' | 'tool-call' | 'tool-result' | 'reasoning' | …, … }`). */
  content: string | ReadonlyArray<ReplyPart>
  name?: string
}

/**
 * Any message part; text, reasoning, tool-call and tool-result parts are checked for their fields.
 * The first member takes the AI SDK's part interfaces, the second a part written as a literal.
 */
export type ReplyPart = { readonly type: string } | { readonly type: string; readonly [key: string]: unknown }

export interface TurnEnd {
  /** Stored ids of the reply's messages. */
  messageIds: number[]
  /** Work queued for after the turn (job kinds: error-learner, pattern-monitor, identity, context-compaction); `mind.idle()` waits for it. */
  scheduled: string[]
  /**
   * LLM and embedder failures recorded since `begin` reported (an embedder that failed in a tool
   * call, background work of an earlier turn that failed meanwhile), one line each with its fix.
   * This turn's own background work has not run yet: its failures come with the next turn.
   */
  warnings: string[]
  /**
   * Memories waiting for this session's user's yes or no (copilot mode; empty otherwise), the ones
   * this turn asked for included: show them after the answer, before the next prompt (the seed's
   * "Save to memory? (y/n/pick numbers)"). What the turn's background work queues comes with the next `begin`.
   */
  confirmations: PendingConfirmation[]
}
