/**
 * Facts from a conversation, offline: deterministic rules that pick out what a user states about
 * themselves in so many words, and nothing else (decision 0066). Precise rather than eager: a
 * sentence is read only when it is a plain first-person statement (or an instruction addressed to
 * the assistant); a question, a negation, a hypothetical or conditional, a quotation or someone
 * else's words are skipped whole. The stored text is the user's own words turned to the third
 * person ("I'm allergic to peanuts" → "The user is allergic to peanuts."), never generalised.
 * In a language with a table (decision 0077), standing instructions and preferences are read by
 * language-rules.ts; other facts about the user are read in English only.
 */
import type { Engram, RuleKind } from '../../core/engram.ts'
import { detectLanguage } from '../../text/languages/detect.ts'
import { languageRuleFacts } from './language-rules.ts'
import { objectPhrase, sentence } from './object-phrase.ts'
import { LEADING_WHEN } from './when-said.ts'
import { NAMED_ATTEMPT, namedThingsOf, worldFactOf } from './world-rules.ts'

/** A fact the rules found, before it becomes an engram. */
export interface RuleFact {
  /** `lesson`: a reported event or a fact of the user's project (world-rules.ts, decision 0070). */
  kind: 'profile' | 'lesson' | RuleKind
  text: string
}

// Anything that makes a sentence other than a plain statement of fact about the speaker.
const NEGATION = /\b(?:not|no|never|nothing|nobody|none|neither|nor|without|no longer|hardly|barely)\b|n['’]t\b/i
// A conditional or a hedge governs the clauses after it ("If I were rich, I'd live…", "I think I
// live…", "I might quit, but I am a nurse"); an intent, a try or a plan is its own clause's only
// ("I'm trying to fix the leak, and I used Grafana to find it": the user used Grafana) (decision 0070).
const HYPOTHETICAL = /\b(?:if|unless|whether|would|could|should|might|may|maybe|perhaps|probably|possibly|suppose|supposing|imagine|wish|guess|wonder|think|pretend|as if|like if)\b|['’]d\b/i
const INTENT = /\b(?:hope|hoping|thinking|considering|trying to|try to|want|wanna|gonna|going to (?!(?:the|a|an|my|our|their|his|her)\b)|will|someday|one day|(?<!^I )used to|need to|have to|got to|gotta|about to|looking to|looking for|expect|expecting|aim to|intend|intending|ready to|excited to|can't wait)\b|['’]ll\b/i
const REPORTED = /\b(?:said|says|say|told|tells|asked|asks|mentioned|mentions|according to|claims?|claimed|reported|heard|wrote|writes)\b/i
// A quotation is words of more than one (a name in single quotes, 'joinRoom', is a word of the user's).
const QUOTE = /["“”„«»]|(?:^|\s)['‘][^'’]*\s[^'’]*['’](?:\s|$|[.,!?])/

// Whole words only: "Yesterday" does not begin with the interjection "Yes".
const SUBJECT_OK_PREFIX = /^(?:(?:oh|ah|wow|yeah|yes|yep|well|so|hey|hi|hello|thanks|thank you|sure|ok|okay|cool|great|honestly|actually|by the way|btw|and|also|plus)\b[\s,!.-]*)*/i

/** Longest piece of a line the sentence pattern reads at once: on a 10 MB line without a full stop its backtracking overflowed the stack. */
const LINE_PIECE = 100_000

/** A line as pieces of at most LINE_PIECE characters, cut after a space where there is one (any line a person writes is one piece). */
function boundedPieces(line: string): string[] {
  if (line.length <= LINE_PIECE) return [line]
  const pieces: string[] = []
  let rest = line
  while (rest.length > LINE_PIECE) {
    const space = rest.lastIndexOf(' ', LINE_PIECE)
    const cut = space > 0 ? space + 1 : LINE_PIECE
    pieces.push(rest.slice(0, cut))
    rest = rest.slice(cut)
  }
  pieces.push(rest)
  return pieces
}

/** Sentences of one message, with code, bracketed asides (`[shares a photo: …]`) and URLs taken out. */
export function statementSentences(content: string): string[] {
  const prose = content
    .replace(/```[\s\S]*?(?:```|$)/g, ' ')
    // A name in backticks is a word of the sentence ("I'm using the `psutil` library"); other code is not.
    .replace(/`([\w.@/-]{1,40})`/g, '$1')
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/\[[^\]\n]*\]/g, ' ')
    .replace(/\bhttps?:\/\/\S+/g, ' ')
  const sentences: string[] = []
  for (const line of prose.split(/\n+/).flatMap(boundedPieces)) {
    // A full stop, question mark or exclamation ends a sentence before a space or the end ("OAuth 2.0" is one word).
    for (const match of line.matchAll(/(?:[^.!?]|[.!?](?=[^\s.!?]))+(?:[.!?]+|$)/g)) {
      const sentence = match[0].replace(/\s+/g, ' ').trim()
      if (sentence.length > 0) sentences.push(sentence)
    }
  }
  return sentences
}

