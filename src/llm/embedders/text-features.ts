/**
 * Lexical features for the offline embedder: words (lower-cased, accents folded, lightly
 * stemmed, stop words dropped), word bigrams, and character trigrams of each word. Trigrams are
 * what let `databse` land near `database`; stems let `memories` meet `memory`.
 */

/** Common English function words: they match everywhere, so they only add noise to similarity. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have having he her hers him his how i if in into is it its ' +
    'me my no nor not of on or our ours she so than that the their theirs them then there these they this those to too was we were what when where ' +
    'which while who whom why will with would you your yours'
  ).split(' '),
)

/** Lower-case words of `text`, accents folded; letters and digits only. */
export function words(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase()
  return folded.match(/[\p{L}\p{N}]+/gu) ?? []
}

/**
 * A light suffix stemmer (a subset of Porter's step 1): plurals, `-ing`, `-ed`, `-ly`. Deliberately
 * conservative — a wrong merge hurts more than a missed one — and it never leaves fewer than three
 * letters.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word
  let stemmed = word
  if (stemmed.endsWith('ies') && stemmed.length > 4) stemmed = `${stemmed.slice(0, -3)}y`
  else if (stemmed.endsWith('sses')) stemmed = stemmed.slice(0, -2)
  else if (stemmed.endsWith('s') && !stemmed.endsWith('ss') && !stemmed.endsWith('us') && !stemmed.endsWith('is')) stemmed = stemmed.slice(0, -1)

  for (const suffix of ['ingly', 'edly', 'ing', 'ed', 'ly']) {
    if (stemmed.endsWith(suffix) && stemmed.length - suffix.length >= 3) {
      stemmed = stemmed.slice(0, -suffix.length)
      // "running" → "runn" → "run"; "stopped" → "stop"
      if (stemmed.length >= 4 && stemmed.at(-1) === stemmed.at(-2) && !'lsz'.includes(stemmed.at(-1) as string)) stemmed = stemmed.slice(0, -1)
      break
    }
  }
  return stemmed
}

export interface TextFeatures {
  /** Stemmed content words, in order. */
  unigrams: string[]
  /** Adjacent pairs of stemmed content words. */
  bigrams: string[]
  /** Per content word, its character trigrams with `^`/`$` boundary marks. */
  trigramsByWord: string[][]
}

/** The features of `text`. A text of stop words only keeps them (so it is not empty). */
export function textFeatures(text: string): TextFeatures {
  const all = words(text)
  const content = all.filter((word) => !STOP_WORDS.has(word))
  const kept = content.length > 0 ? content : all
  const unigrams = kept.map(stem)
  const bigrams: string[] = []
  for (let index = 1; index < unigrams.length; index++) bigrams.push(`${unigrams[index - 1]} ${unigrams[index]}`)
  return { unigrams, bigrams, trigramsByWord: kept.map(characterTrigrams) }
}

function characterTrigrams(word: string): string[] {
  const marked = `^${word}$`
  const trigrams: string[] = []
  for (let index = 0; index + 3 <= marked.length; index++) trigrams.push(marked.slice(index, index + 3))
  return trigrams
}
