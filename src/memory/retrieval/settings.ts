/**
 * Retrieval settings: the weights of fusion and of the spreading-activation terms, and the bounds
 * that keep recall fast at a million units. Defaults follow the seed (30-day recency half-life,
 * frequency 0.1, graph 0.5) and docs/decisions/0011-retrieval-hot-path.md (fusion, candidate
 * counts, when dense retrieval runs as a full KNN and when as a re-ranking); the recency weight is
 * 0.05, not the seed's 0.2, and every prior was measured on both dev sets (decision 0029).
 */
import type { ConfigValues } from '../../config/resolve.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'

export const FUSION_METHODS = ['weighted', 'rrf'] as const
export type FusionMethod = (typeof FUSION_METHODS)[number]

/**
 * How the dense channel runs. `knn`: exact nearest neighbours over every vector in the index;
 * `rerank`: similarity of the lexical candidates only; `auto`: knn while the index holds at most
 * `denseKnnMaxUnits` units, rerank above; `off`: lexical only.
 */
export const DENSE_MODES = ['auto', 'knn', 'rerank', 'off'] as const
export type DenseMode = (typeof DENSE_MODES)[number]

export interface RetrievalSettings {
  fusion: FusionMethod
  lexicalWeight: number
  denseWeight: number
  /** The k of reciprocal rank fusion (the classic 60). */
  rrfK: number
  recencyWeight: number
  recencyHalfLifeDays: number
  frequencyWeight: number
  graph: boolean
  graphWeight: number
  /** How many of the best candidates seed the graph (with their direct links). */
  graphSeeds: number
  /** Cosine of content-word sets above which two candidates are joined by a similarity edge. */
  similarityEdge: number
  /** Candidates asked of each channel (at least 3× the requested hits). */
  candidates: number
  dense: DenseMode
  denseKnnMaxUnits: number
  /** How many lexical candidates the dense re-ranking embeds. */
  denseRerankCandidates: number
  /**
   * The same for a word-vector embedder (glove-100d-sif), which always re-ranks: its vectors cost
   * nothing to compute, and 200 keeps the measured gain (docs/decisions/0012-offline-retrieval-pipeline.md).
   */
  wordVectorRerankCandidates: number
  /** Content words kept from a long query (the longest, which tend to be the rarest). */
  maxQueryTerms: number
  /** Hits whose content words overlap an earlier hit's this much (Jaccard) are dropped as repeats. */
  duplicateSimilarity: number
  /** BM25 weight of a message's neighbours (the turns just before and after) against its own words (1). */
  nearWeight: number
  /** BM25 weight of the turns two away. */
  farWeight: number
  /** BM25 weight of related words (WordNet hypernyms) of the unit's text. */
  relatedWeight: number
  /** When a query names exactly one participant, that participant's messages score × (1 + this). */
  speakerBoost: number
  /**
   * Weight of query expansion by word vectors (nearest words the memory holds, cosine ≥ 0.5, 10 per
   * word): each expansion term adds its own BM25 over the candidates' words × this × its cosine (search.ts,
   * expansionBonus). Runs only with a word-vector embedder; 0 turns it off.
   */
  expansionWeight: number
  /** Weight of the best lexical match in a message's session, max-normalised (search.ts, stage 3b); 0 turns it off. */
  sessionWeight: number
  /**
   * Weight of how much a message says (length, proper names; minus turns that only ask or
   * acknowledge) as a factor on its relevance: × max(0, 1 + this × content), information.ts; 0 turns it off.
   */
  informationWeight: number
  /**
   * Factor on the relevance of the agent's own messages (`role: 'assistant'`): what a user said is
   * the evidence a question asks after; the agent's long answers about it must not drown it
   * (decision 0012, 2026-11-23 "user–assistant chats"). 1 = no difference. Not applied to a
   * question about what the agent said ("the hotel you recommended", agent-said.ts, decision 0079).
   */
  agentMessageWeight: number
  /**
   * Stage 5b (search.ts), facts that change: a later message of the same speaker ranks just above
   * an earlier one when it gives a subject the question names a new value (decision 0078), or when
   * it matches the query as well with this content-word cosine or more (a restatement, decision
   * 0029). 1 turns both off.
   */
  restatementSimilarity: number
}

