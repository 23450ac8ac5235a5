/**
 * Which language a message is in, cheaply, and that language's table compiled into matchers
 * (decision 0077). Detection is by script first (kana → Japanese, Hangul → Korean, Han without kana
 * → Chinese, when those characters are not a stray word inside Latin text), then, for Latin text,
 * by stop-word hits: a European table wins when at least two of its stop words are in the message
 * and more than English's (one is enough in a short message with no English stop word at all:
 * "Prefiero respuestas cortas."). Anything else is English (`undefined`), and the English rules run
 * exactly as before. No model, no dictionary: this runs on every message.
 */
import { german } from './de.ts'
import { spanish } from './es.ts'
import { french } from './fr.ts'
import { japanese } from './ja.ts'
import { korean } from './ko.ts'
import type { LanguageTable } from './language-table.ts'
import { chinese } from './zh.ts'

/** The tables, in the order detection tries their scripts (Japanese before Chinese: both use Han). */
export const LANGUAGE_TABLES: readonly LanguageTable[] = [japanese, korean, chinese, german, french, spanish]

/** A table compiled: each list as one regular expression over `normaliseForMatching` text. */
export interface Language {
  table: LanguageTable
  greeting: RegExp
  heartbeat: RegExp
  questionWord: RegExp
  questionEnding: RegExp | undefined
  request: RegExp
  /** An imperative opening a sentence, after any negation ("N'utilise jamais …"). */
  imperative: RegExp
  always: RegExp
  never: RegExp
  negation: RegExp
  addressee: RegExp
  firstPerson: RegExp
  preference: RegExp | undefined
  procedural: readonly RegExp[]
  /** Words in `text` by the platform's segmenter for this language (unspaced text has no spaces to count). */
  wordCount(text: string): number
}

/** `text` as a regular expression matching it literally. */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const LETTER = /[\p{L}\p{N}]/u

/**
 * The phrases as one alternation, each with the boundaries its table's `words` asks for (none next
 * to a non-letter, such as `n'`): a letter or digit may not touch a phrase's first or last letter.
 * Phrases that need the same boundaries share one group, `(?<!…)(?:a|b|c)(?!…)`: a Unicode class
 * per phrase made the tables' ~900 phrases cost ~100 ms of CPU to compile and as much again at
 * their first match, in every fresh process (decision 0082). A regular expression tests true on
 * exactly the same texts either way; longest first, so that "nie wieder" is tried before "nie".
 */
function alternatives(phrases: readonly string[], words: LanguageTable['words']): string {
  const groups = new Map<string, { left: string; right: string; phrases: string[] }>()
  for (const phrase of [...phrases].sort((a, b) => b.length - a.length)) {
    const left = words !== 'unspaced' && LETTER.test(phrase.charAt(0)) ? '(?<![\\p{L}\\p{N}])' : ''
    const right = words === 'spaced' && LETTER.test(phrase.charAt(phrase.length - 1)) ? '(?![\\p{L}\\p{N}])' : ''
    const group = groups.get(left + right) ?? { left, right, phrases: [] }
    group.phrases.push(escapeRegExp(phrase))
    groups.set(left + right, group)
  }
  return [...groups.values()].map(({ left, right, phrases: group }) => `${left}(?:${group.join('|')})${right}`).join('|')
}

const NEVER_MATCHES = /(?!)/

function anywhere(phrases: readonly string[], words: LanguageTable['words']): RegExp {
  return phrases.length === 0 ? NEVER_MATCHES : new RegExp(`(?:${alternatives(phrases, words)})`, 'u')
}

function opening(phrases: readonly string[], words: LanguageTable['words'], after = ''): RegExp {
  return phrases.length === 0 ? NEVER_MATCHES : new RegExp(`^[\\s¡¿"'«(「『]*${after}(?:${alternatives(phrases, words)})`, 'u')
}

