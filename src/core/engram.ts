/**
 * The Engram: the unit of declarative memory (Anton's `Engram` dataclass).
 *
 * Every producer — the `memorize` tool, consolidation, the error learner, the pattern monitor,
 * identity extraction, an import — builds Engrams and hands them to one `encode()`.
 */
import type { Owner } from './owner.ts'

export const ENGRAM_KINDS = ['always', 'never', 'when', 'lesson', 'profile'] as const
export type EngramKind = (typeof ENGRAM_KINDS)[number]

export const ENGRAM_SCOPES = ['global', 'project'] as const
export type EngramScope = (typeof ENGRAM_SCOPES)[number]

export const CONFIDENCES = ['high', 'medium', 'low'] as const
export type Confidence = (typeof CONFIDENCES)[number]

export const ENGRAM_SOURCES = ['user', 'consolidation', 'llm'] as const
export type EngramSource = (typeof ENGRAM_SOURCES)[number]

export type RuleKind = Extract<EngramKind, 'always' | 'never' | 'when'>
export const RULE_KINDS: readonly RuleKind[] = ['always', 'never', 'when']

export interface Engram {
  /** The memory itself, one line of plain text. */
  text: string
  kind: EngramKind
  scope: EngramScope
  confidence: Confidence
  /** Lessons only: a topic slug; the lesson is cross-filed into `topics/<slug>.md`. */
  topic?: string
  source: EngramSource
  /** Tool this memory is about (tool wisdom is appended to that tool's description). */
  tool?: string
  /**
   * Whose memory it is (decision 0017): `user:<id>` for what a session with a user learned,
   * `agent` (the default) or `shared` when promoted on purpose.
   */
  owner?: Owner
}

/**
 * An entry as stored in a markdown memory file: the engram's text and kind plus the metadata kept
 * in its `<!-- key:value -->` comment. Unknown metadata keys are preserved on rewrite.
 */
export interface EngramEntry {
  text: string
  kind: EngramKind
  confidence?: Confidence
  source?: EngramSource
  /** Encoding day, `YYYY-MM-DD`; recency ordering of lessons uses it. */
  ts?: string
  topic?: string
  tool?: string
  /** Every metadata key, including the ones above, as written in the file. */
  meta: Record<string, string>
}

/** Normalised text used to decide whether two entries say the same thing. */
export function dedupeKey(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[`*_~"'“”‘’]/g, '')
    .replace(/[.,;:!?]+(\s|$)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}

export function isEngramKind(value: unknown): value is EngramKind {
  return typeof value === 'string' && (ENGRAM_KINDS as readonly string[]).includes(value)
}
