/** Settings and dependencies of the context providers, resolved once with their defaults. */
import type { Clock } from '../../core/clock.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { ContextStore, DocumentStore, Locks, SearchIndex } from '../../storage/contracts.ts'
import { DEFAULT_LIMITS } from '../../config/limits.ts'
import { CONTEXT_DEFAULTS } from './provider.ts'

export interface ContextProviderSettings {
  /** Newest messages never compacted and always assembled (context.freshTail). */
  freshTail: number
  /** Fraction of the budget past which assembly compacts first (context.threshold). */
  threshold: number
  /** Minimum messages folded into one leaf summary (context.leafChunk). */
  leafChunk: number
  /** Most summaries folded into one condensed summary. */
  condenseChunk: number
  maxSummaryTokens: number
  fullCompactionRounds: number
  /** Compact during `assemble` when the window passes threshold × budget (LCM). Default true. */
  autoCompact: boolean
  /**
   * Longest compaction an `assemble` does before assembling, in milliseconds (one slice; the rest
   * is left to the next assemble or a background run). Default 15.
   */
  assembleCompactMs: number
  /** How long append and compaction wait for the session lock. */
  lockTimeoutMs: number
  /** Deadline of one summarization call; default: the Llm's (llm.timeoutMs). */
  summaryTimeoutMs: number | undefined
  /** Longest message an append stores, in characters (limits.messageChars). */
  maxMessageChars: number
}

export interface ContextProviderDeps {
  store: ContextStore
  locks: Locks
  clock: Clock
  /** Summaries: `llm.available === false` means extractive summaries (marked as such). */
  llm: Llm
  /** Search over messages and summaries; without it the LCM provider scans. */
  index?: SearchIndex
  /** Prompt layers (SYSTEM.md, SOUL.md). */
  documents?: DocumentStore
  settings?: Partial<ContextProviderSettings>
}

export function resolveSettings(partial: Partial<ContextProviderSettings> = {}): ContextProviderSettings {
  const settings: ContextProviderSettings = {
    freshTail: partial.freshTail ?? CONTEXT_DEFAULTS.freshTail,
    threshold: partial.threshold ?? CONTEXT_DEFAULTS.threshold,
    leafChunk: partial.leafChunk ?? CONTEXT_DEFAULTS.leafChunk,
    condenseChunk: partial.condenseChunk ?? CONTEXT_DEFAULTS.condenseChunk,
    maxSummaryTokens: partial.maxSummaryTokens ?? CONTEXT_DEFAULTS.maxSummaryTokens,
    fullCompactionRounds: partial.fullCompactionRounds ?? CONTEXT_DEFAULTS.fullCompactionRounds,
    autoCompact: partial.autoCompact ?? true,
    assembleCompactMs: partial.assembleCompactMs ?? 15,
    lockTimeoutMs: partial.lockTimeoutMs ?? 120_000,
    summaryTimeoutMs: partial.summaryTimeoutMs,
    maxMessageChars: partial.maxMessageChars ?? DEFAULT_LIMITS.messageChars,
  }
  const problems: string[] = []
  const wholeAtLeast = (name: keyof ContextProviderSettings, min: number): void => {
    const value = settings[name]
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) problems.push(`${name} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`)
  }
  wholeAtLeast('freshTail', 0)
  wholeAtLeast('leafChunk', 2)
  wholeAtLeast('condenseChunk', 2)
  wholeAtLeast('maxSummaryTokens', 16)
  wholeAtLeast('fullCompactionRounds', 1)
  wholeAtLeast('lockTimeoutMs', 0)
  wholeAtLeast('assembleCompactMs', 0)
  wholeAtLeast('maxMessageChars', 1)
  if (!(settings.threshold > 0 && settings.threshold <= 1)) problems.push(`threshold must be in (0, 1], got ${settings.threshold}`)
  if (problems.length > 0) {
    throw new EngramError({
      code: ErrorCode.configInvalid,
      category: 'user',
      message: `Invalid context settings: ${problems.join('; ')}.`,
      fix: 'Fix context.* in config.json or ENGRAM_CONTEXT_FRESH_TAIL / ENGRAM_CONTEXT_THRESHOLD / ENGRAM_CONTEXT_LEAF_CHUNK.',
      details: { problems },
    })
  }
  return Object.freeze(settings)
}