export const DEFAULT_RETRIEVAL_SETTINGS: Readonly<RetrievalSettings> = Object.freeze({
  fusion: 'weighted',
  lexicalWeight: 0.7,
  denseWeight: 0.3,
  rrfK: 60,
  recencyWeight: 0.05,
  recencyHalfLifeDays: 30,
  frequencyWeight: 0.1,
  graph: true,
  graphWeight: 0.5,
  graphSeeds: 20,
  similarityEdge: 0.5,
  candidates: 50,
  dense: 'auto',
  denseKnnMaxUnits: 5_000,
  denseRerankCandidates: 40,
  wordVectorRerankCandidates: 200,
  maxQueryTerms: 16,
  duplicateSimilarity: 0.9,
  nearWeight: 0.5,
  farWeight: 0.2,
  relatedWeight: 0.3,
  speakerBoost: 1,
  expansionWeight: 0,
  sessionWeight: 0.15,
  informationWeight: 0.2,
  agentMessageWeight: 0.5,
  restatementSimilarity: 0.15,
})

function invalid(key: string, message: string): EngramError {
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `retrieval.${key} ${message}`,
    fix: `Set retrieval.${key} in config.json (or its ENGRAM_RETRIEVAL_* variable) to a valid value.`,
  })
}

/** Defaults overlaid with `partial`, checked; throws `invalid_argument` naming the bad key. */
export function resolveRetrievalSettings(partial: Partial<RetrievalSettings> = {}): RetrievalSettings {
  const settings: RetrievalSettings = { ...DEFAULT_RETRIEVAL_SETTINGS }
  for (const [key, value] of Object.entries(partial)) if (value !== undefined) (settings as unknown as Record<string, unknown>)[key] = value
  const nonNegative = ['lexicalWeight', 'denseWeight', 'recencyWeight', 'frequencyWeight', 'graphWeight', 'nearWeight', 'farWeight', 'relatedWeight', 'speakerBoost', 'expansionWeight', 'sessionWeight', 'informationWeight', 'agentMessageWeight'] as const
  for (const key of nonNegative) if (!(Number.isFinite(settings[key]) && settings[key] >= 0)) throw invalid(key, `must be a number ≥ 0, got ${settings[key]}.`)
  if (settings.lexicalWeight + settings.denseWeight === 0) throw invalid('lexicalWeight', 'and retrieval.denseWeight cannot both be 0.')
  const positiveInts = ['rrfK', 'graphSeeds', 'candidates', 'denseKnnMaxUnits', 'denseRerankCandidates', 'wordVectorRerankCandidates', 'maxQueryTerms'] as const
  for (const key of positiveInts) if (!(Number.isInteger(settings[key]) && settings[key] >= 1)) throw invalid(key, `must be a whole number ≥ 1, got ${settings[key]}.`)
  if (!(settings.recencyHalfLifeDays > 0)) throw invalid('recencyHalfLifeDays', `must be > 0, got ${settings.recencyHalfLifeDays}.`)
  for (const key of ['similarityEdge', 'duplicateSimilarity', 'restatementSimilarity'] as const) {
    if (!(settings[key] > 0 && settings[key] <= 1)) throw invalid(key, `must be in (0, 1], got ${settings[key]}.`)
  }
  if (!FUSION_METHODS.includes(settings.fusion)) throw invalid('fusion', `must be one of ${FUSION_METHODS.join(', ')}.`)
  if (!DENSE_MODES.includes(settings.dense)) throw invalid('dense', `must be one of ${DENSE_MODES.join(', ')}.`)
  return settings
}

/** The retrieval settings of a resolved configuration (`config.values.retrieval`). */
export function retrievalSettingsFromConfig(values: ConfigValues['retrieval']): Partial<RetrievalSettings> {
  return { ...values }
}
