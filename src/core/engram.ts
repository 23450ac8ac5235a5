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

export function isRuleKind(value: unknown): value is RuleKind {
  return typeof value === 'string' && (RULE_KINDS as readonly string[]).includes(value)
}

const POLARITY_LABELS: Record<RuleKind, string> = { always: 'Always', never: 'Never', when: 'When' }
// Words that already say a rule's polarity at its start: "Never use…", "Don't…", "If X then Y".
const OWN_POLARITY: Record<RuleKind, RegExp> = {
  always: /^(?:always)\b/i,
  never: /^(?:never|don['’]?t|do not|avoid|no)\b/i,
  when: /^(?:when|whenever|if|before|after|once|unless)\b/i,
}

/**
 * A rule as it must be read: with its polarity. rules.md files a never-rule under `## Never` as
 * "Use time.sleep() in scratchpad cells"; shown alone, that line reads as the opposite of the
 * rule. So wherever a single rule is shown (the memory context, search results, tool wisdom,
 * nudges, the index text that priming and search_memory show), it reads
 * "Never: Use time.sleep() in scratchpad cells". A text that already starts with its polarity
 * ("Never use…", "Don't…", "When X, …", "If X → Y") is shown as it is: "Never: Don't…" would read
 * as a double negative.
 */
export function ruleWithPolarity(kind: RuleKind, text: string): string {
  const trimmed = text.trim()
  return OWN_POLARITY[kind].test(trimmed) ? trimmed : `${POLARITY_LABELS[kind]}: ${trimmed}`
}
