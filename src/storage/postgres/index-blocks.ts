/**
 * The search index's postings on PostgreSQL as packed blocks (migration 9, decision 0091): a row
 * of `index_blocks` holds up to BLOCK_POSTINGS postings of one term, sorted by unit rowid, each as
 * varints (the rowid's gap from the one before, the term's count in own, near, far and related,
 * the unit's length) and a byte for the unit's kind. Migration 8's row per posting cost ~180 bytes
 * (a heap tuple and a covering primary key repeating it); a packed posting costs ~8.
 *
 * Writers never update a row another writer wrote: each write inserts its own blocks, so writers
 * on different hosts do not queue on a common word. A term's document frequency is the sum of its
 * blocks' `units` (its postings) and `own` (those with own > 0), read from the covering index, so
 * there is no per-term counter row to contend on. Small blocks (a single message appended writes a
 * block of one posting per term) are merged by later writes of the same term, skipping blocks
 * another transaction holds. A unit's postings are found through its terms (`index_units.terms`)
 * and cut out of the blocks that hold its rowid.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { PgQueryable } from './driver.ts'

/** Postings per block at most: a block of ~1 KB stays in its heap row (no TOAST to decompress). */
const BLOCK_POSTINGS = 128
/** Blocks with fewer postings are small: once a term has MERGE_AT of them, a writer merges them. */
const SMALL_BLOCK = 32
const MERGE_AT = 8

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

function decoded(first: number, data: Uint8Array): Posting[] {
  const out: Posting[] = []
  decodeBlock(first, data, (p) => out.push(p))
  return out
}

interface BlockRows {
  term: string[]
  first: number[]
  last: number[]
  units: number[]
  own: number[]
  data: Buffer[]
}

/** The blocks of one term's postings (sorted by rowid), BLOCK_POSTINGS each. */
function addBlocks(rows: BlockRows, term: string, postings: readonly Posting[]): void {
  for (let at = 0; at < postings.length; at += BLOCK_POSTINGS) {
    const chunk = postings.slice(at, at + BLOCK_POSTINGS)
    rows.term.push(term)
    rows.first.push(chunk[0]!.rowid)
    rows.last.push(chunk[chunk.length - 1]!.rowid)
    rows.units.push(chunk.length)
    rows.own.push(chunk.reduce((n, p) => n + (p.own > 0 ? 1 : 0), 0))
    rows.data.push(encode(chunk))
  }
}

const emptyRows = (): BlockRows => ({ term: [], first: [], last: [], units: [], own: [], data: [] })

async function insertBlocks(client: PgQueryable, rows: BlockRows): Promise<void> {
  if (rows.term.length === 0) return
  await client.query(
    `INSERT INTO index_blocks (term, first, last, units, own, data)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], $5::integer[], $6::bytea[])`,
    [rows.term, rows.first, rows.last, rows.units, rows.own, rows.data],
  )
}

const byRowid = (a: Posting, b: Posting): number => a.rowid - b.rowid

/**
 * Writes postings (per term, any order) as new blocks, then merges the small blocks of the terms
 * written where they have piled up — only blocks no other transaction holds (SKIP LOCKED), so a
 * writer never waits for another here.
 */
export async function writePostings(client: PgQueryable, byTerm: Map<string, Posting[]>): Promise<void> {
  const rows = emptyRows()
  const smallTerms: string[] = []
  for (const [term, postings] of byTerm) {
    postings.sort(byRowid)
    addBlocks(rows, term, postings)
    if (postings.length % BLOCK_POSTINGS < SMALL_BLOCK) smallTerms.push(term)
  }
  await insertBlocks(client, rows)
  if (smallTerms.length === 0) return
  const { rows: piled } = await client.query<{ term: string }>(
    `SELECT term FROM index_blocks WHERE term = ANY($1::text[]) AND units < ${SMALL_BLOCK} GROUP BY term HAVING count(*) >= ${MERGE_AT}`,
    [smallTerms],
  )
  if (piled.length === 0) return
  const { rows: small } = await client.query<{ ctid: string; term: string; first: number; data: Buffer }>(
    `SELECT ctid::text, term, first, data FROM index_blocks WHERE term = ANY($1::text[]) AND units < ${SMALL_BLOCK}
     ORDER BY term COLLATE "C", first FOR UPDATE SKIP LOCKED`,
    [piled.map((row) => row.term)],
  )
  const merged = new Map<string, { ctids: string[]; postings: Posting[] }>()
  for (const block of small) {
    const entry = merged.get(block.term) ?? { ctids: [], postings: [] }
    entry.ctids.push(block.ctid)
    decodeBlock(Number(block.first), block.data, (p) => entry.postings.push(p))
    merged.set(block.term, entry)
  }
  const replace = emptyRows()
  const gone: string[] = []
  for (const [term, entry] of merged) {
    if (entry.ctids.length < 2) continue
    gone.push(...entry.ctids)
    addBlocks(replace, term, entry.postings.sort(byRowid))
  }
  if (gone.length === 0) return
  await client.query('DELETE FROM index_blocks WHERE ctid = ANY($1::tid[])', [gone])
  await insertBlocks(client, replace)
}

