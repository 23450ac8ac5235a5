/**
 * The search index's postings on PostgreSQL as packed blocks (migration 9, decision 0091): a row
 * of `index_blocks` holds up to BLOCK_POSTINGS postings of one term, sorted by unit rowid, each as
 * varints (the rowid's gap from the one before, the term's count in own, near, far and related,
 * the unit's length) and a byte for the unit's kind. Migration 8's row per posting cost ~180 bytes
 * (a heap tuple and a covering primary key repeating it); a packed posting costs ~8.
 *
 * Writers never update or cut a row another writer wrote (decision 0094): a write inserts its new
 * postings as blocks, and a unit's old postings (a rewrite or a removal) as a *negative* block — a
 * tombstone, `units` and `own` negated, holding the exact postings it cancels (each unit row keeps
 * its terms' counts, `index_units.counts`, so the old postings are known without reading blocks).
 * A reader subtracts a term's negative postings from its positive ones, one for one (an identical
 * posting stands for any other: a unit's postings of one term differ only when its content did);
 * sums over a term's blocks stay its document frequencies, so there is no per-term counter row to
 * contend on. Compaction (index-compaction.ts) folds tombstones into the blocks holding their
 * postings and merges small blocks, only where no other transaction holds them (SKIP LOCKED).
 */
import type { PgQueryable } from './driver.ts'

/** Postings per block at most: a block of ~1 KB stays in its heap row (no TOAST to decompress). */
const BLOCK_POSTINGS = 128

/**
 * Kind codes, fixed once written (a new kind is appended). An unknown kind is written as 255 and
 * passes the postings' kind filter: the unit row's filter, applied after ranking, decides.
 */
const KIND_CODES = ['message', 'summary', 'episode', 'activity', 'lesson', 'rule', 'profile', 'topic', 'knowledge', 'procedure', 'skill', 'user'] as const
const UNKNOWN_KIND = 255
const kindCode = (kind: string): number => {
  const code = (KIND_CODES as readonly string[]).indexOf(kind)
  return code < 0 ? UNKNOWN_KIND : code
}

/** One posting: a term's counts in a unit's four matched fields, the unit's length and kind. */
export interface Posting {
  rowid: number
  own: number
  near: number
  far: number
  related: number
  tokens: number
  kind: number
}

/** The kind codes a kinds filter lets through (an unknown kind's code always). */
export function kindCodes(kinds: readonly string[]): Set<number> {
  return new Set([...kinds.map(kindCode), UNKNOWN_KIND])
}

export function postingOf(rowid: number, counts: readonly [number, number, number, number], tokens: number, kind: string): Posting {
  return { rowid, own: counts[0], near: counts[1], far: counts[2], related: counts[3], tokens, kind: kindCode(kind) }
}

function putVarint(out: Buffer, at: number, value: number): number {
  let v = value
  while (v >= 0x80) {
    out[at++] = (v % 0x80) | 0x80
    v = Math.floor(v / 0x80)
  }
  out[at++] = v
  return at
}

/** `postings` (sorted by rowid, distinct) as a block's bytes. */
function encode(postings: readonly Posting[]): Buffer {
  const out = Buffer.allocUnsafe(postings.length * 41)
  let at = 0
  let previous = postings[0]!.rowid
  for (const p of postings) {
    at = putVarint(out, at, p.rowid - previous)
    previous = p.rowid
    at = putVarint(out, at, p.own)
    at = putVarint(out, at, p.near)
    at = putVarint(out, at, p.far)
    at = putVarint(out, at, p.related)
    at = putVarint(out, at, p.tokens)
    out[at++] = p.kind
  }
  return Buffer.from(out.subarray(0, at))
}

/**
 * Calls `visit` with each posting of a block whose first rowid is `first`, in rowid order, as
 * numbers (no object per posting: a common word's blocks hold hundreds of thousands).
 */
export function forEachPosting(
  first: number,
  data: Uint8Array,
  visit: (rowid: number, own: number, near: number, far: number, related: number, tokens: number, kind: number) => void,
): void {
  let at = 0
  const next = (): number => {
    let byte = data[at++]!
    if (byte < 0x80) return byte
    let value = byte & 0x7f
    let scale = 0x80
    for (;;) {
      byte = data[at++]!
      value += (byte & 0x7f) * scale
      if (byte < 0x80) return value
      scale *= 0x80
    }
  }
  let rowid = first
  while (at < data.length) {
    rowid += next()
    const own = next()
    const near = next()
    const far = next()
    const related = next()
    const tokens = next()
    visit(rowid, own, near, far, related, tokens, data[at++]!)
  }
}

