/**
 * What the dashboard says in words rather than bare numbers (issue 30): counts with their noun in
 * the right number ("1 memory", "2 memories"), and why a memory was recalled — a sentence built
 * from its score terms, with the terms themselves (lexical, dense, fused, information, history, …)
 * behind a `<details>` toggle for the person who wants the figures.
 */
import { html } from 'hono/html'
import type { Html } from './layout.ts'

/** `n` and its noun: `plural(1, 'memory', 'memories')` is "1 memory". */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`
}

/** Each score term as a person names it, in the order they are listed. */
const TERM_NAMES: ReadonlyArray<readonly [string, string]> = [
  ['score', 'score (all terms together)'],
  ['lexical', 'lexical: the words it shares with what was asked (0–1)'],
  ['dense', 'dense: how close its meaning is (cosine, 0–1)'],
  ['fused', 'fused: words and meaning together (0–1)'],
  ['recency', 'recency: how recently it was written or used'],
  ['frequency', 'frequency: how often it was recalled'],
  ['graph', 'graph: links from other recalled memories'],
  ['information', 'information: how much it says (1 = neutral; lower weighs a thin message down)'],
  ['history', 'history: 1 = current; lower when a newer fact superseded it'],
]

const num = (value: number | string | undefined): number => (typeof value === 'number' ? value : Number.NaN)

/** Why an item was recalled, as a sentence: what its score terms say, strongest first; '' when they say nothing. `against` is what it was matched with. */
export function reasonInWords(why: Readonly<Record<string, number | string>>, against = 'the message'): string {
  if (typeof why.match === 'string') return why.match === 'exact user lookup' ? 'The profile of the person speaking.' : String(why.match)
  if (typeof why.group === 'string') return `Recent activity (${plural(num(why.events) || 0, 'event', 'events')}${typeof why.at === 'string' ? `, the latest at ${why.at.replace('T', ' ').slice(0, 16)}` : ''}).`
  const said: string[] = []
  if (typeof why.reason === 'string' && why.reason !== '') said.push(why.reason)
  if (num(why.lexical) >= 0.5) said.push(`shares most of its words with ${against}`)
  else if (num(why.lexical) > 0) said.push(`shares some words with ${against}`)
  if (num(why.dense) >= 0.5) said.push('close in meaning')
  else if (num(why.dense) > 0.2) said.push('somewhat close in meaning')
  if (num(why.recency) >= 0.5) said.push('recent')
  if (num(why.frequency) >= 0.3) said.push('recalled often before')
  if (num(why.graph) > 0) said.push('linked to another recalled memory')
  if (num(why.information) < 1) said.push('weighed down: it says little')
  if (num(why.history) < 1) said.push('weighed down: a newer fact superseded it')
  if (said.length === 0 && typeof why.stage === 'string') said.push(`matched at the ${why.stage} stage`)
  if (said.length === 0 && Number.isFinite(num(why.score))) said.push(`ranked by recency and use, not by the words of ${against}`)
  const sentence = said.join('; ')
  return sentence === '' ? '' : `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`
}

/** The reason in words, and the score terms behind a closed `<details>` toggle. */
export function reasonWithTerms(why: Readonly<Record<string, number | string>>, against?: string): Html {
  const named = new Map(TERM_NAMES)
  // Only a ranked item has score terms; an activity group's or a profile's fields are said in the sentence.
  const scored = Object.entries(why).some(([key, value]) => named.has(key) && typeof value === 'number')
  const terms = scored ? Object.entries(why).filter(([key]) => key !== 'reason' && key !== 'match') : []
  const ordered = [...TERM_NAMES.flatMap(([key]) => terms.filter(([name]) => name === key)), ...terms.filter(([name]) => !named.has(name))]
  return html`<span data-testid="provenance-reason">${reasonInWords(why, against)}</span>${
    ordered.length > 0
      ? html`<details data-testid="score-terms"><summary>score terms</summary><dl class="terms">${ordered.map(
          ([key, value]) => html`<dt>${named.get(key) ?? key}</dt><dd>${typeof value === 'number' ? String(Math.round(value * 1000) / 1000) : value}</dd>`,
        )}</dl></details>`
      : ''
  }`
}

/** The plural nouns of the dashboard's count labels and their singulars ("1 episode day", "1 memory indexed"). */
const SINGULAR: Readonly<Record<string, string>> = {
  memories: 'memory',
  rules: 'rule',
  lessons: 'lesson',
  facts: 'fact',
  topics: 'topic',
  procedures: 'procedure',
  days: 'day',
  profiles: 'profile',
  confirmations: 'confirmation',
  conversations: 'conversation',
  messages: 'message',
  users: 'user',
  files: 'file',
  skills: 'skill',
  episodes: 'episode',
  turns: 'turn',
  writes: 'write',
  times: 'time',
}

/** A count's label (written in the plural) as it reads after `n`: its plural nouns made singular when `n` is 1. */
export function countLabel(n: number, label: string): string {
  return n === 1 ? label.replace(/[a-z]+/g, (word) => SINGULAR[word] ?? word) : label
}