const THIRD_PERSON: Array<[RegExp, string]> = [
  [/\bI['’]m\b/g, 'the user is'],
  [/\bI am\b/g, 'the user is'],
  [/\bI['’]ve\b/g, 'the user has'],
  [/\bI have\b/g, 'the user has'],
  [/\bmyself\b/gi, 'themselves'],
  [/\bmine\b/gi, 'theirs'],
]

function conjugate(verb: string): string {
  if (/(?:s|sh|ch|x|z|o)$/.test(verb)) return `${verb}es`
  if (/[^aeiou]y$/.test(verb)) return `${verb.slice(0, -1)}ies`
  return `${verb}s`
}

/** The user's words in the third person: "my" → "the user's", "I ask" → "the user asks". */
function aboutTheUser(words: string): string {
  let text = words
  for (const [pattern, replacement] of THIRD_PERSON) text = text.replace(pattern, replacement)
  text = text.replace(/\bI ([a-z]+)\b/g, (_whole, verb: string) => `the user ${conjugate(verb)}`)
  text = text.replace(/\bmy\b/gi, "the user's").replace(/\bme\b/gi, 'the user')
  return text
}

// A liked thing named with "the" is one from the conversation ("I love the color", "I like the
// structure of the language"): which one, the sentence alone does not say.
const DEFINITE = /^(?:all )?the\b/i

// `fact` gets the object and, when the pattern captures one before it, the user's own verb or
// preposition. A statement with a `key` is one value a person has one of at a time (where they live,
// where they work, their age, name): it is written as the profile's `Key: value` fact, as identity
// extraction writes it, so a later statement of it replaces the earlier one (profile-facts.ts).
interface Statement {
  pattern: RegExp
  /** The fact in words; a statement with a `key` is written `Key: value` instead. */
  fact?: (value: string, head: string) => string
  key?: string
  maxWords?: number
  definite?: false
}
const STATEMENTS: Statement[] = [
  { pattern: /^I(?:['’]m| am) allergic to (.+)$/i, fact: (v) => `The user is allergic to ${v}` },
  { pattern: /^I(?:['’]m| am) (vegetarian|vegan|pescatarian|diabetic|lactose[- ]intolerant|gluten[- ]intolerant|celiac|left[- ]handed|right[- ]handed|colou?r ?blind|married|divorced|widowed|engaged|retired|pregnant)$/i, fact: (v) => `The user is ${v.toLowerCase()}` },
  // "I'm a nurse", "I'm an engineer at Acme": a role or identity, never a degree ("a bit tired").
  { pattern: /^I(?:['’]m| am) (?:currently |now |also )?(an? (?!(?:bit|little|lot|tad|few|huge|big mess|mess|wreck|fan of (?:it|that|this))\b).+)$/i, fact: (v) => `The user is ${v}`, maxWords: 8 },
  { pattern: /^I(?:['’]m| am) (\d{1,3})(?: years? old| y\/?o)?$/i, key: 'Age' },
  // A name or a nationality, capitalised and alone in its clause: "I'm Meghan Fowler", "I'm Canadian".
  { pattern: /^I(?:['’]m| am) ((?!(?:OK|Ok|Okay|Sorry|Fine|Good|Glad|Here|Back|Done|In|On|Off|Not|So|Just|Really|Also|Still|All)\b)[A-Z][a-z]+(?: [A-Z][a-z]+){0,2})$/, fact: (v) => `The user is ${v}` },
  { pattern: /^I(?:['’]m| am) (?:really |very |so |also |quite |pretty |super )?(into|passionate about|obsessed with|hooked on) (.+)$/i, fact: (v, head) => `The user is ${head} ${v}`, definite: false },
  { pattern: /^I(?:['’]ve| have) (?:always |long )?been (?:really |very |so |also |quite |pretty |super )?(into|passionate about|obsessed with|hooked on) (.+)$/i, fact: (v, head) => `The user has been ${head} ${v}`, definite: false },
  { pattern: /^I(?:['’]ve| have) always (loved|liked|enjoyed|preferred|hated) (.+)$/i, fact: (v, verb) => `The user has always ${verb} ${v}`, definite: false },
  // A habit begun, with when: "I started playing acoustic guitar about five years ago".
  { pattern: /^I (started|began) ([a-z]+ing [^;]+?(?:\b(?:ago|in (?:19|20)\d\d|last (?:year|month|week)|this year)))(?:;.*)?$/i, fact: (v, verb) => `The user ${verb.toLowerCase()} ${v}`, maxWords: 12 },
  { pattern: /^I live in (.+)$/i, key: 'Location', maxWords: 6 },
  { pattern: /^I live (with|near|on) (.+)$/i, fact: (v, preposition) => `The user lives ${preposition} ${v}`, maxWords: 6 },
  { pattern: /^I(?:['’]m| am) from (.+)$/i, fact: (v) => `The user is from ${v}`, maxWords: 6 },
  { pattern: /^I(?:['’]m| am) (?:now )?(?:based|living) in (.+)$/i, key: 'Location', maxWords: 6 },
  { pattern: /^I work at (.+)$/i, key: 'Works at', maxWords: 8 },
  { pattern: /^I work as (?:an? )?(.+)$/i, key: 'Role', maxWords: 8 },
  { pattern: /^I work (for|in) (.+)$/i, fact: (v, preposition) => `The user works ${preposition} ${v}`, maxWords: 8 },
  { pattern: /^I grew up in (.+)$/i, fact: (v) => `The user grew up in ${v}`, maxWords: 6 },
  { pattern: /^I was born in (.+)$/i, fact: (v) => `The user was born in ${v}`, maxWords: 6 },
  { pattern: /^I (?:have )?(?:just |recently )?moved to (.+)$/i, key: 'Location', maxWords: 6 },
  { pattern: /^I (?:really |absolutely |just |also )?(prefer|like|love|enjoy|adore|hate|dislike|detest) (.+)$/i, fact: (v, verb) => `The user ${conjugate(verb)} ${v}`, definite: false, maxWords: 16 },
  // What the user has that stays: a condition, an allergy, pets, children, siblings.
  { pattern: /^I (?:have|['’]ve got|have got) ((?:asthma|diabetes|type [12] diabetes|ADHD|autism|dyslexia|epilepsy|arthritis|celiac disease|coeliac disease|migraines|eczema|an? [a-z]+ allergy|[a-z]+ allergies)|(?:an?|one|two|three|four|five|six|\d) (?:[a-z]+ )?(?:dogs?|cats?|pets?|puppy|puppies|kittens?|rabbits?|hamsters?|parrots?|birds?|fish|horses?|turtles?|kids|children|sons?|daughters?|brothers?|sisters?|siblings|grandchildren|grandkids)(?: named [A-Z][a-z]+(?:(?:,| and) [A-Z][a-z]+)*)?)$/i, fact: (v) => `The user has ${v}`, maxWords: 8 },
  { pattern: /^(?:please )?call me (.+)$/i, key: 'Name', maxWords: 4 },
]

// "my X is Y" for the things a person has one of: a name, a favourite, a birthday, a relative.
const MY_IS = /^my ((?:(?:first|last|full|middle|nick) ?)?name|favou?rite [a-z]+(?: [a-z]+)?|birthday|age|job|profession|occupation|job title|title|role|time ?zone|home ?town|email(?: address)?|pronouns|native language|first language|mother tongue|nationality|religion|major|blood type|(?:wife|husband|partner|girlfriend|boyfriend|son|daughter|mom|mum|mother|dad|father|brother|sister|dog|cat|pet)(?:['’]s name)?)(?: ([A-Za-z]+))?? (is|are) (.+)$/i

// The same, said the other way round: "The Hobbit is one of my favorites", "Jazz is my favourite genre".
const IS_MY_FAVOURITE = /^((?:the )?[A-Z0-9][^,]*?) (is|are) ((?:one of |among )?my (?:(?:all[- ]time|absolute|top) )?favou?rites?(?: [a-z]+)?)$/

// When a one-value fact became true, said after it: "now", "last month", "two years ago", "in 2024",
// "in May", "since March", "for three years". The keyed value is what comes before.
const MONTH = '(?:January|February|March|April|May|June|July|August|September|October|November|December)'
const WHEN_AT_END = new RegExp(
  `(?:\\s+(?:now|today|yesterday|recently|lately|last (?:week|month|year|spring|summer|autumn|fall|winter)|this (?:week|month|year)|(?:a|one|two|three|four|five|six|a few|a couple of|\\d+) (?:days?|weeks?|months?|years?) ago|a while ago|(?:in|since) (?:(?:19|20)\\d\\d|${MONTH}(?: (?:19|20)\\d\\d)?)|for (?:a|one|two|three|four|five|six|a few|a couple of|\\d+) (?:days?|weeks?|months?|years?)))+$`,
  'i',
)

// The "my X is" facts a person has one value of at a time, under the profile's key for them.
const MY_KEYS: Record<string, string> = { name: 'Name', timezone: 'Timezone', age: 'Age' }

/** Verbs an instruction to the assistant starts with ("Always include…", "Never use…"). */
const INSTRUCTION_VERB =
  /^(?:use|include|answer|reply|respond|write|format|explain|mention|add|suggest|provide|cite|address|refer|remind|send|list|start|end|summari[sz]e|put|avoid|check|show|give me|tell me|ask me|call me|keep (?:answers|responses|replies|it|them|your)|double-check|confirm|prefer|run|test|use|assume|speak|talk to me|label|comment|sign)\b/i
const ENCOURAGEMENT = /\b(?:give up|keep going|keep (?:it|that) up|stop believing|forget to smile)\b/i

function instruction(kind: RuleKind, rest: string): RuleFact | undefined {
  const body = rest.replace(/^(?:please|do)\s+/i, '').trim()
  if (!INSTRUCTION_VERB.test(body) || ENCOURAGEMENT.test(body)) return undefined
  if (body.split(/\s+/).length > 30) return undefined
  return { kind, text: sentence(aboutTheUser(body)) }
}

/** Standing instructions: "Always …", "Never …"/"Don't ever …", "From now on, …", "When I …, …". */
function ruleOf(text: string): RuleFact | undefined {
  const always = /^(?:please )?(?:always|from now on,?|going forward,?|in future,?|in the future,?) (.+)$/i.exec(text)
  if (always?.[1]) {
    const rest = always[1]
    const never = /^(?:never|don['’]t|do not) (.+)$/i.exec(rest)
    if (never?.[1]) return instruction('never', never[1])
    if (NEGATION.test(rest)) return undefined
    return instruction('always', rest.replace(/^always /i, ''))
  }
  const never = /^(?:please )?(?:never|don['’]t ever|do not ever|never ever) (.+)$/i.exec(text)
  if (never?.[1]) return instruction('never', never[1])
  const when = /^(?:when|whenever) (I [^,]+), (.+)$/i.exec(text)
  if (when?.[1] && when[2] && !NEGATION.test(when[1])) {
    const rule = instruction('when', when[2].replace(/^always /i, ''))
    return rule ? { kind: 'when', text: sentence(`When ${aboutTheUser(when[1])}, ${rule.text.charAt(0).toLowerCase()}${rule.text.slice(1)}`) } : undefined
  }
  return undefined
}

/** A clause to read, with the time phrase said before it ("Last Friday, I …"), if any. */
interface Clause {
  text: string
  when?: string
}

// Where a sentence holds another clause: before "I" after a comma or a conjunction ("I live in
// Lisbon and I work as a teacher"), before "we"/"my" after a conjunction, after a semicolon, at a dash
// before "I"/"my" (decision 0070 adds "we", "my" and ";").
// "My kids and I …" is one subject, not two clauses.
const CLAUSE_BREAK = /,\s*which\s+|,\s*(?:and |but |so )?(?=I\b)|(?<!^(?:[Mm]y|[Oo]ur) [a-z]+(?: [a-z]+)?)\s+(?:and|but|so)\s+(?=I\b)|\s+[-–—]\s+(?=(?:I|[Mm]y)\b)|;\s*|,?\s+(?:and|but|so)\s+(?=(?:[Ww]e|[Mm]y|[Oo]ur)\b)/
// A question's asking part starts another clause ("I prefer examples, so can you …?").
const ASKING_BREAK = /(?:,|\s+[-–—])\s*(?=(?:so |and |but )?(?:can|could|would|will|do|does|what|how|why)\b)/
// "…in my Flask app, which is deployed on Fly.io": the relative clause states a fact of its own.
const MY_WHICH = /\b[Mm]y ((?:[\w.+#/-]+ ){0,4}?[\w.+#/-]+), which ([^,;?]+)/

/**
 * The clauses of a sentence, each read on its own, when the sentence as a whole is no one else's
 * words, and up to its first hypothetical clause: a conditional or a hedge governs what follows it
 * ("If I were rich, I'd live…", "I think I live…") but not what was stated before it ("I'm 25, so
 * I'm hoping to find…": the user is 25); an intent ("I want to…", "I'm trying to…") drops its own
 * clause only.
 */
function clausesOf(sentence: string): Clause[] {
  let text = sentence.replace(SUBJECT_OK_PREFIX, '').trim()
  if (text === '') return []
  // Someone else's words anywhere drop the sentence; a quotation drops the clauses it is in
  // ("I've set up Redis on port 6379, but I still get "ECONNREFUSED"": the user set up Redis).
  if (REPORTED.test(text)) return []
  const lead = LEADING_WHEN.exec(text)
  if (lead?.[1]) text = text.slice(lead[0].length)
  // A question may carry a statement in its own clause ("Can you help me …, I prefer step-by-step
  // explanations"; "I prefer examples, so can you …?"): a clause in the statement's word order,
  // "I" and its verb, is kept; the asking clauses are dropped, and nothing from the clause the
  // question mark ends (or a hypothetical) on.
  const question = /\?\s*$/.test(text)
  if (!question && ruleOf(text.replace(/[.!]+$/, '').trim())) return [{ text }]
  const clauses: Clause[] = []
  const hedge = HYPOTHETICAL.exec(text)
  const relative = MY_WHICH.exec(hedge ? text.slice(0, hedge.index) : text)
  if (relative?.[1] && relative[2] && !INTENT.test(relative[2]) && !QUOTE.test(relative[2])) clauses.push({ text: `my ${relative[1]} ${relative[2]}` })
  const parts = text.split(question ? new RegExp(`${CLAUSE_BREAK.source}|${ASKING_BREAK.source}`) : CLAUSE_BREAK)
  for (const [index, part] of parts.entries()) {
    if (HYPOTHETICAL.test(part) || (question && /\?\s*$/.test(part))) break
    if (question && (ASKING.test(part) || !/^(?:I|[Ww]e|[Mm]y)\b(?![’']d)/.test(part))) continue
    if (QUOTE.test(part) || (INTENT.test(part) && !NAMED_ATTEMPT.test(part))) continue
    clauses.push(index === 0 && lead?.[1] ? { text: part, when: lead[1] } : { text: part })
  }
  return clauses
}

const ASKING = /^(?:so |and |but )?(?:can|could|would|will|do|does|did|is|are|am|was|were|should|shall|what|how|why|where|when|which|who|any)\b/i

// Who the user is, said in passing: "As a paramedic, I …", "As a paramedic from Davistown, I'm …".
// Whatever the rest of the sentence does (asks, hopes, plans), it presupposes the role. Not a time
// of life long past ("As a kid, I …") nor a turn of phrase ("As a result, I …").
const AS_A = /^as (an? (?!(?:kid|child|teen|teenager|boy|girl|youngster|baby|young|little|result|consequence|whole|rule|matter|side|bonus|start|reminder|follow|first|next|last|quick|test|way|part|team|group|family|couple|reward|thank|gift|treat|joke|favou?r|precaution|starting|final|general|bit|token|way)\b)[^,]+(?:, [A-Z][^,]*)?), I\b/i

function roleInPassing(candidate: string): RuleFact | undefined {
  const text = candidate.replace(SUBJECT_OK_PREFIX, '').trim()
  if (QUOTE.test(text) || REPORTED.test(text)) return undefined
  const role = AS_A.exec(text)?.[1]
  const value = role === undefined ? undefined : objectPhrase(role, 8)
  return value ? { kind: 'profile', text: sentence(`The user is ${value}`) } : undefined
}

/** The user's named tools said in passing, up to the sentence's first hypothetical clause; none in someone else's words. */
function toolsInPassing(candidate: string): RuleFact[] {
  const text = candidate.replace(SUBJECT_OK_PREFIX, '').trim()
  if (QUOTE.test(text) || REPORTED.test(text)) return []
  const hedge = HYPOTHETICAL.exec(text)
  return namedThingsOf(hedge ? text.slice(0, hedge.index) : text)
}

/** What one clause of a user's message states, if it is one plain fact or instruction. */
function factOf({ text: clause, when }: Clause, at: Date | undefined): RuleFact | undefined {
  const body = clause.replace(/[.!,;]+$/, '').trim()
  const rule = ruleOf(body)
  if (rule) return rule
  if (NEGATION.test(body)) return undefined
  const my = MY_IS.exec(body)
  if (my?.[1] && my[3] && my[4]) {
    const value = objectPhrase(my[4], 6)
    // A relative's or pet's name said with them ("my son Ronald is 13") stays with them.
    const name = my[2] && /^[A-Z]/.test(my[2]) ? ` ${my[2]}` : ''
    if (my[2] && !name) return undefined
    if (value === undefined) return undefined
    const key = name === '' ? MY_KEYS[my[1].toLowerCase().replace(/\s+/g, '')] : undefined
    return { kind: 'profile', text: key ? `${key}: ${value}` : sentence(`The user's ${my[1].toLowerCase()}${name} ${my[3]} ${value}`) }
  }
  const favourite = IS_MY_FAVOURITE.exec(body.replace(/\s+(?:too|as well)$/i, ''))
  if (favourite?.[1] && favourite[2] && favourite[3]) {
    const thing = objectPhrase(favourite[1], 8)
    const which = favourite[3].replace(/\bmy\b/, "the user's")
    return thing && !/^(?:the )?(?:one|mine|yours|that|this|it)\b/i.test(thing) ? { kind: 'profile', text: sentence(`${thing} ${favourite[2]} ${which}`) } : undefined
  }
  for (const { pattern, fact, key, maxWords, definite } of STATEMENTS) {
    const match = pattern.exec(body)
    if (!match) continue
    const groups = match.slice(1).filter((group): group is string => group !== undefined)
    const object = groups.at(-1)
    const value = object === undefined ? undefined : objectPhrase(object, maxWords)
    if (value === undefined || (definite === false && DEFINITE.test(value))) return undefined
    if (key !== undefined) {
      // A keyed fact is the value alone: when it became true ("I moved to Porto last month") is not part of it.
      const alone = value.replace(WHEN_AT_END, '').trim()
      return alone === '' ? undefined : { kind: 'profile', text: `${key}: ${alone}` }
    }
    // A verb or preposition captured before the object ("love" + "hiking") is the user's own word.
    return fact ? { kind: 'profile', text: sentence(fact(value, groups.length > 1 ? (groups[0]?.toLowerCase() ?? '') : '')) } : undefined
  }
  // Not a statement of who the user is or what they like: what they did, or a fact of their world.
  return worldFactOf(body, when, at)
}

/**
 * The facts the rules find in one user message, in order, without repeats. `at`, when the message
 * has a time, dates the events it reports ("last Friday" → the day).
 */
export function ruleFacts(content: string, at?: Date): RuleFact[] {
  const language = detectLanguage(content).rules
  if (language) return languageRuleFacts(content, language)
  const facts: RuleFact[] = []
  const add = (fact: RuleFact | undefined): void => {
    if (fact && !facts.some((known) => known.kind === fact.kind && known.text === fact.text)) facts.push(fact)
  }
  for (const candidate of statementSentences(content)) {
    add(roleInPassing(candidate))
    for (const fact of toolsInPassing(candidate)) add(fact)
    for (const clause of clausesOf(candidate)) add(factOf(clause, at))
  }
  return facts
}

/** A fact as the engram every producer hands to the encoder: the user said it, so high confidence. */
export function ruleEngram(fact: RuleFact): Engram & { meta: Record<string, string> } {
  return { text: fact.text, kind: fact.kind, scope: 'global', confidence: 'high', source: 'user', meta: { method: 'rules' } }
}

/**
 * What every instruction `ruleOf` reads starts with ("always", "from now on", "going forward", "in
 * (the) future", "never", "don't ever", "when(ever)"), as the text holds it once its backticks are
 * gone (a sentence joins a name in backticks to its word, and never joins anything else): a
 * message without one sets none, and is not cut into sentences (every user message of every
 * append is asked, inside its write transaction).
 */
const MAY_INSTRUCT = /always|now\s+on|forward|future|ever|when/i

/**
 * The sentences of one user message that set a standing instruction ("Always give me the psql
 * command.", "Never use semicolons in examples.", "When I ask about deadlines, use 24-hour time."),
 * as the user said them (decision 0079): what the conversation index keeps as the user's rules
 * beside the message (memory/context/context-index.ts). The rules of `ruleFacts`, read on the whole
 * sentence; a question is a request, not an instruction.
 */
export function standingInstructions(content: string): string[] {
  if (!MAY_INSTRUCT.test(content.replace(/`/g, ''))) return []
  return statementSentences(content).filter((candidate) => !candidate.endsWith('?') && ruleOf(candidate.replace(/[.!,;]+$/, '').trim()) !== undefined)
}
