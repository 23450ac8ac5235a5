/**
 * When a reported event happened, as the user said it and, where the turn has a time, as a date
 * (decision 0070): "Last Friday, I made a dessert" said on Wednesday 2022-09-14 is kept as "… last
 * Friday (2022-09-09)". A fact read later, or by someone else, cannot resolve "last Friday" itself;
 * the phrase is kept beside the date so the user's own words are never replaced by our reckoning.
 * Only phrases counted from the moment of speaking are resolved; "recently", "lately", "a while
 * ago" stay as said.
 */

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const
const NUMBERS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, 'a couple of': 2, 'a few': 3 }
const NUMBER = `(?:\\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of)`

/** A time phrase counted from the moment of speaking (its words as said). */
export const WHEN = `(?:yesterday|today|tonight|this (?:morning|afternoon|evening|week|weekend|month|year)|last (?:night|week|weekend|month|year|${WEEKDAYS.join('|')})|(?:on )?(?:${WEEKDAYS.join('|')})|the other day|earlier (?:today|this week)|recently|lately|a while ago|${NUMBER} (?:days?|weeks?|months?|years?) ago)`

/** A time phrase before the subject ("Last Friday, I …"), cut from the clause and kept for the fact. */
export const LEADING_WHEN = new RegExp(`^(${WHEN}|in (?:19|20)\\d\\d|in (?:January|February|March|April|May|June|July|August|September|October|November|December)),?\\s+(?=(?:I|we|my)\\b)`, 'i')

const iso = (date: Date): string => date.toISOString().slice(0, 10)
const addDays = (date: Date, days: number): Date => new Date(date.getTime() + days * 86_400_000)

/** The date a phrase points to, said at `at`, as the precision it has (a day, a month, a year), or undefined. */
export function resolveWhen(phrase: string, at: Date | undefined): string | undefined {
  if (at === undefined || Number.isNaN(at.getTime())) return undefined
  const words = phrase.toLowerCase().replace(/^on /, '').trim()
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
  if (words === 'yesterday') return iso(addDays(day, -1))
  if (words === 'today' || words === 'tonight' || /^this (?:morning|afternoon|evening)$/.test(words) || words === 'earlier today') return iso(day)
  if (words === 'last night') return iso(addDays(day, -1))
  const weekday = WEEKDAYS.indexOf(words.replace(/^last /, '') as (typeof WEEKDAYS)[number])
  if (weekday >= 0) {
    // "Friday" or "last Friday" said on a Wednesday: the Friday before it; said on a Friday, the week before.
    const back = (day.getUTCDay() - weekday + 7) % 7 || 7
    return iso(addDays(day, -back))
  }
  if (words === 'last week' || words === 'last weekend') return `the week before ${iso(day)}`
  if (words === 'last month') return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() - 1, 1)).toISOString().slice(0, 7)
  if (words === 'last year') return String(day.getUTCFullYear() - 1)
  if (words === 'this month') return iso(day).slice(0, 7)
  if (words === 'this year') return String(day.getUTCFullYear())
  const ago = new RegExp(`^(${NUMBER}) (day|week|month|year)s? ago$`).exec(words)
  if (ago?.[1] && ago[2]) {
    const count = /^\d+$/.test(ago[1]) ? Number(ago[1]) : (NUMBERS[ago[1]] ?? 0)
    if (ago[2] === 'day') return iso(addDays(day, -count))
    if (ago[2] === 'week') return `the week of ${iso(addDays(day, -7 * count))}`
    if (ago[2] === 'month') return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() - count, 1)).toISOString().slice(0, 7)
    return `about ${day.getUTCFullYear() - count}`
  }
  return undefined
}

const TRAILING_WHEN = new RegExp(`\\b(${WHEN})$`, 'i')

/** `fact` with the date its time phrase (at its end) points to: "… last Friday (2022-09-09)". */
export function withDate(fact: string, at: Date | undefined): string {
  const phrase = TRAILING_WHEN.exec(fact.replace(/[.!]+$/, ''))?.[1]
  const date = phrase === undefined ? undefined : resolveWhen(phrase, at)
  return date === undefined ? fact : `${fact.replace(/[.!]+$/, '')} (${date})`
}
