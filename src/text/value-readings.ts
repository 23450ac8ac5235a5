/**
 * Facts with values (issue 31, decision 0078): a clause read as (subject, value) — "my rent is now
 * $1,450" is the subject `rent` with the money value 1450; "we switched the database from MySQL to
 * Postgres" is `database` with the name `postgres` (and the earlier name `mysql`); "I moved to
 * Lisbon" is the speaker's `residence` with the name `lisbon`. A later statement *changes* an
 * earlier one when a reading of each has the same subject and a value of the same type that
 * differs; the time is the caller's (a message's date). Nothing here is tuned to a data set: the
 * subject is found by the clause's structure (the noun phrase before a copula or a change verb, the
 * object of a change verb, or a verb that names its subject — live/move → residence, work at →
 * workplace, work as → role), the value by its type (money, a number with its unit, a version, a
 * date, a time of day, a state, a name).
 *
 * A clause that reports one occasion ("I ran 5 km today") is an event, not a value: it is read only
 * when it also says that something changed ("now", "switched", "anymore"). English only.
 */
import { stem, STOP_WORDS } from './analyse.ts'

/** One (subject, value) reading of a clause. */
export interface ValueReading {
  /**
   * Stems of the subject's words: `['login', 'api']`, `['i', 'residence']` (`i` is the speaker).
   * Empty for a name merely mentioned, which only a change "from" that name can meet.
   */
  subject: readonly string[]
  /** The value's type: `money`, `percent`, `duration`, `mass`, `length`, `data`, `temperature`, `count:<noun>`, `version`, `date`, `time`, `state:<kind>`, `name`, `role` (a bare number has none, and is not read). */
  type: string
  /** The value, normalised within its type (a number in the type's base unit, a lowercase name). */
  value: string
  /** The value it replaced, when the clause says so ("from MySQL to Postgres"). */
  from?: string
  /**
   * The conditions the value was measured under, when the clause states them: the clause's other
   * quantities after "at", "on", "with", "under", "over", "across", "using", "for" or "per"
   * ("240 ms at 500 requests per second" → `count:request=500`), as `type=value`.
   */
  conditions?: readonly string[]
}

const MONTHS = 'jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?'
const WEEKDAYS = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday'

/** Units by type, with the factor to the type's base unit (durations in seconds, masses in grams, …). */
const UNITS: Record<string, { type: string; factor: number }> = {}
function units(type: string, table: Record<string, number>): void {
  for (const [names, factor] of Object.entries(table)) for (const name of names.split(' ')) UNITS[name] = { type, factor }
}
units('duration', { 'ms millisecond milliseconds': 0.001, 's sec secs second seconds': 1, 'min mins minute minutes': 60, 'h hr hrs hour hours': 3600, 'day days': 86_400, 'week weeks wk wks': 604_800, 'month months': 2_629_800, 'year years yr yrs': 31_557_600 })
units('mass', { 'mg': 0.001, 'g gram grams': 1, 'kg kgs kilo kilos kilogram kilograms': 1000, 'lb lbs pound pounds': 453.6, 'oz ounce ounces': 28.35, 'stone': 6350 })
units('length', { 'mm': 0.001, 'cm': 0.01, 'm meter meters metre metres': 1, 'km kms kilometer kilometers kilometre kilometres': 1000, 'mi mile miles': 1609, 'ft foot feet': 0.3048, 'in inch inches': 0.0254 })
units('data', { 'kb': 1e3, 'mb': 1e6, 'gb': 1e9, 'tb': 1e12 })
units('percent', { '% percent pct': 1 })
units('temperature', { '°c °f degree degrees': 1 })
units('money', { 'dollar dollars usd bucks': 1, 'euro euros eur': 1, 'pound_sterling gbp': 1, 'yen jpy': 1 })

/**
 * States a subject is in, by the kind of state: two states of one kind are two values of one
 * subject ("on leave" then "back at work"); a state of another kind says nothing about it.
 */
