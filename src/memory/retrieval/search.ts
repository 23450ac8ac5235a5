/**
 * Hybrid retrieval with spreading activation — the one recall path behind priming, the
 * `search_memory` / `recall` tools and the retrieval benchmark.
 *
 * The stages are explicit so each can be measured and replaced on its own:
 *
 *   query analysis → candidates per channel (lexical BM25; dense KNN or dense re-ranking)
 *   → fusion → activation terms (recency, frequency) → graph diffusion (PPR)
 *   → filtering and exclusions → diversification → superseded facts below their successors
 *   → threshold → record access
 *
 * Packing into a token budget is the caller's (priming packs per channel).
 *
 * Fast by construction (DESIGN principle 7): every stage works on a bounded candidate set; the
 * only index-wide operations are the FTS5 query (bounded by dropping function words and capping
 * query terms) and, while the index is small, the exact vector KNN. Above `denseKnnMaxUnits` the
 * dense channel re-ranks the lexical candidates instead of scanning every vector (measured in
 * docs/decisions/0011-retrieval-hot-path.md).
 */
import type { Clock } from '../../core/clock.ts'
import { describeError, EngramError, ErrorCode } from '../../core/errors.ts'
import type { EngramScope } from '../../core/engram.ts'
import { canSee, type Viewer } from '../../core/owner.ts'
import type { Embedder } from '../../llm/contracts.ts'
import { wordVectorsOf } from '../../llm/embedders/glove-embedder.ts'
import { cosineSimilarity } from '../../llm/embedders/vector-math.ts'
import { candidateUnits } from '../../storage/candidate-units.ts'
import type { IndexCandidate, IndexFilter, SearchIndex, StoredUnit, UnitKind } from '../../storage/contracts.ts'
import { frequencyTerm, recencyTerm } from './activation.ts'
import { fuseScores } from './fusion.ts'
import { personalizedPageRank } from './graph-diffusion.ts'
import { capSimilarityLift, linkTargets } from './graph-links.ts'
import { informationFactor } from './information.ts'
import { siblingSource, supersededAt } from './fact-history.ts'
import { createNearDuplicateFilter } from './near-duplicates.ts'
import { type AnalysedQuery, analyseQuery, contentWordSet, setCosine } from './query-analysis.ts'
import { type RetrievalSettings, resolveRetrievalSettings } from './settings.ts'
import { allTerms } from '../../text/analyse.ts'
import { createQueryExpander, DEFAULT_EXPANSION_OPTIONS, type QueryExpander } from './query-expansion.ts'
import { createUnitMemo } from './unit-memo.ts'
import { changedValue, subjectStems, type ValueReading, valueReadings } from '../../text/value-readings.ts'
import { asksWhatTheAgentSaid } from './agent-said.ts'
import { type ConditionWords, type ReadRule, readRules, RULES_READ, rulesThatApply, wordRelatedness } from './standing-instructions.ts'

/** Why a hit ranks where it does: each term of its score. */
export interface ScoreTerms {
  /** BM25 normalised by the best lexical candidate (0–1); 0 when it did not match the words. */
  lexical: number
  /** Cosine similarity to the query (0 when the dense channel did not run or the unit has no vector). */
  dense: number
  /** Fused relevance (0–1). */
  fused: number
  recency: number
  frequency: number
  graph: number
  /**
   * Factor on a message's relevance for how much it says (information.ts; 1 = neutral, and for
   * every unit that is not a message). `fused` is already multiplied by it.
   */
  information: number
  /**
   * Factor on the whole score of a fact superseded by a newer one (SUPERSEDED_SCORE_FACTOR; 1 =
   * neutral, and for every unit that is not a superseded knowledge document). `score` already
   * includes it.
   */
  history: number
}

/** Terms of a unit not scored yet (the information and history factors are neutral). */
const zeroTerms = (): ScoreTerms => ({ lexical: 0, dense: 0, fused: 0, recency: 0, frequency: 0, graph: 0, information: 1, history: 1 })

export interface RetrievalHit {
  unit: StoredUnit
  /** (fused + recency + frequency + graph) × history. */
  score: number
  terms: ScoreTerms
  /** The messages or documents the unit stands for. */
  provenance: string[]
  /** A standing instruction that applies to the request (stage 6c, standing-instructions.ts): priming packs it first. */
  applies?: true
}

export interface RetrievalOptions {
  /** How many hits (default 10). */
  limit?: number
  kinds?: UnitKind[]
  scope?: EngramScope
  agent?: string
  user?: string
  /**
   * Only what this viewer may see (decision 0017). Every read on behalf of a session passes its
   * (agent, user); leaving it out reads every owner's memories (benchmarks, administrators).
   */
  viewer?: Viewer
  /**
   * Without a viewer, read every owner's memories. A mind's retriever (`createMind`) reads the
   * agent's own view when no viewer is given (issue 29); the retrieval evaluation, which searches
   * a benchmark's every speaker, says so with this.
   */
  allOwners?: boolean
  /** Only memories created at or after / at or before these instants. */
  since?: string
  until?: string
  sources?: string[]
  /** The instant recency is measured from (default: the clock's now). */
  asOf?: Date | string
  /** Count this recall in each hit's access statistics (default true). */
  recordAccess?: boolean
  /**
   * Hits scoring below this are dropped — unless that would drop all of them: then the best are
   * returned anyway and `belowThreshold` is set (a threshold must never silently empty a result).
   */
  minScore?: number
  /** Units to leave out by id (e.g. already shown). */
  excludeIds?: Iterable<string>
  /**
   * Message ids already in the assembled conversation: message units for them, and summaries
   * that stand only for them, are left out (the agent already sees those words).
   */
  excludeMessageIds?: Iterable<string | number>
  /** Override `retrieval.graph` for this query. */
  graph?: boolean
  /**
   * The request is a turn about to be answered (priming): the standing instructions that apply to
   * it come first, marked `applies` — those whose condition it meets, then those set in a
   * conversation without one (standing-instructions.ts). Default false: a search ranks what is
   * about its words.
   */
  answering?: boolean
}

