/**
 * Synthetic memories for the recall benchmark: sentences drawn from a Zipf-distributed
 * vocabulary (a few very common words, a long tail of rare ones — the shape of real text, which
 * is what makes posting lists of common terms huge and rare terms selective), a mix of unit
 * kinds, creation dates spread over a year, and some explicit links between units.
 *
 * Deterministic: the same seed gives the same corpus, so runs are comparable.
 */
import type { IndexUnit, UnitKind } from '../../src/storage/contracts.ts'
import { seededRandom } from '../../src/test-support/seeded-random.ts'


// Real function words at the head of the distribution, as in English: they occur in nearly
// every unit, which is exactly the case a query planner must not choke on.
const FUNCTION_WORDS =
  'the of and to a in is that it was for on are as with be at by this have from or had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know'.split(
    ' ',
  )
const SYLLABLES = 'ka lo mi ra ten vo su pel dra no qui ber tas mon fi gru sel ta ve zor pa lin cho mer dav kos ul ri an te bo'.split(' ')

/**
 * A vocabulary of `size` words: function words first, then content words — real English words in
 * frequency order when given (so word-vector embedders see words they know), else pronounceable
 * made-up ones.
 */
export function makeVocabulary(size: number, random: () => number, contentWords: readonly string[] = []): string[] {
  const words = new Set<string>(FUNCTION_WORDS)
  for (const word of contentWords) {
    if (words.size >= size) break
    words.add(word)
  }
  while (words.size < size) {
    const parts = 2 + Math.floor(random() * 2)
    let word = ''
    for (let i = 0; i < parts; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)]
    words.add(word)
  }
  return [...words]
}

/** Draws ranks 0..n-1 with probability ∝ 1/(rank+1)^s, by binary search over the CDF. */
export function zipfSampler(n: number, s: number, random: () => number): () => number {
  const cdf = new Float64Array(n)
  let total = 0
  for (let i = 0; i < n; i++) {
    total += 1 / (i + 1) ** s
    cdf[i] = total
  }
  return () => {
    const target = random() * total
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((cdf[mid] as number) < target) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

export interface CorpusOptions {
  seed?: number
  vocabulary?: number
  /** Real content words in frequency order (see makeVocabulary). */
  contentWords?: readonly string[]
  /** The instant the newest memory is from; memories spread over the year before it. */
  now: Date
  agent?: string
}

/** The kind mix of a long-lived agent: mostly conversation, then episodes and knowledge. */
const KIND_MIX: ReadonlyArray<[UnitKind, number]> = [
  ['message', 0.55],
  ['summary', 0.08],
  ['episode', 0.12],
  ['knowledge', 0.12],
  ['lesson', 0.05],
  ['rule', 0.02],
  ['topic', 0.03],
  ['procedure', 0.02],
  ['skill', 0.01],
]

export interface Corpus {
  vocabulary: string[]
  sentence(minWords: number, maxWords: number): string
  /** Unit number `i` (deterministic per corpus). */
  unit(i: number): IndexUnit
}

/** A corpus generator; `unit(i)` builds units one at a time so a million never sit in memory. */
export function makeCorpus(options: CorpusOptions): Corpus {
  const random = seededRandom(options.seed ?? 42)
  const vocabulary = makeVocabulary(options.vocabulary ?? 30_000, random, options.contentWords)
  const nextWord = zipfSampler(vocabulary.length, 1.05, random)
  const agent = options.agent ?? 'default'
  const yearMs = 365 * 86_400_000
  const nowMs = options.now.getTime()

  const sentence = (minWords: number, maxWords: number): string => {
    const n = minWords + Math.floor(random() * (maxWords - minWords + 1))
    const words: string[] = []
    for (let i = 0; i < n; i++) words.push(vocabulary[nextWord()] as string)
    const text = words.join(' ')
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`
  }

  const pickKind = (): UnitKind => {
    let r = random()
    for (const [kind, share] of KIND_MIX) {
      r -= share
      if (r <= 0) return kind
    }
    return 'message'
  }

  return {
    vocabulary,
    sentence,
    unit(i) {
      const kind = pickKind()
      const sentences = kind === 'message' ? 1 + Math.floor(random() * 2) : 1 + Math.floor(random() * 3)
      const parts: string[] = []
      for (let s = 0; s < sentences; s++) parts.push(sentence(6, 22))
      const text = parts.join(' ')
      const createdAt = new Date(nowMs - Math.floor(random() * yearMs)).toISOString()
      const source = kind === 'message' || kind === 'summary' ? `conv:${Math.floor(i / 200)}` : `agents/${agent}/${kind}/${Math.floor(i / 10)}.md`
      const unit: IndexUnit = {
        id: `u:${i}`,
        kind,
        text,
        source,
        provenance: [kind === 'message' ? String(i) : source],
        agent,
        createdAt,
        hash: `h${i}`,
      }
      // About one unit in twenty links to two earlier ones, like `[[slug]]` references in notes.
      if (i > 10 && random() < 0.05) unit.links = [`u:${Math.floor(random() * i)}`, `u:${Math.floor(random() * i)}`]
      return unit
    },
  }
}
