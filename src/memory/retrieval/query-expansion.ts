/**
 * Query expansion by word vectors: each content word of a question brings its nearest words among
 * those the memory holds ("instruments" → "violin", "guitar"), down-weighted by their similarity.
 * A question rarely uses the words of the turn that answers it; WordNet (related-words.ts) covers
 * is-a relations at index time, this covers everything else that co-occurs in text.
 *
 * Candidates are the vector vocabulary words whose stem the index holds, so an expansion term
 * always matches something. Neighbour lists are cached per word (bounded) until the vocabulary changes.
 */
import type { WordVectors } from '../../llm/embedders/glove.ts'
import { STOP_WORDS, stem } from '../../text/analyse.ts'

export interface ExpansionOptions {
  /** Minimum cosine of a neighbour (0.5). */
  minCosine: number
  /** Neighbours kept per query word (10). */
  perWord: number
  /** Only the this-many most frequent words of the vector vocabulary are candidates (bounds the cost per word). */
  maxRank: number
}

/** Query words whose neighbours are remembered (a list is at most `perWord` pairs). */
const NEIGHBOUR_MEMO_LIMIT = 20_000

export const DEFAULT_EXPANSION_OPTIONS: Readonly<ExpansionOptions> = Object.freeze({ minCosine: 0.5, perWord: 10, maxRank: 100_000 })

export interface QueryExpander {
  /** Tell the expander which stems the index holds (cheap when unchanged). */
  setVocabulary(stems: ReadonlySet<string>): void
  /**
   * Expansion stems of `queryWords` (lowercase, unstemmed) with their cosine (the best over the
   * query words), leaving out stems in `exclude` (the query's own).
   */
  expand(queryWords: readonly string[], exclude: ReadonlySet<string>): Map<string, number>
}

/** An expander over `vectors`. */
export function createQueryExpander(vectors: WordVectors, options: Partial<ExpansionOptions> = {}): QueryExpander {
  const { minCosine, perWord, maxRank } = { ...DEFAULT_EXPANSION_OPTIONS, ...options }
  const d = vectors.dimensions
  let vocabulary: ReadonlySet<string> | undefined
  let vocabularySize = -1
  let candidateRows: Int32Array = new Int32Array(0)
  let candidateStems: string[] = []
  let candidateScales: Float64Array = new Float64Array(0)
  const neighbours = new Map<string, Array<[string, number]>>()
  const limit = Math.min(maxRank, vectors.size)
  const components = vectors.components

  function neighboursOf(word: string): Array<[string, number]> {
    const cachedList = neighbours.get(word)
    if (cachedList) return cachedList
    const row = vectors.row(word)
    const list: Array<[string, number]> = []
    if (row !== undefined) {
      const own = stem(word)
      const at = row * d
      const scale = vectors.scale(row)
      const best = new Map<string, number>()
      for (let i = 0; i < candidateRows.length; i++) {
        const other = (candidateRows[i] as number) * d
        let dot = 0
        for (let j = 0; j < d; j++) dot += (components[at + j] as number) * (components[other + j] as number)
        dot *= scale * (candidateScales[i] as number)
        if (dot < minCosine) continue
        const candidate = candidateStems[i] as string
        if (candidate === own) continue
        if (dot > (best.get(candidate) ?? 0)) best.set(candidate, dot)
      }
      list.push(...[...best].sort((a, b) => b[1] - a[1]).slice(0, perWord))
    }
    if (neighbours.size >= NEIGHBOUR_MEMO_LIMIT) neighbours.clear()
    neighbours.set(word, list)
    return list
  }

  return {
    setVocabulary(stems) {
      if (stems === vocabulary || (stems.size === vocabularySize && vocabulary !== undefined && [...stems].every((s) => vocabulary?.has(s)))) return
      vocabulary = stems
      vocabularySize = stems.size
      const rows: number[] = []
      const list: string[] = []
      for (let row = 0; row < limit; row++) {
        const word = vectors.word(row)
        if (!/^[a-z]+$/.test(word) || STOP_WORDS.has(word)) continue
        const s = stem(word)
        if (stems.has(s)) {
          rows.push(row)
          list.push(s)
        }
      }
      candidateRows = Int32Array.from(rows)
      candidateScales = Float64Array.from(rows, (row) => vectors.scale(row))
      candidateStems = list
      neighbours.clear()
    },
    expand(queryWords, exclude) {
      const out = new Map<string, number>()
      for (const word of new Set(queryWords)) {
        for (const [candidate, cosine] of neighboursOf(word)) {
          if (exclude.has(candidate)) continue
          if (cosine > (out.get(candidate) ?? 0)) out.set(candidate, cosine)
        }
      }
      return out
    },
  }
}
