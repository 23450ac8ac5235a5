/**
 * Writing the search index's postings on PostgreSQL without waiting for another writer (decision
 * 0094). A write inserts its new postings as blocks and a unit's old ones as tombstones
 * (index-blocks.ts); in the same write it compacts the terms it touched where it can — folds
 * tombstones into the blocks holding the postings they cancel and merges a term's small blocks —
 * taking only blocks no other transaction holds (FOR UPDATE SKIP LOCKED). Nothing here ever waits
 * for a lock, so writers on many hosts neither queue nor deadlock on shared blocks (decision 0091's
 * removal, which cut shared blocks under one lock per schema, serialised every append). What a
 * write could not fold (a block another writer held) is folded later: by the next write of the
 * term, or by the sweep that one writer at a time runs every SWEEP_EVERY writes of its process.
 */
import type { PgQueryable } from './driver.ts'
import { addBlocks, BLOCK_COLUMNS, type BlockRows, blockParams, blockSource, byRowid, decoded, emptyRows, type Posting, Tombstones } from './index-blocks.ts'

/** Blocks with fewer postings are small: once a term has MERGE_AT of them, a writer merges them. Tombstones are small. */
const SMALL_BLOCK = 32
const MERGE_AT = 8
/** Every this many writes of a process, one writer at a time folds the tombstones of up to SWEEP_TERMS terms. */
const SWEEP_EVERY = 8
const SWEEP_TERMS = 256

interface BlockRow {
  ctid: string
  term: string
  first: number
  units: number
  data: Buffer
  /** Read as one of the term's small blocks to merge (else as a block holding a sought rowid). */
  merge: boolean
}

/** A term's blocks as a write found them: its small blocks to merge (tombstones among them), and blocks that may hold a posting a tombstone cancels. */
interface TermBlocks {
  small: BlockRow[]
  holders: BlockRow[]
}

/**
 * Writes `added` (new postings per term) and `removed` (postings that are no longer, per term: a
 * rewritten or removed unit's old ones) in the caller's transaction, compacting the terms written
 * where no other transaction holds their blocks.
 */
export async function writePostings(client: PgQueryable, added: Map<string, Posting[]>, removed: Map<string, Posting[]>): Promise<void> {
  for (const list of added.values()) list.sort(byRowid)
  for (const list of removed.values()) list.sort(byRowid)
  const terms = [...new Set([...added.keys(), ...removed.keys()])]
  if (terms.length === 0) return
  await compact(client, terms, added, removed, removed, MERGE_AT - 1)
}

let writes = 0
let sweepAfter = ''

/**
 * Every SWEEP_EVERY writes of this process, unless another transaction is sweeping (a try-lock,
 * never waited for): folds the tombstones of up to SWEEP_TERMS terms, from where this process's
 * last sweep stopped — tombstones of terms no write touches again would otherwise stay.
 */
