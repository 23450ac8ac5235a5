/**
 * Query analysis, the first stage of retrieval: from what a person or agent typed to the words
 * worth searching for.
 *
 * Function words are dropped before the full-text query is built. They are not only noise for
 * ranking (BM25 gives them almost no weight); they are the expensive part: "the" occurs in most
 * units, and an OR query that contains it makes SQLite score nearly every row. Measured on 100k
 * synthetic units (scripts/bench/recall.ts): a 10-word question took 137 ms p50 with them and
 * 1.5 ms without. A query of function words only ("what did we do?") keeps them, so it still
 * gets an answer.
 */
import { headAndTail } from '../../core/excerpt.ts'
import { words } from '../../llm/embedders/text-features.ts'
import { QUESTION_WORDS, STOP_WORDS as INDEX_STOP_WORDS, stem, words as analysedWords } from '../../text/analyse.ts'

/** English function words and question fillers: they occur everywhere, so they carry no signal. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing ' +
    'down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more ' +
    'most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs ' +
    'them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves also may might must shall let lets get got ok okay yes yeah hi hello hey please thanks thank tell know ' +
    'like really just well still even ever many much said say says'
  ).split(' '),
)

export interface AnalysedQuery {
  /** The query as given, trimmed. */
  text: string
  /** Content words for the lexical channel, distinct, in query order (after any cut to the longest). */
  terms: string[]
  /** The text handed to the full-text index (the terms joined by spaces). */
  lexicalText: string
  /** True when the query had only function words and they were kept. */
  onlyStopWords: boolean
  /** Index terms (stems, the index's own analysis), a term repeated as often as it occurs. */
  indexTerms: string[]
  /** Participants (speaker names known to the index) the query names. */
  named: string[]
  /** The words behind the content index terms (not stems, no question words, no names): what query expansion starts from. */
  contentWords: string[]
}

/**
 * Analyse `text`. At most `maxTerms` words are kept; when there are more, the longest win (long
 * words tend to be the rare, specific ones, and a pasted paragraph must not become a 200-way OR).
 */
export function analyseQuery(text: string, maxTerms: number, participants: readonly string[] = []): AnalysedQuery {
  const all = words(text)
  const seen = new Set<string>()
  const content: string[] = []
  for (const word of all) {
    if (STOP_WORDS.has(word) || seen.has(word)) continue
    seen.add(word)
    content.push(word)
  }
  const onlyStopWords = content.length === 0 && all.length > 0
  let terms = onlyStopWords ? [...new Set(all)] : content
  if (terms.length > maxTerms) {
    const keep = new Set(
      terms
        .map((word, i) => ({ word, i }))
        .sort((a, b) => b.word.length - a.word.length || a.i - b.i)
        .slice(0, maxTerms)
        .map((entry) => entry.word),
    )
    terms = terms.filter((word) => keep.has(word))
  }
  const { indexTerms, named, contentWords } = indexTermsOf(text, maxTerms, participants)
  return { text: text.trim(), terms, lexicalText: terms.join(' '), onlyStopWords, indexTerms, named, contentWords }
}

/**
 * Index terms of a query: the index's analysis (stop words, stems), minus the words that frame a
 * question ("what", "kind", "did") and minus the names of participants it mentions — in a
 * conversation between two people, "Caroline" is in half the turns and says nothing about which;
 * the name is used as a speaker filter instead (see search.ts). When nothing is left, the framing
 * and name words come back, so a query never silently becomes empty.
 */
function indexTermsOf(text: string, maxTerms: number, participants: readonly string[]): { indexTerms: string[]; named: string[]; contentWords: string[] } {
  const all = analysedWords(text)
  const nameWords = new Map<string, string>()
  for (const participant of participants) for (const word of analysedWords(participant)) if (!nameWords.has(word)) nameWords.set(word, participant)
  const named = new Set<string>()
  const content: string[] = []
  const contentWords: string[] = []
  const fallback: string[] = []
  for (const word of all) {
    const participant = nameWords.get(word)
    if (participant !== undefined) named.add(participant)
    if (INDEX_STOP_WORDS.has(word)) continue
    if (participant !== undefined || QUESTION_WORDS.has(word)) {
      fallback.push(stem(word))
      continue
    }
    content.push(stem(word))
    contentWords.push(word)
  }
  let indexTerms = content.length > 0 ? content : fallback.length > 0 ? fallback : all.map(stem)
  if (new Set(indexTerms).size > maxTerms) {
    const keep = new Set([...new Set(indexTerms)].sort((a, b) => b.length - a.length).slice(0, maxTerms))
    indexTerms = indexTerms.filter((term) => keep.has(term))
  }
  const kept = new Set(indexTerms)
  return { indexTerms, named: [...named], contentWords: contentWords.filter((word) => kept.has(stem(word))) }
}

/**
 * The part of `text` recall starts from: all of it up to `maxChars` characters, else its first and
 * last halves of that (a long message usually says what it is about at its start, and asks its
 * question at its end), each cut at a space when one is near.
 */
export function recallText(text: string, maxChars: number): string {
  return headAndTail(text, maxChars, () => '\n…\n')
}

/** Content words of a text as a set (for duplicate detection and similarity edges). */
export function contentWordSet(text: string): Set<string> {
  const out = new Set<string>()
  for (const word of words(text)) if (!STOP_WORDS.has(word)) out.add(word)
  return out
}

/** Cosine similarity of two word sets (|A∩B| / √(|A|·|B|)). */
export function setCosine(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  let shared = 0
  for (const word of small) if (large.has(word)) shared++
  return shared / Math.sqrt(a.size * b.size)
}

/** Jaccard similarity of two word sets. */
export function setJaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  let shared = 0
  for (const word of small) if (large.has(word)) shared++
  return shared / (a.size + b.size - shared)
}
