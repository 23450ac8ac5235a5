/**
 * engram's public API. Every name here is a decision: adding one makes it public interface
 * (decision 0062: named exports only, what a host uses). The subsystems behind `Mind` are
 * internal (`mind-internals.ts`); test helpers live at `engram/test`, the MCP server at
 * `engram/mcp`, the AI SDK adapters at `engram/ai-sdk`, the PostgreSQL backend at `engram/postgres`.
 */

// A mind and what its methods return.
export { createMind, listAgents } from './mind.ts'
export type { CreateMindOptions, Mind, MaintenanceReport, MindSessions, ConfirmOutcome, ConsolidationRuns } from './mind.ts'
export type { Memories, MemoryRecord, MemorySearchResult, MemoryChange, MemoryPage, MemoryScope, AddMemoriesInput, AddMemoriesResult } from './tools/memories.ts'
export type { ExtractionMessage, ExtractionMethod } from './memory/extraction/extract.ts'
export type { Owner, Viewer } from './core/owner.ts'
export type { HeartbeatReport, LifecycleReport } from './memory/lifecycle/session-lifecycle.ts'
export type { ClosedSession } from './memory/lifecycle/session-boundaries.ts'
export type { BoundaryReason } from './memory/episodes/immediate-encoding.ts'
export type { CompactionSummary } from './memory/lifecycle/memory-compaction-work.ts'
export type { JobOutcome } from './memory/lifecycle/job-runner.ts'
export type { BoundaryOutcome } from './memory/lifecycle/boundary-work.ts'
export type { DailyConsolidationRun, Migrated } from './memory/consolidation/daily-consolidation.ts'
export type { KnowledgeConsolidationRun, PendingStep } from './memory/consolidation/knowledge-consolidation.ts'
export type { EpisodeCompressionRun } from './memory/consolidation/episode-compression.ts'
export type { VersionRetentionRun } from './memory/consolidation/version-retention.ts'
export type { WeeklyIntegrationRun } from './memory/consolidation/weekly-integration.ts'
export type { ForgettingRun } from './memory/consolidation/monthly-forgetting.ts'
export type { ForgetOutcome } from './memory/forgetting/forget-memory.ts'
export type { DocumentHistory, FactLink } from './memory/consolidation/history.ts'
export type { UserErasureCounts, UserErasureReport } from './memory/forgetting/forget-user.ts'
export type { UserExportReport } from './memory/forgetting/export-user.ts'
export type { FailureGroup } from './memory/failures.ts'
export type { ModelFailureKind, ModelSource } from './llm/model-failures.ts'
export type { MindStatus, OwnerMemory, ScopeCounts } from './memory/status.ts'
export type { LanguageSample } from './memory/language-sample.ts'
export type { LanguageAnalysis } from './text/languages/detect.ts'
export type { CountKey, CountedIn } from './core/memory-kinds.ts'
export type { LegacyMigrationRecord } from './memory/engrams/import/legacy-migration-record.ts'
export type { OwnersStatus, OwnerCounts } from './storage/owner-counts.ts'
export type { ProgressEvent, ProgressOptions } from './core/progress.ts'
export type { OwnersMigrationReport } from './storage/owners-migration.ts'
export type { Logger, LogLevel, LogFields } from './core/logger.ts'

// Configuration.
export { resolveConfig } from './config/resolve.ts'
export type { ConfigValues, ResolvedConfig, ResolveConfigOptions, ValueSource, ConfigProblem } from './config/resolve.ts'
export { SETTINGS } from './config/schema.ts'
export type { SettingSpec, SettingType, MemoryMode, LlmProviderName, EmbedProviderName } from './config/schema.ts'

// Errors, the clock, tokens.
export { EngramError, ErrorCode, describeError } from './core/errors.ts'
export type { ErrorCategory, EngramErrorOptions, ErrorCodeValue } from './core/errors.ts'
export { systemClock } from './core/clock.ts'
export type { Clock } from './core/clock.ts'
export { countTokens, truncateToTokens } from './core/tokens.ts'