/** Calls `visit` with each posting of a block whose first rowid is `first`, in rowid order. */
export function decodeBlock(first: number, data: Uint8Array, visit: (p: Posting) => void): void {
  forEachPosting(first, data, (rowid, own, near, far, related, tokens, kind) => visit({ rowid, own, near, far, related, tokens, kind }))
}

export function decoded(first: number, data: Uint8Array): Posting[] {
  const out: Posting[] = []
  decodeBlock(first, data, (p) => out.push(p))
  return out
}

/** Block rows to insert, as parallel arrays for `unnest`. */
export interface BlockRows {
  term: string[]
  first: number[]
  last: number[]
  units: number[]
  own: number[]
  data: Buffer[]
  /** The block's peaks (`peaksOf`); null for a tombstone. */
  peaks: Array<Buffer | null>
}

/** Peaks kept per block at most: more are merged, neighbours by length, into corners that bound them. */
const MAX_PEAKS = 12

/** A peak: counts a posting of the block has at most, at a length it has at least. */
export interface Peak {
  own: number
  near: number
  far: number
  related: number
  tokens: number
}

const dominates = (a: Peak, b: Peak): boolean => a.own >= b.own && a.near >= b.near && a.far >= b.far && a.related >= b.related && a.tokens <= b.tokens

/**
 * The postings of a block that no other of its postings outscores under any BM25 weights and
 * corpus (decision 0095): BM25's score of a term grows with each field's count (for weights ≥ 0)
 * and falls with the unit's length, so a posting with counts no higher and a length no shorter
 * than another's never scores above it. The best score of the block, for any query of the term,
 * is a peak's; a reader computes it from the peaks alone and reads the block's postings only when
 * that bound could reach its best so far. Past MAX_PEAKS, neighbours (by length) are merged into
 * their corner (the higher counts, the shorter length): still a bound, a little looser.
 */
export function peaksOf(postings: readonly Posting[]): Peak[] {
  const sum = (p: Peak): number => p.own + p.near + p.far + p.related
  // By length, then more counts first: whatever dominates a posting comes before it.
  const sorted = [...postings].sort((a, b) => a.tokens - b.tokens || sum(b) - sum(a))
  let peaks: Peak[] = []
  for (const p of sorted) {
    if (peaks.some((peak) => dominates(peak, p))) continue
    peaks.push({ own: p.own, near: p.near, far: p.far, related: p.related, tokens: p.tokens })
  }
  while (peaks.length > MAX_PEAKS) {
    const merged: Peak[] = []
    for (let i = 0; i < peaks.length; i += 2) {
      const a = peaks[i]!
      const b = peaks[i + 1]
      merged.push(
        b
          ? { own: Math.max(a.own, b.own), near: Math.max(a.near, b.near), far: Math.max(a.far, b.far), related: Math.max(a.related, b.related), tokens: Math.min(a.tokens, b.tokens) }
          : a,
      )
    }
    peaks = merged
  }
  return peaks
}

/** Peaks as `index_blocks.peaks` holds them: varints, length then the four counts, per peak. */
export function peaksBytes(peaks: readonly Peak[]): Buffer {
  const out = Buffer.allocUnsafe(peaks.length * 25)
  let at = 0
  for (const p of peaks) for (const n of [p.tokens, p.own, p.near, p.far, p.related]) at = putVarint(out, at, n)
  return Buffer.from(out.subarray(0, at))
}

/** Calls `visit` with each peak of `index_blocks.peaks`, as numbers (a common word has thousands of blocks). */
export function forEachPeak(data: Uint8Array, visit: (own: number, near: number, far: number, related: number, tokens: number) => void): void {
  const n = [0, 0, 0, 0, 0]
  let i = 0
  forEachVarint(data, (value) => {
    n[i++] = value
    if (i < 5) return
    i = 0
    visit(n[1]!, n[2]!, n[3]!, n[4]!, n[0]!)
  })
}

/**
 * The blocks of one term's postings (sorted by rowid), BLOCK_POSTINGS each; `sign` -1 makes them
 * tombstones (their `units` and `own` negated, so that sums over a term's blocks stay its counts).
 */
