/**
 * Validation of an extracted fact against its sources without a model — the seed's NLI stage
 * (../shared/seeds/003 "Knowledge Validation: NLI+LLM Cascade"), done by rule where the seed runs
 * mDeBERTa (decision 0048):
 *
 * - **unsupported facts**: the candidate states a number, date or name its sources never do
 *   (normalised: "2 hours" is stated by "two hours") — rejected;
 * - **contradicted**: a source sentence says the same of the same thing with the opposite
 *   polarity ("the export failed" against "the export succeeded"; "is not enabled" against "is
 *   enabled"), and no source sentence says it the candidate's way — rejected;
 * - **entailed**: every sentence of the candidate is contained in one source sentence — its
 *   content words (stemmed), its facts (normalised), its polarity, nearly its order — and that
 *   sentence is a plain statement (not a question, a plan, a guess or an attempt) — approved with
 *   the seed's fast-path confidence, no model asked;
 * - otherwise **undecided**: the model judges, as before.
 *
 * Rules are made to be sure, not to be complete: what they cannot settle goes to the model.
 * Words of other languages are compared as written (a few negations and antonyms are known); a
 * word the rules do not know simply matches nothing, so the candidate goes to the model rather
 * than being approved on a guess.
 */
import { isoDay } from '../../core/clock.ts'
import { STOP_WORDS, stem, words } from '../../text/analyse.ts'
import type { EpisodeSource } from './episode-sources.ts'
import { type FactMention, factMentions, mentionSupported } from './fact-mentions.ts'
import { type StatedFacts, statedFacts, unsupportedFacts } from './text-facts.ts'

export type OfflineVerdict =
  | { verdict: 'entailed'; sentence: string }
  | { verdict: 'contradicted'; claim: string; sentence: string }
  | { verdict: 'unsupported-facts'; facts: string[] }
  | { verdict: 'undecided' }

const NEGATIONS = new Set(
  `not no never none nobody nothing neither nor without cannot cant dont doesnt didnt isnt arent wasnt werent wont wouldnt
shouldnt couldnt hasnt havent hadnt aint mustnt neednt nowhere nicht kein keine keinen keiner nie niemals pas jamais aucun aucune
nunca jamás ningún ninguna não nao non`.split(/\s+/),
)
/** How many words after a negation it reaches (in its clause): "did not fail", "is not yet enabled". */
const NEGATION_REACH = 4

/** Words of opposite polarity, by group: a claim with one side and a source with only the other disagree. */
const POLARITY: ReadonlyArray<readonly [string, string]> = [
  ['succeed succeeded succeeds succeeding success successful successfully passed erfolgreich réussi exitoso', 'fail failed fails failing failure unsuccessful fehlgeschlagen échoué fallido'],
  ['enable enabled enables aktiviert activé activado', 'disable disabled disables deaktiviert désactivé desactivado'],
  ['open opened reopened', 'closed shut'],
  ['start started starts running', 'stop stopped stops halted'],
  ['accept accepted accepts approve approved approves granted allow allowed allows permitted', 'reject rejected rejects deny denied denies declined refused block blocked forbidden disallowed'],
  ['include included includes', 'exclude excluded excludes'],
  ['increase increased increases', 'decrease decreased decreases reduce reduced'],
  ['available', 'unavailable'],
  ['valid', 'invalid'],
  ['correct', 'incorrect wrong'],
  ['complete completed finished', 'incomplete unfinished'],
  ['active', 'inactive'],
  ['online', 'offline'],
  ['public', 'private'],
  ['true', 'false'],
  ['possible', 'impossible'],
  ['like likes liked love loves loved enjoy enjoys enjoyed', 'dislike dislikes disliked hate hates hated'],
  ['visible shown', 'hidden invisible'],
  ['locked', 'unlocked'],
  ['connected', 'disconnected'],
  ['healthy', 'unhealthy'],
  ['present', 'absent'],
  ['win won wins', 'lose lost loses'],
  ['supported', 'unsupported'],
  ['installed', 'uninstalled'],
  ['resolved fixed', 'unresolved unfixed broken'],
]
const SIDE = new Map<string, { group: number; side: 0 | 1 }>()
POLARITY.forEach(([a, b], group) => {
  for (const word of a.split(' ')) SIDE.set(word, { group, side: 0 })
  for (const word of b.split(' ')) SIDE.set(word, { group, side: 1 })
})

