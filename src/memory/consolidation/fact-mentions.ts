/**
 * The facts a text states — numbers, quantities with units, dates, times, version strings —
 * normalised so that the same fact written two ways is one fact (decision 0048): "two hours",
 * "2 hrs", "2h" and "120 minutes" are one duration; "1,000", "1k" and "one thousand" one number;
 * "2026-03-04", "March 4th" and "4 March 2026" one day. Validation uses it to ask "does the source
 * state this?" without throwing away a fact the extractor merely rewrote.
 *
 * Each mention carries alternative readings (`keys`): an ambiguous form ("5m": five minutes, five
 * million or five metres; "3/4/2026": March 4 or April 3) has several, and two mentions state the
 * same fact when any reading is shared. Number words are English only; in other languages digits
 * still match, and the language tables add numerals written as characters (十五, 二〇二五), dates
 * with unit characters (2025年3月15日, 三月十五日, 2025년 3월 15일) and month names (15. März 2025,
 * 15 de marzo de 2025) (decision 0077). Full-width digits are read as digits (NFKC).
 */
import { detectLanguage } from '../../text/languages/detect.ts'
import { escapeRegExp, type Language } from '../../text/languages/language.ts'
import { DATE_UNIT, MONTH_NAME, monthOfName, NUMERAL_RUN, numeralValue, writtenNumber } from '../../text/languages/numbers.ts'

export interface FactMention {
  kind: 'number' | 'date' | 'time' | 'literal'
  /** Where it is in the text it was read from. */
  start: number
  end: number
  text: string
  /** The readings it can have (`n:7200|s`, `d:2026-03-04`, `t:14:30`, `l:v2`). */
  keys: string[]
  /** Plain values it states, matched by a number written without a unit. */
  values: string[]
  /** A number with a unit (a bare number on the other side still supports it). */
  hasUnit: boolean
  /** False for readings only a source offers ("an hour", "both"): a claim saying "a week" states no figure. */
  claim: boolean
}

const num = (value: number): string => String(Number(value.toPrecision(12)))

// ---------------------------------------------------------------------------------------------
// Units: each spelling → canonical unit, and its dimension's base with the factor to it.

interface Unit {
  unit: string
  base?: { unit: string; factor: number }
}

const UNITS = new Map<string, Unit[]>()
function units(spellings: string, unit: string, base?: { unit: string; factor: number }): void {
  for (const spelling of spellings.split(' ')) UNITS.set(spelling, [...(UNITS.get(spelling) ?? []), { unit, ...(base ? { base } : {}) }])
}
units('ms msec msecs millisecond milliseconds', 'ms', { unit: 's', factor: 0.001 })
units('s sec secs second seconds', 's', { unit: 's', factor: 1 })
units('m min mins minute minutes', 'min', { unit: 's', factor: 60 })
units('h hr hrs hour hours', 'h', { unit: 's', factor: 3600 })
units('d day days', 'day', { unit: 's', factor: 86_400 })
units('w wk wks week weeks', 'week', { unit: 's', factor: 604_800 })
units('mo month months', 'month')
units('y yr yrs year years', 'year')
units('b byte bytes', 'byte', { unit: 'byte', factor: 1 })
units('kb kilobyte kilobytes', 'kb', { unit: 'byte', factor: 1e3 })
units('mb megabyte megabytes', 'mb', { unit: 'byte', factor: 1e6 })
units('gb gig gigs gigabyte gigabytes', 'gb', { unit: 'byte', factor: 1e9 })
units('tb terabyte terabytes', 'tb', { unit: 'byte', factor: 1e12 })
units('% percent pct', '%')
units('$ usd dollar dollars buck bucks', 'usd')
units('€ eur euro euros', 'eur')
units('£ gbp', 'gbp')
units('m metre metres meter meters', 'metre', { unit: 'metre', factor: 1 })
units('km kilometre kilometres kilometer kilometers', 'km', { unit: 'metre', factor: 1000 })
units('x times', 'x')

const MULTIPLIERS = new Map<string, number>([
  ['k', 1e3],
  ['thousand', 1e3],
  ['m', 1e6],
  ['mn', 1e6],
  ['million', 1e6],
  ['bn', 1e9],
  ['billion', 1e9],
])