/** Tries without waiting for a block another writer holds, before waiting for it (~5 s of pauses). */
const PATIENT_ATTEMPTS = 200

/** Units whose postings one pass cuts out: a purge of many units reads their terms' blocks a slice at a time. */
const REMOVE_BATCH = 1_000

/**
 * Cuts the postings of `units` (rows the caller has locked; each with its rowid and the terms it
 * holds, `index_units.terms`) out of the blocks that hold them. Blocks are locked in (term, first)
 * order, as every remover locks them. A block merged meanwhile by a writer that held it is not
 * seen by the statement that waited for it, so the search is repeated until no block holds one of
 * the rowids.
 */
export async function removePostings(client: PgQueryable, units: ReadonlyArray<{ rowid: number; terms: string }>, removerKey: bigint | string): Promise<void> {
  if (units.length === 0) return
  // One remover at a time per schema, to the end of its transaction: removers cut shared blocks
  // (a merged block holds many writers' units), and 8 appending writers cutting them at once
  // deadlocked even when none waited for a block (decision 0091). Writes that only add postings
  // do not take it.
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [removerKey])
  const sorted = [...units].sort((a, b) => a.rowid - b.rowid)
  for (let at = 0; at < sorted.length; at += REMOVE_BATCH) {
    const batch = sorted.slice(at, at + REMOVE_BATCH)
    const terms = [...new Set(batch.flatMap((unit) => termsOf(unit.terms)))]
    if (terms.length > 0) await removeBatch(client, new Set(batch.map((unit) => unit.rowid)), batch[0]!.rowid, batch[batch.length - 1]!.rowid, terms)
  }
}

async function removeBatch(client: PgQueryable, gone: Set<number>, low: number, high: number, terms: string[]): Promise<void> {
  const holds = (first: number, data: Buffer): boolean => {
    let found = false
    forEachPosting(first, data, (rowid) => {
      if (gone.has(rowid)) found = true
    })
    return found
  }
  for (let attempt = 0; ; attempt++) {
    // Found without locks; only the blocks that hold one of the rowids are then locked, and
    // without waiting: a block another writer holds (it cut or merged it, and commits within
    // milliseconds) is tried again after a pause. Waiting instead deadlocked 8 appending writers
    // (each holding blocks the other's units shared). After ~5 s of that, it waits.
    const { rows: seen } = await client.query<{ ctid: string; first: number; data: Buffer }>(
      'SELECT ctid::text, first, data FROM index_blocks WHERE term = ANY($1::text[]) AND last >= $2 AND first <= $3',
      [terms, low, high],
    )
    const holding = seen.filter((block) => holds(Number(block.first), block.data)).map((block) => block.ctid)
    if (holding.length === 0) return
    const { rows: blocks } = await client.query<{ ctid: string; term: string; first: number; data: Buffer }>(
      `SELECT ctid::text, term, first, data FROM index_blocks WHERE ctid = ANY($1::tid[])
       ORDER BY term COLLATE "C", first, ctid FOR UPDATE ${attempt < PATIENT_ATTEMPTS ? 'SKIP LOCKED' : ''}`,
      [holding],
    )
    const rewritten = emptyRows()
    const deleted: string[] = []
    for (const block of blocks) {
      const postings = decoded(Number(block.first), block.data)
      const kept = postings.filter((p) => !gone.has(p.rowid))
      if (kept.length === postings.length) continue
      deleted.push(block.ctid)
      if (kept.length > 0) addBlocks(rewritten, block.term, kept)
    }
    if (deleted.length > 0) {
      await client.query('DELETE FROM index_blocks WHERE ctid = ANY($1::tid[])', [deleted])
      await insertBlocks(client, rewritten)
    }
    // Every block found was locked and cut: done. Otherwise some were held by another writer, or
    // moved meanwhile (the next look finds where).
    if (deleted.length === holding.length) return
    if (blocks.length < holding.length) await sleep(Math.min(2 ** attempt, 25))
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
    await insertBlocks(client, blocks)
    const last = rows[rows.length - 1]!
    after = { term: last.term, rowid: Number(last.rowid) }
  }
  await client.query(
    `UPDATE index_units u SET terms = t.terms FROM (SELECT rowid, string_agg(term, ' ') AS terms FROM index_postings GROUP BY rowid) t WHERE u.rowid = t.rowid`,
  )
}
