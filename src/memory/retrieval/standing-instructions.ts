/**
 * Standing instructions that apply to a request (decision 0079). A rule the user set once — "Always
 * give me the psql command", "When I ask about meeting schedules, use 24-hour time" — is not
 * recalled by the words a later request shares with it: "what time is our next meeting?" says
 * neither "always" nor "schedules". What decides is the rule's scope:
 *
 *   - a rule with a condition ("when/whenever/if I ask about X") applies to a request about X: a
 *     word of the request meets a content word of X — the same stem, or one the beginning of the
 *     other ("async" / "asynchronous"), or a related word (word vectors' cosine at least query
 *     expansion's, "usability" / "accessibility");
 *   - a rule without one (a format, a language, a tone) applies to every answer, after those.
 *
 * Only a turn about to be answered is given them (a search `answering`, priming's): at most
 * RULE_SLOTS, each at most 30 words (the extraction rules' bound), packed first — their own small
 * share of the primed context. A plain search ranks them by their words like any memory: placed
 * among the first hits of every question they crowd out the evidence (decision 0079's figures).
 */
import type { WordVectors } from '../../llm/embedders/glove.ts'
import type { StoredUnit } from '../../storage/contracts.ts'
import { stem } from '../../text/analyse.ts'
import { type AnalysedQuery, analyseQuery } from './query-analysis.ts'
import type { UnitMemo } from './unit-memo.ts'

/** Rules that apply primed first, at most (the rest rank by their words like any memory). */
const RULE_SLOTS = 3
/** Rules read per search: a person sets a handful, an imported history some dozens. */
export const RULES_READ = 200
/** The shortest stem that counts as the beginning of another ("api" is no prefix of "apiary"). */
const MIN_PREFIX = 4

// "when I ask about X", "whenever the user requests X", "if we discuss X": what follows the subject.
const CONDITION = /\b(?:when|whenever|if|each time|every time)\s+(?:I|the user|we)\s+([^,;.!?]+)/i
// The verb of the condition and its preposition ("ask about", "am asking for", "request"): what the request is, not what it is about.
const PREPOSITION = /^(?:about|for|on|regarding|with|into|to|in|of)$/i

/** The condition of a rule ("meeting schedules" of "… when I ask about meeting schedules"), or undefined when it has none. */
function conditionOf(rule: string): string | undefined {
  const words = CONDITION.exec(rule)?.[1]?.trim().split(/\s+/) ?? []
  // The words after the first preposition of the verb phrase (within its first four words), else after the verb.
  const at = words.slice(0, 4).findIndex((word) => PREPOSITION.test(word))
  const condition = words.slice(at >= 0 ? at + 1 : 1).join(' ')
  return condition === '' ? undefined : condition
}

/** Two stems name the same thing: equal, or one begins the other and is at least MIN_PREFIX long. */
function sameStem(a: string, b: string): boolean {
  if (a === b) return true
  const [short, long] = a.length <= b.length ? [a, b] : [b, a]
  return short.length >= MIN_PREFIX && long.startsWith(short)
}

/** Whether two words are related: their word vectors' cosine is at least `minCosine` (query expansion's notion of a related word). */
export function wordRelatedness(vectors: WordVectors, minCosine: number): (a: string, b: string) => boolean {
  const d = vectors.dimensions
  return (a, b) => {
    const ra = vectors.row(a)
    const rb = vectors.row(b)
    if (ra === undefined || rb === undefined) return false
    // The scale first: it loads the row's components.
    const scale = vectors.scale(ra) * vectors.scale(rb)
    let dot = 0
    for (let j = 0; j < d; j++) dot += (vectors.components[ra * d + j] as number) * (vectors.components[rb * d + j] as number)
    return dot * scale >= minCosine
  }
}

/** A rule read for its condition: the condition's content words with their stems (none: it applies to every answer). */
export interface ReadRule {
  unit: StoredUnit
  condition: Array<{ word: string; stem: string }> | undefined
}

/** A rule's condition words as read: undefined without a condition, null when it names nothing. */
export type ConditionWords = ReadRule['condition'] | null

/** Each rule with its condition's words; a rule whose condition names nothing is left out. `memo`: the words of a text read before (by its hash). */
export function readRules(rules: readonly StoredUnit[], maxTerms: number, memo?: UnitMemo<ConditionWords>): ReadRule[] {
  const wordsOf = (text: string): ConditionWords => {
    const condition = conditionOf(text)
    if (condition === undefined) return undefined
    const words = analyseQuery(condition, maxTerms).contentWords.map((word) => ({ word: word.toLowerCase(), stem: stem(word.toLowerCase()) }))
    return words.length === 0 ? null : words
  }
  return rules.flatMap((unit): ReadRule[] => {
    const condition = memo === undefined ? wordsOf(unit.text) : memo.get(unit.hash, () => wordsOf(unit.text))
    return condition === null ? [] : [{ unit, condition }]
  })
}

/**
 * The rules whose condition the request meets, best met first (the share of the condition's words
 * met, then the newer), then those without a condition said in a conversation (newest first), at
 * most RULE_SLOTS. A condition's word is met by a request word of the same stem (or one beginning
 * the other), or by a related one (`related`, when word vectors are at hand).
 */
export function rulesThatApply(rules: readonly ReadRule[], request: AnalysedQuery, related?: (a: string, b: string) => boolean): StoredUnit[] {
  const requestWords = request.contentWords.map((word) => word.toLowerCase())
  const met: Array<{ unit: StoredUnit; share: number }> = []
  for (const { unit, condition } of rules) {
    if (condition === undefined) {
      // The user's rules file is in every turn's system prompt already; one said in a conversation is not.
      if (unit.meta?.instruction === true) met.push({ unit, share: 0 })
      continue
    }
    const matched = condition.filter(({ word, stem: own }) => request.indexTerms.some((other) => sameStem(own, other)) || (related !== undefined && requestWords.some((other) => related(word, other)))).length
    if (matched > 0) met.push({ unit, share: matched / condition.length })
  }
  met.sort((a, b) => b.share - a.share || b.unit.createdAt.localeCompare(a.unit.createdAt))
  return met.slice(0, RULE_SLOTS).map((m) => m.unit)
}
