/**
 * How much a remembered message says, as a prior on its relevance (decision 0012, 2026-11-24
 * addendum). Two turns that match a question equally well are not equally good answers: "Wow,
 * that's great!" or "What did you paint?" matches the words of "What did Melanie paint?" but says
 * nothing; "We painted a sunset by Lake Tahoe last weekend" does. The prior uses only the text:
 *
 *   content = ln(1 + min(words, 100))          longer turns carry more facts (saturating)
 *           + ln(1 + proper names)             named things (places, titles, people other than
 *                                              the participants) are what questions ask after
 *           − 1.5 · [the turn ends in a question]
 *           − 1.5 · [the turn opens with an acknowledgement: "wow", "thanks", "sounds", …]
 *
 * and a message's relevance is multiplied by max(0, 1 + weight × content) (`retrieval.informationWeight`).
 * Being a factor on relevance, it never lifts a message that does not match the query.
 */

/** Words counted towards length; a pasted document does not outweigh everything else. */
const MAX_WORDS = 100
/** What a turn that only asks, or only acknowledges, loses. */
const QUESTION_PENALTY = 1.5
const ACKNOWLEDGEMENT_PENALTY = 1.5

/** Openers of turns that react to the other speaker rather than report something (English). */
const ACKNOWLEDGEMENT =
  /^(?:wow|whoa|that'?s|thats|thanks|thank you|thx|glad|awesome|congrats|congratulations|sounds|aww+|oh|ooh|yeah|yes|yep|yup|haha+|lol|cool|nice|great|totally|absolutely|definitely|sure|ok|okay|omg|amazing|sorry)\b/i

const TOKEN = /[\p{L}\p{N}'’]+|[.!?]/gu
const ANNOTATION = /\[[^\]]*\]/g

export interface InformationParts {
  words: number
  names: number
  question: boolean
  acknowledgement: boolean
}

/** The parts of the prior for `text`; `participants` (lowercase) are not counted as names. */
export function informationParts(text: string, participants: ReadonlySet<string> = new Set()): InformationParts {
  // Bracketed annotations ("[shares a photo: …]") count as words but not as the turn's own shape.
  const body = text.replace(ANNOTATION, ' ').trim()
  let words = 0
  for (const _ of text.matchAll(/[\p{L}\p{N}'’]+/gu)) words++
  let names = 0
  let sentenceStart = true
  for (const match of body.matchAll(TOKEN)) {
    const token = match[0]
    if (token === '.' || token === '!' || token === '?') {
      sentenceStart = true
      continue
    }
    const first = token[0] as string
    const capitalised = first !== first.toLowerCase() && first === first.toUpperCase()
    if (!sentenceStart && capitalised && token !== 'I' && !/^I['’]/.test(token) && !participants.has(token.toLowerCase())) names++
    sentenceStart = false
  }
  return { words, names, question: body.endsWith('?'), acknowledgement: ACKNOWLEDGEMENT.test(body) }
}

/** The prior's value (see the module comment); 0 for an empty text. */
export function informationContent(text: string, participants?: ReadonlySet<string>): number {
  const parts = informationParts(text, participants)
  if (parts.words === 0) return 0
  return (
    Math.log1p(Math.min(parts.words, MAX_WORDS)) +
    Math.log1p(parts.names) -
    (parts.question ? QUESTION_PENALTY : 0) -
    (parts.acknowledgement ? ACKNOWLEDGEMENT_PENALTY : 0)
  )
}

/** The factor a message's relevance is multiplied by: max(0, 1 + weight × content). */
export function informationFactor(text: string, weight: number, participants?: ReadonlySet<string>): number {
  if (weight === 0) return 1
  return Math.max(0, 1 + weight * informationContent(text, participants))
}
