/**
 * Which language a text is in: the one place that decides it (decision 0081), for the message
 * classifier and the rules that read a language's table (decision 0077) and for what `engram
 * status` and `doctor` say the offline analysis does (decision 0076). No model, no dictionary: it
 * runs on every message.
 *
 * By script first. Letters of the tables' scripts (kana, Han, Hangul) count three times as much as
 * alphabetic letters — a CJK character says about as much as a short word —, so a stray name in
 * katakana inside an English sentence leaves it English and a Japanese sentence with "psql" in it
 * stays Japanese. Among them the script with most letters wins, Han counting with kana when there
 * is any (a Japanese sentence may hold more kanji than kana). Other scripts (Cyrillic, Greek, Thai,
 * …) win by having more letters than the Latin ones. Latin text is then told apart by stop-word
 * hits: a language wins with at least two hits and more than English's (one is enough in a message
 * of at most six words with no English stop word: "Prefiero respuestas cortas."), languages with a
 * table first; otherwise it is English when it has English stop words, at least as many as any
 * other language's, else undetermined ("ok", a name).
 *
 * Word analysis (analyse.ts) does not depend on the answer: words are cut by script, the same way
 * for a stored text and a query. The answer says what a text gets beyond its words: English has
 * stemming, stop words and related words (WordNet) and its hand-tuned rules; a language with a
 * table has that table's rules; every other language has its words only, and the English rules.
 */
import { allLanguages, type Language, normaliseForMatching } from './language.ts'

/** What engram's offline analysis gives a language: `full` (stemming, stop words, related words) or its `words` only. */
export type LanguageAnalysis = 'full' | 'words'

/** A language as detected. */
export interface DetectedLanguage {
  /** BCP 47 code, `und` when undetermined. */
  code: string
  name: string
  analysis: LanguageAnalysis
  /** The language's table compiled, when engram has one; `undefined`: the English rules run. */
  rules: Language | undefined
}

/** A language detected without a table of its own: by its script, or in Latin letters by its stop words. */
interface Untabled {
  code: string
  name: string
  analysis: LanguageAnalysis
  /** A regular-expression class body of the script's letters. */
  script?: string
  stopWords?: readonly string[]
}

/**
 * English's most frequent words: keep an English message with "de" or "die" in it English, and say
 * that a text is English at all.
 */
const ENGLISH: Untabled = {
  code: 'en',
  name: 'English',
  analysis: 'full',
  stopWords: ['the', 'a', 'an', 'is', 'are', 'and', 'of', 'to', 'in', 'it', 'you', 'i', 'my', 'what', 'how', 'that', 'for', 'on', 'with', 'do', 'this', 'be', 'was', 'were', 'not', 'me', 'can', 'your', 'we', 'have', 'always', 'please'],
}

/** Languages named in status without a table: the English rules run for them. Adding one is a row. */
const UNTABLED: readonly Untabled[] = [
  { code: 'it', name: 'Italian', analysis: 'words', stopWords: ['il', 'lo', 'gli', 'della', 'di', 'che', 'è', 'non', 'per', 'una', 'sono', 'con', 'come', 'anche', 'questo'] },
  { code: 'pt', name: 'Portuguese', analysis: 'words', stopWords: ['o', 'os', 'as', 'da', 'do', 'que', 'não', 'uma', 'com', 'para', 'por', 'em', 'é', 'são', 'está', 'você'] },
  { code: 'nl', name: 'Dutch', analysis: 'words', stopWords: ['de', 'het', 'een', 'en', 'van', 'is', 'niet', 'dat', 'ik', 'je', 'met', 'voor', 'op', 'zijn', 'wordt', 'ook'] },
  { code: 'th', name: 'Thai', analysis: 'words', script: '\\p{Script=Thai}' },
  { code: 'ru', name: 'Cyrillic-script (Russian, …)', analysis: 'words', script: '\\p{Script=Cyrillic}' },
  { code: 'el', name: 'Greek', analysis: 'words', script: '\\p{Script=Greek}' },
  { code: 'ar', name: 'Arabic-script (Arabic, Persian, …)', analysis: 'words', script: '\\p{Script=Arabic}' },
  { code: 'he', name: 'Hebrew', analysis: 'words', script: '\\p{Script=Hebrew}' },
  { code: 'hi', name: 'Devanagari-script (Hindi, …)', analysis: 'words', script: '\\p{Script=Devanagari}' },
]

