/**
 * Which query terms a lexical search scores, shared by every backend so that they rank alike
 * (the embedded index in FTS5, PostgreSQL in SQL): the terms, their repetitions, and the pruning
 * of terms so common that scoring them would cost more than they tell.
 */
import { holdsUnspacedLetters, queryTerms as analyseTerms, STOP_WORDS, stem, words } from '../text/analyse.ts'
import { relatedTerms } from '../text/related-words.ts'
import type { IndexQuery, IndexUnit } from './contracts.ts'

/** The full-text row of a unit: analysed terms of its text, its neighbours, and related words. */
export function ftsFields(unit: { text: string; kind: string; context?: IndexUnit['context'] }): [string, string, string, string, string] {
  // The own text keeps its stop words: a query of stop words only ("NOT") must still find it.
  if (unit.context === undefined) {
    // A unit without neighbours (a memory, a summary) is nobody's context: nothing to remember.
    const own = words(unit.text)
    return [own.map(stem).join(' '), '', '', relatedOfWords(unit.text, own), kindToken(unit.kind)]
  }
  const own = ownFields(unit.text)
  return [own.stems, analysedContent(unit.context.near ?? ''), analysedContent(unit.context.far ?? ''), own.related, kindToken(unit.kind)]
}

/*
 * A message's own fields do not change when its row is written again with a new neighbour, and
 * every single-message append writes the two messages before it again: their stems and related
 * words are kept for the last OWN_MEMO_LIMIT texts (related words were looked up word by word again).
 */
const OWN_MEMO_LIMIT = 64
const ownMemo = new Map<string, { stems: string; related: string }>()

function ownFields(text: string): { stems: string; related: string } {
  const memo = ownMemo.get(text)
  if (memo !== undefined) return memo
  const own = analysedLines(text)
  const fields = { stems: own.stems, related: relatedOfWords(text, own.words) }
  if (text.length <= LINE_MEMO_MAX_CHARS) {
    if (ownMemo.size >= OWN_MEMO_LIMIT) ownMemo.delete(ownMemo.keys().next().value as string)
    ownMemo.set(text, fields)
  }
  return fields
}

/*
 * A message is analysed five times when a conversation is indexed: as its own text, and as the
 * near and far context of the messages on either side (context-index.ts). Analysis splits on every
 * character that is not a letter, digit or apostrophe, so a line break always ends a word and the
 * analysis of a text is the analyses of its lines joined (NFKC and lower-casing never act across a
 * line break either): lines are analysed once and remembered, the last LINE_MEMO_LIMIT of them.
 * Measured with the messages of `npm run bench -- context`: analysis went from 0.057 to 0.036 ms
 * per message (decision 0044).
 */
const LINE_MEMO_LIMIT = 1_024
/** Longer lines are analysed each time (a 10 MB line is not kept as a key). */
const LINE_MEMO_MAX_CHARS = 2_048
interface AnalysedLine {
  words: readonly string[]
  /** Every word stemmed, stop words included (the own-text field). */
  stems: string
  /** Stop words dropped, the rest stemmed (`terms(text).join(' ')`: the context fields). */
  content: string
}
const lineMemo = new Map<string, AnalysedLine>()

function analyseLine(line: string): AnalysedLine {
  const memo = lineMemo.get(line)
  if (memo !== undefined) return memo
  const lineWords = words(line)
  const stems: string[] = []
  const content: string[] = []
  for (const word of lineWords) {
    const stemmed = stem(word)
    stems.push(stemmed)
    if (!STOP_WORDS.has(word)) content.push(stemmed)
  }
  const analysed: AnalysedLine = { words: lineWords, stems: stems.join(' '), content: content.join(' ') }
  if (line.length <= LINE_MEMO_MAX_CHARS) {
    if (lineMemo.size >= LINE_MEMO_LIMIT) lineMemo.delete(lineMemo.keys().next().value as string)
    lineMemo.set(line, analysed)
  }
  return analysed
}

/**
 * `terms(text).join(' ')`, line by line: a neighbour field needs only its content terms (its
 * words and stems joined were built for nothing, twice per unit: near and far).
 */
function analysedContent(text: string): string {
  if (text === '') return ''
  if (!text.includes('\n')) return analyseLine(text).content
  let out = ''
  for (const line of text.split('\n')) {
    const content = analyseLine(line).content
    if (content !== '') out = out === '' ? content : `${out} ${content}`
  }
  return out
}

/** `words(text)`, `allTerms(text).join(' ')` and `terms(text).join(' ')`, line by line. */
function analysedLines(text: string): AnalysedLine {
  if (text === '') return { words: [], stems: '', content: '' }
  if (!text.includes('\n')) return analyseLine(text)
  const lines = text.split('\n').map(analyseLine)
  const joined = (field: 'stems' | 'content'): string => lines.map((line) => line[field]).filter((part) => part !== '').join(' ')
  return { words: lines.flatMap((line) => line.words), stems: joined('stems'), content: joined('content') }
}