function compile(table: LanguageTable): Language {
  const { words } = table
  // Made when first counting: each locale's segmenter costs a few milliseconds to create.
  let segmenter: Intl.Segmenter | undefined
  const negation = anywhere(table.negations, words)
  const leadingNegations = table.negations.length === 0 ? '' : `(?:(?:${alternatives(table.negations, words)})\\s*)*`
  return {
    table,
    greeting: opening(table.greetings, words),
    heartbeat: opening(table.heartbeats, words),
    questionWord: words === 'spaced' ? opening(table.questionWords, words) : anywhere(table.questionWords, words),
    questionEnding: table.questionEndings.length === 0 ? undefined : new RegExp(`(?:${table.questionEndings.map(escapeRegExp).join('|')})[\\s.!。…]*$`, 'u'),
    request: anywhere(table.requestMarkers, words),
    imperative: opening(table.imperatives, words, leadingNegations),
    always: anywhere(table.always, words),
    never: anywhere(table.never, words),
    negation,
    addressee: anywhere(table.addressee, words),
    firstPerson: opening(table.firstPerson, words),
    preference: table.preferencePatterns.length === 0 ? undefined : new RegExp(table.preferencePatterns.join('|'), 'iu'),
    procedural: table.proceduralPatterns.map((source) => new RegExp(source, 'imu')),
    wordCount(text) {
      let count = 0
      segmenter ??= new Intl.Segmenter(table.code, { granularity: 'word' })
      for (const segment of segmenter.segment(text)) if (segment.isWordLike) count++
      return count
    },
  }
}

// Compiled on first use: a process that never meets another language pays nothing.
let compiled: { languages: Language[]; scripts: Array<{ language: Language; chars: RegExp }>; allScripts: RegExp } | undefined

function languages(): NonNullable<typeof compiled> {
  if (compiled) return compiled
  const all = LANGUAGE_TABLES.map(compile)
  const scripts = all.flatMap((language) => (language.table.script ? [{ language, chars: new RegExp(`[${language.table.script}]`, 'gu') }] : []))
  const allScripts = new RegExp(`[${scripts.map(({ language }) => language.table.script).join('')}]`, 'gu')
  compiled = { languages: all, scripts, allScripts }
  return compiled
}

/** Text as the tables are matched against: NFKC (full-width forms, `？` → `?`), lower case, one apostrophe. */
export function normaliseForMatching(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[’‘`´]/g, "'")
}

/** English's most frequent words, to keep an English message with "de" or "die" in it English. */
const ENGLISH_STOP_WORDS = new Set(['the', 'a', 'an', 'is', 'are', 'and', 'of', 'to', 'in', 'it', 'you', 'i', 'my', 'what', 'how', 'that', 'for', 'on', 'with', 'do', 'this', 'be', 'was', 'me', 'can', 'your', 'we', 'have', 'always', 'please'])
const LATIN_WORD = /[\p{Script=Latin}']+/gu
/** A message this short has too few words for two stop words ("Ich bevorzuge kurze Antworten."). */
const SHORT_MESSAGE_WORDS = 6
/** Characters read to decide: enough for any message's language, bounded for a pasted document. */
const SAMPLE_CHARS = 2_000

let stopWordSets: Map<Language, Set<string>> | undefined

/**
 * The language of `text` when a table covers it, else `undefined` (English, or a language without
 * a table: the English rules run, as before). See the file comment for how.
 */
export function detectLanguage(text: string): Language | undefined {
  const sample = normaliseForMatching(text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text)
  const { languages: all, scripts, allScripts } = languages()
  const latin = sample.match(/\p{Script=Latin}/gu)?.length ?? 0
  const scripted = sample.match(allScripts)?.length ?? 0
  // A CJK character says about as much as a short Latin word: a stray name in katakana inside an
  // English sentence does not make it Japanese; a Japanese sentence with "psql" in it stays Japanese.
  if (scripted > 0 && scripted * 3 >= latin) {
    for (const { language, chars } of scripts) if ((sample.match(chars)?.length ?? 0) > 0) return language
  }
  if (latin === 0) return undefined
  stopWordSets ??= new Map(all.filter((language) => !language.table.script).map((language) => [language, new Set(language.table.stopWords)]))
  let english = 0
  const hits = new Map<Language, number>()
  const latinWords = sample.match(LATIN_WORD) ?? []
  for (const word of latinWords) {
    if (ENGLISH_STOP_WORDS.has(word)) english++
    for (const [language, words] of stopWordSets) if (words.has(word)) hits.set(language, (hits.get(language) ?? 0) + 1)
  }
  let best: Language | undefined
  let bestHits = english === 0 && latinWords.length <= SHORT_MESSAGE_WORDS ? 0 : 1
  for (const [language, count] of hits) {
    if (count > bestHits && count > english) {
      best = language
      bestHits = count
    }
  }
  return best
}

/** Every compiled table (for scanners that read all languages at once, such as month names). */
export function allLanguages(): readonly Language[] {
  return languages().languages
}