/**
 * Words that make a source clause say less than a fact: a guess, a plan, a wish, an attempt, a
 * condition, a past habit. The words after one in its clause ("we might deploy with Kamal") state
 * nothing a claim without it can rest on; a later clause ("the export failed and we will rerun
 * it") is not touched.
 */
const QUALIFIERS = new Set(
  `might may maybe perhaps probably possibly likely unlikely could should would will shall can going gonna if unless whether
suppose supposed guess hope hopefully plan plans planned planning want wants wanted wish expect expected expects seem seems
seemed think thinks thought believe believes unsure uncertain try tries tried trying attempt attempted consider considering
considered wonder wondering ask asked asks previously formerly originally initially anymore until almost nearly`.split(/\s+/),
)
/** Stop words that still change what a claim says ("all", "only", "before"): the source must say them too. */
const KEPT = new Set('all any each every few more most only same some both before after above below over under off up down out against until again once'.split(' '))
/** Words a claim may add to what its source says ("about 2 hours" from "two hours"). */
const HEDGES = new Set('about around approximately approx roughly circa'.split(' '))

interface Item {
  /** A content word's stem, or a fact. */
  stem?: string
  fact?: FactMention
  word: string
  negated: boolean
  /** A capitalised word inside the sentence: a name, whose order matters ("Ada reports to Bob"). */
  anchor: boolean
  /** Qualifiers before it in its clause. */
  qualifiers: readonly string[]
}

interface Sentence {
  text: string
  items: Item[]
  /** Every word, stop words included, lower case. */
  words: Set<string>
  question: boolean
}

const MAX_SENTENCES = 4000

