/**
 * Okapi BM25 over a small in-memory corpus (the episodes and activity of a recall window), so that
 * recall ranks by how well each record matches rather than by whether a substring occurs.
 *
 * Tokens are lowercased NFKC letter/digit runs; a trailing plural `s` is folded so "deploys" finds
 * "deploy". Scripts written without spaces (Chinese, Japanese) are split into overlapping
 * character pairs, the usual way to index them without a dictionary.
 */

const STOPWORDS = new Set(
  'a an and are as at be but by did do does for from had has have he her his i if in is it its me my no not of on or our she so than that the their them then there these they this to was we were what when where which who why will with you your'.split(
    ' ',
  ),
)

const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u

function fold(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1)
  return word
}

/** The terms of `text` for ranking (stopwords dropped, plurals folded, CJK as bigrams). */
export function tokenize(text: string, options: { keepStopwords?: boolean } = {}): string[] {
  const runs = text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? []
  const terms: string[] = []
  for (const run of runs) {
    if (UNSPACED.test(run)) {
      const chars = [...run]
      if (chars.length === 1) terms.push(run)
      for (let i = 0; i + 1 < chars.length; i++) terms.push(`${chars[i]}${chars[i + 1]}`)
      continue
    }
    if (!options.keepStopwords && STOPWORDS.has(run)) continue
    terms.push(fold(run))
  }
  return terms
}

/** Scores documents against a query with BM25 (k1 = 1.2, b = 0.75). */
export function bm25Scores(query: string, documents: string[]): number[] {
  // A query of stopwords only ("what did we do") still deserves an answer: keep them then.
  const keepStopwords = tokenize(query).length === 0
  const queryTerms = [...new Set(tokenize(query, { keepStopwords }))]
  if (queryTerms.length === 0 || documents.length === 0) return documents.map(() => 0)
  const docs = documents.map((text) => {
    const counts = new Map<string, number>()
    const terms = tokenize(text, { keepStopwords })
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
    return { counts, length: terms.length }
  })
  const averageLength = docs.reduce((sum, doc) => sum + doc.length, 0) / docs.length || 1
  const k1 = 1.2
  const b = 0.75
  const idf = new Map<string, number>()
  for (const term of queryTerms) {
    const containing = docs.reduce((n, doc) => n + (doc.counts.has(term) ? 1 : 0), 0)
    // The "+1" form never goes negative, so a term found almost everywhere still counts a little.
    idf.set(term, Math.log(1 + (docs.length - containing + 0.5) / (containing + 0.5)))
  }
  return docs.map((doc) => {
    let score = 0
    for (const term of queryTerms) {
      const frequency = doc.counts.get(term) ?? 0
      if (frequency === 0) continue
      score += (idf.get(term) ?? 0) * ((frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * doc.length) / averageLength)))
    }
    return score
  })
}