export type RetrievalWarning =
  | { type: 'dense_skipped'; reason: string }
  | { type: 'embed_failed'; message: string }

export interface RetrievalResult {
  hits: RetrievalHit[]
  /** Set when `minScore` would have removed every hit and the best were returned anyway. */
  belowThreshold: boolean
  warnings: RetrievalWarning[]
  /** How the query ran, for benchmarks and the dashboard. */
  stats: { terms: string[]; candidates: number; dense: 'knn' | 'rerank' | 'off'; graphNodes: number; ms: number }
}

export interface RetrieverDeps {
  index: SearchIndex
  embedder: Embedder | null
  clock: Clock
  settings?: Partial<RetrievalSettings>
}

export interface Retriever {
  readonly settings: Readonly<RetrievalSettings>
  /** Ranked hits for `query` (see RetrievalOptions). Throws `invalid_argument` on bad options. */
  search(query: string, options?: RetrievalOptions): Promise<RetrievalResult>
}

interface Scored {
  unit: StoredUnit
  lexical?: number
  dense?: number
  terms: ScoreTerms
  score: number
  words?: Set<string>
  applies?: true
}

/*
 * The unit count decides between dense KNN and re-ranking. Counting a million rows costs tens of
 * milliseconds, so it is cached; a minute of staleness only delays the switch, never breaks a query.
 */
const INDEX_SIZE_TTL_MS = 60_000
/**
 * Lexical candidates asked per hit wanted, beyond the exclusions counted separately: room for the
 * duplicate filter. Each candidate is read and scored, so this is most of a query's cost (was 3;
 * 1.5 measured the same LoCoMo recall at half the reads).
 */
const CANDIDATES_PER_HIT = 1.5
/** Direct links followed per graph seed, so one hub note cannot blow up the graph. */
const LINKS_PER_SEED = 8
/** Embedders built from word vectors (glove-embedder.ts): dense re-ranking only, never KNN. */
const WORD_VECTOR_EMBEDDER_PREFIX = 'offline:glove'

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

function instant(value: Date | string | undefined, what: string, fallback: Date): Date {
  if (value === undefined) return fallback
  const date = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(date.getTime())) throw invalid(`${what} must be a date or an ISO-8601 instant, got ${JSON.stringify(value)}.`, `Pass ${what} as new Date(...) or its toISOString().`)
  return date
}

/** Does a stored unit pass the filter? (Linked units found by the graph did not come through the index's filter.) */
function passesFilter(unit: StoredUnit, options: RetrievalOptions, since: number | undefined, until: number | undefined): boolean {
  if (options.kinds !== undefined && !options.kinds.includes(unit.kind)) return false
  if (options.scope !== undefined && unit.scope !== options.scope) return false
  if (options.agent !== undefined && unit.agent !== options.agent) return false
  if (options.user !== undefined && unit.user !== options.user) return false
  if (options.viewer !== undefined && !canSee(options.viewer, unit)) return false
  if (options.sources !== undefined && !options.sources.includes(unit.source)) return false
  if (since === undefined && until === undefined) return true
  const at = Date.parse(unit.createdAt)
  if (since !== undefined && !(at >= since)) return false
  if (until !== undefined && !(at <= until)) return false
  return true
}

/** Whether every sentence of a text asks: a question restates no fact ("How much is my rent?" after "My rent is $1,200."). */
function onlyQuestions(text: string): boolean {
  const sentences = text.split(/(?<=[.!?])\s+|\n+/).filter((sentence) => sentence.trim() !== '')
  return sentences.length > 0 && sentences.every((sentence) => sentence.trim().endsWith('?'))
}

/** A hit as the retriever returns it. */
const hitOf = (s: Scored): RetrievalHit => ({ unit: s.unit, score: s.score, terms: { ...s.terms }, provenance: s.unit.provenance, ...(s.applies ? { applies: true as const } : {}) })

/** A retriever over `deps.index`. Settings are resolved (and checked) once, here. */
/** Units whose derived values (content words, prior, word vector) are remembered per retriever. */
const UNIT_MEMO_CAPACITY = 10_000
/** Lists of rules kept per retriever (one per filter: viewer, user, scope). */
const RULE_LISTS_KEPT = 64
/** Candidates looked at for values that changed and restatements (stage 5b). */
const CHANGE_DEPTH = 30
/** A restatement must match the question about as well as what it restates: this share of its score at least. */
const RESTATEMENT_SCORE_RATIO = 0.6
/**
 * The score of a superseded fact is multiplied by this (decision 0033): a live fact that matches
 * as well, or nearly (within a tenth), ranks above it; one that matches clearly better stays where
 * its match puts it — it is history, still found, never dropped. Not measured: neither dev set has
 * superseded documents; the order of a superseded fact and its successor when both are found does
 * not depend on it (stage 6b).
 */
export const SUPERSEDED_SCORE_FACTOR = 0.9

