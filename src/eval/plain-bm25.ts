/**
 * The reference beside every evaluation: plain BM25 over turns (k1 1.2, b 0.75, Lucene idf), stop
 * words removed, no stemming, no expansion — FORMAT.md's "plain BM25 over turns". Computed in the
 * same run so that the two columns always share data and protocol.
 */
import { STOP_WORDS, termCounts, words } from '../text/analyse.ts'

export interface PlainBm25 {
  /** Turn ids best first (only turns sharing a word with the query; ties → earlier turn). */
  rank(query: string, limit: number): string[]
}

const plainTerms = (text: string): string[] => words(text).filter((w) => !STOP_WORDS.has(w))

/** A BM25 index over `turns` (in conversation order). */
export function createPlainBm25(turns: ReadonlyArray<{ id: string; text: string }>, k1 = 1.2, b = 0.75): PlainBm25 {
  const postings = new Map<string, Array<[number, number]>>()
  const lengths: number[] = []
  turns.forEach((turn, doc) => {
    const counts = termCounts(plainTerms(turn.text))
    let length = 0
    for (const [term, tf] of counts) {
      const list = postings.get(term) ?? []
      if (list.length === 0) postings.set(term, list)
      list.push([doc, tf])
      length += tf
    }
    lengths.push(length)
  })
  const n = turns.length
  const avg = lengths.reduce((a, x) => a + x, 0) / Math.max(1, n)
  return {
    rank(query, limit) {
      const scores = new Float64Array(n)
      for (const [term, qtf] of termCounts(plainTerms(query))) {
        const list = postings.get(term)
        if (!list) continue
        const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5))
        for (const [doc, tf] of list) scores[doc] = (scores[doc] as number) + qtf * idf * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * (lengths[doc] as number)) / avg)))
      }
      const hits: number[] = []
      for (let i = 0; i < n; i++) if ((scores[i] as number) > 0) hits.push(i)
      hits.sort((x, y) => (scores[y] as number) - (scores[x] as number) || x - y)
      return hits.slice(0, limit).map((i) => (turns[i] as { id: string }).id)
    },
  }
}

/**
 * The baseline's context for a budget: best turns first while they fit (characters / 4), as
 * `Speaker: text` lines; a turn that does not fit is skipped.
 */
export function packPlain(turnsById: ReadonlyMap<string, { speaker: string; text: string }>, ranked: readonly string[], budget: number): string {
  const max = budget * 4
  const lines: string[] = []
  let used = 0
  for (const id of ranked) {
    const turn = turnsById.get(id)
    if (!turn) continue
    const line = `${turn.speaker}: ${turn.text.replace(/\s+/g, ' ').trim()}`
    if (used + line.length + 1 > max) continue
    lines.push(line)
    used += line.length + 1
  }
  return lines.join('\n')
}
