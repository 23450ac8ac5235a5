/**
 * Facts from a conversation, offline: deterministic rules that pick out what a user states about
 * themselves in so many words, and nothing else (decision 0066). Precise rather than eager: a
 * sentence is read only when it is a plain first-person statement (or an instruction addressed to
 * the assistant); a question, a negation, a hypothetical or conditional, a quotation or someone
 * else's words are skipped whole. The stored text is the user's own words turned to the third
 * person ("I'm allergic to peanuts" → "The user is allergic to peanuts."), never generalised.
 * English only: another language yields nothing (multilingual extraction is a later issue).
 */
import type { Engram, RuleKind } from '../../core/engram.ts'

/** A fact the rules found, before it becomes an engram. */
export interface RuleFact {
  kind: 'profile' | RuleKind
  text: string
}

// Anything that makes a sentence other than a plain statement of fact about the speaker.
const NEGATION = /\b(?:not|no|never|nothing|nobody|none|neither|nor|without|no longer|hardly|barely)\b|n['’]t\b/i
const HYPOTHETICAL =
  /\b(?:if|unless|whether|would|could|should|might|may|maybe|perhaps|probably|possibly|suppose|supposing|imagine|wish|hope|hoping|guess|wonder|think|thinking|plan|planning|considering|trying to|want|wanna|gonna|going to|will|someday|one day|pretend|as if|like if|used to)\b|['’]d\b|['’]ll\b/i
const REPORTED = /\b(?:said|says|say|told|tells|asked|asks|mentioned|mentions|according to|claims?|claimed|reported|heard|wrote|writes)\b/i
const QUOTE = /["“”„«»]|(?:^|\s)['‘][^'’]+['’](?:\s|$|[.,!?])/

// Objects that point at something said in the conversation rather than at a thing in the world.
const DEICTIC = /^(?:it|that|this|these|those|them|you|your|yours|what|how|when|where|why|which|who|the way|the idea|the (?:sound|look|photo|picture|pic) of|hearing|seeing|reading about|talking|chatting)\b/i

const SUBJECT_OK_PREFIX = /^(?:(?:oh|ah|wow|yeah|yes|yep|well|so|hey|hi|hello|thanks|thank you|sure|ok|okay|cool|great|honestly|actually|by the way|btw|and|also|plus)[\s,!.-]*)*/i

/** Sentences of one message, with code, bracketed asides (`[shares a photo: …]`) and URLs taken out. */
export function statementSentences(content: string): string[] {
  const prose = content
    .replace(/```[\s\S]*?(?:```|$)/g, ' ')
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/\[[^\]\n]*\]/g, ' ')
    .replace(/\bhttps?:\/\/\S+/g, ' ')
  const sentences: string[] = []
  for (const line of prose.split(/\n+/)) {
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

// A pronoun or demonstrative inside the object points into the conversation ("I love the color of
// it", "I like holding them", "I love this city", "I love their design"): who or what it is, the
// sentence does not say.
// "This" before a thing it then names introduces it ("this great game called FIFA 23"): not deixis.
const NAMED_HERE = /\b(?:this|these) (?:[a-z-]+ ){0,3}(?:called|named) (?=[A-Z0-9])/g
const POINTING = /\b(?:this|that|these|those|it|its|them|their|theirs|him|her|his|hers|there|here)\b|\bit['’]s\b/i
// A list keeps its commas ("reading, movies, and nature"); any other comma starts another clause
// ("aerial yoga, it's a great way to switch off and …"): a list's items are a few words each.
const LIST = /^[^,]+(?:, [^,]+)*,? (?:and|or) [^,]+$/
const isList = (value: string): boolean => LIST.test(value) && value.split(/,\s*(?:and |or )?|\s+(?:and|or)\s+/).every((item) => item.split(' ').length <= 4)
const LIST_GOES_ON = /^\s*(?:[^,\s]+(?: [^,\s]+){0,5},\s*)+(?:and|or)\s/i
// After a plural noun, "that" opens a relative clause ("games that test my strategizing"), it
// points at nothing.
const RELATIVE_THAT = /(?<=\b[a-z]{3,}s) that (?=[a-z]+ )/g

/** An object phrase as the user said it, or undefined when it is not one fact (too long, deictic, another clause). */
function objectPhrase(raw: string, maxWords = 10): string | undefined {
  let value = raw
    .replace(/\s+/g, ' ')
    .replace(/\s+[-–—]\s+.*$/, '')
    // A conjunction before another subject starts another clause ("dancing and it brings me joy").
    .replace(/\s+(?:and|but|so|because|since|as|['’]?cause)\s+(?:it|it['’]s|they|they['’]re|he|she|we|you|that|this|there)\b.*$/i, '')
    // A time or reason clause after the object is not part of it ("dancing since I was a kid").
    .replace(/\s+(?:since|because|['’]?cause|when|whenever|while|until|after|before|as)\s+(?:I|I['’][a-z]+|it|it['’]s|they|he|she|we|you|there)\b.*$/, '')
    .replace(/[.!?,;:\s]+$/, '')
    .trim()
  // A name at the end is whom the user speaks to ("I love hiking, Nate").
  value = value.replace(/,\s*[A-Z][a-z]+$/, '')
  if (value.includes(',') && !isList(value)) {
    // Cut at the comma only when another clause follows it, never inside a list whose items are
    // long ("problems that combine algebra, geometry, and calculus"): the head would misread it.
    if (LIST_GOES_ON.test(value.slice(value.indexOf(',') + 1))) return undefined
    value = value.slice(0, value.indexOf(','))
  }
  // "…too", "…as well": the user agrees with what was said; the fact is theirs all the same.
  value = value.replace(/\s+(?:too|as well|so much|a lot)$/i, '').trim()
  const named = value.replace(NAMED_HERE, '')
  if (value === '' || DEICTIC.test(named) || POINTING.test(named.replace(RELATIVE_THAT, ' which '))) return undefined
  // An infinitive without its verb, or a fan of nothing named ("I'm a fan too").
  if (/(?:^|\s)to$/i.test(value) || /^an? (?:big |huge |total |great )?fan$/i.test(value)) return undefined
  // Another subject inside the object is another clause ("I love how you …", "I like it when she …").
  if (/\b(?:I|you|he|she|we|they)\b/.test(value) || /\bI['’]/.test(value)) return undefined
  if (value.split(' ').length > maxWords) return undefined
  return value
    .replace(/\b(?:my|our)\b/gi, 'their')
    .replace(/\b(?:me|us)\b/gi, 'them')
    .replace(/\bmyself\b/gi, 'themselves')
}

const sentence = (text: string): string => {
  const trimmed = text.trim().replace(/[.!]+$/, '')
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}.`
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
  { pattern: /^I (?:really |absolutely |just |also )?(prefer|like|love|enjoy|adore|hate|dislike|detest) (.+)$/i, fact: (v, verb) => `The user ${conjugate(verb)} ${v}`, definite: false },
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

/**
 * The clauses of a sentence that start with "I" after a comma or a conjunction ("I live in Lisbon
 * and I work as a teacher"): each is read on its own, when the sentence as a whole is no question
 * and no one else's words, and up to its first hypothetical clause: a conditional or a hedge
 * governs what follows it ("If I were rich, I'd live…", "I think I live…") but not what was stated
 * before it ("I'm 25, so I'm hoping to find…": the user is 25).
 */
function clausesOf(sentence: string): string[] {
  const text = sentence.replace(SUBJECT_OK_PREFIX, '').trim()
  if (text === '') return []
  if (QUOTE.test(text) || REPORTED.test(text)) return []
  // A question may carry a statement in its own clause ("Can you help me …, I prefer step-by-step
  // explanations"; "I prefer examples, so can you …?"): a clause in the statement's word order,
  // "I" and its verb, is kept; the asking clauses are dropped, and nothing from the clause the
// question mark ends (or a hypothetical) on.
  if (/\?\s*$/.test(text)) return questionStatements(text)
  if (ruleOf(text.replace(/[.!]+$/, '').trim())) return [text]
  const clauses: string[] = []
  for (const clause of text.split(/,\s*(?:and |but |so )?(?=I\b)|\s+(?:and|but|so)\s+(?=I\b)|\s+[-–—]\s+(?=(?:I|[Mm]y)\b)/)) {
    if (HYPOTHETICAL.test(clause)) break
    clauses.push(clause)
  }
  return clauses
}

const ASKING = /^(?:so |and |but )?(?:can|could|would|will|do|does|did|is|are|am|was|were|should|shall|what|how|why|where|when|which|who|any)\b/i

function questionStatements(text: string): string[] {
  const clauses: string[] = []
  for (const clause of text.split(/,\s*(?:and |but |so )?(?=I\b)|\s+(?:and|but|so)\s+(?=I\b)|,\s*(?=(?:so |and |but )?(?:can|could|would|will|do|does|what|how|why)\b)/)) {
    if (HYPOTHETICAL.test(clause) || /\?\s*$/.test(clause)) break
    if (ASKING.test(clause)) continue
    if (/^I\b(?![’']d)/.test(clause)) clauses.push(clause)
  }
  return clauses
}

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

/** What one clause of a user's message states, if it is one plain fact or instruction. */
function factOf(clause: string): RuleFact | undefined {
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
  return undefined
}

/** The facts the rules find in one user message, in order, without repeats. */
export function ruleFacts(content: string): RuleFact[] {
  const facts: RuleFact[] = []
  const add = (fact: RuleFact | undefined): void => {
    if (fact && !facts.some((known) => known.kind === fact.kind && known.text === fact.text)) facts.push(fact)
  }
  for (const candidate of statementSentences(content)) {
    add(roleInPassing(candidate))
    for (const clause of clausesOf(candidate)) add(factOf(clause))
  }
  return facts
}

/** A fact as the engram every producer hands to the encoder: the user said it, so high confidence. */
export function ruleEngram(fact: RuleFact): Engram & { meta: Record<string, string> } {
  return { text: fact.text, kind: fact.kind, scope: 'global', confidence: 'high', source: 'user', meta: { method: 'rules' } }
}
