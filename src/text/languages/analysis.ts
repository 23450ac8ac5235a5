/**
 * Which language a text is in, cheaply (decision 0076), and what engram's offline analysis does
 * for it — what `engram status` and `doctor` report. The message classifier and the fact rules
 * use `detectLanguage` of language.ts beside this file (decision 0077), which knows only the
 * languages it has a table for; the two are to become one detector (both go by script, then by
 * common short words). Detection is by script first (kana → Japanese, Han alone → Chinese, Hangul → Korean, …);
 * text in Latin letters is told apart by its commonest short words. One table, one row per
 * language: adding a language is a row, not code.
 *
 * Indexing and querying do not depend on the detected language: words are cut by script
 * (analyse.ts), the same way for a stored text and a query, so a German question still meets an
 * English note word for word. The language says what a message gets beyond its words: English has
 * stemming, stop words and related words (WordNet); every other language has its words only.
 */

export type LanguageAnalysis = 'full' | 'words'

interface LanguageRow {
  code: string
  name: string
  analysis: LanguageAnalysis
  /** Letters of the language's own script (tested on each letter); absent for Latin-script languages. */
  script?: RegExp
  /** Common short words that mark the language among those written in Latin letters. */
  markers?: string
}

const LANGUAGES: readonly LanguageRow[] = [
  // Japanese before Chinese: Japanese mixes kana with Han; Chinese has none.
  { code: 'ja', name: 'Japanese', analysis: 'words', script: /[\p{Script=Hiragana}\p{Script=Katakana}]/u },
  { code: 'zh', name: 'Chinese', analysis: 'words', script: /\p{Script=Han}/u },
  { code: 'ko', name: 'Korean', analysis: 'words', script: /\p{Script=Hangul}/u },
  { code: 'th', name: 'Thai', analysis: 'words', script: /\p{Script=Thai}/u },
  { code: 'ru', name: 'Cyrillic-script (Russian, …)', analysis: 'words', script: /\p{Script=Cyrillic}/u },
  { code: 'el', name: 'Greek', analysis: 'words', script: /\p{Script=Greek}/u },
  { code: 'ar', name: 'Arabic-script (Arabic, Persian, …)', analysis: 'words', script: /\p{Script=Arabic}/u },
  { code: 'he', name: 'Hebrew', analysis: 'words', script: /\p{Script=Hebrew}/u },
  { code: 'hi', name: 'Devanagari-script (Hindi, …)', analysis: 'words', script: /\p{Script=Devanagari}/u },
  { code: 'en', name: 'English', analysis: 'full', markers: 'the and is are was were of to in that it you with for this have not what how' },
  { code: 'de', name: 'German', analysis: 'words', markers: 'der die das und ist nicht ich sie wir mit den dem ein eine auf für werden wird auch wie' },
  { code: 'fr', name: 'French', analysis: 'words', markers: 'le la les et est une des du que qui dans pour pas vous nous avec sur ce au' },
  { code: 'es', name: 'Spanish', analysis: 'words', markers: 'el la los las y es una del que en por para con no se su como está' },
  { code: 'it', name: 'Italian', analysis: 'words', markers: 'il lo gli della di che è non per una sono con come anche questo' },
  { code: 'pt', name: 'Portuguese', analysis: 'words', markers: 'o os as da do que não uma com para por em é são está você' },
  { code: 'nl', name: 'Dutch', analysis: 'words', markers: 'de het een en van is niet dat ik je met voor op zijn wordt ook' },
]

const LATIN = LANGUAGES.filter((row) => row.markers !== undefined).map((row) => ({ row, words: new Set((row.markers as string).split(' ')) }))
const SCRIPTED = LANGUAGES.filter((row) => row.script !== undefined)
const LETTER = /\p{L}/u
const LATIN_LETTER = /\p{Script=Latin}/u
/** Text this long at most is looked at: the language of a pasted log shows in its first lines. */
const SAMPLE_CHARS = 2_000

/** A language as detected: its code ('und' when undetermined), name and analysis. */
export interface DetectedLanguage {
  code: string
  name: string
  analysis: LanguageAnalysis
}

const UNDETERMINED: DetectedLanguage = { code: 'und', name: 'undetermined', analysis: 'words' }

/**
 * The language of `text`: the script most of its letters are in, and for Latin letters the
 * language whose marker words it uses most (undetermined when it uses none, as in "ok" or a name).
 */
export function languageForAnalysis(text: string): DetectedLanguage {
  const sample = text.slice(0, SAMPLE_CHARS)
  const counts = new Map<LanguageRow | 'latin', number>()
  for (const char of sample) {
    if (!LETTER.test(char)) continue
    if (LATIN_LETTER.test(char)) {
      counts.set('latin', (counts.get('latin') ?? 0) + 1)
      continue
    }
    const row = SCRIPTED.find((each) => each.script?.test(char))
    if (row) counts.set(row, (counts.get(row) ?? 0) + 1)
  }
  // Kana anywhere makes Han Japanese: a Japanese sentence may hold more kanji than kana.
  const ja = SCRIPTED[0] as LanguageRow
  const zh = SCRIPTED[1] as LanguageRow
  if ((counts.get(ja) ?? 0) > 0) {
    counts.set(ja, (counts.get(ja) ?? 0) + (counts.get(zh) ?? 0))
    counts.delete(zh)
  }
  let best: LanguageRow | 'latin' | undefined
  for (const [key, n] of counts) if (best === undefined || n > (counts.get(best) ?? 0)) best = key
  if (best === undefined) return UNDETERMINED
  if (best !== 'latin') return described(best)
  const words = sample.toLowerCase().split(/[^\p{L}]+/u)
  let top: { row: LanguageRow; n: number } | undefined
  for (const { row, words: markers } of LATIN) {
    let n = 0
    for (const word of words) if (markers.has(word)) n++
    if (n > 0 && (top === undefined || n > top.n)) top = { row, n }
  }
  return top ? described(top.row) : UNDETERMINED
}

function described(row: LanguageRow): DetectedLanguage {
  return { code: row.code, name: row.name, analysis: row.analysis }
}

/** The languages that get the full analysis (stemming, stop words, related words), by name. */
export function fullyAnalysedLanguages(): string[] {
  return LANGUAGES.filter((row) => row.analysis === 'full').map((row) => row.name)
}