export async function sweepTombstones(client: PgQueryable, sweepKey: bigint | string): Promise<void> {
  writes++
  if (writes % SWEEP_EVERY !== 0) return
  const { rows: lock } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS got', [sweepKey])
  if (!lock[0]?.got) return
  const { rows } = await client.query<{ term: string; first: number; data: Buffer }>(
    `SELECT term, first, data FROM index_blocks WHERE units < 0 AND term IN
       (SELECT DISTINCT term COLLATE "C" FROM index_blocks WHERE units < 0 AND term COLLATE "C" > $1 ORDER BY 1 LIMIT ${SWEEP_TERMS})`,
    [sweepAfter],
  )
  const tombstones = new Map<string, Posting[]>()
  for (const block of rows) tombstones.set(block.term, [...(tombstones.get(block.term) ?? []), ...decoded(Number(block.first), block.data)])
  const terms = [...tombstones.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  sweepAfter = terms.length < SWEEP_TERMS ? '' : terms[terms.length - 1]!
  if (terms.length > 0) await compact(client, terms, new Map(), new Map(), tombstones, 1)
}

/**
 * Writes `added` and `removed` for `terms`, folding and merging what it can lock without waiting.
 * `seek` names postings (per term) whose blocks are read too: those a tombstone may cancel. The
 * small blocks of a term (its tombstones among them) are merged when it has `pile` of them.
 */
async function compact(
  client: PgQueryable,
  terms: string[],
  added: Map<string, Posting[]>,
  removed: Map<string, Posting[]>,
  seek: Map<string, Posting[]>,
  pile: number,
): Promise<void> {
  const seekTerms: string[] = []
  const seekRowids: number[] = []
  for (const [term, list] of seek) {
    for (const p of list) {
      seekTerms.push(term)
      seekRowids.push(p.rowid)
    }
  }
  // Read without locks: the small blocks of the terms that have `pile` of them, and the blocks
  // holding a sought rowid (a term's posting of a unit is in one block; a one-posting block
  // while it is recent, as a rewritten message's usually is).
  const { rows: seen } = await client.query<BlockRow>(
    `WITH piled AS (SELECT term FROM index_blocks WHERE term = ANY($1::text[]) AND units < ${SMALL_BLOCK} GROUP BY term HAVING count(*) >= $4)
     SELECT ctid::text AS ctid, term, first, units, data, true AS merge FROM index_blocks WHERE term IN (SELECT term FROM piled) AND units < ${SMALL_BLOCK}
     UNION ALL
     SELECT b.ctid::text, b.term, b.first, b.units, b.data, false FROM unnest($2::text[], $3::bigint[]) AS p(term, rowid)
       JOIN index_blocks b ON b.term = p.term AND b.last >= p.rowid AND b.first <= p.rowid AND b.units > 0`,
    [terms, seekTerms, seekRowids, pile],
  )
  const found = byTerm(seen)
  // The terms worth compacting: small blocks piled up, or a tombstone cancels something found.
  const chosen = new Set<string>()
  for (const term of terms) {
    const blocks = found.get(term)
    if (blocks && (blocks.small.length > 0 || folded(blocks, added.get(term) ?? [], removed.get(term) ?? []).gone.length > 0)) chosen.add(term)
  }
  let locked = new Map<string, TermBlocks>()
  if (chosen.size > 0) {
    const ctids = [...chosen].flatMap((term) => {
      const blocks = found.get(term)
      return blocks ? [...blocks.small, ...blocks.holders].map((block) => block.ctid) : []
    })
    // Only blocks no other transaction holds; a block deleted meanwhile is not returned.
    const { rows } = await client.query<{ ctid: string; term: string; first: number }>(
      'SELECT ctid::text AS ctid, term, first FROM index_blocks WHERE ctid = ANY($1::tid[]) FOR UPDATE SKIP LOCKED',
      [ctids],
    )
    // Blocks are never updated, only deleted: a locked ctid holds the row read (checked all the same).
    const held = new Set(rows.map((row) => `${row.ctid} ${row.term} ${row.first}`))
    locked = byTerm(seen.filter((row) => chosen.has(row.term) && held.has(`${row.ctid} ${row.term} ${row.first}`)))
  }
  const rows = emptyRows()
  const gone: string[] = []
  for (const term of terms) {
    const own = added.get(term) ?? []
    const cancelled = removed.get(term) ?? []
    // A posting written again as it was cancels its own tombstone: neither is written.
    const result = folded((chosen.has(term) && locked.get(term)) || { small: [], holders: [] }, own, cancelled)
    gone.push(...result.gone)
    if (result.live.length > 0) addBlocks(rows, term, result.live.sort(byRowid))
    if (result.left.length > 0) addBlocks(rows, term, result.left, -1)
  }
  await replaceBlocks(client, gone, rows)
}

/** Deletes the blocks `gone` and inserts `rows`, in one statement. */
async function replaceBlocks(client: PgQueryable, gone: string[], rows: BlockRows): Promise<void> {
  if (gone.length === 0 && rows.term.length === 0) return
  await client.query(
    `WITH gone AS (DELETE FROM index_blocks WHERE ctid = ANY($1::tid[]))
     INSERT INTO index_blocks (${BLOCK_COLUMNS}) SELECT * FROM ${blockSource(2)}`,
    [gone, ...blockParams(rows)],
  )
}

function byTerm(rows: BlockRow[]): Map<string, TermBlocks> {
  const out = new Map<string, TermBlocks>()
  const seen = new Set<string>()
  // A block read both ways is merged (the merge rows come first).
  for (const row of [...rows].sort((a, b) => Number(b.merge) - Number(a.merge))) {
    if (seen.has(row.ctid)) continue
    seen.add(row.ctid)
    const blocks = out.get(row.term) ?? { small: [], holders: [] }
    if (row.merge) blocks.small.push(row)
    else blocks.holders.push(row)
    out.set(row.term, blocks)
  }
  return out
}

/**
 * One term's blocks with `added` and `removed` folded in: every tombstone (removed, or a small
 * tombstone block) cancels one identical posting of the new ones or of the blocks; the small
 * blocks and the blocks that lost a posting are `gone`, replaced by `live` and the tombstones
 * `left`.
 */
function folded(blocks: TermBlocks, added: Posting[], removed: Posting[]): { gone: string[]; live: Posting[]; left: Posting[] } {
  const tombstones = new Tombstones()
  for (const p of removed) tombstones.add(p)
  for (const block of blocks.small) if (block.units < 0) for (const p of decoded(Number(block.first), block.data)) tombstones.add(p)
  const keep = (postings: Posting[]): Posting[] => postings.filter((p) => !tombstones.takes(p))
  const live = keep(added)
  const gone: string[] = []
  for (const block of blocks.small) {
    gone.push(block.ctid)
    if (block.units > 0) live.push(...keep(decoded(Number(block.first), block.data)))
  }
  for (const block of blocks.holders) {
    const postings = decoded(Number(block.first), block.data)
    const kept = keep(postings)
    if (kept.length === postings.length) continue
    gone.push(block.ctid)
    live.push(...kept)
  }
  return { gone, live, left: tombstones.left() }
}