// What memories and messages are.
export { ENGRAM_KINDS, ENGRAM_SCOPES, CONFIDENCES, ENGRAM_SOURCES } from './core/engram.ts'
export type { Engram, EngramEntry, EngramKind, EngramScope, Confidence, EngramSource, RuleKind } from './core/engram.ts'
export type { MessageInput, MessageRole, StoredMessage, Summary, SummaryKind, SummaryMethod, ContextItem } from './core/message.ts'
export type { MemoryDoc, DocKind, Frontmatter, KnowledgeFrontmatter, ProcedureFrontmatter } from './core/memory-doc.ts'
export { ACTIVITY_TYPES, ACTIVITY_LABELS } from './core/activity.ts'
export type { ActivityEvent, ActivityType } from './core/activity.ts'

// Storage: the embedded backend a host may open itself, and the seams it is made of.
export { openEmbeddedBackend } from './storage/embedded.ts'
export type { EmbeddedBackend, EmbeddedBackendOptions } from './storage/embedded.ts'
export type { BackendCommonOptions } from './storage/owned-stores.ts'
export type {
  Backend,
  BackendCapabilities,
  OwnedStores,
  EngramStore,
  DocumentStore,
  ContextStore,
  AppendIndexing,
  SearchIndex,
  ActivityLog,
  Locks,
  Jobs,
  Lifecycle,
  ConfirmationQueue,
  ConfirmationSelection,
  PendingConfirmation,
  SessionRecord,
  SessionStatus,
  ActivityQuery,
  ActivityRecord,
  ArchiveReason,
  BackendCheck,
  Conversation,
  DocRef,
  DocWriteOptions,
  EncodeOutcome,
  EngramArchive,
  EngramFile,
  IndexCandidate,
  IndexCapabilities,
  IndexFilter,
  IndexQuery,
  IndexUnit,
  ItemRange,
  JobInput,
  JobRun,
  JobSettlement,
  JobStatus,
  LockOutcome,
  NewSummary,
  ParseProblem,
  PendingDocument,
  PendingMemory,
  QueuedJob,
  QueuedJobStatus,
  StoredUnit,
  TurnRecord,
  UnitKind,
  UserConfirmation,
} from './storage/contracts.ts'

// Models: the providers as configured, or your own.
export type { Llm, LlmTier, LlmMessage, GenerateObjectOptions, GenerateTextOptions, Embedder, EmbedPurpose, ProbeResult } from './llm/contracts.ts'
export { createLlm } from './llm/create-llm.ts'
export type { CreateLlmOptions } from './llm/create-llm.ts'
export { createEmbedder } from './llm/embedders/create-embedder.ts'
export type { CreateEmbedderOptions } from './llm/embedders/create-embedder.ts'

// Sessions and turns.
export type { Session, SessionOptions, TurnRef } from './session/session.ts'
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
export type { InjectedMemory, DegradedNote } from './memory/priming/prime.ts'
export type { PrimingChannel } from './memory/priming/settings.ts'
export type { MessageType } from './memory/priming/classify.ts'
export type { ToolWisdomShare } from './memory/engrams/tool-wisdom.ts'
export type { WorkingStateSection, WorkingStateSectionName } from './memory/episodes/working-state.ts'
export type { MessagePart, JsonValue, JsonObject, ToolOutput, PartProviderOptions } from './core/message-parts.ts'

// Tools: engram's agent tools and a host's own, for any model API.
export type { EngramTool, ToolAnnotations, ToolResult, ToolError } from './tools/tool.ts'
export type { ToolDefinition, ToolContext, ToolWorkspace, ToolDispatcher } from './tools/dispatcher.ts'
export { toEngramTools, toOpenAiFunctions, executeToolCall } from './tools/adapters.ts'
export type { OpenAiFunctionTool, AnyTool } from './tools/adapters.ts'
