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

/**
 * Lowercase words with apostrophes folded and possessives removed, in order; each at most
 * MAX_WORD_CHARS. Text in a script written without spaces (Chinese, Japanese, Thai…) or with
 * particles joined to its words (Korean) is cut into words as well (`unspacedWords`); a part of the
 * text without such a letter is split exactly as it always was.
 */
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
    if (part === '') continue
    if (UNSPACED.test(part)) unspacedWords(part, out)
    else out.push(part.length > MAX_WORD_CHARS ? part.slice(0, MAX_WORD_CHARS) : part)
  }
  return out
}

/** Letters of scripts whose words are not (or not only) delimited by spaces. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u
/** Scripts also indexed as overlapping pairs of letters (CJK: a word inside a compound is found). */
const PAIRED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
/** A segment of katakana only (the long-vowel mark ー is in Common, with katakana among its extensions). */
const KATAKANA_ONLY = /^\p{Script_Extensions=Katakana}+$/u

let segmenter: Intl.Segmenter | undefined

/**
 * The words of one part of text holding letters of an unspaced script, pushed to `out`: the
 * platform's word segmenter (ICU's dictionaries for Chinese, Japanese, Thai, Lao, Khmer, Burmese)
 * gives the words, and in the CJK scripts each word longer than two letters adds its overlapping
 * letter pairs. Segmentation depends on the words around: ICU cuts トークン alone as トーク|ン
 * and デプロイトークン whole, so a word inside a compound would never meet the compound. The
 * pairs are context-free (トー ーク クン in both), the standard remedy for CJK search (Lucene's
 * CJK bigrams); the whole word is kept too, so a query that segments the same way matches more
 * strongly. Adjacent katakana segments are joined first: a katakana run is one loanword or
 * compound, which ICU's dictionary often splits wrongly. Korean is written with spaces but joins
 * particles and endings to its words (토큰은, 토큰의): the pairs find 토큰 in both.
 */
function unspacedWords(part: string, out: string[]): void {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' })
  const segments: string[] = []
  for (const { segment, isWordLike } of segmenter.segment(part)) {
    if (!isWordLike) continue
    const last = segments.length - 1
    if (last >= 0 && KATAKANA_ONLY.test(segment) && KATAKANA_ONLY.test(segments[last] as string)) segments[last] += segment
    else segments.push(segment)
  }
  for (const whole of segments) {
    const word = whole.length > MAX_WORD_CHARS ? whole.slice(0, MAX_WORD_CHARS) : whole
    out.push(word)
    const letters = [...word]
    if (letters.length < 3 || !PAIRED.test(word)) continue
    for (let i = 0; i + 1 < letters.length; i++) {
      const pair = (letters[i] as string) + (letters[i + 1] as string)
      if (PAIRED.test(pair)) out.push(pair)
    }
  }
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

/** Whether `text` holds a letter of a script that `words` segments (Chinese, Japanese, Korean, Thai…). */
export function holdsUnspacedLetters(text: string): boolean {
  return UNSPACED.test(text)
}

/**
 * An analysed field (terms joined by spaces) as stored before text in unspaced scripts was
 * segmented, with each such term cut as `words` cuts it now; other terms (already stemmed, and
 * stemming is not idempotent) are kept as they are. Re-analysing the stored terms, not the text,
 * keeps the fields that hold a unit's neighbours, which the index does not have the text of.
 */
export function resegmentAnalysed(field: string): string {
  if (!UNSPACED.test(field)) return field
  const out: string[] = []
  for (const term of field.split(' ')) {
    if (term === '') continue
    if (UNSPACED.test(term)) unspacedWords(term, out)
    else out.push(term)
  }
  return out.join(' ')
}
