/**
 * The summarizer used when no LLM is configured or the LLM failed: extractive, not a bare cut.
 *
 * It splits the source into sentences, scores each by how informative it is within this chunk —
 * salience of its words (TF-IDF over the chunk's sentences: words that recur across the chunk but
 * are not everywhere), numbers and dates, names, decision and constraint cues — picks the best
 * sentences that fit the target while skipping near-duplicates, and writes them back in
 * chronological order with who said them and when. The output is recorded as method `extractive`
 * and labelled wherever it is shown.
 */
import { countTokens, truncateToTokens } from '../../core/tokens.ts'
import { statesANumber } from '../../text/languages/numbers.ts'

/** A piece of the source with its speaker-and-time prefix, e.g. `[2026-01-01 09:00] ada (user)`. */
export interface SourceSegment {
  prefix: string
  text: string
}

interface Sentence {
  segment: number
  /** Order within the whole source, for chronological output. */
  order: number
  text: string
  /** Its informative words, each occurrence, and the set of them. */
  words: string[]
  terms: Set<string>
  score: number
}

// Function words carry no information about what the conversation was about.
const STOPWORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between both but by can
  could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if
  in into is it its itself just let me more most my myself no nor not now of off on once only or other our ours ourselves out over own
  same she should so some such than that the their theirs them themselves then there these they this those through to too under until
  up very was we were what when where which while who whom why will with would you your yours yourself yourselves ok okay yes yeah sure
  thanks thank please hi hello hey well right got get like really just im ive dont thats its lets`
    .split(/\s+/)
    .filter(Boolean),
)

// What the normal-mode LLM prompt asks to keep (decisions, rationale, constraints) — as words.
const CUES =
  /\b(decid\w*|agree\w*|chose|choose|conclud\w*|because|therefore|so that|must|never|always|required?|requires|need(s|ed)? to|should|will|deadline|due|plan(ned)?|todo|fix(ed)?|bug|error|fail\w*|prefer\w*|important|note|remember|constraint|budget|cost|price|use|using|switch\w*|instead)\b/i
const FILLER = /^(ok(ay)?|yes|no|sure|thanks?( you)?( so much)?|great|cool|got it|sounds good|right|hmm+|lol|nice|(hi|hello|hey)( there)?|good (morning|afternoon|evening|night)|bye|see you)[.!?,]*$/i

/** Sentences of a text: split after . ! ? followed by space, and at line breaks. */
export function splitSentences(text: string): string[] {
  const out: string[] = []
  for (const line of text.split(/\n+/)) {
    const trimmed = line.trim()
    if (trimmed === '') continue
    for (const part of trimmed.split(/(?<=[.!?])\s+(?=[^\s])/)) {
      const sentence = part.trim()
      if (sentence !== '') out.push(sentence)
    }
  }
  return out
}

function termsOf(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_'-]*/gu) ?? []).filter((word) => word.length > 1 && !STOPWORDS.has(word))
}

/** Whitespace-separated words of a text. */
function wordCount(text: string): number {
  let count = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const space = code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x2028 || code === 0x2029 || code === 0x3000 || (code >= 0x2000 && code <= 0x200a) || code === 0x1680 || code === 0x202f || code === 0x205f || code === 0xfeff
    if (!space && !inWord) count++
    inWord = !space
  }
  return count
}

/** Capitalised words that do not start the sentence (counted up to `cap`): a cheap stand-in for named entities. */
function namedEntityCount(text: string, cap: number): number {
  const words = text.split(/\s+/)
  let count = 0
  for (let i = 1; i < words.length && count < cap; i++) {
    const word = words[i]!
    if (/^[A-Z][\p{L}\p{N}]+/u.test(word) && !/^I('|$)/.test(word)) count++
  }
  return count
}

function overlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0
  let shared = 0
  for (const term of a) if (b.has(term)) shared++
  return shared / Math.min(a.size, b.size)
}

function scoreSentences(sentences: Sentence[]): void {
  const documentFrequency = new Map<string, number>()
  const chunkFrequency = new Map<string, number>()
  for (const sentence of sentences) {
    for (const term of sentence.terms) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1)
  }
  for (const sentence of sentences) {
    for (const term of sentence.words) chunkFrequency.set(term, (chunkFrequency.get(term) ?? 0) + 1)
  }
  const n = sentences.length
  // Each term's weight once: salience of its chunk frequency times its inverse document frequency.
  const weight = new Map<string, number>()
  for (const [term, df] of documentFrequency) weight.set(term, Math.log(1 + (chunkFrequency.get(term) ?? 1)) * Math.log(1 + n / df))
  for (const sentence of sentences) {
    if (FILLER.test(sentence.text)) {
      sentence.score = 0
      continue
    }
    let salience = 0
    for (const term of sentence.terms) salience += weight.get(term)!
    // Normalised by length so long rambling sentences do not win by size alone.
    let score = salience / Math.sqrt(Math.max(sentence.terms.size, 1))
    // Digits of any width or script, and numerals written as characters (decision 0077).
    if (statesANumber(sentence.text)) score *= 1.3
    if (CUES.test(sentence.text)) score *= 1.4
    score *= 1 + namedEntityCount(sentence.text, 3) * 0.1
    if (sentence.terms.size < 3) score *= 0.5
    sentence.score = score
  }
}

function render(chosen: Sentence[], segments: SourceSegment[]): string {
  const ordered = [...chosen].sort((a, b) => a.order - b.order)
  const lines: string[] = []
  let previous: Sentence | undefined
  for (const sentence of ordered) {
    if (previous && previous.segment === sentence.segment) {
      const gap = sentence.order !== previous.order + 1
      lines[lines.length - 1] += `${gap ? ' … ' : ' '}${sentence.text}`
    } else {
      lines.push(`${segments[sentence.segment]!.prefix}: ${sentence.text}`)
    }
    previous = sentence
  }
  return lines.join('\n')
}

/**
 * The most informative sentences of `segments` within `targetTokens`, in chronological order,
 * each line prefixed with its speaker and time. Never empty when the source has text: if not even
 * one sentence fits with its prefix, the best sentence that fits with its speaker alone is given,
 * else the best one is cut at a word boundary.
 */
export function extractiveSummary(segments: SourceSegment[], targetTokens: number): string {
  const sentences: Sentence[] = []
  segments.forEach((segment, index) => {
    for (const text of splitSentences(segment.text)) {
      const words = termsOf(text)
      sentences.push({ segment: index, order: sentences.length, text, words, terms: new Set(words), score: 0 })
    }
  })
  if (sentences.length === 0) return ''
  scoreSentences(sentences)
  const ranked = [...sentences].sort((a, b) => b.score - a.score || a.order - b.order)
  // Costs are summed per sentence (plus each speaker prefix once) rather than re-counting the whole
  // rendering per candidate, which would be quadratic; the final rendering is counted exactly below.
  // Counted when a segment's first sentence is considered (most segments never are).
  const prefixCosts = new Map<number, number>()
  const prefixCost = (segment: number): number => {
    let cost = prefixCosts.get(segment)
    if (cost === undefined) {
      cost = countTokens(segments[segment]!.prefix) + 2
      prefixCosts.set(segment, cost)
    }
    return cost
  }
  const chosen: Sentence[] = []
  const segmentsUsed = new Set<number>()
  let used = 0
  // Filler ("ok", "thanks") scores zero, and sentences far below the best are noise even when they
  // would fit: a shorter summary is better than a padded one.
  const floor = Math.max(Number.MIN_VALUE, (ranked[0]?.score ?? 0) * 0.15)
  for (const candidate of ranked) {
    if (candidate.score < floor) break
    // Every sentence costs at least 2 (a token and the separator): once that does not fit, nothing will.
    if (used + 2 > targetTokens) break
    const prefix = segmentsUsed.has(candidate.segment) ? 0 : prefixCost(candidate.segment)
    // A word is at least one token (the encoder never joins two words): a sentence whose words
    // alone do not fit is passed over without being encoded.
    if (used + wordCount(candidate.text) + 1 + prefix > targetTokens) continue
    const cost = countTokens(candidate.text) + 1 + prefix
    if (used + cost > targetTokens) continue
    if (chosen.some((kept) => overlap(kept.terms, candidate.terms) > 0.8)) continue
    chosen.push(candidate)
    segmentsUsed.add(candidate.segment)
    used += cost
  }
  // Gap markers and BPE merges can make the real count differ a little: drop the weakest until it fits.
  chosen.sort((a, b) => b.score - a.score)
  while (chosen.length > 0 && countTokens(render(chosen, segments)) > targetTokens) chosen.pop()
  if (chosen.length > 0) return render(chosen, segments)
  // Not even one sentence fits with its prefix. "[2026-03-02 09:03] assistant" alone costs 13-16
  // tokens, as much as a small chunk's whole target, so cutting the prefixed line left a summary of
  // nothing but the prefix ("[2026-03-02 09:03] assistant: [tool"). The summary's header gives its
  // time span: the speaker is enough. The best sentence that fits with it, else the best one cut.
  for (const candidate of ranked) {
    if (candidate.score < floor) break
    const line = `${speakerOf(segments[candidate.segment]!.prefix)}: ${candidate.text}`
    if (countTokens(line) <= targetTokens) return line
  }
  const best = ranked[0]!
  const line = `${speakerOf(segments[best.segment]!.prefix)}: ${best.text}`
  return truncateToTokens(line, targetTokens) || truncateToTokens(best.text, Math.max(targetTokens, 1))
}

/** `ada (user)` of `[2026-03-02 09:03] ada (user)`: the prefix without its time. */
function speakerOf(prefix: string): string {
  return prefix.replace(/^\[[^\]]*\]\s*/, '') || prefix
}
