/** What `session.begin()` hands the agent, and what `session.end()` reports. */
import type { InjectedMemory } from '../memory/priming/prime.ts'
import type { MessageType } from '../memory/priming/classify.ts'
import type { EngramTool } from '../tools/tool.ts'

export interface TurnMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  name?: string
}

/** Where each part of the prompt came from, for the dashboard and for tests. */
export interface TurnProvenance {
  /** What priming injected, from where, and why (score terms). */
  primed: InjectedMemory[]
  /** The conversation as assembled: raw messages and summaries, with the message ids each stands for. */
  conversation: Array<{ kind: 'message' | 'summary'; messageIds: number[]; summaryId?: string; degraded?: boolean }>
  /** Sections of the memory context (identity, rules, lessons) with their token counts. */
  memory: Array<{ name: string; tokens: number; entries: number; truncated: boolean }>
  /** Files the prompt layers came from (`SYSTEM.md`, `SOUL.md`, `default`, …). */
  layers: { base: string; identity?: string; userNotes?: string; instructions?: string }
}

export interface SystemParts {
  /** SYSTEM.md or the built-in default. */
  base: string
  /** SOUL.md or configuration. */
  identity: string
  /** The labelled memory context: identity facts, rules, lessons. */
  memory: string
  /** Automatic recall for this message. */
  primed: string
  /** The compact list of skills. */
  skills: string
  /** Notes about this user. */
  userNotes: string
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
  }
  /** Things that degraded this turn (a channel that failed, an embedder that was down). */
  warnings: string[]
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

/** A reply as the agent hands it back: text, or the messages of a tool-using turn. */
export type TurnReply = string | Array<{ role: 'assistant' | 'tool'; content: string; name?: string }>

export interface TurnEnd {
  /** Stored ids of the reply's messages. */
  messageIds: number[]
  /** Work queued for after the turn (job kinds: error-learner, pattern-monitor, identity, context-compaction); `mind.idle()` waits for it. */
  scheduled: string[]
}
