/**
 * Standing instructions and preferences offline in a language with a table (decision 0077): the
 * same precision-first reading as the English rules (rules.ts), over the table's markers instead of
 * English grammar. A sentence is a standing instruction when it says "always" or "never"
 * (常に, immer, jamais …), addresses the assistant (ください, mir, s'il vous plaît, or opens with an
 * imperative) and is neither a question nor about the speaker ("私はいつも…", "Ich trinke immer…"
 * state a habit). A "never" marker, or an "always" with a negation ("常に…しないでください"),
 * makes it a never-rule. A preference is the table's preference pattern without a negation. The
 * stored text is the user's sentence as said: turning it to the third person, as the English rules
 * do, would take a grammar per language; the kind (always, never, profile) says whose it is.
 */
import type { Language } from '../../text/languages/language.ts'
import { normaliseForMatching } from '../../text/languages/language.ts'
import type { RuleFact } from './rules.ts'

/** Longest sentence read as one instruction or preference: a paragraph is not a rule. */
const MAX_SENTENCE_CHARS = 200

/** The sentences of a message, each with the mark that ends it (`。`, `!`, `?`, a full-width one, or a line's end). */
function sentencesOf(content: string): string[] {
  const prose = content.replace(/```[\s\S]*?(?:```|$)/g, ' ').replace(/\bhttps?:\/\/\S+/g, ' ')
  const sentences: string[] = []
  for (const line of prose.split(/\n+/)) {
    // A full stop ends a sentence before a space or the end ("OAuth 2.0" is one word); 。！？ always.
    for (const match of line.matchAll(/(?:[^.!?。！？]|[.!?](?=[^\s.!?]))+(?:[.!?。！？]+|$)/g)) {
      const sentence = match[0].replace(/\s+/g, ' ').trim()
      if (sentence.length > 0) sentences.push(sentence)
    }
  }
  return sentences
}

function asked(normalised: string, language: Language): boolean {
  if (normalised.includes('?')) return true
  if (language.questionEnding?.test(normalised)) return true
  // An opening question word asks in a spaced language; elsewhere one is inside many a statement.
  return language.table.words === 'spaced' && language.questionWord.test(normalised)
}

/** What one sentence states, if it is a standing instruction or a preference. */
function factOf(sentence: string, language: Language): RuleFact | undefined {
  if (sentence.length > MAX_SENTENCE_CHARS) return undefined
  const text = normaliseForMatching(sentence)
  if (asked(text, language)) return undefined
  const aboutTheSpeaker = language.firstPerson.test(text)
  const always = language.always.test(text)
  const never = language.never.test(text)
  if ((always || never) && !aboutTheSpeaker && (language.addressee.test(text) || language.imperative.test(text))) {
    return { kind: never || language.negation.test(text) ? 'never' : 'always', text: sentence }
  }
  if (language.preference?.test(text) && !language.negation.test(text)) return { kind: 'profile', text: sentence }
  return undefined
}

/** The instructions and preferences the table's rules find in one user message, in order. */
export function languageRuleFacts(content: string, language: Language): RuleFact[] {
  const facts: RuleFact[] = []
  for (const sentence of sentencesOf(content)) {
    const fact = factOf(sentence, language)
    if (fact && !facts.some((known) => known.kind === fact.kind && known.text === fact.text)) facts.push(fact)
  }
  return facts
}
