/**
 * What both search indexes (SQLite, PostgreSQL) check of the units and vectors they are given, and
 * how a stored row becomes a `StoredUnit`: one set of rules and messages, as lifecycle-records.ts
 * is for the lifecycle. Each backend passes only the decoders of its JSON columns.
 */
import { EngramError, ErrorCode } from '../core/errors.ts'
import { isOwner } from '../core/owner.ts'
import { type IndexCandidate, type IndexUnit, type StoredUnit, UNIT_KINDS, type UnitKind } from './contracts.ts'

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

/** A unit's row as both indexes select it; the JSON columns as the driver returns them. */
export interface IndexUnitRow<Json> {
  id: string
  kind: string
  text: string
  source: string
  provenance: Json
  scope: string | null
  agent: string | null
  user_id: string | null
  owner: string
  created_at: string
  updated_at: string | null
  hash: string
  links: Json | null
  meta: Json | null
  access_count: number
  last_access_at: string | null
}

export interface IndexJsonDecoders<Json> {
  strings(value: Json): string[]
  object(value: Json): Record<string, unknown>
}

export function storedUnitOf<Json>(row: IndexUnitRow<Json>, decode: IndexJsonDecoders<Json>): StoredUnit {
  const unit: StoredUnit = {
    id: row.id,
    kind: row.kind as UnitKind,
    text: row.text,
    source: row.source,
    provenance: decode.strings(row.provenance),
    owner: isOwner(row.owner) ? row.owner : 'agent',
    createdAt: row.created_at,
    hash: row.hash,
    accessCount: row.access_count,
    lastAccessAt: row.last_access_at ?? undefined,
  }
  if (row.scope !== null) unit.scope = row.scope as StoredUnit['scope']
  if (row.agent !== null) unit.agent = row.agent
  if (row.user_id !== null) unit.user = row.user_id
  if (row.updated_at !== null) unit.updatedAt = row.updated_at
  if (row.links !== null) unit.links = decode.strings(row.links)
  if (row.meta !== null) unit.meta = decode.object(row.meta)
  return unit
}

/** `SearchIndex.get`'s answer: the units of `rows` in the order `ids` asks for them, each id once, missing ones left out. */
export function unitsInAskedOrder<Row extends { id: string }>(ids: readonly string[], rows: readonly Row[], toUnit: (row: Row) => StoredUnit): StoredUnit[] {
  const byId = new Map(rows.map((row) => [row.id, row]))
  const out: StoredUnit[] = []
  for (const id of new Set(ids)) {
    const row = byId.get(id)
    if (row) out.push(toUnit(row))
  }
  return out
}

/**
 * `SearchIndex.search`'s answer from both channels: lexical hits first, in BM25 order, then
 * vector-only hits in similarity order (a unit both found carries both scores). The order is a
 * convenience, not a ranking: fusion above decides.
 */
export function mergedCandidates(lexical: readonly IndexCandidate[], dense: readonly IndexCandidate[]): IndexCandidate[] {
  const merged = new Map<string, IndexCandidate>()
  for (const hit of lexical) merged.set(hit.id, hit)
  for (const hit of dense) {
    const seen = merged.get(hit.id)
    if (seen) seen.dense = hit.dense
    else merged.set(hit.id, hit)
  }
  return [...merged.values()]
}

/** Largest page `SearchIndex.list` returns. */
const LIST_MAX = 10_000

/** `SearchIndex.list`'s page, checked: whole numbers, limit at most LIST_MAX, offset 0 by default. */
export function listPage(page: { limit: number; offset?: number }): { limit: number; offset: number } {
  const { limit, offset = 0 } = page ?? {}
  if (!Number.isInteger(limit) || limit < 0 || limit > LIST_MAX) throw invalid(`limit must be a whole number from 0 to ${LIST_MAX}, got ${JSON.stringify(limit)}.`, 'Ask for a page of units at a time.')
  if (!Number.isInteger(offset) || offset < 0) throw invalid(`offset must be a whole number ≥ 0, got ${JSON.stringify(offset)}.`, 'Pass how many units of the listing to skip.')
  return { limit, offset }
}

/** A non-empty Float32Array of finite numbers, or `invalid_argument`. */
export function validateVector(vector: unknown, what: string): Float32Array {
  if (!(vector instanceof Float32Array) || vector.length === 0) {
    throw invalid(`${what} must be a non-empty Float32Array.`, 'Pass the embedder output as a Float32Array.')
  }
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw invalid(`${what} has a non-finite value at ${i}.`, 'Check the embedder output.')
  }
  return vector
}

/** The checks of `units[i]` every index makes before writing anything (its vector's too, when it has one). */
export function validateIndexUnit(unit: IndexUnit, i: number): void {
  const what = `units[${i}]`
  if (typeof unit.id !== 'string' || unit.id === '') throw invalid(`${what}.id must be a non-empty string.`, 'Give every unit a stable id.')
  if (!(UNIT_KINDS as readonly string[]).includes(unit.kind)) {
    throw invalid(`${what}.kind ${JSON.stringify(unit.kind)} is not a unit kind.`, `Use one of ${UNIT_KINDS.join(', ')}.`)
  }
  if (typeof unit.text !== 'string') throw invalid(`${what}.text must be a string.`, 'Pass the text to index.')
  if (typeof unit.source !== 'string' || unit.source === '') throw invalid(`${what}.source must be a non-empty string.`, 'Pass where the unit comes from.')
  if (typeof unit.hash !== 'string') throw invalid(`${what}.hash must be a string.`, 'Pass contentHash(text).')
  if (!Array.isArray(unit.provenance)) throw invalid(`${what}.provenance must be an array of ids.`, 'Pass [] when there is none.')
  if (unit.owner !== undefined && !isOwner(unit.owner)) throw invalid(`${what}.owner ${JSON.stringify(unit.owner)} is not an owner.`, 'Use "agent", "shared" or "user:<id>".')
}
