/**
 * Matching a message to skills and procedures in three stages (AnimaWorks' skill injection):
 *
 * 1. `[keyword]` — a bracketed keyword in the message contained in a candidate's description,
 *    cue, name or label: the user named it explicitly. Highest priority.
 * 2. Lexical — overlap of content words (stop words out, light stemming) between the message and
 *    the candidate's description and cue.
 * 3. Vector — cosine similarity of embeddings, only when an Embedder is given and the earlier
 *    stages left room. The fallback for paraphrases.
 *
 * A candidate matched by an earlier stage is not matched again by a later one.
 */
import { describeError } from '../../core/errors.ts'
import type { Embedder } from '../../llm/contracts.ts'
import { stem, words } from '../../llm/embedders/text-features.ts'
import { cosineSimilarity } from '../../llm/embedders/vector-math.ts'

export interface MatchCandidate {
  kind: 'skill' | 'procedure'
  /** Skill label or procedure slug. */
  id: string
  name?: string
  description?: string
  /** A skill's `when_to_use`. */
  whenToUse?: string
}

export type MatchStage = 'keyword' | 'lexical' | 'vector'

export interface ProcedureMatch {
  kind: MatchCandidate['kind']
  id: string
  stage: MatchStage
  /** keyword: 1; lexical: shared content words over the candidate's (0–1]; vector: cosine. */
  score: number
  /** Why it matched: the keyword, the shared words, or the similarity. */
  reason: string
}

export interface MatchOptions {
  embedder?: Embedder | null
  /** At most this many matches (default 5). */
  limit?: number
  /** Lexical matches need at least this many shared content words (default 1)… */
  minSharedWords?: number
  /** …and this share of the candidate's content words (default 0.15). */
  minLexicalScore?: number
  /** Vector matches need at least this cosine similarity (default 0.35). */
  minSimilarity?: number
}

export interface MatchResult {
  matches: ProcedureMatch[]
  /** Degradations, e.g. the embedder failed and stage 3 was skipped. */
  warnings: Array<{ type: 'embed_failed'; message: string }>
}

/**
 * Vector matches need at least this cosine similarity (the default of `minSimilarity`); priming asks
 * the same of a procedure the index found by its vector alone.
 */
export const MIN_VECTOR_SIMILARITY = 0.35

/** Function words and filler common in requests: they match everything, so they carry no signal. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have having he her hers him his how i if in into is it its ' +
    'me my no nor not of on or our ours she so than that the their theirs them then there these they this those to too was we were what when where ' +
    'which while who whom why will with would you your yours please want need like just some any all about use using used user asks ask'
  ).split(' '),
)

/** Stemmed content words of `text`, as a set. */
export function contentWords(text: string): Set<string> {
  const out = new Set<string>()
  for (const word of words(text)) {
    if (STOP_WORDS.has(word) || word.length < 2) continue
    out.add(stem(word))
  }
  return out
}

/** Keywords written in `[brackets]` in a message, lower-cased and trimmed. */
export function bracketKeywords(message: string): string[] {
  const out: string[] = []
  for (const match of message.matchAll(/\[([^[\]\n]{1,80})\]/g)) {
    const keyword = match[1]?.trim().toLowerCase()
    if (keyword) out.push(keyword)
  }
  return out
}

function haystack(candidate: MatchCandidate): string {
  return [candidate.id, candidate.name, candidate.description, candidate.whenToUse].filter(Boolean).join('\n')
}

/** Match `message` against `candidates` through the three stages; best first within each stage. */
export async function matchProcedures(message: string, candidates: readonly MatchCandidate[], options: MatchOptions = {}): Promise<MatchResult> {
  const limit = options.limit ?? 5
  const minShared = options.minSharedWords ?? 1
  const minLexical = options.minLexicalScore ?? 0.15
  const minSimilarity = options.minSimilarity ?? MIN_VECTOR_SIMILARITY
  const matches: ProcedureMatch[] = []
  const warnings: MatchResult['warnings'] = []
  const taken = new Set<string>()
  const keyOf = (c: MatchCandidate): string => `${c.kind}:${c.id}`

  // Stage 1: explicit [keyword].
  const keywords = bracketKeywords(message)
  if (keywords.length > 0) {
    for (const candidate of candidates) {
      const text = haystack(candidate).toLowerCase()
      const keyword = keywords.find((k) => text.includes(k))
      if (keyword === undefined) continue
      matches.push({ kind: candidate.kind, id: candidate.id, stage: 'keyword', score: 1, reason: `[${keyword}]` })
      taken.add(keyOf(candidate))
    }
  }

  // Stage 2: content-word overlap with the description and cue.
  const messageWords = contentWords(message)
  const lexical: ProcedureMatch[] = []
  for (const candidate of candidates) {
    if (taken.has(keyOf(candidate))) continue
    const candidateWords = contentWords([candidate.name, candidate.description, candidate.whenToUse].filter(Boolean).join(' '))
    if (candidateWords.size === 0) continue
    const shared = [...candidateWords].filter((word) => messageWords.has(word))
    const score = shared.length / candidateWords.size
    if (shared.length >= minShared && score >= minLexical) {
      lexical.push({ kind: candidate.kind, id: candidate.id, stage: 'lexical', score, reason: `shared words: ${shared.join(', ')}` })
    }
  }
  lexical.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
  for (const match of lexical) {
    matches.push(match)
    taken.add(`${match.kind}:${match.id}`)
  }

  // Stage 3: dense similarity, the fallback when the earlier stages left room.
  const rest = candidates.filter((candidate) => !taken.has(keyOf(candidate)))
  if (options.embedder && matches.length < limit && rest.length > 0 && message.trim() !== '') {
    try {
      const [query] = await options.embedder.embed([message], 'query')
      const documents = await options.embedder.embed(
        rest.map((c) => [c.name, c.description, c.whenToUse].filter(Boolean).join('. ') || c.id),
        'document',
      )
      const vector: ProcedureMatch[] = []
      rest.forEach((candidate, i) => {
        const doc = documents[i]
        if (!query || !doc) return
        const score = cosineSimilarity(query, doc)
        if (score >= minSimilarity) vector.push({ kind: candidate.kind, id: candidate.id, stage: 'vector', score, reason: `similarity ${score.toFixed(2)}` })
      })
      vector.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
      matches.push(...vector)
    } catch (error) {
      warnings.push({ type: 'embed_failed', message: `vector stage skipped: ${describeError(error)}` })
    }
  }
  return { matches: matches.slice(0, limit), warnings }
}