export function addBlocks(rows: BlockRows, term: string, postings: readonly Posting[], sign: 1 | -1 = 1): void {
  for (let at = 0; at < postings.length; at += BLOCK_POSTINGS) {
    const chunk = postings.slice(at, at + BLOCK_POSTINGS)
    rows.term.push(term)
    rows.first.push(chunk[0]!.rowid)
    rows.last.push(chunk[chunk.length - 1]!.rowid)
    rows.units.push(sign * chunk.length)
    rows.own.push(sign * chunk.reduce((n, p) => n + (p.own > 0 ? 1 : 0), 0))
    rows.data.push(encode(chunk))
    rows.peaks.push(sign > 0 ? peaksBytes(peaksOf(chunk)) : null)
  }
}

export const emptyRows = (): BlockRows => ({ term: [], first: [], last: [], units: [], own: [], data: [], peaks: [] })

/** The columns `blockSource` fills, in its order. */
export const BLOCK_COLUMNS = 'term, first, last, units, own, data, peaks'

/** `rows` as the parameters of `INSERT INTO index_blocks (${BLOCK_COLUMNS}) SELECT * FROM ${blockSource(n)}` (numbered from `first`). */
export const blockSource = (first: number): string =>
  `unnest($${first}::text[], $${first + 1}::bigint[], $${first + 2}::bigint[], $${first + 3}::integer[], $${first + 4}::integer[], $${first + 5}::bytea[], $${first + 6}::bytea[])`
export const blockParams = (rows: BlockRows): unknown[] => [rows.term, rows.first, rows.last, rows.units, rows.own, rows.data, rows.peaks]

/** Migration 9's blocks, before migration 11 gave them peaks (it fills them). */
async function insertBlocksWithoutPeaks(client: PgQueryable, rows: BlockRows): Promise<void> {
  if (rows.term.length === 0) return
  await client.query(
    'INSERT INTO index_blocks (term, first, last, units, own, data) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], $5::integer[], $6::bytea[])',
    blockParams(rows).slice(0, 6),
  )
}

export const byRowid = (a: Posting, b: Posting): number => a.rowid - b.rowid

const samePosting = (a: Posting, b: Posting): boolean =>
  a.own === b.own && a.near === b.near && a.far === b.far && a.related === b.related && a.tokens === b.tokens && a.kind === b.kind

/**
 * A term's tombstones, to subtract from its postings one for one: `takes` says whether a posting
 * is cancelled (and uses the tombstone up). Rowids outside the tombstones' range are answered
 * without a lookup: tombstones are mostly of recent units, and a common word has hundreds of
 * thousands of postings to check.
 */
export class Tombstones {
  private readonly byRowid = new Map<number, Posting[]>()
  private low = Number.POSITIVE_INFINITY
  private high = Number.NEGATIVE_INFINITY

  add(p: Posting): void {
    const list = this.byRowid.get(p.rowid)
    if (list) list.push(p)
    else this.byRowid.set(p.rowid, [p])
    if (p.rowid < this.low) this.low = p.rowid
    if (p.rowid > this.high) this.high = p.rowid
  }

  /** Whether there is none. */
  empty(): boolean {
    return this.byRowid.size === 0
  }

  /** Whether no block from `first` to `last` can hold a cancelled posting. */
  misses(first: number, last: number): boolean {
    return last < this.low || first > this.high
  }

  /** Whether some tombstone is of `rowid` (cheap: check before building a posting to `takes`). */
  holds(rowid: number): boolean {
    return rowid >= this.low && rowid <= this.high && this.byRowid.has(rowid)
  }

  takes(p: Posting): boolean {
    if (p.rowid < this.low || p.rowid > this.high) return false
    const list = this.byRowid.get(p.rowid)
    if (!list) return false
    const at = list.findIndex((t) => samePosting(t, p))
    if (at < 0) return false
    list.splice(at, 1)
    if (list.length === 0) this.byRowid.delete(p.rowid)
    return true
  }

  /** The tombstones not used up. */
  left(): Posting[] {
    return [...this.byRowid.values()].flat().sort(byRowid)
  }
}

/** The tombstones among `blocks` (those with negative `units`), by term. */
export function tombstonesByTerm(blocks: Iterable<{ term: string; first: number | string; units: number; data: Uint8Array }>): Map<string, Tombstones> {
  const out = new Map<string, Tombstones>()
  for (const block of blocks) {
    if (block.units >= 0) continue
    const of = out.get(block.term) ?? new Tombstones()
    decodeBlock(Number(block.first), block.data, (p) => of.add(p))
    out.set(block.term, of)
  }
  return out
}

/**
 * The live postings of some blocks (each with its term, first rowid, units and data): every
 * tombstone cancels one identical posting of its term. Calls `visit` per live posting, in no
 * particular order.
 */