const UNIT_WORDS = [...UNITS.keys()]
  .filter((spelling) => /^\p{L}+$/u.test(spelling))
  .sort((a, b) => b.length - a.length)
  .join('|')
/** Units written out ("an hour", "a day"), not letters ("a b" is no byte). */
const SPELLED_UNIT_WORDS = UNIT_WORDS.split('|')
  .filter((spelling) => spelling.length >= 3)
  .join('|')
const MULTIPLIER_WORDS = [...MULTIPLIERS.keys()].sort((a, b) => b.length - a.length).join('|')

/** The readings of `value` followed by `unitWord` (none: a bare number). */
function quantity(value: number, unitWord: string | undefined): { keys: string[]; hasUnit: boolean } {
  const found = unitWord === undefined ? undefined : UNITS.get(unitWord.toLowerCase() === 'per cent' ? 'percent' : unitWord.toLowerCase())
  if (!found) return { keys: [], hasUnit: false }
  const keys = new Set<string>()
  for (const unit of found) {
    keys.add(`n:${num(value)}|${unit.unit}`)
    if (unit.base) keys.add(`n:${num(value * unit.base.factor)}|${unit.base.unit}`)
  }
  return { keys: [...keys], hasUnit: true }
}

// ---------------------------------------------------------------------------------------------
// Number words (English).

const SMALL = 'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(' ')
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety']
const NUMBER_WORD = new Map<string, number>([...SMALL.map((word, i) => [word, i] as const), ...TENS.flatMap((word, i) => (word ? [[word, i * 10] as const] : []))])
const SCALE = new Map<string, number>([
  ['hundred', 100],
  ['dozen', 12],
  ['thousand', 1e3],
  ['million', 1e6],
  ['billion', 1e9],
])
const WORD = `(?:${[...NUMBER_WORD.keys(), ...SCALE.keys()].join('|')})`

/**
 * The value of a run of number words ("twenty-five", "a hundred and twenty", "two thousand");
 * undefined for a run that is a list, not a number ("two three", "twenty thirty").
 */
function wordsValue(run: string): number | undefined {
  let total = 0
  let current = 0
  let last: number | undefined
  for (const word of run.toLowerCase().split(/[\s-]+/)) {
    if (word === 'and' || word === 'a' || word === 'an') continue
    const small = NUMBER_WORD.get(word)
    if (small !== undefined) {
      // Only a ten takes a unit after it (twenty-five); any other pair is two numbers.
      if (last !== undefined && !(last >= 20 && last % 10 === 0 && small < 10)) return undefined
      current += small
      last = small
      continue
    }
    last = undefined
    const scale = SCALE.get(word) ?? 1
    if (scale >= 1000) {
      total += (current || 1) * scale
      current = 0
    } else current = (current || 1) * scale
  }
  return total + current
}

// ---------------------------------------------------------------------------------------------
// Dates and times.

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const MONTH = '(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\\.?'
const monthOf = (name: string): number => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1
const pad = (n: number): string => String(n).padStart(2, '0')

/** A day's readings: with its year, without, its month (a claim's "March" is supported by any day of it). */
function dateKeys(year: number | undefined, month: number, day: number | undefined): string[] {
  if (month < 1 || month > 12 || (day !== undefined && (day < 1 || day > 31))) return []
  const keys = [`mo:${pad(month)}`]
  if (year !== undefined) keys.push(`m:${year}-${pad(month)}`)
  else keys.push(`mn:${pad(month)}`)
  if (day !== undefined) {
    keys.push(`d:${pad(month)}-${pad(day)}`)
    if (year !== undefined) keys.push(`d:${year}-${pad(month)}-${pad(day)}`)
    else keys.push(`dn:${pad(month)}-${pad(day)}`)
  }
  return keys
}

/**
 * What a claim's date must find in a source: the day with its year, or the same day where the
 * source gave no year; without a day, the month (with its year, or where the source gave none).
 */
function claimDateKeys(keys: readonly string[]): string[] {
  const full = keys.find((key) => /^d:\d{4}-/.test(key))
  if (full) return [full, `dn:${full.slice(7)}`]
  const day = keys.find((key) => key.startsWith('d:'))
  if (day) return [day]
  const month = keys.find((key) => key.startsWith('m:'))
  if (month) return [month, `mn:${month.slice(7)}`]
  return keys.filter((key) => key.startsWith('mo:'))
}

