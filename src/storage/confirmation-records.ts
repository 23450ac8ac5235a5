/**
 * What a pending confirmation row holds, read and written the same way by the SQLite and
 * PostgreSQL queues: the engram (or `{"document": …}` for a promoted memory file) as JSON text, a
 * dedupe key so the same memory waits once, and the ids users answer with.
 */
import { dedupeKey, type Engram, ENGRAM_SCOPES, isEngramKind } from '../core/engram.ts'
import { EngramError, ErrorCode } from '../core/errors.ts'
import { contentHash } from '../core/hash.ts'
import { isOwner } from '../core/owner.ts'
import type { ConfirmationSelection, PendingConfirmation, PendingDocument } from './contracts.ts'

/** A row as both queues select it. */
export interface ConfirmationRow {
  id: number
  engram: string
  reason: string
  queued_at: string
  asked_by: string
}

/** One pending row per memory: kind + normalised text. */
export function engramDedupe(engram: Engram): string {
  return `${engram.kind}\u0000${dedupeKey(engram.text)}`
}

/** One pending row per memory file write: path, mode and content. */
export function documentDedupe(document: PendingDocument): string {
  return `document\u0000${document.path}\u0000${document.mode}\u0000${contentHash(document.content)}`
}

function corrupt(id: number, why: string, where: string, cause?: unknown): EngramError {
  return new EngramError({
    code: ErrorCode.storageCorrupt,
    category: 'system',
    message: `Pending confirmation ${id} cannot be read: ${why}.`,
    fix: `Reject it with \`engram confirm --reject ${id}\`, or delete the row from ${where}.`,
    details: { id },
    cause,
  })
}

function engramOf(text: string, id: number, where: string): Engram {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw corrupt(id, 'its engram is not JSON', where, error)
  }
  const engram = value as Partial<Engram> | null
  if (!engram || typeof engram.text !== 'string' || !isEngramKind(engram.kind) || !(ENGRAM_SCOPES as readonly string[]).includes(engram.scope ?? '')) {
    throw corrupt(id, 'its engram lacks text, kind or scope', where)
  }
  if (engram.owner !== undefined && !isOwner(engram.owner)) throw corrupt(id, `its owner ${JSON.stringify(engram.owner)} is not an owner`, where)
  return engram as Engram
}

/** A promoted memory file, stored as `{"document": …}` in the engram column, or undefined for an engram row. */
function documentOf(text: string, id: number, where: string): PendingDocument | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  const document = (value as { document?: Partial<PendingDocument> } | null)?.document
  if (document === undefined) return undefined
  if (typeof document.path !== 'string' || typeof document.content !== 'string' || !isOwner(document.owner) || (document.mode !== 'overwrite' && document.mode !== 'append')) {
    throw corrupt(id, 'its memory file lacks path, content, owner or mode', where)
  }
  return { path: document.path, owner: document.owner, content: document.content, mode: document.mode }
}

/** The confirmation a row stands for; throws `storage_corrupt` naming the row and, in the fix, `where` it is stored. */
export function toPendingConfirmation(row: ConfirmationRow, where: string): PendingConfirmation {
  const document = documentOf(row.engram, row.id, where)
  return {
    id: String(row.id),
    ...(document ? { document } : { engram: engramOf(row.engram, row.id, where) }),
    queuedAt: row.queued_at,
    reason: row.reason,
    ...(row.asked_by !== '' ? { askedBy: row.asked_by } : {}),
  }
}

/** The row ids of a selection; refuses anything that is not a positive whole number with `invalid_argument`. */
export function selectionIds(selection: ConfirmationSelection): number[] | 'all' {
  if (selection === 'all') return 'all'
  const ids: number[] = []
  for (const raw of selection) {
    const id = Number(String(raw).trim())
    if (!Number.isSafeInteger(id) || id <= 0) {
      throw new EngramError({
        code: ErrorCode.invalidArgument,
        category: 'user',
        message: `"${raw}" is not the id of a pending confirmation.`,
        fix: 'Use the numbers `engram confirm` lists, e.g. --accept 1,3.',
        details: { id: raw },
      })
    }
    ids.push(id)
  }
  return ids
}