/*
 * Related words depend on each word alone, and a vocabulary is small beside the text that uses it:
 * looking a word's hypernyms up, splitting and stemming them once per word instead of once per
 * occurrence took the analysis of a bulk load from ~40% of its time to ~10% (scripts/bench/recall.ts
 * at 100k units). Bounded: cleared when full.
 */
const RELATED_MEMO_LIMIT = 50_000
const relatedMemo = new Map<string, string>()

/**
 * `relatedTerms(text).join(' ')`, given `words(text)`: the related terms of each distinct content
 * word in order of first occurrence, which is what relatedTerms computes, one word at a time.
 */
function relatedOfWords(text: string, textWords: readonly string[]): string {
  const parts: string[] = []
  const seen = new Set<string>()
  for (const word of textWords) {
    if (STOP_WORDS.has(word) || seen.has(word)) continue
    seen.add(word)
    // Related words are English (WordNet): a word in an unspaced script has none, and is often
    // not its own only word (a CJK word adds its letter pairs), which would analyse the text again.
    if (holdsUnspacedLetters(word)) continue
    let related = relatedMemo.get(word)
    if (related === undefined) {
      // A word is its own only word in all but odd cases of Unicode normalisation; there, the
      // whole text is analysed as relatedTerms does it, so the result never differs from it.
      const again = words(word)
      if (again.length !== 1 || again[0] !== word) return relatedTerms(text).join(' ')
      related = relatedTerms(word).join(' ')
      if (relatedMemo.size >= RELATED_MEMO_LIMIT) relatedMemo.clear()
      relatedMemo.set(word, related)
    }
    if (related !== '') parts.push(related)
  }
  return parts.join(' ')
}

/**
 * The unit's kind as a token of its own column: a kind filter then narrows the match inside FTS5
 * (`kind: (kskill OR kprocedure)`), instead of ranking every match and dropping most (measured:
 * a skill lookup at 100k units went from ranking ~800 rows to ranking only skills).
 */
export function kindToken(kind: string): string {
  return `k${kind.replace(/[^a-z]/g, '')}`
}

/*
 * A term in most units (a name in a long conversation, "work" in a work journal) makes the index
 * score every row that holds it: the cost of a query grows with its most common term. Each term's
 * postings are counted up to a cap first (cheap: a capped scan of one posting list); terms over
 * the cap are left out, unless every term is over it, then the rarest one is kept.
 */
export const POSTINGS_CAP = 3_000
/** Postings scored per query at most (the rarest term is always kept). */
export const POSTINGS_BUDGET = 3_000

/** A repeated query term counts once per occurrence (BM25 with query term frequency), up to this many. */
const MAX_REPEATS = 3

/** The query's terms (given, or analysed from its text): every occurrence, and the distinct ones that hold a letter or digit. */
export function lexicalTerms(query: Pick<IndexQuery, 'text' | 'terms'>): { all: string[]; distinct: string[] } {
  const all = query.terms ?? (query.text === undefined ? [] : analyseTerms(query.text))
  return { all, distinct: [...new Set(all.filter((term) => /[\p{L}\p{N}]/u.test(term)))] }
}

/**
 * The terms to score, given each distinct term's posting count (capped at POSTINGS_CAP + 1, in the
 * same order): rarest first, while the postings to score stay within POSTINGS_BUDGET — the cost of
 * a query is bounded however common its words are, and the rare words carry the ranking anyway.
 * Terms no unit holds are dropped; [] when none is held. Ties keep the query's order.
 */
export function keptTerms(distinct: readonly string[], counts: readonly number[]): string[] {
  const present = distinct.map((term, i) => ({ term, n: counts[i] ?? 0 })).filter((c) => c.n > 0)
  present.sort((a, b) => a.n - b.n)
  const kept: string[] = []
  let postings = 0
  for (const { term, n } of present) {
    if (kept.length > 0 && (n > POSTINGS_CAP || postings + n > POSTINGS_BUDGET)) break
    kept.push(term)
    postings += n
  }
  return kept
}

/** How many times `term` is scored: once per occurrence in the query, at most MAX_REPEATS. */
export function termRepeats(all: readonly string[], term: string): number {
  let n = 0
  for (const each of all) if (each === term) n++
  return Math.min(MAX_REPEATS, Math.max(1, n))
}

/*
 * The counts only choose which terms a query keeps, so a slightly stale one is harmless: they are
 * remembered for a while (priming asks the same words of two channels, and people repeat
 * themselves), forgotten on every write through the index and after POSTINGS_TTL_MS.
 */
const POSTINGS_TTL_MS = 30_000
const POSTINGS_MEMO_LIMIT = 10_000

/** Remembered posting counts, by whatever key the backend counts (an FTS5 expression, a term). */
export class PostingCountMemo {
  readonly #counts = new Map<string, { n: number; at: number }>()

  get(key: string): number | undefined {
    const memo = this.#counts.get(key)
    return memo && performance.now() - memo.at < POSTINGS_TTL_MS ? memo.n : undefined
  }

  set(key: string, n: number): void {
    if (this.#counts.size >= POSTINGS_MEMO_LIMIT) this.#counts.clear()
    this.#counts.set(key, { n, at: performance.now() })
  }

  clear(): void {
    this.#counts.clear()
  }
}