const timeKey = (hour: number, minute: number): string => `t:${pad(hour)}:${pad(minute)}`

function timeKeys(hour: number, minute: number, meridiem: string | undefined): string[] {
  if (hour > 23 || minute > 59) return []
  const m = meridiem?.toLowerCase().replace(/\./g, '')
  if (m === 'pm') return hour > 12 ? [] : [timeKey(hour === 12 ? 12 : hour + 12, minute)]
  if (m === 'am') return hour > 12 ? [] : [timeKey(hour === 12 ? 0 : hour, minute)]
  // "2:30" without am/pm may be either half of the day.
  return hour >= 1 && hour <= 11 ? [timeKey(hour, minute), timeKey(hour + 12, minute)] : [timeKey(hour, minute)]
}

// ---------------------------------------------------------------------------------------------
// The scanners, most specific first; a span taken by one is not read again by the next.

type Scanner = { pattern: RegExp; read(match: RegExpExecArray): Omit<FactMention, 'start' | 'end' | 'text'> | undefined }

// Latin letters only: a digit inside a Latin word ("k8s") is part of the word, one between
// Japanese or Chinese characters ("2時間") is a number.
const NOT_AFTER = '(?<![\\p{Script=Latin}\\p{N}_.,/:-])'
const NOT_BEFORE = '(?![\\p{Script=Latin}\\p{N}_])'
const DIGITS_START = '(?<![\\p{Script=Latin}\\p{N}_:/]|\\d[.,])'

/** A number in a date written with unit characters: digits or numerals (2025, 二〇二五, 十五). */
const CJK_NUMBER = `(\\d{1,4}|${NUMERAL_RUN})`

/** A date with unit characters; `day` and `year` may be missing. */
function unitDate(year: string | undefined, month: string | undefined, day: string | undefined): Omit<FactMention, 'start' | 'end' | 'text'> | undefined {
  const y = year === undefined ? undefined : writtenNumber(year)
  const m = month === undefined ? undefined : writtenNumber(month)
  const d = day === undefined ? undefined : writtenNumber(day)
  if (m === undefined || (year !== undefined && (y === undefined || y < 1000)) || (day !== undefined && d === undefined)) return undefined
  const keys = dateKeys(y, m, d)
  return keys.length > 0 ? { kind: 'date', keys, values: y === undefined ? [] : [String(y)], hasUnit: false, claim: true } : undefined
}

/** A date with a month name of a language table: 15. März 2025, 1er mars, 15 de marzo de 2025, März 2025. */
function namedMonthDate(year: string | undefined, month: string, day: string | undefined): Omit<FactMention, 'start' | 'end' | 'text'> | undefined {
  const m = monthOfName(month)
  if (m === undefined) return undefined
  const keys = dateKeys(year === undefined ? undefined : Number(year), m, day === undefined ? undefined : Number(day))
  return keys.length > 0 ? { kind: 'date', keys, values: year === undefined ? [] : [year], hasUnit: false, claim: true } : undefined
}

// The language tables' forms (decision 0077). Dates with unit characters and numerals are read
// first (no English form overlaps them, and a date's digits must not be read as bare numbers);
// month names after the English dates ("1st September 2023" is English, and stays one date).
const UNIT_SCANNERS: Scanner[] = [
  {
    // 2025年3月15日, 三月十五日, 2025년 3월 15일, 3月15号, 2025年3月, 3月.
    pattern: new RegExp(`(?:${CJK_NUMBER}\\s*${DATE_UNIT.year}\\s*)?${CJK_NUMBER}\\s*${DATE_UNIT.month}(?:\\s*${CJK_NUMBER}\\s*${DATE_UNIT.day})?`, 'gu'),
    read: (m) => unitDate(m[1], m[2], m[3]),
  },
  {
    // Numerals written as characters: 三, 十五, 二千二十五. One character alone (一, 十) is also part
    // of many words (一緒, 十分): a reading a source offers, not a figure a claim states.
    pattern: new RegExp(NUMERAL_RUN, 'gu'),
    read: (m) => {
      const value = numeralValue(m[0])
      return value === undefined ? undefined : { kind: 'number', keys: [], values: [num(value)], hasUnit: false, claim: [...m[0]].length > 1 }
    },
  },
]

