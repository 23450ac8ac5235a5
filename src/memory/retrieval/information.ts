/**
 * How much a remembered message says, as a prior on its relevance (decision 0012, second
 * 2026-11-23 addendum). Two turns that match a question equally well are not equally good answers: "Wow,
 * that's great!" or "What did you paint?" matches the words of "What did Melanie paint?" but says
 * nothing; "We painted a sunset by Lake Tahoe last weekend" does. The prior uses only the text:
 *
 *   content = ln(1 + min(words, 100))          longer turns carry more facts (saturating)
 *           + ln(1 + proper names)             named things (places, titles, people other than
 *                                              the participants) are what questions ask after
 *           − 1.5 · [the turn ends in a question of fewer than 20 words]
 *           − 1.5 · [the turn opens with an acknowledgement: "wow", "thanks", "sounds", …]
 *           + 4 · [a standing instruction or stated preference: "Always …", "Never …", "I prefer …"]
 *
 * and a message's relevance is multiplied by max(0, 1 + weight × content) (`retrieval.informationWeight`).
 * Being a factor on relevance, it never lifts a message that does not match the query.
 */

/** Words counted towards length; a pasted document does not outweigh everything else. */
const MAX_WORDS = 100
/** What a turn that only asks, or only acknowledges, loses. */
const QUESTION_PENALTY = 1.5
const ACKNOWLEDGEMENT_PENALTY = 1.5
/**
 * A question of this many words or more is not penalised: users state their facts inside long
 * questions ("I set a $700 budget for the phone — is that enough?"); "What did you paint?" only asks.
 */
const QUESTION_MAX_WORDS = 20
/**
 * What a standing instruction or a stated preference gains: it is what the agent must honour
 * whenever its topic comes up, however few words it shares with the question ("Always include a
 * code example when I ask about async error handling" before "How do I manage errors in
 * asynchronous code?"). Measured in decision 0012 (4: BEAM dev instruction following R@10 16.7 →
 * 29.2, LoCoMo unchanged).
 */
const DIRECTIVE_BONUS = 4

/** Openers of turns that react to the other speaker rather than report something (English). */
const ACKNOWLEDGEMENT =
  /^(?:wow|whoa|that'?s|thanks|thank you|thx|glad|awesome|congrats|congratulations|sounds|aww+|oh|ooh|yeah|yes|yep|yup|haha+|lol|cool|nice|great|totally|absolutely|definitely|sure|ok|okay|omg|amazing|sorry)\b/i

const NON_ASCII_WORD = /[\p{L}\p{N}]/u

/** Whether the character at `at` belongs to a word (letters, digits, apostrophes). */
function isWordChar(code: number, text: string, at: number): boolean {
  if (code < 128) return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 39
  return code === 0x2019 || NON_ASCII_WORD.test(text[at] as string)
}

export interface InformationParts {
  words: number
  names: number
  question: boolean
  acknowledgement: boolean
  /** A standing instruction or stated preference ("Always …", "Never …", "I prefer …"). */
  directive: boolean
}

/** Turns that open with a standing instruction to the agent. */
const INSTRUCTION = /^(?:please\s+)?(?:always|never|from now on|make sure (?:to|you)|do not ever|don't ever)\b/i
/** A preference stated in the first person, anywhere in the turn. */
const PREFERENCE = /\bI(?:'ve| have)?\s+(?:(?:always|really|strongly|generally)\s+)?(?:prefer|prioriti[sz]e|prioriti[sz]ed)\b/i

/**
 * The parts of the prior for `text` in one pass over its characters (this runs on every candidate
 * of every recall); `participants` (lowercase) are not counted as names. Bracketed annotations
 * ("[shares a photo: …]") count as words but not as names, nor as the turn's last character.
 */
export function informationParts(text: string, participants: ReadonlySet<string> = new Set()): InformationParts {
  let words = 0
  let names = 0
  let sentenceStart = true
  let depth = 0
  let last = ''
  let first = -1
  const length = text.length
  let i = 0
  while (i < length) {
    const code = text.charCodeAt(i)
    if (isWordChar(code, text, i)) {
      const from = i
      while (i < length && isWordChar(text.charCodeAt(i), text, i)) i++
      words++
      if (depth > 0) continue
      if (first < 0) first = from
      last = 'w'
      const head = text[from] as string
      const capitalised = head !== head.toLowerCase()
      if (capitalised && !sentenceStart) {
        const token = text.slice(from, i)
        if (token !== 'I' && !/^I['’]/.test(token) && !participants.has(token.toLowerCase())) names++
      }
      sentenceStart = false
      continue
    }
    if (code === 91) depth++
    else if (code === 93) depth = Math.max(0, depth - 1)
    else if (depth === 0) {
      if (code === 46 || code === 33 || code === 63) sentenceStart = true
      if (code > 32) last = text[i] as string
    }
    i++
  }
  const opening = first >= 0 ? text.slice(first, first + 24) : ''
  return {
    words,
    names,
    question: last === '?',
    acknowledgement: ACKNOWLEDGEMENT.test(opening),
    directive: INSTRUCTION.test(opening) || PREFERENCE.test(text.length > 4_000 ? text.slice(0, 4_000) : text),
  }
}

/** The prior's value (see the module comment); 0 for an empty text. */
export function informationContent(text: string, participants?: ReadonlySet<string>): number {
  const parts = informationParts(text, participants)
  if (parts.words === 0) return 0
  return (
    Math.log1p(Math.min(parts.words, MAX_WORDS)) +
    Math.log1p(parts.names) -
    (parts.question && parts.words < QUESTION_MAX_WORDS ? QUESTION_PENALTY : 0) -
    (parts.acknowledgement ? ACKNOWLEDGEMENT_PENALTY : 0) +
    (parts.directive ? DIRECTIVE_BONUS : 0)
  )
}

/** The factor a message's relevance is multiplied by: max(0, 1 + weight × content). */
export function informationFactor(text: string, weight: number, participants?: ReadonlySet<string>): number {
  if (weight === 0) return 1
  return Math.max(0, 1 + weight * informationContent(text, participants))
}