/**
 * Stage 6b: facts that were replaced, as restatements (stage 5b) are for messages. When a
 * superseded fact and its successor are both among the hits, the successor (its best unit) takes
 * the better place of the two and the superseded fact goes right below it — a chain A → B → C
 * reads C, B, A where the best of them ranked — each scoring no more than the one above it. Alone,
 * a superseded fact keeps its place (its score was lowered by SUPERSEDED_SCORE_FACTOR). A unit
 * whose successors lead back to it (a cycle a person wrote by hand) heads its chain.
 */
function supersededBelowSuccessors(kept: Scored[]): Scored[] {
  const firstOfSource = new Map<string, Scored>()
  for (const s of kept) if (!firstOfSource.has(s.unit.source)) firstOfSource.set(s.unit.source, s)
  const parentOf = new Map<Scored, Scored>()
  for (const s of kept) {
    // Superseded as of the query's instant (stage 4 set the factor).
    if (s.terms.history === 1) continue
    const parent = firstOfSource.get(siblingSource(s.unit.source, String(s.unit.meta?.supersededBy)))
    if (parent !== undefined && parent.unit.source !== s.unit.source) parentOf.set(s, parent)
  }
  if (parentOf.size === 0) return kept
  for (const s of kept) {
    // Walk up; a chain that comes back to `s` is a cycle, and `s` (the best ranked of it) is its root.
    let up = parentOf.get(s)
    for (let steps = 0; up !== undefined && steps <= kept.length; steps++) {
      if (up === s) {
        parentOf.delete(s)
        break
      }
      up = parentOf.get(up)
    }
  }
  const children = new Map<Scored, Scored[]>()
  for (const s of kept) {
    const parent = parentOf.get(s)
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), s])
  }
  const rootOf = (s: Scored): Scored => {
    let root = s
    for (let up = parentOf.get(root); up !== undefined; up = parentOf.get(root)) root = up
    return root
  }
  const out: Scored[] = []
  const placed = new Set<Scored>()
  const place = (s: Scored): void => {
    out.push(s)
    for (const child of children.get(s) ?? []) {
      child.score = Math.min(child.score, s.score)
      place(child)
    }
  }
  // In rank order: the first member of a chain seen puts the whole chain there, its head first.
  for (const s of kept) {
    const root = rootOf(s)
    if (placed.has(root)) continue
    placed.add(root)
    root.score = Math.max(root.score, s.score)
    place(root)
  }
  return out
}

