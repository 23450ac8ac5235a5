/**
 * A query of one common word on PostgreSQL, ranked without reading the word's every posting
 * (decision 0095). Each block carries its peaks (index-blocks.ts): the postings no other of the
 * block outscores, so the best score any of its postings can have for this query is a peak's,
 * computed by the query's own scoring. The blocks' peaks are read first (from the covering index,
 * a few bytes a block); then the blocks' postings, best bound first, a growing batch at a time,
 * until every posting not read is known to rank below the ones asked for.
 *
 * Exact: the postings ranked are those the whole list would rank first, in the same order with
 * the same scores. A posting not read is in a block whose bound B (first rowid F) is the highest
 * left; it scores at most B, and on a tie its rowid is at least F, so any posting read that scores
 * above B, or B with a rowid below F, ranks before every posting not read (equal scores rank by
 * rowid, as FTS5 returns them). Tombstones (a term's negative blocks, few) are all read first and
 * cancel postings as they are read; a cancelled posting only lowers a block below its bound.
 *
 * The bound holds when the score never falls as a field's count grows or the length shrinks:
 * true of BM25 for field weights ≥ 0. In floating point, two postings whose exact scores differ
 * by less than rounding could swap; a weight of 0 changes nothing and one of at least
 * MIN_BOUNDED_WEIGHT keeps exact scores apart by many orders of magnitude more than rounding.
 * The caller reads the whole list for any other weights.
 */
import { forEachPeak, forEachPosting, Tombstones, tombstonesByTerm } from './index-blocks.ts'
import type { PgQueryable } from './driver.ts'

/** The smallest positive field weight the bounds are trusted with (see the file comment). */
export const MIN_BOUNDED_WEIGHT = 1e-6

/** Blocks whose postings are read in the first batch; each batch after reads twice as many. */
const FIRST_BATCH = 8

/** Whether a query's field weights keep block bounds exact. */
export function boundable(weights: readonly number[]): boolean {
  return weights.every((w) => Number.isFinite(w) && (w === 0 || w >= MIN_BOUNDED_WEIGHT))
}

export interface TermScoring {
  /** A posting's score for the query: the same function scores postings and peaks. */
  score(own: number, near: number, far: number, related: number, tokens: number): number
  /** Kind codes that pass (index-blocks.ts `kindCodes`), or every kind. */
  kinds?: ReadonlySet<number>
}

/** Blocks with the same first and last rowid (a unit's posting written again) are read together. */
interface Key {
  first: number
  last: number
  bound: number
}

export interface Ranked {
  rowid: number
  score: number
}

/** How much of the term a ranking read: for the bench and the tests. */
export interface RankingReads {
  blocks: number
  blocksRead: number
  postingsRead: number
  statements: number
}

export interface TermRanking {
  /** Reads on until at least `n` postings are ranked for certain, or none is left to read. */
  rankAtLeast(n: number): Promise<void>
  /** The postings ranked for certain, best first (equal scores by rowid). */
  ranked(): Ranked[]
  /** Whether every posting of the term has been read. */
  readonly complete: boolean
  readonly reads: RankingReads
}

const beats = (a: Ranked, score: number, rowid: number): boolean => a.score > score || (a.score === score && a.rowid < rowid)
const bestFirst = (a: Ranked, b: Ranked): number => b.score - a.score || a.rowid - b.rowid

/**
 * The ranking of `term`'s postings under `scoring`, read on `db` — which should be one
 * transaction at REPEATABLE READ, so that every batch sees the blocks as the first read did
 * (a block folded in between would otherwise be missed or read twice).
 */
export async function openTermRanking(db: PgQueryable, term: string, scoring: TermScoring): Promise<TermRanking> {
  const [heads, tombs] = await Promise.all([
    db.query<{ first: string; last: string; peaks: Buffer | null }>('SELECT first, last, peaks FROM index_blocks WHERE term = $1 AND units > 0', [term]),
    db.query<{ term: string; first: string; units: number; data: Buffer }>('SELECT term, first, units, data FROM index_blocks WHERE term COLLATE "C" = $1 AND units < 0', [term]),
  ])
  const reads: RankingReads = { blocks: heads.rows.length, blocksRead: 0, postingsRead: 0, statements: 2 }
  const tombstones = tombstonesByTerm(tombs.rows).get(term) ?? new Tombstones()
  const byKey = new Map<string, Key>()
  for (const head of heads.rows) {
    let bound = Number.POSITIVE_INFINITY
    if (head.peaks) {
      let best = Number.NEGATIVE_INFINITY
      forEachPeak(head.peaks, (own, near, far, related, tokens) => {
        const score = scoring.score(own, near, far, related, tokens)
        if (score > best) best = score
      })
      bound = best
    }
    const key = `${head.first} ${head.last}`
    const known = byKey.get(key)
    if (known) known.bound = Math.max(known.bound, bound)
    else byKey.set(key, { first: Number(head.first), last: Number(head.last), bound })
  }
  // Best bound first; equal bounds by first rowid, the order their postings would rank in.
  const keys = [...byKey.values()].sort((a, b) => b.bound - a.bound || a.first - b.first)
  let next = 0
  let batch = FIRST_BATCH
  const read: Ranked[] = []
  let sorted = true

  async function readBatch(): Promise<void> {
    const chosen = keys.slice(next, next + batch)
    next += chosen.length
    batch *= 2
    const { rows } = await db.query<{ first: string; data: Buffer }>(
      'SELECT b.first, b.data FROM index_blocks b JOIN unnest($2::bigint[], $3::bigint[]) AS k(first, last) ON b.term = $1 AND b.last = k.last AND b.first = k.first WHERE b.units > 0',
      [term, chosen.map((key) => key.first), chosen.map((key) => key.last)],
    )
    reads.statements++
    reads.blocksRead += rows.length
    const live = !tombstones.empty()
    for (const block of rows) {
      forEachPosting(Number(block.first), block.data, (rowid, own, near, far, related, tokens, kind) => {
        reads.postingsRead++
        if (live && tombstones.holds(rowid) && tombstones.takes({ rowid, own, near, far, related, tokens, kind })) return
        if (scoring.kinds !== undefined && !scoring.kinds.has(kind)) return
        read.push({ rowid, score: scoring.score(own, near, far, related, tokens) })
      })
    }
    sorted = false
  }

  /** How many of the postings read rank before every posting not read. */
  function certain(): number {
    if (!sorted) {
      read.sort(bestFirst)
      sorted = true
    }
    const key = keys[next]
    if (key === undefined) return read.length
    let n = 0
    while (n < read.length && beats(read[n]!, key.bound, key.first)) n++
    return n
  }

  return {
    async rankAtLeast(n: number): Promise<void> {
      while (next < keys.length && certain() < n) await readBatch()
    },
    ranked: () => read.slice(0, certain()),
    get complete() {
      return next >= keys.length
    },
    reads,
  }
}
