/**
 * Each language table compiled into matchers (decision 0077), once, on first use. Which language a
 * text is in, and so which of these a message is read with, is decided by detect.ts (decision
 * 0081).
 */
import { german } from './de.ts'
import { spanish } from './es.ts'
import { french } from './fr.ts'
import { japanese } from './ja.ts'
import { korean } from './ko.ts'
import type { LanguageTable } from './language-table.ts'
import { chinese } from './zh.ts'

/** The tables; detection (detect.ts) reads the scripts in this order: Japanese, Korean, Chinese. */
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
let compiled: Language[] | undefined

/** Text as the tables are matched against: NFKC (full-width forms, `？` → `?`), lower case, one apostrophe. */
export function normaliseForMatching(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[’‘`´]/g, "'")
}

/** Every table compiled, in LANGUAGE_TABLES' order (for detection, and for scanners that read all languages at once, such as month names). */
export function allLanguages(): readonly Language[] {
  compiled ??= LANGUAGE_TABLES.map(compile)
  return compiled
}