const NAMED_MONTH_SCANNERS: Scanner[] = [
  {
    // 15. März 2025, 15 mars 2025, 1er mars, 15 de marzo de 2025.
    pattern: new RegExp(`${NOT_AFTER}(\\d{1,2})(?:\\.|er|º|°)?\\s+(?:de\\s+)?(${MONTH_NAME})(?:\\.?,?\\s+(?:de\\s+)?(\\d{4}))?${NOT_BEFORE}`, 'giu'),
    read: (m) => namedMonthDate(m[3], m[2] ?? '', m[1]),
  },
  {
    // März 2025, marzo de 2025.
    pattern: new RegExp(`(?<![\\p{L}])(${MONTH_NAME})\\.?\\s+(?:de\\s+)?(\\d{4})${NOT_BEFORE}`, 'giu'),
    read: (m) => namedMonthDate(m[2], m[1] ?? '', undefined),
  },
]

const SCANNERS: Scanner[] = [
  ...UNIT_SCANNERS,
  {
    // ISO dates, with a time when one follows: 2026-03-04, 2026-03-04T10:30:00Z.
    pattern: new RegExp(`${NOT_AFTER}(\\d{4})-(\\d{1,2})-(\\d{1,2})(?:[T ](\\d{1,2}):(\\d{2})(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?${NOT_BEFORE}`, 'gu'),
    read: (m) => {
      const keys = dateKeys(Number(m[1]), Number(m[2]), Number(m[3]))
      if (m[4] !== undefined) keys.push(timeKey(Number(m[4]), Number(m[5])))
      return keys.length > 0 ? { kind: 'date', keys, values: [m[1] ?? ''], hasUnit: false, claim: true } : undefined
    },
  },
  {
    // March 4, March 4th 2026, Mar. 4, 2026.
    pattern: new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s+(\\d{4}))?${NOT_BEFORE}`, 'giu'),
    read: (m) => date(m[3], m[1] ?? '', m[2]),
  },
  {
    // 4 March, 4th of March 2026.
    pattern: new RegExp(`${NOT_AFTER}(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}(?:,?\\s+(\\d{4}))?${NOT_BEFORE}`, 'giu'),
    read: (m) => date(m[3], m[2] ?? '', m[1]),
  },
  {
    // March 2026.
    pattern: new RegExp(`\\b${MONTH}\\s+(\\d{4})${NOT_BEFORE}`, 'giu'),
    read: (m) => date(m[2], m[1] ?? '', undefined),
  },
  ...NAMED_MONTH_SCANNERS,
  {
    // 3/4/2026 (March 4 or April 3), 4.3.2026 (day first).
    pattern: new RegExp(`${NOT_AFTER}(\\d{1,2})([/.])(\\d{1,2})\\2(\\d{4}|\\d{2})${NOT_BEFORE}`, 'gu'),
    read: (m) => {
      const year = Number(m[4]?.length === 2 ? `20${m[4]}` : m[4])
      const a = Number(m[1])
      const b = Number(m[3])
      const keys = m[2] === '.' ? dateKeys(year, b, a) : [...dateKeys(year, a, b), ...dateKeys(year, b, a)]
      return keys.length > 0 ? { kind: 'date', keys: [...new Set(keys)], values: [String(year)], hasUnit: false, claim: true } : undefined
    },
  },
  {
    // A month named on its own ("in March"), capitalised: "may" and "march" are verbs too.
    pattern: /\b(January|February|March|April|June|July|August|September|October|November|December)\b/gu,
    read: (m) => ({ kind: 'date', keys: dateKeys(undefined, monthOf(m[1] ?? ''), undefined), values: [], hasUnit: false, claim: true }),
  },
  {
    // 14:30, 2:30 pm, 2pm.
    pattern: new RegExp(`${NOT_AFTER}(\\d{1,2})(?::(\\d{2}))?\\s?(am|pm|a\\.m\\.|p\\.m\\.)?(?![\\p{Script=Latin}\\p{N}_:])`, 'giu'),
    read: (m) => {
      if (m[2] === undefined && m[3] === undefined) return undefined
      const keys = timeKeys(Number(m[1]), Number(m[2] ?? 0), m[3])
      return keys.length > 0 ? { kind: 'time', keys, values: [], hasUnit: false, claim: true } : undefined
    },
  },
  {
    // Versions and addresses: 1.2.3, 10.0.0.1 — the same only as written.
    pattern: new RegExp(`${NOT_AFTER}v?\\d+(?:\\.\\d+){2,}${NOT_BEFORE}`, 'giu'),
    read: (m) => ({ kind: 'literal', keys: [`l:${m[0].toLowerCase().replace(/^v/, '')}`], values: [], hasUnit: false, claim: true }),
  },
  {
    // Digits: 2, 2.5, 2,5, 1,000, $40k, 40 thousand, 2 hours, 2h, 2-hour, 25%, 25 per cent, 1.5 GB.
    pattern: new RegExp(
      `${DIGITS_START}([$€£])?\\s?(\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d+(?:[.,]\\d+)?)(?:\\s?(${MULTIPLIER_WORDS})(?![\\p{Script=Latin}\\p{N}]))?(?:\\s?-?\\s?(%|per cent|${UNIT_WORDS})(?![\\p{Script=Latin}\\p{N}]))?`,
      'giu',
    ),
    read: (m) => {
      const digits = m[2] ?? ''
      // A comma before exactly three digits groups thousands; before one or two it is a decimal comma.
      const value = Number(/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(digits) ? digits.replace(/,/g, '') : digits.replace(',', '.'))
      if (!Number.isFinite(value)) return undefined
      const reading = value * (m[3] ? (MULTIPLIERS.get(m[3].toLowerCase()) ?? 1) : 1)
      const { keys, hasUnit } = quantity(reading, m[1] ?? m[4])
      const values = [num(reading)]
      // "5m" is five minutes or metres as well as five million.
      if (m[3]?.toLowerCase() === 'm' && m[4] === undefined && m[1] === undefined) {
        keys.push(...quantity(value, 'm').keys)
        values.push(num(value))
      }
      return { kind: 'number', keys, values, hasUnit, claim: true }
    },
  },
  {
    // Half an hour, an hour and a half, a day: readings a source offers, not figures a claim states.
    pattern: new RegExp(`\\b(?:(half)\\s+an?|an?)\\s+(${SPELLED_UNIT_WORDS})(\\s+and\\s+a\\s+half)?\\b`, 'giu'),
    read: (m) => {
      const value = m[1] ? 0.5 : m[3] ? 1.5 : 1
      const q = quantity(value, m[2])
      return q.hasUnit ? { kind: 'number', keys: q.keys, values: [num(value)], hasUnit: true, claim: false } : undefined
    },
  },
  {
    // Number words: two, twenty-five, a hundred and twenty, two and a half hours.
    pattern: new RegExp(`\\b(?:an?\\s+)?(${WORD}(?:(?:(?<=hundred|thousand|million|billion)\\s+and\\s+|[\\s-]+)${WORD})*)(\\s+and\\s+a\\s+half)?(?:\\s?-?\\s?(%|per cent|${UNIT_WORDS})(?![\\p{Script=Latin}\\p{N}]))?\\b`, 'giu'),
    read: (m) => {
      const run = wordsValue(m[1] ?? '')
      if (run === undefined) return undefined
      const value = run + (m[2] ? 0.5 : 0)
      const q = quantity(value, m[3])
      // A bare "one" or "a dozen" is more often a pronoun or a manner of speaking than a figure.
      const claim = q.hasUnit || !/^(?:an?\s+)?(?:one|zero)$/i.test(m[0].trim())
      return { kind: 'number', keys: q.keys, values: [num(value)], hasUnit: q.hasUnit, claim }
    },
  },
  {
    // "both", "a couple of": two, as a source says it (a table's number words: numberWordScanner).
    pattern: /\b(?:both|a\s+couple(?:\s+of)?)\b/giu,
    read: () => ({ kind: 'number', keys: [], values: ['2'], hasUnit: false, claim: false }),
  },
  {
    // Identifiers mixing letters and digits (v2, ec2, k8s): the same only as written, in any case.
    pattern: /(?<![\p{Script=Latin}\p{N}_.-])(?=[\p{Script=Latin}_-]*\d)(?=[\d_-]*\p{Script=Latin})[\p{Script=Latin}\d_-]+(?![\p{Script=Latin}\p{N}_])/gu,
    read: (m) => ({ kind: 'literal', keys: [`l:${m[0].toLowerCase()}`], values: [], hasUnit: false, claim: true }),
  },
]

function date(year: string | undefined, month: string, day: string | undefined): Omit<FactMention, 'start' | 'end' | 'text'> | undefined {
  const keys = dateKeys(year === undefined ? undefined : Number(year), monthOf(month), day === undefined ? undefined : Number(day))
  return keys.length > 0 ? { kind: 'date', keys, values: year === undefined ? [] : [year], hasUnit: false, claim: true } : undefined
}

const numberWordScanners = new Map<Language, Scanner | undefined>()

/** The number words of `language`'s table, each alone ("zwei Stunden"), read after every other form. */
function numberWordScanner(language: Language): Scanner | undefined {
  if (numberWordScanners.has(language)) return numberWordScanners.get(language)
  const words = language.table.numberWords
  const scanner: Scanner | undefined = words
    ? {
        pattern: new RegExp(`(?<![\\p{L}\\p{N}])(?:${Object.keys(words).map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}])`, 'giu'),
        read: (m) => {
          const value = words[m[0].toLowerCase()]
          return value === undefined ? undefined : { kind: 'number', keys: [], values: [num(value)], hasUnit: false, claim: true }
        },
      }
    : undefined
  numberWordScanners.set(language, scanner)
  return scanner
}

/** Every fact `text` states, in order of where it is (spans never overlap). */
export function factMentions(text: string): FactMention[] {
  const taken: boolean[] = []
  const mentions: FactMention[] = []
  const normalised = text.normalize('NFKC')
  const language = detectLanguage(normalised).rules
  const words = language && numberWordScanner(language)
  for (const scanner of words ? [...SCANNERS, words] : SCANNERS) {
    scanner.pattern.lastIndex = 0
    for (let m = scanner.pattern.exec(normalised); m !== null; m = scanner.pattern.exec(normalised)) {
      if (m[0].length === 0) {
        scanner.pattern.lastIndex++
        continue
      }
      const start = m.index + (m[0].length - m[0].trimStart().length)
      const end = m.index + m[0].trimEnd().length
      let free = true
      for (let i = start; i < end && free; i++) if (taken[i]) free = false
      if (!free) continue
      const read = scanner.read(m)
      if (!read) continue
      for (let i = start; i < end; i++) taken[i] = true
      mentions.push({ ...read, start, end, text: normalised.slice(start, end) })
    }
  }
  return mentions.sort((a, b) => a.start - b.start)
}

/** What a claim's mention must find among a source's keys (its date narrowed as `claimDateKeys` says). */
function wanted(mention: FactMention): string[] {
  return mention.kind === 'date' ? claimDateKeys(mention.keys) : mention.keys
}

/**
 * What a text's mentions offer a claim (`mentionSupported`), gathered once: every reading, every
 * plain value, and the plain values of mentions without a unit. Checking a claim against it costs
 * the claim's readings, not the text's length, so a long text is compared with many others in
 * time linear in its mentions rather than in their product.
 */
export interface MentionIndex {
  keys: ReadonlySet<string>
  values: ReadonlySet<string>
  /** The values of mentions without a unit: all a claim with a unit may match by value. */
  bareValues: ReadonlySet<string>
}

export function mentionIndex(sources: readonly FactMention[]): MentionIndex {
  const keys = new Set<string>()
  const values = new Set<string>()
  const bareValues = new Set<string>()
  for (const source of sources) {
    for (const key of source.keys) keys.add(key)
    for (const value of source.values) {
      values.add(value)
      if (!source.hasUnit) bareValues.add(value)
    }
  }
  return { keys, values, bareValues }
}

/**
 * Whether `sources` state `claim`'s fact: a reading in common; or, for a number, the same value
 * where one side gives no unit ("2 hours" from "2 or 3 hours"; "2" from "two servers").
 */
export function mentionSupported(claim: FactMention, sources: readonly FactMention[] | MentionIndex): boolean {
  const index = Array.isArray(sources) ? mentionIndex(sources) : (sources as MentionIndex)
  if (wanted(claim).some((key) => index.keys.has(key))) return true
  if (claim.kind !== 'number') return false
  const values = claim.hasUnit ? index.bareValues : index.values
  return claim.values.some((value) => values.has(value))
}