const UNDETERMINED: DetectedLanguage = { code: 'und', name: 'undetermined', analysis: 'words', rules: undefined }

/** Characters read to decide: enough for any message's language, bounded for a pasted document. */
const SAMPLE_CHARS = 2_000
/** A message this short has too few words for two stop words ("Ich bevorzuge kurze Antworten."). */
const SHORT_MESSAGE_WORDS = 6
/** How much one letter of a table's script (kana, Han, Hangul) weighs against one alphabetic letter. */
const CJK_LETTER_WEIGHT = 3
const LATIN_LETTER = /\p{Script=Latin}/gu
const LATIN_WORD = /[\p{Script=Latin}']+/gu

interface Candidate {
  detected: DetectedLanguage
  stopWords: ReadonlySet<string>
}

interface Detector {
  /** Scripts of the tables, in their order (of as many letters, the first wins). */
  cjk: Array<{ detected: DetectedLanguage; chars: RegExp }>
  /** Scripts of languages without a table. */
  alphabets: Array<{ detected: DetectedLanguage; chars: RegExp }>
  /** Any letter of any of those scripts: most texts have none, and then one scan is all it costs. */
  anyScript: RegExp
  /** Latin-script languages with a table, then those without. */
  tabled: Candidate[]
  untabled: Candidate[]
  english: Candidate
}

// Built on first use: the tables compile once (language.ts).
let detector: Detector | undefined

function build(): Detector {
  const described = (language: Untabled): DetectedLanguage => ({ code: language.code, name: language.name, analysis: language.analysis, rules: undefined })
  const fromTable = (rules: Language): DetectedLanguage => ({ code: rules.table.code, name: rules.table.name, analysis: 'words', rules })
  const tables = allLanguages()
  const cjk = tables.flatMap((rules) => (rules.table.script ? [{ detected: fromTable(rules), chars: new RegExp(`[${rules.table.script}]`, 'gu') }] : []))
  const alphabets = UNTABLED.flatMap((language) => (language.script ? [{ detected: described(language), chars: new RegExp(`[${language.script}]`, 'gu') }] : []))
  const scripts = [...tables.flatMap((rules) => rules.table.script ?? []), ...UNTABLED.flatMap((language) => language.script ?? [])]
  return {
    cjk,
    alphabets,
    anyScript: new RegExp(`[${scripts.join('')}]`, 'gu'),
    tabled: tables.filter((rules) => !rules.table.script).map((rules) => ({ detected: fromTable(rules), stopWords: new Set(rules.table.stopWords) })),
    untabled: UNTABLED.filter((language) => language.stopWords).map((language) => ({ detected: described(language), stopWords: new Set(language.stopWords) })),
    english: { detected: described(ENGLISH), stopWords: new Set(ENGLISH.stopWords) },
  }
}

const count = (text: string, chars: RegExp): number => text.match(chars)?.length ?? 0

/** The language of `text`; see the file comment for how. */
export function detectLanguage(text: string): DetectedLanguage {
  detector ??= build()
  const sample = normaliseForMatching(text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text)
  const latin = count(sample, LATIN_LETTER)
  const byScript = count(sample, detector.anyScript) > 0 ? scriptLanguage(sample, latin, detector) : undefined
  if (byScript) return byScript
  if (latin === 0) return UNDETERMINED
  return latinLanguage(sample.match(LATIN_WORD) ?? [], detector)
}

/** The language of a text's non-Latin letters, when they outweigh its Latin ones. */
function scriptLanguage(sample: string, latin: number, { cjk, alphabets }: Detector): DetectedLanguage | undefined {
  const cjkCounts = cjk.map(({ chars }) => count(sample, chars))
  const alphabetCounts = alphabets.map(({ chars }) => count(sample, chars))
  const cjkLetters = cjkCounts.reduce((sum, n) => sum + n, 0)
  const otherLetters = alphabetCounts.reduce((sum, n) => sum + n, 0)
  if (cjkLetters > 0 && cjkLetters * CJK_LETTER_WEIGHT >= latin + otherLetters) {
    // Kana anywhere makes Han Japanese: Japanese writes kanji with kana, Chinese never uses kana.
    const japanese = cjk.findIndex(({ detected }) => detected.code === 'ja')
    const chinese = cjk.findIndex(({ detected }) => detected.code === 'zh')
    if ((cjkCounts[japanese] ?? 0) > 0 && chinese >= 0) {
      cjkCounts[japanese] = (cjkCounts[japanese] as number) + (cjkCounts[chinese] as number)
      cjkCounts[chinese] = 0
    }
    return (cjk[largest(cjkCounts)] as (typeof cjk)[number]).detected
  }
  if (otherLetters > latin) return (alphabets[largest(alphabetCounts)] as (typeof alphabets)[number]).detected
  return undefined
}

/** The index of the largest number, the first of equals. */
function largest(numbers: readonly number[]): number {
  let best = 0
  for (let i = 1; i < numbers.length; i++) if ((numbers[i] as number) > (numbers[best] as number)) best = i
  return best
}

/**
 * The language of Latin words by stop-word hits: a table's language, else one without a table, else
 * English or undetermined. Of languages with as many hits, the one hit first in the text wins.
 */
function latinLanguage(latinWords: readonly string[], { tabled, untabled, english }: Detector): DetectedLanguage {
  const hits = (candidate: Candidate): Hits => {
    let n = 0
    let first = latinWords.length
    latinWords.forEach((word, at) => {
      // A contraction or an elision holds its stop word: it's, what's, don't; c'est, qu'il.
      if (!candidate.stopWords.has(word) && !(word.includes("'") && word.split("'").some((part) => candidate.stopWords.has(part)))) return
      n++
      first = Math.min(first, at)
    })
    return { n, first }
  }
  const englishHits = hits(english).n
  const tabledHits = tabled.map(hits)
  const untabledHits = untabled.map(hits)
  // Two hits, more than English's; one is enough in a short message without an English stop word.
  const needed = englishHits === 0 && latinWords.length <= SHORT_MESSAGE_WORDS ? 1 : 2
  const pick = (candidates: readonly Candidate[], counts: readonly Hits[]): DetectedLanguage | undefined => {
    let best: { candidate: Candidate; hits: Hits } | undefined
    candidates.forEach((candidate, i) => {
      const each = counts[i] as Hits
      if (best === undefined || each.n > best.hits.n || (each.n === best.hits.n && each.first < best.hits.first)) best = { candidate, hits: each }
    })
    return best && best.hits.n >= needed && best.hits.n > englishHits ? best.candidate.detected : undefined
  }
  const other = pick(tabled, tabledHits) ?? pick(untabled, untabledHits)
  if (other) return other
  // A tie is English ("She is 5" against Dutch "is"; "La migration a pris trois heures", la against
  // a): the English rules read it anyway.
  const mostOther = Math.max(0, ...[...tabledHits, ...untabledHits].map((each) => each.n))
  return englishHits > 0 && englishHits >= mostOther ? english.detected : UNDETERMINED
}

/** How often a language's stop words occur in a text, and the position of the first. */
interface Hits {
  n: number
  first: number
}

/** The languages that get the full analysis (stemming, stop words, related words), by name. */
export function fullyAnalysedLanguages(): string[] {
  return [ENGLISH, ...UNTABLED].filter((language) => language.analysis === 'full').map((language) => language.name)
}
