/**
 * What engram knows of one language beyond English, as data (decision 0077): the words that make a
 * message a greeting, a question or a request, the seed's how-to patterns, the markers of a
 * standing instruction or a preference, and month names. The code that classifies, sorts and
 * recognises reads these tables (language.ts compiles them once); a language is added by adding a
 * table, never by adding code. English keeps its own hand-tuned rules where they were
 * (classify.ts, episode-sources.ts, extraction/rules.ts, fact-mentions.ts): its behaviour is
 * measured by the recall evals and must not move.
 *
 * Every entry is matched after NFKC normalisation and lower-casing (full-width letters, digits and
 * `？` become their plain forms), so tables are written in plain lower-case forms. Plain entries are
 * literal phrases; `patterns` fields are regular-expression sources (Unicode, case-insensitive).
 * How a phrase matches depends on `words`: whole words in a `spaced` language (German), at the start
 * of a word in an `agglutinated` one (Korean: particles and endings are glued to the word),
 * anywhere in an `unspaced` one (Japanese, Chinese).
 */
export interface LanguageTable {
  /** BCP 47 code (`ja`, `de`): also the locale given to `Intl.Segmenter` to count words. */
  code: string
  name: string
  /** How words are written: `spaced` (German), `agglutinated` (Korean), `unspaced` (Japanese, Chinese). */
  words: 'spaced' | 'agglutinated' | 'unspaced'
  /**
   * Characters that mark the language on their own (a regular-expression class body such as
   * `\p{Script=Hiragana}`); a text mostly in them is in this language (detect.ts). Tables
   * without a script (Latin languages) are chosen by `stopWords` hits instead.
   */
  script?: string
  /** Frequent function words, for telling Latin-script languages apart (and from English). */
  stopWords: readonly string[]

  /** Message types (classify.ts): greetings and thanks that open a short message. */
  greetings: readonly string[]
  /** Question words: opening a message (spaced) or anywhere in it (the others). */
  questionWords: readonly string[]
  /** Sentence-final question particles (か, 吗, 까): a message ending with one asks. */
  questionEndings: readonly string[]
  /** Polite request markers anywhere in a message (ください, 请, bitte). */
  requestMarkers: readonly string[]
  /** Imperative verb forms that open a request or a standing instruction (spaced languages). */
  imperatives: readonly string[]
  /** Openers of a scheduler's heartbeat (the agent's periodic patrol) in this language. */
  heartbeats: readonly string[]

  /** The seed's procedural classification (episode-sources.ts): how-to content, regular-expression sources. */
  proceduralPatterns: readonly string[]

  /** Standing instructions (extraction/rules.ts): "always" markers (常に, immer, toujours). */
  always: readonly string[]
  /** "Never" markers (決して, niemals, jamais); also negations that make an "always" a "never". */
  never: readonly string[]
  /** Plain negations: an "always" with one is a "never"; a preference with one is no preference. */
  negations: readonly string[]
  /** Words that address the assistant (ください, mir, s'il vous plaît): an instruction, not a habit. */
  addressee: readonly string[]
  /** First-person openers (私は, ich, je): "I always …" states a habit, not an instruction. */
  firstPerson: readonly string[]
  /** A stated preference, regular-expression sources ("私は…が好き", "ich bevorzuge …"). */
  preferencePatterns: readonly string[]

  /** Dates (fact-mentions.ts): month names, January first, each with its spellings. */
  months?: readonly (readonly string[])[]
  /** Dates written with unit characters (2025年3月15日, 2025년 3월 15일): each unit's spellings. */
  dateUnits?: { year: readonly string[]; month: readonly string[]; day: readonly string[] }
  /**
   * Number words written out, each alone (zwei, trois, cinco), read only in a text of this language
   * (several are English words elsewhere: "once", "elf", "cent"). Articles that also mean one
   * (ein, un, uno) are left out, as English leaves out "a".
   */
  numberWords?: Readonly<Record<string, number>>
  /** Numerals written as characters (三, 十五, 二千二十五): each character's value; 十, 百, 千, 万 multiply. */
  numerals?: Readonly<Record<string, number>>
}
