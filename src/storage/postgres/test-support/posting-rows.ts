/** The search index's postings read out of their blocks (../index-blocks.ts), for tests that compare two indexes. */
import { forEachLivePosting } from '../index-blocks.ts'
import type { PgQueryable } from '../driver.ts'

export interface PostingRow {
  term: string
  rowid: number
  own: number
  near: number
  far: number
  related: number
  token_count: number
  /** The unit's kind, read from its row ('?' for a posting whose unit is gone). */
  kind: string
}

/** Every live posting (tombstones subtracted) as a row, in (term, rowid) order. */
export async function postingRows(db: PgQueryable): Promise<PostingRow[]> {
  const { rows: units } = await db.query<{ rowid: number; kind: string }>('SELECT rowid, kind FROM index_units')
  const kinds = new Map(units.map((unit) => [Number(unit.rowid), unit.kind]))
  const { rows } = await db.query<{ term: string; first: number; units: number; data: Buffer }>('SELECT term, first, units, data FROM index_blocks')
  const out: PostingRow[] = []
  forEachLivePosting(rows, (term, p) =>
    out.push({ term, rowid: p.rowid, own: p.own, near: p.near, far: p.far, related: p.related, token_count: p.tokens, kind: kinds.get(p.rowid) ?? '?' }),
  )
  return out.sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : a.rowid - b.rowid))
}
