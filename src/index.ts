/**
 * engram's public API. Every name here is a decision: adding one makes it public interface
 * (decision 0062: named exports only, what a host uses). The subsystems behind `Mind` are
 * internal (`mind-internals.ts`); test helpers live at `engram/test`, the MCP server at
 * `engram/mcp`, the AI SDK adapters at `engram/ai-sdk`, the PostgreSQL backend at `engram/postgres`.
 */

// A mind and what its methods return.
export { createMind, listAgents } from './mind.ts'
export type { CreateMindOptions, Mind, MaintenanceReport, MindSessions, ConfirmOutcome, ConsolidationRuns } from './mind.ts'
export type { HeartbeatReport } from './memory/lifecycle/session-lifecycle.ts'
export type { ForgetOutcome } from './memory/forgetting/forget-memory.ts'
export type { DocumentHistory } from './memory/consolidation/history.ts'
export type { UserErasureCounts, UserErasureReport } from './memory/forgetting/forget-user.ts'
export type { UserExportReport } from './memory/forgetting/export-user.ts'
export type { FailureGroup } from './memory/failures.ts'
export type { MindStatus, ScopeCounts } from './memory/status.ts'
export type { Logger, LogLevel, LogFields } from './core/logger.ts'

// Configuration.
export { resolveConfig } from './config/resolve.ts'
export type { ConfigValues, ResolvedConfig, ResolveConfigOptions, ValueSource, ConfigProblem } from './config/resolve.ts'
export { SETTINGS } from './config/schema.ts'
export type { SettingSpec, MemoryMode, LlmProviderName, EmbedProviderName } from './config/schema.ts'

// Errors, the clock, tokens.
export { EngramError, ErrorCode, describeError } from './core/errors.ts'
export type { ErrorCategory, EngramErrorOptions, ErrorCodeValue } from './core/errors.ts'
export { systemClock } from './core/clock.ts'
export type { Clock } from './core/clock.ts'
export { countTokens, truncateToTokens } from './core/tokens.ts'

// What memories and messages are.
export { ENGRAM_KINDS, ENGRAM_SCOPES, CONFIDENCES, ENGRAM_SOURCES } from './core/engram.ts'
export type { Engram, EngramEntry, EngramKind, EngramScope, Confidence, EngramSource } from './core/engram.ts'
export type { MessageInput, MessageRole, StoredMessage, Summary, SummaryKind, SummaryMethod, ContextItem } from './core/message.ts'
export type { MemoryDoc, DocKind, Frontmatter, KnowledgeFrontmatter, ProcedureFrontmatter } from './core/memory-doc.ts'
export { ACTIVITY_TYPES, ACTIVITY_LABELS } from './core/activity.ts'
export type { ActivityEvent, ActivityType } from './core/activity.ts'

// Storage: the embedded backend a host may open itself, and the seams it is made of.
export { openEmbeddedBackend } from './storage/embedded.ts'
export type { EmbeddedBackend, EmbeddedBackendOptions } from './storage/embedded.ts'
export type {
  Backend,
  BackendCapabilities,
  OwnedStores,
  EngramStore,
  DocumentStore,
  ContextStore,
  SearchIndex,
  ActivityLog,
  Locks,
  Jobs,
  Lifecycle,
  ConfirmationQueue,
  ConfirmationSelection,
  PendingConfirmation,
  SessionRecord,
} from './storage/contracts.ts'

// Models: the providers as configured, or your own.
export type { Llm, LlmTier, LlmMessage, GenerateObjectOptions, GenerateTextOptions, Embedder, EmbedPurpose, ProbeResult } from './llm/contracts.ts'
export { createLlm } from './llm/create-llm.ts'
export { createEmbedder } from './llm/embedders/create-embedder.ts'

// Sessions and turns.
export type { Session, SessionOptions } from './session/session.ts'
export type { HostEvent } from './memory/learning/host-events.ts'
export type { Turn, TurnEnd, TurnReply, ReplyMessage, ReplyPart, TurnProvenance, SystemParts, StoredTurn } from './session/turn.ts'
export type {
  TurnMessage,
  TurnSystemMessage,
  TurnUserMessage,
  TurnAssistantMessage,
  TurnToolMessage,
  TurnTextPart,
  TurnToolCallPart,
  TurnToolResultPart,
  TurnToolOutput,
} from './session/turn.ts'
export type { InjectedMemory } from './memory/priming/prime.ts'
export type { MessagePart, JsonValue, JsonObject, ToolOutput } from './core/message-parts.ts'

// Tools: engram's agent tools and a host's own, for any model API.
export type { EngramTool, ToolAnnotations, ToolResult, ToolError } from './tools/tool.ts'
export type { ToolDefinition } from './tools/dispatcher.ts'
export { toEngramTools, toOpenAiFunctions, executeToolCall } from './tools/adapters.ts'
export type { OpenAiFunctionTool } from './tools/adapters.ts'
