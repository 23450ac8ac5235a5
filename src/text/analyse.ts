/**
 * Text analysis shared by indexing and querying: the same function must run on both sides, or a
 * stored stem and a query stem never meet. Lowercase, apostrophes folded (’ ʼ ` → '), split on
 * anything that is not a letter, digit or apostrophe (every script), possessive 's dropped,
 * remaining apostrophes deleted ("don't" → "dont"), English stop words dropped, Porter stemming
 * (npm `stemmer`, Porter 1980).
 *
 * Measured on LoCoMo (docs/decisions/0012-offline-retrieval-pipeline.md): stop words plus stemming
 * at both ends is worth about 4 points of R@10 over the FTS5 porter tokenizer alone, because
 * FTS5 never sees the query framing ("what", "did", "kind") as noise.
 */
import { stemmer } from 'stemmer'

/** Generic English stop words (short Lucene/SMART-style list, auxiliaries, pronouns, fillers). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are aren as at be because been before being below between both but by
can cannot could couldn did didn do does doesn doing don down during each few for from further had hadn has hasn have haven having
he hed hes her here heres hers herself him himself his how hows i id ill im ive if in into is isn it its itself lets me more most
mustn my myself no nor not of off on once only or other ought our ours ourselves out over own same shan she shed shell shes should
shouldn so some such than that thats the their theirs them themselves then there theres these they theyd theyll theyre theyve this
those through to too under until up very was wasn we wed well were weve weren what whats when whens where wheres which while who
whos whom why whys with won would wouldn you youd youll youre youve your yours yourself yourselves s t d ll m re ve
just also really will got get gets oh yeah hey hi wow thanks thank lot much so`.split(/\s+/),
)

/** Words that frame a question rather than carry its topic (dropped from queries only). */
export const QUESTION_WORDS: ReadonlySet<string> = new Set(
  `what when where who whom whose which why how kind type sort name names did does do likely might would could has have
ever any many much`.split(/\s+/),
)

const stems = new Map<string, string>()
const STEM_CACHE_LIMIT = 200_000

/** Porter stem of a lowercase word (memoised: conversation vocabularies are small and repetitive). */
export function stem(word: string): string {
  let out = stems.get(word)
  if (out === undefined) {
    // Only ASCII words go to the English stemmer; other scripts are kept as they are.
    out = /^[a-z]+$/.test(word) ? stemmer(word) : word
    if (stems.size >= STEM_CACHE_LIMIT) stems.clear()
    stems.set(word, out)
  }
  return out
}

const SPLIT = /[^\p{L}\p{N}']+/u

/**
 * A longer "word" (a hash, an encoded blob, a run of one letter in text without spaces) is kept as
 * its first this many characters, at index and query time alike: a SHA-256 in hex still matches
 * whole, and a 10 MB message without spaces does not become a 10 MB term (decision 0026).
 */
export const MAX_WORD_CHARS = 64

/** Lowercase words with apostrophes folded and possessives removed, in order; each at most MAX_WORD_CHARS. */
export function words(text: string): string[] {
  const out: string[] = []
  const parts = text.normalize('NFKC').toLowerCase().replace(/[\u2018\u2019\u02bc`]/g, "'").split(SPLIT)
  for (let part of parts) {
    if (part === '') continue
    if (part.includes("'")) {
      part = part.replace(/^'+|'+$/g, '')
      if (part.endsWith("'s")) part = part.slice(0, -2)
      part = part.replace(/'/g, '')
    }
    if (part !== '') out.push(part.length > MAX_WORD_CHARS ? part.slice(0, MAX_WORD_CHARS) : part)
  }
  return out
}

/** Index/query terms of `text`: words minus stop words, stemmed. */
export function terms(text: string): string[] {
  const out: string[] = []
  for (const word of words(text)) if (!STOP_WORDS.has(word)) out.push(stem(word))
  return out
}

/** Every word stemmed, stop words included (the form stored for a unit's own text). */
export function allTerms(text: string): string[] {
  return words(text).map(stem)
}

/**
 * Query terms: `terms(text)`, or — when the text has only stop words ("NOT", "what did we do?")
 * — all its words, so such a query still finds the units that contain them.
 */
export function queryTerms(text: string): string[] {
  const content = terms(text)
  return content.length > 0 ? content : allTerms(text)
}


/** Term counts. */
export function termCounts(list: readonly string[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const term of list) out.set(term, (out.get(term) ?? 0) + 1)
  return out
}