/** Sentences of a text: lines, then sentence ends and semicolons; markdown markers dropped (headings too, unless asked for). */
function sentences(text: string, options: { headings: boolean }): string[] {
  const out: string[] = []
  for (const line of text.normalize('NFKC').split(/\n+/)) {
    // A claim's heading is its label, not something it states.
    if (!options.headings && /^\s*#/.test(line)) continue
    for (const part of line.split(/(?<=[.!?。！？])\s+|;\s*|(?<=[。！？])/u)) {
      const clean = part
        .replace(/^\s*(?:#+|[-*+>]|\d+[.)])\s+/, '')
        .replace(/\*\*|__|`/g, '')
        .trim()
      if (clean !== '' && out.length < MAX_SENTENCES) out.push(clean)
    }
  }
  return out
}

const TOKEN = /[\p{L}\p{N}'’]+|[,:()—–]/gu

function analyse(text: string): Sentence {
  const mentions = factMentions(text)
  const items: Item[] = []
  const all = new Set<string>()
  let reach = 0
  let qualifiers: string[] = []
  let first = true
  const read = (piece: string): void => {
    for (const match of piece.matchAll(TOKEN)) {
      const raw = match[0]
      if (/^[,:()—–]$/.test(raw)) {
        reach = 0
        qualifiers = []
        continue
      }
      const word = words(raw)[0]
      if (word === undefined) continue
      all.add(word)
      const isFirst = first
      first = false
      if (QUALIFIERS.has(word)) qualifiers = [...qualifiers, word]
      if (NEGATIONS.has(word)) {
        reach = NEGATION_REACH
        continue
      }
      const negated = reach > 0
      if (reach > 0) reach--
      if (STOP_WORDS.has(word) || HEDGES.has(word)) continue
      items.push({ stem: stem(word), word, negated, anchor: !isFirst && /^\p{Lu}/u.test(raw), qualifiers })
    }
  }
  let at = 0
  for (const mention of mentions) {
    read(text.slice(at, mention.start))
    items.push({ fact: mention, word: mention.text, negated: reach > 0, anchor: true, qualifiers })
    if (reach > 0) reach--
    first = false
    at = mention.end
  }
  read(text.slice(at))
  return { text, items, words: all, question: /[?？]\s*$/.test(text) }
}

/** Where each of the claim's items is in the source sentence (-1: not there). */
function positions(claim: Sentence, source: Sentence): number[] {
  return claim.items.map((item) => {
    if (item.fact) return source.items.findIndex((other) => other.fact !== undefined && mentionSupported(item.fact as FactMention, [other.fact]))
    return source.items.findIndex((other) => other.stem === item.stem)
  })
}

/** Length of the longest increasing run (not necessarily contiguous) of `values`. */
function longestIncreasing(values: readonly number[]): number {
  const tails: number[] = []
  for (const value of values) {
    let lo = 0
    let hi = tails.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((tails[mid] ?? 0) < value) lo = mid + 1
      else hi = mid
    }
    tails[lo] = value
  }
  return tails.length
}

/** Whether the source states the words at `positions` outright: not in a question, under no guess or plan the claim leaves out. */
const plain = (claim: Sentence, source: Sentence, positions: readonly number[]): boolean =>
  !source.question && positions.every((position) => (source.items[position]?.qualifiers ?? []).every((word) => claim.words.has(word)))

/** Whether `source` says all of `claim`: every content word and fact, the same polarity, nearly the same order. */
function entails(claim: Sentence, source: Sentence): boolean {
  if (claim.items.length < 2 || source.question) return false
  if ([...claim.words].some((word) => KEPT.has(word) && !source.words.has(word))) return false
  const at = positions(claim, source)
  if (at.some((position) => position < 0) || !plain(claim, source, at)) return false
  const claimNegated = claim.items.some((item) => item.negated)
  const sourceNegated = at.some((position) => source.items[position]?.negated === true)
  if (claimNegated !== sourceNegated) return false
  // Bags of words do not know who did what to whom: names and figures keep their order, and the
  // rest may move one word (a passive: "is deployed with Kamal" from "we deploy with Kamal").
  const anchors = at.filter((_, i) => claim.items[i]?.anchor)
  if (anchors.some((position, i) => i > 0 && position <= (anchors[i - 1] ?? -1))) return false
  return longestIncreasing(at) >= at.length - 1
}

/**
 * Whether `source` says what `claim` says of the same thing with the opposite polarity: its
 * content words and facts there, a polarity word's antonym counting as there (all of two or more,
 * or all but one of five or more; a polarity word whose pair the sentence never uses is left out),
 * and an odd number of flips (an antonym in place of the word; a negation on one side only).
 */
function polarityAgainst(claim: Sentence, source: Sentence): 'same' | 'opposite' | 'unrelated' {
  if (source.question) return 'unrelated'
  let shared = 0
  let missing = 0
  let flips = 0
  const touched: number[] = []
  for (const item of claim.items) {
    const own = item.stem === undefined ? undefined : SIDE.get(item.word)
    let position = -1
    if (item.fact) position = source.items.findIndex((other) => other.fact !== undefined && mentionSupported(item.fact as FactMention, [other.fact]))
    else if (!own) position = source.items.findIndex((other) => other.stem === item.stem)
    else {
      // A polarity word: itself there, or its antonym there (a flip); neither, it is about
      // something the sentence does not weigh ("completed" where only "failed" is said).
      position = source.items.findIndex((other) => SIDE.get(other.word)?.group === own.group && SIDE.get(other.word)?.side === own.side)
      if (position < 0) {
        position = source.items.findIndex((other) => SIDE.get(other.word)?.group === own.group)
        if (position < 0) continue
        flips++
      }
    }
    if (position >= 0) {
      shared++
      touched.push(position)
    } else if (item.fact?.claim) return 'unrelated'
    else missing++
  }
  if (!(shared >= 2 && missing === 0) && !(shared >= 4 && missing === 1)) return 'unrelated'
  if (!plain(claim, source, touched)) return 'unrelated'
  const claimNegated = claim.items.some((item) => item.negated)
  const sourceNegated = touched.some((position) => source.items[position]?.negated === true)
  // A negation alone contradicts only a sentence that says every word of the claim.
  if (claimNegated !== sourceNegated) {
    if (missing > 0 && flips === 0) return 'unrelated'
    flips++
  }
  return flips % 2 === 1 ? 'opposite' : 'same'
}

/** A cited section as the rules read it: what it states, and its sentences. Read once per section, however many candidates cite it. */
interface ReadSection {
  stated: StatedFacts
  sentences: Sentence[]
}
const readSections = new WeakMap<EpisodeSource, ReadSection>()

function readSection(section: EpisodeSource): ReadSection {
  let read = readSections.get(section)
  if (!read) {
    read = { stated: statedFacts(`${section.text}\n${factContext(section)}`), sentences: sentences(section.text, { headings: true }).map(analyse) }
    readSections.set(section, read)
  }
  return read
}

/** The offline verdict on a candidate fact (`title` and `content`) against the episode sections it cites (see the module comment). */
export function judgeAgainstEpisodes(candidate: { title: string; content: string }, cited: readonly EpisodeSource[]): OfflineVerdict {
  const read = cited.map(readSection)
  const stated = { mentions: read.flatMap((section) => section.stated.mentions), folded: read.map((section) => section.stated.folded).join('|') }
  const unsupported = unsupportedFacts(`${candidate.title}\n${candidate.content}`, stated)
  if (unsupported.length > 0) return { verdict: 'unsupported-facts', facts: unsupported }
  const source = read.flatMap((section) => section.sentences)
  const claims = sentences(candidate.content, { headings: false })
    .map(analyse)
    .filter((sentence) => sentence.items.length > 0)
  if (claims.length === 0) return { verdict: 'undecided' }
  for (const claim of claims) {
    const judged = source.map((sentence) => polarityAgainst(claim, sentence))
    const against = judged.indexOf('opposite')
    // Contradicted only when no sentence of the sources says it the claim's way ("the export
    // failed; after a retry it succeeded" does not contradict "it succeeded after a retry").
    if (against >= 0 && !judged.includes('same') && !claimWordsElsewhere(claim, source)) return { verdict: 'contradicted', claim: claim.text, sentence: source[against]?.text ?? '' }
  }
  let entailedBy = ''
  for (const claim of claims) {
    const by = source.find((sentence) => entails(claim, sentence))
    if (!by) return { verdict: 'undecided' }
    entailedBy ||= by.text
  }
  return { verdict: 'entailed', sentence: entailedBy }
}

const DAY_MS = 86_400_000

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

/**
 * What a section adds to the facts check besides its text: its heading, and the day it happened
 * with its weekday (and the day before or after when it says "yesterday" or "tomorrow"), so that
 * "on March 2" or "on Monday" written from "today" is not taken for an invented date.
 */
function factContext(section: EpisodeSource): string {
  const noon = Date.parse(`${section.day}T12:00:00Z`)
  const offsets = [0, /\byesterday\b/i.test(section.text) ? -1 : 0, /\btomorrow\b/i.test(section.text) ? 1 : 0]
  const days = [...new Set(offsets)].map((offset) => new Date(noon + offset * DAY_MS))
  return [section.heading, ...days.map((day) => `${isoDay(day)} ${WEEKDAYS[day.getUTCDay()]}`)].join('\n')
}

/**
 * Whether the sources say a polarity word of the claim the claim's way somewhere (not negated when
 * the claim does not negate it): then the claim may tell a later state, and the model judges.
 */
function claimWordsElsewhere(claim: Sentence, source: readonly Sentence[]): boolean {
  return claim.items.some((item) => {
    const own = SIDE.get(item.word)
    if (item.stem === undefined || !own) return false
    return source.some((sentence) => sentence.items.some((other) => other.negated === item.negated && SIDE.get(other.word)?.group === own.group && SIDE.get(other.word)?.side === own.side))
  })
}