export function createRetriever(deps: RetrieverDeps): Retriever {
  const settings = Object.freeze(resolveRetrievalSettings(deps.settings))
  const { index, embedder, clock } = deps
  let sizeCache: { units: number; atMs: number } | undefined
  const loadWordVectors = embedder ? wordVectorsOf(embedder) : undefined
  const wordVectorEmbedder = embedder?.id.startsWith(WORD_VECTOR_EMBEDDER_PREFIX) === true
  const rerankCandidates = wordVectorEmbedder ? settings.wordVectorRerankCandidates : settings.denseRerankCandidates
  const vocabularyOf = index.vocabulary?.bind(index)
  let expander: QueryExpander | undefined
  let vocabularyAtMs: number | undefined
  // Per-unit work that depends on the text alone, memoised by content hash (unit-memo.ts).
  const wordsMemo = createUnitMemo<Set<string>>(UNIT_MEMO_CAPACITY)
  const vectorMemo = createUnitMemo<Float32Array>(UNIT_MEMO_CAPACITY)
  // An offline embedder (word vectors, hashing) is a function of the text alone: its vectors are memoised.
  const memoisedVectors = wordVectorEmbedder || embedder?.kind === 'offline'
  const informationMemo = createUnitMemo<number>(UNIT_MEMO_CAPACITY)
  const readingsMemo = createUnitMemo<ValueReading[]>(UNIT_MEMO_CAPACITY)
  // The condition of a rule read before: priming reads every rule of the viewer before each turn.
  const conditionMemo = createUnitMemo<ConditionWords>(UNIT_MEMO_CAPACITY)
  let informationParticipants = ''
  const wordsOf = (unit: StoredUnit): Set<string> => wordsMemo.get(unit.hash, () => contentWordSet(unit.text))

  /** Expansion stems of the query with their cosine (empty when expansion is off or unavailable). */
  async function expansionOf(query: AnalysedQuery, warnings: RetrievalWarning[]): Promise<Map<string, number>> {
    if (!loadWordVectors || !vocabularyOf || settings.expansionWeight <= 0 || query.contentWords.length === 0) return new Map()
    try {
      expander ??= createQueryExpander(loadWordVectors())
      // The index's vocabulary grows as memories arrive: re-read it at most once a minute.
      const nowMs = clock.now().getTime()
      if (vocabularyAtMs === undefined || Math.abs(nowMs - vocabularyAtMs) >= INDEX_SIZE_TTL_MS) {
        expander.setVocabulary(await vocabularyOf())
        vocabularyAtMs = nowMs
      }
      return expander.expand(query.contentWords, new Set(query.indexTerms))
    } catch (error) {
      warnings.push({ type: 'embed_failed', message: `query expansion skipped: ${describeError(error)}` })
      return new Map()
    }
  }

  async function indexSize(): Promise<number> {
    const nowMs = clock.now().getTime()
    if (sizeCache && Math.abs(nowMs - sizeCache.atMs) < INDEX_SIZE_TTL_MS) return sizeCache.units
    const counts = await index.count()
    const units = Object.values(counts).reduce((sum, n) => sum + n, 0)
    sizeCache = { units, atMs: nowMs }
    return units
  }

  /** Stage 2: candidates from each channel, and which dense strategy ran. */
  async function candidates(
    query: AnalysedQuery,
    options: RetrievalOptions,
    perChannel: number,
    warnings: RetrievalWarning[],
  ): Promise<{ found: IndexCandidate[]; dense: 'knn' | 'rerank' | 'off'; queryVector: Float32Array | undefined; expansion: Map<string, number> }> {
    const filter = {
      kinds: options.kinds,
      scope: options.scope,
      agent: options.agent,
      user: options.user,
      viewer: options.viewer,
      since: options.since,
      until: options.until,
      sources: options.sources,
    }
    let dense: 'knn' | 'rerank' | 'off' = 'off'
    if (embedder && index.capabilities.vectors !== false && settings.dense !== 'off' && settings.denseWeight > 0 && query.text !== '') {
      if (settings.dense === 'knn') dense = 'knn'
      else if (settings.dense === 'rerank') dense = 'rerank'
      // Word-vector means are a topical signal, not a retriever: measured on LoCoMo, they help as a
      // re-ranking of what the words found and would flood a KNN with merely on-topic units.
      else if (wordVectorEmbedder) dense = 'rerank'
      else dense = (await indexSize()) <= settings.denseKnnMaxUnits ? 'knn' : 'rerank'
      // Re-ranking embeds the candidates' texts at query time: free for the built-in embedder, a
      // network round trip per query for a remote one — not on the hot path (principle 7).
      if (dense === 'rerank' && embedder.kind !== 'offline') {
        warnings.push({ type: 'dense_skipped', reason: `the index is larger than retrieval.denseKnnMaxUnits (${settings.denseKnnMaxUnits}) and re-ranking with the ${embedder.kind} embedder would embed every candidate per query` })
        dense = 'off'
      }
    }
    let queryVector: Float32Array | undefined
    if (dense !== 'off' && embedder) {
      try {
        ;[queryVector] = await embedder.embed([query.text], 'query')
      } catch (error) {
        warnings.push({ type: 'embed_failed', message: `dense channel skipped: ${describeError(error)}` })
        dense = 'off'
      }
    }
    const fieldWeights = { near: settings.nearWeight, far: settings.farWeight, related: settings.relatedWeight }
    const limit = dense === 'rerank' ? Math.max(perChannel, rerankCandidates) : perChannel
    const found = await index.search({
      ...filter,
      text: query.lexicalText === '' ? undefined : query.lexicalText,
      terms: query.indexTerms.length > 0 ? query.indexTerms : undefined,
      fieldWeights,
      vector: dense === 'knn' ? queryVector : undefined,
      limit,
    })
    const expansion = await expansionOf(query, warnings)
    if (expansion.size === 0) return { found, dense, queryVector, expansion }
    // FTS5 cannot weigh query terms: the expansion terms run as a second query only to find more
    // candidates; their per-term weighted BM25 is computed over the candidates (expansionBonus).
    const expanded = await index.search({ ...filter, terms: [...expansion.keys()], fieldWeights, limit })
    const byId = new Map(found.map((candidate) => [candidate.id, candidate]))
    for (const extra of expanded) if (!byId.has(extra.id)) byId.set(extra.id, { ...extra, lexical: 0 })
    return { found: [...byId.values()], dense, queryVector, expansion }
  }

  /**
   * Per-term weighted BM25 of the expansion terms over the candidates' own words: Σ_t w_t · idf_t ·
   * tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), w_t = expansionWeight × cosine (the prototype's
   * weighting, which one FTS5 query cannot express). Document frequencies from the index.
   */
  async function expansionBonus(scored: Scored[], expansion: Map<string, number>): Promise<Map<Scored, number>> {
    const out = new Map<Scored, number>()
    if (expansion.size === 0 || scored.length === 0 || !index.documentFrequencies) return out
    const df = await index.documentFrequencies([...expansion.keys()])
    const total = Math.max(await indexSize(), 1)
    const idf = new Map<string, number>()
    for (const [term, cosine] of expansion) {
      const n = df.get(term) ?? 0
      if (n === 0) continue
      idf.set(term, settings.expansionWeight * cosine * Math.max(1e-6, Math.log((total - n + 0.5) / (n + 0.5))))
    }
    if (idf.size === 0) return out
    const docs = scored.map((s) => allTerms(s.unit.text))
    const avg = Math.max(1, docs.reduce((sum, d) => sum + d.length, 0) / docs.length)
    const k1 = 1.2
    const b = 0.75
    scored.forEach((s, i) => {
      const doc = docs[i] as string[]
      let bonus = 0
      const counts = new Map<string, number>()
      for (const term of doc) if (idf.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1)
      for (const [term, tf] of counts) bonus += (idf.get(term) as number) * (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / avg))
      if (bonus > 0) out.set(s, bonus)
    })
    return out
  }

  /** Stage 2b (large indexes): dense similarity of the best lexical candidates only. */
  async function rerankDense(scored: Scored[], queryVector: Float32Array, warnings: RetrievalWarning[]): Promise<boolean> {
    if (!embedder) return false
    const subset = [...scored].sort((a, b) => (b.lexical ?? 0) - (a.lexical ?? 0)).slice(0, rerankCandidates)
    try {
      // Word vectors of a text never change: embed only the texts not seen before.
      const vectors: Array<Float32Array | undefined> = subset.map((s) => (memoisedVectors ? vectorMemo.peek(s.unit.hash) : undefined))
      const missing = subset.flatMap((_, i) => (vectors[i] === undefined ? [i] : []))
      if (missing.length > 0) {
        const fresh = await embedder.embed(missing.map((i) => (subset[i] as Scored).unit.text), 'document')
        missing.forEach((i, k) => {
          const vector = fresh[k]
          vectors[i] = vector
          if (vector !== undefined && memoisedVectors) vectorMemo.set((subset[i] as Scored).unit.hash, vector)
        })
      }
      const cosines = subset.map((_, i) => {
        const vector = vectors[i]
        return vector ? cosineSimilarity(queryVector, vector) : undefined
      })
      // Cosines of one query against similar texts sit in a narrow band; what ranks is how far a
      // candidate stands above the others: (cos − mean) / (max − mean), clipped at 0.
      const present = cosines.filter((c): c is number => c !== undefined)
      const mean = present.reduce((sum, c) => sum + c, 0) / Math.max(1, present.length)
      const spread = Math.max(...present, mean) - mean
      subset.forEach((s, i) => {
        const cosine = cosines[i]
        // With nothing to compare against (one candidate, or all alike) the cosine itself is what is known.
        if (cosine !== undefined) s.dense = spread > 1e-9 ? Math.max(0, (cosine - mean) / spread) : Math.max(0, cosine)
      })
      return true
    } catch (error) {
      warnings.push({ type: 'embed_failed', message: `dense re-ranking skipped: ${describeError(error)}` })
      return false
    }
  }

  /**
   * Stage 5: personalized PageRank around the best candidates; may add linked units. Returns the
   * graph's size and the nodes at either end of a link edge.
   */
  async function diffuse(scored: Scored[], options: RetrievalOptions, since: number | undefined, until: number | undefined): Promise<{ nodes: number; linked: Set<string> }> {
    const linked = new Set<string>()
    const seeds = [...scored].sort((a, b) => b.score - a.score).slice(0, settings.graphSeeds)
    if (seeds.length === 0) return { nodes: 0, linked }
    const byId = new Map(scored.map((s) => [s.unit.id, s]))
    const nodes = new Map<string, Scored>(seeds.map((s) => [s.unit.id, s]))
    const edges: Array<{ a: string; b: string; weight: number }> = []

    // Explicit [[links]] of the seeds, resolved in one batched read.
    const wanted = new Map<string, string[]>()
    for (const seed of seeds) {
      for (const link of (seed.unit.links ?? []).slice(0, LINKS_PER_SEED)) wanted.set(`${seed.unit.id}\u0000${link}`, linkTargets(link, seed.unit.source, seed.unit.agent ?? options.agent ?? options.viewer?.agent))
    }
    // Diffusion spreads along what memory links on purpose. Among candidates that link nothing
    // (conversation turns), similarity edges alone were measured to add nothing on either data set
    // (LoCoMo R@10 78.0 vs 77.9, BEAM dev 42.4 vs 42.7; decision 0029) and cost a pass over every pair.
    if (wanted.size === 0) return { nodes: nodes.size, linked }
    if (wanted.size > 0) {
      const guesses = [...new Set([...wanted.values()].flat())].filter((id) => !byId.has(id))
      const fetched = new Map((await index.get(guesses)).map((unit) => [unit.id, unit]))
      for (const [key, targets] of wanted) {
        const from = key.slice(0, key.indexOf('\u0000'))
        for (const id of targets) {
          let node = byId.get(id) ?? nodes.get(id)
          if (!node) {
            const unit = fetched.get(id)
            if (!unit || !passesFilter(unit, options, since, until)) continue
            node = { unit, terms: zeroTerms(), score: 0 }
          }
          if (node.unit.id === from) break
          nodes.set(node.unit.id, node)
          edges.push({ a: from, b: node.unit.id, weight: 1 })
          linked.add(from).add(node.unit.id)
          break
        }
      }
    }

    // Strong-similarity edges among the nodes (content-word cosine; cheap on a few dozen texts).
    const list = [...nodes.values()]
    for (const node of list) node.words ??= wordsOf(node.unit)
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i] as Scored
        const b = list[j] as Scored
        const similarity = setCosine(a.words as Set<string>, b.words as Set<string>)
        if (similarity >= settings.similarityEdge) edges.push({ a: a.unit.id, b: b.unit.id, weight: similarity })
      }
    }
    if (edges.length === 0) return { nodes: nodes.size, linked }

    const personalization = new Map(seeds.map((s) => [s.unit.id, Math.max(s.terms.fused, 1e-6)]))
    const rank = personalizedPageRank({ nodes: [...nodes.keys()], edges, personalization })
    let max = 0
    for (const value of rank.values()) if (value > max) max = value
    if (max === 0) return { nodes: nodes.size, linked }
    for (const [id, value] of rank) {
      const node = nodes.get(id) as Scored
      node.terms.graph = settings.graphWeight * (value / max)
      if (!byId.has(id)) {
        // A linked unit reached only through the graph: its own activation terms count too.
        scored.push(node)
        byId.set(id, node)
      }
    }
    return { nodes: nodes.size, linked }
  }

  /**
   * Stage 5b: facts that change (decision 0078). When a speaker gives, later, a new value to a
   * subject they gave a value before — "the login API now answers in 120 ms" after "180 ms", "we
   * moved to Berlin" after "I live in Lisbon" — the newer statement is what holds now: it moves just
   * above the older one, which stays in the list, right below, with its date (the seed's prediction
   * error, at retrieval time). "Changed" is read, not guessed from shared words: both messages are
   * read as (subject, value) clauses (text/value-readings.ts) and the later one has a reading of
   * the same subject with a different value of the same type, and the question names the subject
   * that changed (its words, or for a subject a verb names, the words it is asked with: "where do I
   * live" for a residence) — the newer statement needs no other words in common with the older one
   * or with the question. Beside it the restatement of decision 0029 stays: a newer message that
   * matches every query word the older matches, their content words overlapping (cosine ≥
   * restatementSimilarity), matching the question about as well — it catches a value the reader
   * has no type for (decision 0078: without it BEAM's upd>stale is 18 of 22, with both 20).
   * Among the best CHANGE_DEPTH candidates.
   */
  function changedValuesFirst(scored: Scored[], queryStems: ReadonlySet<string>, queryWords: readonly string[]): void {
    if (settings.restatementSimilarity >= 1) return
    const matched = new Map<Scored, string[]>()
    const matchedOf = (s: Scored): string[] => {
      let words = matched.get(s)
      if (!words) {
        s.words ??= wordsOf(s.unit)
        const own = s.words
        words = queryWords.filter((word) => own.has(word))
        matched.set(s, words)
      }
      return words
    }
    const restated = (earlier: Scored, later: Scored): boolean => {
      if (queryWords.length < 2 || later.score < RESTATEMENT_SCORE_RATIO * earlier.score) return false
      const before = matchedOf(earlier)
      if (before.length < 2) return false
      const now = new Set(matchedOf(later))
      // Whether the later only asks is read last: it splits the whole text, the tests before are set look-ups.
      return before.every((word) => now.has(word)) && setCosine(earlier.words as Set<string>, later.words as Set<string>) >= settings.restatementSimilarity && !onlyQuestions(later.unit.text)
    }
    const depth = Math.min(scored.length, CHANGE_DEPTH)
    const speakerOf = (s: Scored): string | undefined => (s.unit.kind === 'message' && s.unit.meta?.role !== 'assistant' ? String(s.unit.meta?.name ?? s.unit.meta?.role ?? '') : undefined)
    const readingsOf = (s: Scored): ValueReading[] => readingsMemo.get(s.unit.hash, () => valueReadings(s.unit.text))
    for (let j = 1; j < depth; j++) {
      const later = scored[j] as Scored
      const speaker = speakerOf(later)
      if (speaker === undefined || later.score === Number.NEGATIVE_INFINITY) continue
      for (let i = 0; i < j; i++) {
        const earlier = scored[i] as Scored
        if (speakerOf(earlier) !== speaker || earlier.unit.createdAt >= later.unit.createdAt) continue
        const change = changedValue(readingsOf(earlier), readingsOf(later))
        // A message of many clauses may change a value the question does not ask about.
        const changed = change !== undefined && [...subjectStems(change)].some((word) => queryStems.has(word))
        if (!changed && !restated(earlier, later)) continue
        scored.splice(j, 1)
        scored.splice(i, 0, later)
        later.score = Math.max(later.score, earlier.score)
        break
      }
    }
  }

  let related: ((a: string, b: string) => boolean) | undefined
  /**
   * The rules a filter lists, kept until the index's stamp of rules changes (decision 0090): every
   * turn about to be answered read up to RULES_READ of them again, ~2.5 ms at 100k units, though
   * a person sets a rule once in many turns. Without a stamp (a backend that cannot tell) they are
   * listed every time.
   */
  const rulesRead = new Map<string, { stamp: string; rules: ReadRule[] }>()
  /** The rules `filter` lists, each read for its condition (readRules: one whose condition names nothing is left out). */
  async function rulesListed(filter: IndexFilter & { kinds: UnitKind[] }): Promise<ReadRule[]> {
    const read = async (): Promise<ReadRule[]> => readRules(await index.list(filter, { limit: RULES_READ }), settings.maxQueryTerms, conditionMemo)
    if (!index.stamp) return await read()
    const key = JSON.stringify(filter)
    const stamp = await index.stamp(filter.kinds)
    const known = rulesRead.get(key)
    if (known?.stamp === stamp) return known.rules
    const rules = await read()
    // A handful of viewers ask; a process serving many keeps the latest.
    if (rulesRead.size >= RULE_LISTS_KEPT) rulesRead.clear()
    rulesRead.set(key, { stamp, rules })
    return rules
  }
  /**
   * Stage 6c, for a turn about to be answered (`answering`): the rules that apply to it
   * (`rulesThatApply`) first, marked `applies` — priming packs them in their own small share. A
   * plain search leaves them where their words put them: it ranks what is about its words.
   */
  async function withRulesThatApply(
    kept: Scored[],
    query: AnalysedQuery,
    options: RetrievalOptions,
    since: number | undefined,
    until: number | undefined,
    excluded: (unit: StoredUnit) => boolean,
  ): Promise<Scored[]> {
    if (options.answering !== true || (options.kinds !== undefined && !options.kinds.includes('rule')) || query.indexTerms.length === 0) return kept
    const filter = { kinds: ['rule' as const], scope: options.scope, agent: options.agent, user: options.user, viewer: options.viewer, sources: options.sources }
    // Read for their conditions, then filtered: the same rules as filtered then read (each is read alone).
    const rules = (await rulesListed(filter)).filter(({ unit }) => passesFilter(unit, options, since, until) && !excluded(unit))
    if (rules.length === 0) return kept
    related ??= loadWordVectors ? wordRelatedness(loadWordVectors(), DEFAULT_EXPANSION_OPTIONS.minCosine) : undefined
    const read = rulesThatApply(rules, query, related)
    if (read.length === 0) return kept
    // Listed maybe turns ago: the units as they are now (their access counts), in the order chosen.
    const fresh = new Map((await index.get(read.map((unit) => unit.id))).map((unit) => [unit.id, unit]))
    const applying = read.map((unit) => fresh.get(unit.id) ?? unit)
    const ids = new Set(applying.map((unit) => unit.id))
    const score = kept[0]?.score ?? 1
    return [...applying.map((unit): Scored => ({ unit, terms: zeroTerms(), score, applies: true })), ...kept.filter((s) => !ids.has(s.unit.id))]
  }

  return {
    settings,
    async search(queryText, options = {}) {
      const started = performance.now()
      if (typeof queryText !== 'string') throw invalid('The query must be a string.', 'Pass the words to search for.')
      const limit = options.limit ?? 10
      if (!Number.isInteger(limit) || limit < 1) throw invalid(`limit must be a whole number ≥ 1, got ${JSON.stringify(options.limit)}.`, 'Pass how many hits you want.')
      if (options.minScore !== undefined && !Number.isFinite(options.minScore)) throw invalid(`minScore must be a number, got ${options.minScore}.`, 'Pass a score such as 0.3, or leave it out.')
      const asOf = instant(options.asOf, 'asOf', clock.now())
      const asOfMs = asOf.getTime()
      const since = options.since === undefined ? undefined : instant(options.since, 'since', asOf).getTime()
      const until = options.until === undefined ? undefined : instant(options.until, 'until', asOf).getTime()
      const warnings: RetrievalWarning[] = []

      // Stage 1: query analysis.
      const participants = (settings.speakerBoost > 0 || settings.informationWeight > 0) && index.participants ? await index.participants(options.agent) : []
      const query = analyseQuery(queryText, settings.maxQueryTerms, participants)
      const empty = (dense: 'knn' | 'rerank' | 'off'): RetrievalResult => ({
        hits: [],
        belowThreshold: false,
        warnings,
        stats: { terms: query.terms, candidates: 0, dense, graphNodes: 0, ms: performance.now() - started },
      })
      if (query.terms.length === 0 && query.indexTerms.length === 0) return empty('off')

      // Stage 2: candidates. Exclusions and the duplicate filter remove some later, so ask for more.
      const excludeIds = new Set(options.excludeIds ?? [])
      const excludeMessages = new Set([...(options.excludeMessageIds ?? [])].map(String))
      const perChannel = Math.max(settings.candidates, Math.ceil(limit * CANDIDATES_PER_HIT)) + excludeIds.size + Math.min(excludeMessages.size, 200)
      const { found, dense, queryVector, expansion } = await candidates(query, options, perChannel, warnings)
      const excluded = (unit: StoredUnit): boolean => {
        if (excludeIds.has(unit.id)) return true
        // A message in the conversation already is not recalled, nor a standing instruction it sets (the agent reads it there).
        if (excludeMessages.size === 0 || (unit.kind !== 'message' && unit.kind !== 'summary' && unit.meta?.instruction !== true) || unit.provenance.length === 0) return false
        return unit.provenance.every((id) => excludeMessages.has(id))
      }
      if (found.length === 0) {
        // No memory shares the request's words; a standing instruction may still apply to it.
        const rules = await withRulesThatApply([], query, options, since, until, excluded)
        return rules.length === 0 ? empty(dense) : { ...empty(dense), hits: rules.map(hitOf) }
      }
      const units = await candidateUnits(index, found)
      const scored: Scored[] = []
      for (const candidate of found) {
        const unit = units.get(candidate.id)
        if (!unit || excluded(unit)) continue
        scored.push({ unit, lexical: candidate.lexical, dense: candidate.dense, terms: zeroTerms(), score: 0 })
      }
      for (const [s, bonus] of await expansionBonus(scored, expansion)) s.lexical = (s.lexical ?? 0) + bonus
      let denseRan = dense === 'knn'
      if (dense === 'rerank' && queryVector) denseRan = await rerankDense(scored, queryVector, warnings)

      // Stage 3: fusion.
      const fused = fuseScores(
        scored.map((s) => ({ id: s.unit.id, lexical: s.lexical, dense: s.dense })),
        { method: settings.fusion, lexicalWeight: settings.lexicalWeight, denseWeight: settings.denseWeight, rrfK: settings.rrfK, channels: { lexical: query.lexicalText !== '', dense: denseRan } },
      )
      let maxLexical = 0
      for (const s of scored) if ((s.lexical ?? 0) > maxLexical) maxLexical = s.lexical ?? 0

      // Stage 3b: session context. A turn in a session that is about the question is a better
      // answer than the same words in passing: each message gains a share of the best lexical
      // match in its session (max-normalised; the session's best passage, as in MaxP document
      // ranking). A sum over the session's matches was measured first and loses: it rewards long
      // sessions that mention the words in passing (decision 0012, second 2026-11-23 addendum).
      const sessionShare = new Map<string, number>()
      if (settings.sessionWeight > 0 && maxLexical > 0) {
        for (const s of scored) {
          if (s.unit.kind !== 'message' || (s.lexical ?? 0) <= 0) continue
          const share = (s.lexical as number) / maxLexical
          if (share > (sessionShare.get(s.unit.source) ?? 0)) sessionShare.set(s.unit.source, share)
        }
      }

      // Stage 4: activation terms.
      const speaker = query.named.length === 1 ? query.named[0] : undefined
      const participantWords = new Set(participants.flatMap((name) => name.toLowerCase().split(/\s+/)))
      // The prior does not count participants' names: a new participant changes it.
      const participantKey = [...participantWords].sort().join(' ')
      if (participantKey !== informationParticipants) {
        informationMemo.clear()
        informationParticipants = participantKey
      }
      // …unless the question is about them ("the hotel you recommended"): then they are the evidence (agent-said.ts).
      const aboutTheAgent = asksWhatTheAgentSaid(queryText)
      const activate = (s: Scored): void => {
        s.terms.lexical = maxLexical > 0 && s.lexical !== undefined ? Math.max(0, s.lexical) / maxLexical : 0
        s.terms.dense = s.dense ?? 0
        s.terms.fused = fused.get(s.unit.id) ?? 0
        if (s.unit.kind === 'message') s.terms.fused += settings.sessionWeight * (sessionShare.get(s.unit.source) ?? 0)
        s.terms.recency = recencyTerm(s.unit.createdAt, asOf, settings.recencyWeight, settings.recencyHalfLifeDays)
        s.terms.frequency = frequencyTerm(s.unit.accessCount, settings.frequencyWeight)
        // One participant named ("What did Caroline paint?"): her own words are the likely answer.
        if (speaker !== undefined && s.unit.kind === 'message' && s.unit.meta?.name === speaker) s.terms.fused *= 1 + settings.speakerBoost
        // Of two messages that match alike, the one that says something is the better answer.
        if (s.unit.kind === 'message') {
          s.terms.information = settings.informationWeight === 0 ? 1 : informationMemo.get(s.unit.hash, () => informationFactor(s.unit.text, settings.informationWeight, participantWords))
          s.terms.fused *= s.terms.information
          // What the user said is the evidence; the agent's own answers are its conclusions.
          if (s.unit.meta?.role === 'assistant' && !aboutTheAgent) s.terms.fused *= settings.agentMessageWeight
        }
        // A fact a newer one replaced is history: found, but below what holds now (stage 6b).
        s.terms.history = s.unit.kind === 'knowledge' && supersededAt(s.unit, asOfMs) ? SUPERSEDED_SCORE_FACTOR : 1
        s.score = (s.terms.fused + s.terms.recency + s.terms.frequency) * s.terms.history
      }
      scored.forEach(activate)

      // Stage 5: graph diffusion.
      let graphNodes = 0
      if ((options.graph ?? settings.graph) && settings.graphWeight > 0) {
        const before = scored.length
        const diffusion = await diffuse(scored, options, since, until)
        graphNodes = diffusion.nodes
        for (let i = before; i < scored.length; i++) {
          const s = scored[i] as Scored
          if (excluded(s.unit)) s.score = Number.NEGATIVE_INFINITY
          else {
            const graph = s.terms.graph
            activate(s)
            s.terms.graph = graph
          }
        }
        for (const s of scored) if (s.score !== Number.NEGATIVE_INFINITY) s.score = (s.terms.fused + s.terms.recency + s.terms.frequency + s.terms.graph) * s.terms.history
        capSimilarityLift(scored, diffusion.linked)
      }

      // Stage 6: diversification — a repeat of a better hit adds nothing the agent has not seen.
      scored.sort((a, b) => b.score - a.score || a.unit.id.localeCompare(b.unit.id))
      changedValuesFirst(scored, new Set(query.indexTerms), query.contentWords)
      let kept: Scored[] = []
      const duplicates = createNearDuplicateFilter(settings.duplicateSimilarity)
      for (const s of scored) {
        if (s.score === Number.NEGATIVE_INFINITY) continue
        s.words ??= wordsOf(s.unit)
        // A superseded fact often repeats its successor but for the value that changed: it is the
        // history of that value, never a repeat to drop.
        const history = s.terms.history !== 1
        if (!history && duplicates.isDuplicate(s.words)) continue
        if (!history) duplicates.keep(s.words)
        kept.push(s)
        if (kept.length >= limit) break
      }
      // Stage 6b: superseded facts right below their successors.
      kept = supersededBelowSuccessors(kept)
      // Stage 6c: for a turn about to be answered, the standing instructions that apply to it (standing-instructions.ts).
      kept = await withRulesThatApply(kept, query, options, since, until, excluded)

      // Stage 7: threshold, never emptying the list silently.
      let hits = kept
      let belowThreshold = false
      if (options.minScore !== undefined) {
        const above = kept.filter((s) => s.score >= (options.minScore as number))
        if (above.length > 0) hits = above
        else if (kept.length > 0) belowThreshold = true
      }

      const result: RetrievalResult = {
        hits: hits.map(hitOf),
        belowThreshold,
        warnings,
        stats: { terms: query.terms, candidates: found.length, dense: denseRan ? dense : 'off', graphNodes, ms: 0 },
      }
      // Stage 8: the Hebbian term — every recall strengthens what it recalled (one batched write).
      if (options.recordAccess !== false && result.hits.length > 0) await index.recordAccess(result.hits.map((h) => h.unit.id), clock.now().toISOString())
      result.stats.ms = performance.now() - started
      return result
    },
  }
}