const STATES: Record<string, string> = {}
for (const [kind, list] of Object.entries({
  work: 'on leave|on sick leave|on parental leave|on maternity leave|on paternity leave|on vacation|on holiday|on sabbatical|back at work|back to work|retired|unemployed|employed|self-employed|freelance|freelancing|full-time|part-time|between jobs|laid off|furloughed',
  relationship: 'single|married|engaged|divorced|separated|widowed|dating someone|in a relationship',
  diet: 'vegan|vegetarian|pescatarian|keto|gluten-free',
  progress: 'done|finished|complete|completed|in progress|pending|blocked|on hold|paused|cancelled|canceled|postponed|shipped|live|launched|deprecated|abandoned|approved|rejected|open|closed|resolved',
  switch: 'enabled|disabled|turned on|turned off|active|inactive',
  visibility: 'public|private|internal',
  health: 'healthy|sick|ill|injured|recovered|pregnant',
})) {
  for (const state of list.split('|')) STATES[state] = kind
}
const STATE_PATTERN = Object.keys(STATES)
  .sort((a, b) => b.length - a.length)
  .map((s) => s.replace(/[-\s]/g, (c) => (c === '-' ? '-' : '\\s+')))
  .join('|')

/** Verbs that say a value changed: "switched X from A to B", "the rent went up to …". */
const CHANGE_VERBS =
  'switched|switching|switch|changed|changing|change|moved|moving|migrated|migrating|upgraded|upgrading|downgraded|updated|raised|lowered|increased|decreased|bumped|cut|dropped|rose|went up|went down|jumped|fell|rescheduled|pushed|postponed|shifted|converted|transitioned|renamed|replaced|swapped|reduced|extended|promoted'
/** A copula or a verb whose object is the subject's value ("the API answers in 120 ms", "rent costs $900"). */
const COPULAS =
  "am|'m|'re|is|are|was|has|have|sleeps?|earns?|makes?|pays?|spends?|were|'s|has been|have been|will be|becomes|became|stands at|sits at|costs?|takes?|runs?|weighs?|measures?|equals|averages?|answers in|responds in|comes to|totals?|reached|hit|hits|is set to|set to"
/** Words between a copula and its value ("is now about", "is on", "takes up to"). */
const FILLERS = 'now |currently |still |only |about |around |roughly |just |at |in |on |by |up to |down to |over |under |an? |the '
/** Copulas that measure, so that "I weigh", "I sleep", "I earn" name the speaker's quantity. */
const MEASURING = /^(?:weighs?|costs?|takes?|runs?|measures?|averages?|totals?|sleeps?|earns?|makes?|pays?|spends?|has|have)$/
/** Words that mark a clause as one occasion (an event, not a value). */
const OCCASION = new RegExp(`\\b(?:today|yesterday|tonight|this morning|this afternoon|this evening|last night|last (?:week|weekend|month|year)|(?:\\d+|a|an|two|three|few) (?:days?|weeks?|months?|years?) ago|on (?:${WEEKDAYS}))\\b`, 'i')
/** Words that say the value is the current one, or that it changed. */
const CHANGE_CUE = new RegExp(`\\b(?:now|currently|anymore|any more|no longer|these days|from now on|instead|${CHANGE_VERBS})\\b`, 'i')