export function forEachLivePosting(blocks: ReadonlyArray<{ term: string; first: number; units: number; data: Uint8Array }>, visit: (term: string, p: Posting) => void): void {
  const tombstones = tombstonesByTerm(blocks)
  for (const block of blocks) {
    if (block.units < 0) continue
    const of = tombstones.get(block.term)
    decodeBlock(Number(block.first), block.data, (p) => {
      if (!of?.takes(p)) visit(block.term, p)
    })
  }
}

/** A unit's counts of its terms (own, near, far, related each, in the order of its `terms`) as `index_units.counts` holds them. */
export function countsBytes(counts: Iterable<readonly [number, number, number, number]>): Buffer {
  const list = [...counts]
  const out = Buffer.allocUnsafe(list.length * 20)
  let at = 0
  for (const c of list) for (const n of c) at = putVarint(out, at, n)
  return Buffer.from(out.subarray(0, at))
}

/**
 * The postings a unit row stands for (its terms, their counts, its length and kind): what a
 * rewrite or removal of the unit cancels, added to `into` per term.
 */
export function unitPostings(
  unit: { rowid: number; terms: string; counts: Uint8Array; token_count: number; kind: string },
  into: Map<string, Posting[]>,
): void {
  const terms = termsOf(unit.terms)
  const counts: number[] = []
  forEachVarint(unit.counts, (n) => counts.push(n))
  for (const [i, term] of terms.entries()) {
    const c = counts.slice(i * 4, i * 4 + 4) as [number, number, number, number]
    if (c.length < 4) break
    const posting = postingOf(Number(unit.rowid), c, unit.token_count, unit.kind)
    const list = into.get(term)
    if (list) list.push(posting)
    else into.set(term, [posting])
  }
}

function forEachVarint(data: Uint8Array, visit: (n: number) => void): void {
  let at = 0
  while (at < data.length) {
    let byte = data[at++]!
    let value = byte & 0x7f
    let scale = 0x80
    while (byte >= 0x80) {
      byte = data[at++]!
      value += (byte & 0x7f) * scale
      scale *= 0x80
    }
    visit(value)
  }
}

/** The terms of a unit as `index_units.terms` holds them: separated by spaces, which no token holds. */
export const termsText = (terms: Iterable<string>): string => [...terms].join(' ')
const termsOf = (text: string | null): string[] => (text ? text.split(' ') : [])

/** BM25's N and total length, and the vectors: the sum of every writer's row. */
export const STATS_SUM =
  'SELECT coalesce(sum(units), 0)::bigint AS units, coalesce(sum(tokens), 0)::bigint AS tokens, coalesce(sum(vectors), 0)::bigint AS vectors FROM index_stats'

let statsWrites = 0
/** Folds the stats rows into one every this many writes of a process. */
const FOLD_EVERY = 64

/**
 * A writer's change to the corpus statistics, as a row of its own (no writer updates a row another
 * writes); now and then the rows are folded into one, by one transaction at a time.
 */
export async function addStats(client: PgQueryable, units: number, tokens: number, vectors: number, foldKey: bigint | string): Promise<void> {
  if (units === 0 && tokens === 0 && vectors === 0) return
  await client.query('INSERT INTO index_stats (units, tokens, vectors) VALUES ($1, $2, $3)', [units, tokens, vectors])
  statsWrites++
  if (statsWrites % FOLD_EVERY !== 0) return
  const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS got', [foldKey])
  if (!rows[0]?.got) return
  await client.query(
    `WITH gone AS (DELETE FROM index_stats RETURNING units, tokens, vectors)
     INSERT INTO index_stats (units, tokens, vectors) SELECT coalesce(sum(units), 0), coalesce(sum(tokens), 0), coalesce(sum(vectors), 0) FROM gone`,
  )
}

/** Postings converted per statement by migration 9. */
const CONVERT_BATCH = 50_000

/**
 * Migration 9: migration 8's rows of `index_postings` as blocks, and each unit's terms, in the
 * migration's transaction (a kill rolls it back; the next open starts it again).
 */
