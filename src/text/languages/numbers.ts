/**
 * Numbers and dates as the language tables write them (decision 0077): numerals written as
 * characters (三, 十五, 二〇二五, 二千二十五), dates with unit characters (2025年3月15日,
 * 三月十五日, 2025년 3월 15일) and month names (15. März 2025, 15 mars 2025, 15 de marzo de 2025).
 * Full-width digits need nothing here: the readers normalise text with NFKC first (２０２５ → 2025).
 * All tables at once, whatever the message's language: a source and a claim must read the same
 * fact the same way, and these forms do not occur in English text.
 */
import { escapeRegExp, LANGUAGE_TABLES } from './language.ts'

const NUMERALS = new Map<string, number>(LANGUAGE_TABLES.flatMap((table) => Object.entries(table.numerals ?? {})))

/** A run of numeral characters, as a regular-expression source (a character class, repeated). */
export const NUMERAL_RUN = `[${[...NUMERALS.keys()].join('')}]+`

/**
 * The value of a run of numeral characters: positional when it has no multiplier (二〇二五 → 2025),
 * else by multipliers (二千二十五 → 2025, 十五 → 15, 一万二千 → 12000); undefined for other text.
 */
export function numeralValue(run: string): number | undefined {
  const values = [...run].map((char) => NUMERALS.get(char))
  if (values.length === 0 || values.some((value) => value === undefined)) return undefined
  const digits = values as number[]
  if (digits.every((value) => value < 10)) return Number(digits.join(''))
  let total = 0
  let section = 0
  let current = 0
  for (const value of digits) {
    if (value >= 10_000) {
      total += (section + current || 1) * value
      section = 0
      current = 0
    } else if (value >= 10) {
      section += (current || 1) * value
      current = 0
    } else current = value
  }
  return total + section + current
}

/** A number as written in a date: digits or numeral characters. */
export function writtenNumber(text: string): number | undefined {
  return /^\d+$/.test(text) ? Number(text) : numeralValue(text)
}

function unitPattern(pick: (units: NonNullable<(typeof LANGUAGE_TABLES)[number]['dateUnits']>) => readonly string[]): string {
  const spellings = new Set(LANGUAGE_TABLES.flatMap((table) => (table.dateUnits ? pick(table.dateUnits) : [])))
  return `(?:${[...spellings].map(escapeRegExp).join('|')})`
}

/** The unit characters of dates (年|년, 月|월, 日|号|號|일), as regular-expression sources. */
export const DATE_UNIT = { year: unitPattern((units) => units.year), month: unitPattern((units) => units.month), day: unitPattern((units) => units.day) }

const MONTH_OF = new Map<string, number>(LANGUAGE_TABLES.flatMap((table) => (table.months ?? []).flatMap((spellings, index) => spellings.map((spelling) => [spelling, index + 1] as const))))

/** Every table's month names, longest first, as a regular-expression source (match case-insensitively). */
export const MONTH_NAME = `(?:${[...MONTH_OF.keys()]
  .sort((a, b) => b.length - a.length)
  .map(escapeRegExp)
  .join('|')})`

/** The month (1–12) a table's month name stands for. */
export function monthOfName(name: string): number | undefined {
  return MONTH_OF.get(name.toLowerCase())
}

const NUMERAL_CHARS = `[${[...NUMERALS.keys()].join('')}]`
const STATES_A_NUMBER = new RegExp(`\\p{Nd}|${NUMERAL_CHARS}{2}|${NUMERAL_CHARS}(?:${DATE_UNIT.year}|${DATE_UNIT.month}|${DATE_UNIT.day})`, 'u')

/**
 * Whether `text` states a number: digits of any script (full-width ２ included), two numeral
 * characters or more (十五), or one before a date unit (三月). One numeral character alone is
 * part of too many words (一緒, 十分) to count.
 */
export function statesANumber(text: string): boolean {
  return STATES_A_NUMBER.test(text)
}