/** Clauses of a text: sentences, cut again at "; " and at ", and/but/so" (a list inside stays whole). */
function clausesOf(text: string): string[] {
  const out: string[] = []
  // Code states no fact in words: fenced blocks and inline spans go, and a line that reads as code is skipped.
  const prose = text.replace(/```[\s\S]*?(?:```|$)/g, '\n').replace(/`[^`\n]*`/g, ' ')
  // A title's or an abbreviation's full stop ends no sentence ("my therapist is now Dr. Moreau").
  for (const sentence of prose.split(/(?<=[.!?])(?<!\b(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Jr|Sr|Mt|vs|e\.g|i\.e)\.)\s+|\n+/)) {
    if (/[{}]|\w\(|=>|==|::|;\s*$/.test(sentence)) continue
    for (const clause of sentence.split(/;\s+|,\s+(?:and|but|so|while|whereas)\s+|\s+(?:but|whereas)\s+/i)) {
      const trimmed = clause.trim()
      if (trimmed.length > 0 && trimmed.length <= 400 && !trimmed.endsWith('?')) out.push(trimmed)
    }
  }
  return out
}

const stemOf = (word: string): string => stem(word.toLowerCase().replace(/['’]s$/, '').replace(/['’]/g, ''))

/** Content-word stems of a noun phrase, its last (the head) last; pronouns as the holder (`i`, `we`). */
function subjectOf(phrase: string): string[] {
  const words = phrase
    .toLowerCase()
    // When, not what: "these days I sleep …" is about the speaker's sleep.
    .replace(/\b(?:these days|nowadays|lately|at the moment|right now|for now|so far|this year|these weeks)\b/g, ' ')
    .replace(/['’]s\b/g, '')
    .split(/[^\p{L}\p{N}'-]+/u)
    .filter((w) => w !== '')
  const out: string[] = []
  for (const word of words.slice(-5)) {
    // The speaker and their household are one holder ("I live in …", later "we moved to …"); "my"
    // and "our" say whose, and the noun after them is the holder ("my sister") or the subject ("my rent").
    if (word === 'i' || word === 'we') out.push('i')
    else if (word === 'my' || word === 'our') continue
    else if (!STOP_WORDS.has(word) && !/^(now|currently|still|new|old|current|actually|finally|officially|recently)$/.test(word) && !/^\d/.test(word)) out.push(stemOf(word))
  }
  return [...new Set(out)]
}

/** The number of a numeric text ("1,450", "1.2k", "3.5"). */
function numberOf(text: string): number {
  const match = /(\d[\d,]*(?:\.\d+)?)(?:\s*(k|m|bn)\b)?/i.exec(text)
  if (!match) return Number.NaN
  const scale = { k: 1e3, m: 1e6, bn: 1e9 }[(match[2] ?? '').toLowerCase() as 'k' | 'm' | 'bn'] ?? 1
  return Number.parseFloat((match[1] as string).replace(/,/g, '')) * scale
}

/** A value found in a clause: where it starts and ends, its type and normalised value. */
interface Found {
  start: number
  end: number
  type: string
  value: string
}

const NUMBER = '(?:[$€£¥]\\s?)?\\d[\\d,]*(?:\\.\\d+)?(?:\\s?(?:k|m|bn)\\b)?'

/**
 * Every match of a global pattern in `text`, left to right — what `text.matchAll(re)` gives,
 * without the copy of the pattern matchAll makes at each call (a fifth of reading a clause).
 */
function everyMatch(re: RegExp, text: string): RegExpExecArray[] {
  const out: RegExpExecArray[] = []
  re.lastIndex = 0
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push(m)
    // An empty match moves on by one code point, as matchAll does.
    if (m[0] === '') re.lastIndex += (text.codePointAt(re.lastIndex) ?? 0) > 0xffff ? 2 : 1
  }
  return out
}

// The patterns of valuesIn, each compiled once (global: every match of a clause is read).
const DATE_VALUE = new RegExp(`\\b\\d{4}-\\d{2}-\\d{2}\\b|\\b(?:${MONTHS})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?(?:,?\\s+\\d{4})?\\b|\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?(?:${MONTHS})\\b(?:,?\\s+\\d{4})?`, 'giu')
const TIME_VALUE = /\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b/giu
const VERSION_VALUE = /\b(?:v|version\s+)?\d+\.\d+(?:\.\d+){1,2}\b|\bv\d+(?:\.\d+)?\b|\bversion\s+\d+(?:\.\d+)?\b/giu
const NUMBER_VALUE = new RegExp(`${NUMBER}(?:\\s?(%|°[cf]|[a-z]+))?`, 'giu')
const STATE_VALUE = new RegExp(`\\b(?:${STATE_PATTERN})\\b`, 'giu')

/** Every typed value in a clause, left to right, none overlapping another. */
function valuesIn(clause: string): Found[] {
  const found: Found[] = []
  const take = (re: RegExp, read: (m: RegExpExecArray) => { type: string; value: string } | undefined): void => {
    for (const m of everyMatch(re, clause)) {
      const start = m.index as number
      const end = start + m[0].length
      if (found.some((f) => start < f.end && end > f.start)) continue
      const reading = read(m as RegExpExecArray)
      if (reading) found.push({ start, end, ...reading })
    }
  }
  // A date, a time, a version and a number each hold a digit: a clause without one has none of them.
  if (/[0-9]/.test(clause)) {
    take(DATE_VALUE, (m) => ({ type: 'date', value: m[0].toLowerCase().replace(/(st|nd|rd|th)\b|of|,|\./g, '').replace(/\s+/g, ' ').trim() }))
    take(TIME_VALUE, (m) => ({ type: 'time', value: m[0].toLowerCase().replace(/\s/g, '') }))
    take(VERSION_VALUE, (m) => ({ type: 'version', value: m[0].toLowerCase().replace(/^(?:version\s+|v)/, '') }))
    take(NUMBER_VALUE, (m) => {
      const text = m[0]
      const number = numberOf(text)
      if (!Number.isFinite(number)) return undefined
      const unitWord = (m[1] ?? '').toLowerCase()
      const currency = /^[$€£¥]/.test(text)
      if (currency) return { type: 'money', value: String(number) }
      const unit = UNITS[unitWord]
      if (unit) return { type: unit.type, value: String(Math.round(number * unit.factor * 1000) / 1000) }
      // A year alone is a date; a number before a noun counts that noun ("3 cats", "20 concurrent requests" counts requests).
      if (unitWord === '' && /^(19|20)\d\d$/.test(text)) return { type: 'date', value: text }
      if (/^[a-z]{3,}$/.test(unitWord) && !STOP_WORDS.has(unitWord)) return { type: `count:${stemOf(unitWord)}`, value: String(number) }
      // A bare number ("2", "0.4") is a value only where a copula or a change verb says whose (readingAt).
      return { type: 'number', value: String(number) }
    })
  }
  take(STATE_VALUE, (m) => {
    const state = m[0].toLowerCase().replace(/\s+/g, ' ')
    return { type: `state:${STATES[state] ?? 'other'}`, value: state }
  })
  return found.sort((a, b) => a.start - b.start)
}

/** A proper name (capitalised words, not the clause's first word alone), or a lowercase tool-like word after "use"/"to". */
const NAME = "(?:[A-Z][\\p{L}\\p{N}.+#'-]*(?:\\s+(?:[A-Z][\\p{L}\\p{N}.+#'-]*|\\d+(?:\\.\\d+)*))*)"

/** Readings a verb gives by naming its subject: where one lives, works, what one works as. */
const FRAMED: Array<{ re: RegExp; subject: string }> = [
  { re: new RegExp(`\\b(I|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[Mm]y \\w+|[Oo]ur \\w+|${NAME})(?:\\s+|(?=['’]))(?:have |has |had |just |recently |finally |now )*(?:moved|relocated|live|lives|living|am living|is living|are living|settled|am based|is based|are based|['’]m based|['’]m living|['’]re based|['’]re living|is located|are located|is|are)\\s+(?:back\\s+)?(?:to|in)\\s+(${NAME})`, 'u'), subject: 'residence' },
  { re: new RegExp(`\\b(I|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[Mm]y \\w+|[Oo]ur \\w+|${NAME})\\s+(?:have |has |had |just |recently |finally |now |still )*(?:work|works|working|am working|is working|'m working|joined|started at|started working at|got a job at|took a job at|accepted an offer from)\\s+(?:at |for |with )?(${NAME})`, 'u'), subject: 'workplace' },
  { re: new RegExp(`\\b(I|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[Mm]y \\w+|${NAME})\\s+(?:have |has |had |just |now |recently )*(?:work as|works as|working as|'m working as|got promoted to|was promoted to|became|am now|'m now|is now)\\s+(?:an? |the )?((?:senior |junior |lead |head |chief |staff |principal |assistant )?[a-z]+(?: [a-z]+)?(?: (?:manager|engineer|developer|designer|director|officer|analyst|teacher|nurse|lead)))`, 'u'), subject: 'role' },
]

/** The holder named by a framed reading's first group: the speaker for I/we/he/she/they, else the phrase. */
function holderOf(who: string): string[] {
  const lower = who.toLowerCase()
  if (lower === 'i' || lower === 'we') return ['i']
  if (/^(he|she|they)$/.test(lower)) return ['they']
  return subjectOf(who)
}

// The frames of readingAt, compiled once (not global: `exec` keeps no state between calls).
const CHANGE_BEFORE = new RegExp(`^(.*?)\\b(?:${CHANGE_VERBS})\\b(?:\\s+(.*?))?(?:\\s+from\\s+(.+?))?\\s+(?:to|for|with)\\s+(?:an?\\s+|the\\s+)?$`, 'iu')
const COPULA_BEFORE = new RegExp(`^(.*?)\\s*(?:\\b(${COPULAS})\\b|:)\\s*(?:${FILLERS})*$`, 'iu')

/** The reading of a clause around one value, by the structure before it. */
function readingAt(clause: string, value: Found): ValueReading | undefined {
  // The frames below end at the value and the subject is the last few words: the clause's last 120
  // characters before the value are enough, and keep the end-anchored patterns linear.
  const whole = clause.slice(0, value.start)
  const before = whole.length > 120 ? whole.slice(-120).replace(/^\S*\s/, '') : whole
  // "64 GB of memory per node", "I pay $1,450 (now) for the flat": the quantity's subject follows it.
  const of = /^\s*(?:now\s+)?(?:of|for)\s+(?:the\s+|my\s+|our\s+)?([\p{L}\s-]{2,40}?)(?=\s+(?:for|on|in|at|to|and|is|are|was|we|i|by|since|after|before)\b|[,.;!]|$)/iu.exec(clause.slice(value.end))
  if (of && !value.type.startsWith('state:') && value.type !== 'number') {
    const subject = subjectOf(of[1] as string)
    if (subject.length > 0) return { subject, type: value.type, value: value.value }
  }
  // "… switched/changed <object> from <A> to <value>", "the rent went up (from $900) to <value>".
  const change = CHANGE_BEFORE.exec(before)
  if (change) {
    const object = subjectOf(change[2] ?? '').filter((w) => w !== 'i' && w !== 'we')
    const subject = object.length > 0 ? object : subjectOf(change[1] ?? '')
    const from = change[3] ? change[3].trim().toLowerCase() : undefined
    if (subject.length > 0) return { subject, type: value.type, value: value.value, ...(from !== undefined ? { from } : {}) }
  }
  // "<noun phrase> is (now) <value>", "the API answers in <value>", "rent: <value>".
  const copula = COPULA_BEFORE.exec(before)
  if (copula) {
    const subject = subjectOf(copula[1] ?? '')
    if (subject.length > 0 && subject.some((w) => w !== 'i')) return { subject, type: value.type, value: value.value }
    // "I weigh 82 kg", "we have 3 cats": the speaker's quantity, named by the verb or the counted noun.
    const verb = (copula[2] ?? '').toLowerCase()
    if (subject.length > 0 && value.type.startsWith('count:')) return { subject: [...subject, value.type.slice('count:'.length)], type: value.type, value: value.value }
    if (subject.length > 0 && MEASURING.test(verb)) return { subject: [...subject, stemOf(verb.split(' ')[0] as string)], type: value.type, value: value.value }
    // "I'm on leave", "we are now vegan": the speaker's state of that kind.
    if (value.type.startsWith('state:') && subject.length > 0) return { subject: [...subject, value.type.slice('state:'.length)], type: value.type, value: value.value }
  }
  // "we now use <value> for <purpose>" is handled with names; a number in any other frame takes the
  // nearest noun phrase before it ("a budget of $900", "deadline March 5").
  const near = subjectOf(before.replace(/\b(?:of|for|by|around|about|is|are|at|in|to)\s*$/i, '')).slice(-3)
  if (near.length > 0 && !value.type.startsWith('state:') && value.type !== 'number') return { subject: near, type: value.type, value: value.value }
  return undefined
}

// The frames of nameReadings, compiled once (`exec` of a non-global pattern and `matchAll` keep no state).
const USES_NOW = new RegExp(`\\b(?:now|currently|instead|these days)\\b[^.]*?\\b(?:use|uses|using|run|runs|running|rely on|relies on|on)\\s+(${NAME})(?:\\s+(?:for|to|as|in)\\s+([\\w\\s-]{2,40}))?|\\b(?:use|uses|using|run|runs|running)\\s+(${NAME})\\s+(?:now|instead|these days)\\b`, 'u')
const USE_FOR = new RegExp(`\\b(?:use|uses|using|run|runs|running)\\s+(${NAME})\\s+(?:for|to|as|in)\\s+([\\w\\s-]{2,40})`, 'u')
const REPLACED_WITH = new RegExp(`\\b(?:replaced|swapped|traded)\\s+(?:the\\s+|our\\s+|my\\s+)?([\\p{L}\\p{N}.+#'-]+(?:\\s+[\\p{L}\\p{N}.+#'-]+){0,2}?)\\s+(?:with|for)\\s+(?:an?\\s+|the\\s+)?(${NAME}|[a-z][\\w.+#-]*)(?:\\s+(?:as|for)\\s+(?:our\\s+|my\\s+|the\\s+)?([\\w\\s-]{2,40}))?`, 'iu')
const SWITCHED_FROM_TO = new RegExp(`\\b(?:${CHANGE_VERBS})\\b\\s*(.*?)\\s*\\bfrom\\s+(?:an?\\s+|the\\s+)?([\\p{L}\\p{N}.+#'-]+(?:\\s+[\\p{L}\\p{N}.+#'-]+){0,2}?)\\s+to\\s+(?:an?\\s+|the\\s+)?(${NAME}|[a-z][\\w.+#-]*)`, 'iu')
const NAME_COPULA = new RegExp(`\\b(?:[Mm]y|[Oo]ur|[Tt]he|[Tt]heir|[Hh]is|[Hh]er)\\s+([\\w\\s-]{2,40}?)\\s+(?:is|are)\\s+(?:now\\s+|currently\\s+)?(${NAME})`, 'u')
const NAME_MENTIONED = new RegExp(`(?<![\\p{L}\\p{N}])${NAME}`, 'gu')

/** Names as values: "(now) use(s) X (for Y)", "switched (Y) from A to X", "changed Y to X", "Y is now X". */
function nameReadings(clause: string): ValueReading[] {
  const out: ValueReading[] = []
  for (const frame of FRAMED) {
    const m = frame.re.exec(clause)
    if (m?.[2]) out.push({ subject: [...holderOf(m[1] as string), frame.subject], type: frame.subject === 'role' ? 'role' : 'name', value: (m[2] as string).toLowerCase().trim() })
  }
  const uses = USES_NOW.exec(clause)
  if (uses) {
    const name = (uses[1] ?? uses[3]) as string
    const purpose = subjectOf(uses[2] ?? '')
    out.push({ subject: purpose.length > 0 ? purpose : ['use'], type: 'name', value: name.toLowerCase() })
  } else {
    const use = USE_FOR.exec(clause)
    if (use) out.push({ subject: subjectOf(use[2] as string), type: 'name', value: (use[1] as string).toLowerCase() })
  }
  const replaced = REPLACED_WITH.exec(clause)
  if (replaced) {
    const subject = subjectOf(replaced[3] ?? '').filter((w) => w !== 'i')
    out.push({ subject: subject.length > 0 ? subject : ['use'], type: 'name', value: (replaced[2] as string).toLowerCase(), from: (replaced[1] as string).toLowerCase() })
  }
  const switched = SWITCHED_FROM_TO.exec(clause)
  if (switched) {
    const subject = subjectOf(switched[1] ?? '').filter((w) => w !== 'i' && w !== 'we')
    out.push({ subject: subject.length > 0 ? subject : ['use'], type: 'name', value: (switched[3] as string).toLowerCase(), from: (switched[2] as string).toLowerCase() })
  }
  const copula = NAME_COPULA.exec(clause)
  if (copula) out.push({ subject: subjectOf(copula[1] as string), type: 'name', value: (copula[2] as string).toLowerCase() })
  const read = out.map((r) => ({ ...r, value: r.value.replace(/[.,!:]+$/, '') })).filter((r) => r.subject.length > 0 && r.value !== '')
  // Every name the clause mentions (its first word too unless a function word, capitalised anyway),
  // for a later "switched from <name> to …" that names this statement's value as the old one.
  for (const m of everyMatch(NAME_MENTIONED, clause)) {
    const name = m[0].toLowerCase().replace(/[.,!:]+$/, '')
    if (m.index === 0 && STOP_WORDS.has(name.split(' ')[0] as string)) continue
    if (name !== 'i' && !read.some((r) => r.value === name)) read.push({ subject: [], type: 'name', value: name })
  }
  return read
}

/** "no longer"/"not … anymore": the clause ends a value; read as the value `none` of what it negates. */
function endedReadings(clause: string): ValueReading[] {
  if (!/\b(?:no longer|not\b[^.]*\b(?:anymore|any more)|n't\b[^.]*\b(?:anymore|any more))\b/i.test(clause)) return []
  const positive = clause.replace(/\b(?:no longer|(?:do|does|am|is|are)\s*n[o']t|not)\s+/i, '').replace(/\s*\b(?:anymore|any more)\b/i, '')
  return readClause(positive, false).map((r) => ({ ...r, value: 'none' }))
}

/** A quantity that can be a condition: a measure or a count, not a date, a time, a version or a state. */
const isMeasure = (type: string): boolean => !/^(?:date|time|version|name|role|state:.*)$/.test(type)
/** The words right before a quantity that make it a condition of the clause's measure ("at 500 rps", "on the 10 GB table"). */
const CONDITION_BEFORE = /\b(?:at|on|with|under|over|across|using|for|per)\s+(?:(?:the|a|an|our|my|about|around|roughly|up to)\s+)*$/i

function readClause(clause: string, checkOccasion: boolean): ValueReading[] {
  if (checkOccasion && OCCASION.test(clause) && !CHANGE_CUE.test(clause)) return []
  const out = nameReadings(clause)
  const values = valuesIn(clause)
  // A quantity after a condition word, with a measure before it in the clause, is that measure's
  // condition ("14 minutes on 4 cores"), not a value of its own; alone it is one ("runs on 4 cores").
  const isCondition = (v: Found): boolean =>
    isMeasure(v.type) && values.some((other) => other.start < v.start && isMeasure(other.type)) && CONDITION_BEFORE.test(clause.slice(Math.max(0, v.start - 40), v.start))
  const conditions = values.filter(isCondition)
  for (const value of values) {
    if (conditions.includes(value)) continue
    const reading = readingAt(clause, value)
    if (!reading) continue
    out.push(conditions.length > 0 && isMeasure(value.type) ? { ...reading, conditions: conditions.map((c) => `${c.type}=${c.value}`) } : reading)
  }
  return out
}

/** Every (subject, value) reading of a text, clause by clause. */
export function valueReadings(text: string): ValueReading[] {
  const out: ValueReading[] = []
  for (const clause of clausesOf(text)) {
    const ended = endedReadings(clause)
    out.push(...(ended.length > 0 ? ended : readClause(clause, true)))
  }
  return out
}

/**
 * Whether two readings are of one subject: every word of the shorter subject is in the longer
 * ("rent" and "my monthly rent"; the speaker's residence and the speaker's residence), and it names
 * more than the speaker.
 */
function sameSubject(a: ValueReading, b: ValueReading): boolean {
  const [short, long] = a.subject.length <= b.subject.length ? [a.subject, b.subject] : [b.subject, a.subject]
  // The speaker alone names no subject; "login API" and "search API" are two subjects.
  return short.some((w) => w !== 'i') && short.every((w) => long.includes(w))
}

/** "civic" and "honda civic", "the mysql" and "mysql": one name, said more or less fully. */
function namesSame(a: string, b: string): boolean {
  const bare = (name: string): string => name.replace(/^(?:the|an?|my|our)\s+/, '')
  const [x, y] = [bare(a), bare(b)]
  if (x.length < 2 || y.length < 2) return false
  return x === y || ` ${y} `.includes(` ${x} `) || ` ${x} `.includes(` ${y} `)
}

/** Type families that are one kind of value (a name changed into "none" is still a name that changed). */
const comparable = (a: ValueReading, b: ValueReading): boolean => a.type === b.type || a.value === 'none' || b.value === 'none' || (a.type === 'name' && b.type === 'role') || (a.type === 'role' && b.type === 'name')

/**
 * Two measures stated under conditions that differ ("240 ms at 500 requests per second", "610 ms at
 * 2,000 requests per second") are two measurements, not a value and its replacement. A condition
 * said on one side only does not tell them apart: the later is taken as the current value.
 */
function measuredApart(a: ValueReading, b: ValueReading): boolean {
  if (!a.conditions || !b.conditions) return false
  const other = new Set(b.conditions)
  return a.conditions.length !== other.size || a.conditions.some((c) => !other.has(c))
}

/** A value that changed: the earlier reading and the later one that gives its subject a new value. */
export interface ValueChange {
  before: ValueReading
  now: ValueReading
}

/**
 * The first reading of `later` that gives a subject of `earlier` a new value, or undefined: same
 * subject, a value of the same type, a different value — or a change "from" the earlier value
 * ("switched from MySQL to …" after "we use MySQL"). That `later` was said later is the caller's to know.
 */
export function changedValue(earlier: readonly ValueReading[], later: readonly ValueReading[]): ValueChange | undefined {
  for (const now of later) {
    for (const before of earlier) {
      if (now.from !== undefined && now.value !== before.value && namesSame(now.from, before.value)) return { before, now }
      if (!comparable(before, now) || before.value === now.value || !sameSubject(before, now) || measuredApart(before, now)) continue
      // A name that contains the other is the same name said more or less fully ("Lisbon" and "Lisbon Portugal").
      if (before.type === 'name' && (before.value.includes(now.value) || now.value.includes(before.value))) continue
      return { before, now }
    }
  }
  return undefined
}

/** The words a question asks after a subject the verb named (`residence`: "where do I live?"), as stems. */
const ASKED_AS: Record<string, readonly string[]> = {
  residence: ['live', 'move', 'citi', 'home', 'locat', 'base', 'reloc', 'countri', 'town'],
  workplace: ['work', 'job', 'compani', 'employ', 'employe', 'join', 'firm'],
  role: ['job', 'role', 'titl', 'posit', 'work', 'promot'],
  use: ['use', 'tool', 'switch'],
}

/** The stems a question about a change's subject may use: the subject's own, and the ones its verb stands for. */
export function subjectStems(change: ValueChange): Set<string> {
  const out = new Set<string>()
  for (const reading of [change.before, change.now]) {
    for (const word of reading.subject) {
      if (word === 'i') continue
      out.add(word)
      for (const asked of ASKED_AS[word] ?? []) out.add(asked)
    }
  }
  return out
}