export async function convertPostingsToBlocks(client: PgQueryable): Promise<void> {
  let after: { term: string; rowid: number } | undefined
  for (;;) {
    const { rows } = await client.query<{ term: string; rowid: number; own: number; near: number; far: number; related: number; token_count: number; kind: string }>(
      `SELECT term, rowid, own, near, far, related, token_count, kind FROM index_postings
       ${after ? 'WHERE (term, rowid) > ($2::text, $3::bigint)' : ''} ORDER BY term, rowid LIMIT $1`,
      after ? [CONVERT_BATCH, after.term, after.rowid] : [CONVERT_BATCH],
    )
    if (rows.length === 0) break
    // A term cut by the batch's end is finished by the next batch, in blocks of its own.
    const byTerm = new Map<string, Posting[]>()
    for (const row of rows) {
      const list = byTerm.get(row.term) ?? []
      list.push(postingOf(Number(row.rowid), [row.own, row.near, row.far, row.related], row.token_count, row.kind))
      byTerm.set(row.term, list)
    }
    const blocks = emptyRows()
    for (const [term, postings] of byTerm) addBlocks(blocks, term, postings)
    await insertBlocksWithoutPeaks(client, blocks)
    const last = rows[rows.length - 1]!
    after = { term: last.term, rowid: Number(last.rowid) }
  }
  await client.query(
    `UPDATE index_units u SET terms = t.terms FROM (SELECT rowid, string_agg(term, ' ') AS terms FROM index_postings GROUP BY rowid) t WHERE u.rowid = t.rowid`,
  )
}

/** Units whose counts migration 10 fills per statement. */
const COUNTS_BATCH = 2_000

/**
 * Migration 10: each unit's counts of its terms (`index_units.counts`), read out of the blocks that
 * hold its rowid, a slice of units at a time (a database before it has no tombstones). A term the
 * blocks do not hold for the unit (none should) leaves its `terms` too, so the two stay aligned.
 */
export async function fillUnitCounts(client: PgQueryable): Promise<void> {
  let after = 0
  for (;;) {
    const { rows: units } = await client.query<{ rowid: number; terms: string }>('SELECT rowid, terms FROM index_units WHERE rowid > $1 ORDER BY rowid LIMIT $2', [
      after,
      COUNTS_BATCH,
    ])
    if (units.length === 0) return
    const low = Number(units[0]!.rowid)
    const high = Number(units[units.length - 1]!.rowid)
    const found = new Map<number, Map<string, [number, number, number, number]>>(units.map((unit) => [Number(unit.rowid), new Map()]))
    const terms = [...new Set(units.flatMap((unit) => termsOf(unit.terms)))]
    const { rows: blocks } = await client.query<{ term: string; first: number; units: number; data: Buffer }>(
      'SELECT term, first, units, data FROM index_blocks WHERE term = ANY($1::text[]) AND last >= $2 AND first <= $3',
      [terms, low, high],
    )
    forEachLivePosting(blocks, (term, p) => found.get(p.rowid)?.set(term, [p.own, p.near, p.far, p.related]))
    const rowids: number[] = []
    const kept: string[] = []
    const counts: Buffer[] = []
    for (const unit of units) {
      const held = found.get(Number(unit.rowid))!
      const present = termsOf(unit.terms).filter((term) => held.has(term))
      rowids.push(Number(unit.rowid))
      kept.push(termsText(present))
      counts.push(countsBytes(present.map((term) => held.get(term)!)))
    }
    await client.query('UPDATE index_units u SET terms = v.terms, counts = v.counts FROM unnest($1::bigint[], $2::text[], $3::bytea[]) AS v(rowid, terms, counts) WHERE u.rowid = v.rowid', [
      rowids,
      kept,
      counts,
    ])
    after = high
  }
}

/** Blocks migration 11 gives peaks per statement. */
const PEAKS_BATCH = 5_000

/**
 * Migration 11: the peaks of every block written before it (tombstones have none), read through a
 * cursor of the migration's transaction — it sees the blocks as they were when declared, so each
 * is updated once, by the ctid it had — and written back a batch at a time (a kill rolls it all back).
 */
export async function fillBlockPeaks(client: PgQueryable): Promise<void> {
  await client.query('DECLARE engram_block_peaks NO SCROLL CURSOR FOR SELECT ctid::text AS ctid, first, data FROM index_blocks WHERE units > 0')
  for (;;) {
    const { rows } = await client.query<{ ctid: string; first: number; data: Buffer }>(`FETCH ${PEAKS_BATCH} FROM engram_block_peaks`)
    if (rows.length === 0) break
    await client.query('UPDATE index_blocks b SET peaks = v.peaks FROM unnest($1::tid[], $2::bytea[]) AS v(ctid, peaks) WHERE b.ctid = v.ctid', [
      rows.map((row) => row.ctid),
      rows.map((row) => peaksBytes(peaksOf(decoded(Number(row.first), row.data)))),
    ])
  }
  await client.query('CLOSE engram_block_peaks')
}
