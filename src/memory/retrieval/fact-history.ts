/**
 * Facts have a history (DESIGN §5, decision 0033). Contradiction resolution marks a knowledge
 * document that a newer one replaces with `superseded_by: <slug>` and `valid_until`, and the newer
 * one with `supersedes: <slug>` and `valid_from` — Zep's bi-temporal edges, lossless: the old
 * document stays live, indexed and searchable as history. This module is the one reading of those
 * fields: into an index unit's `meta` (indexer), as "superseded now?" (search), and as the one
 * parenthesis that search_memory and priming append to a hit.
 */
import type { Frontmatter } from '../../core/memory-doc.ts'

/** Where a knowledge document stands in a history of facts. Every field is optional. */
export interface FactValidity {
  /** The slug of the document that replaced it, in the same owner's knowledge folder. */
  supersededBy?: string
  /** The slug of the document it replaced, in the same folder. */
  supersedes?: string
  /** ISO-8601 instant from which the fact held. */
  validFrom?: string
  /** ISO-8601 instant until which the fact held. */
  validUntil?: string
}

/**
 * A slug of the same folder, or undefined. The convention is a bare slug; `knowledge/x` and
 * `x.md` are read as `x` so that a near miss still links, and anything that would leave the folder
 * (`/`, `..`, a leading dot, control characters) is not a link at all.
 */
export function siblingSlug(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  let slug = value.trim()
  if (slug.startsWith('knowledge/')) slug = slug.slice('knowledge/'.length)
  if (slug.endsWith('.md')) slug = slug.slice(0, -'.md'.length)
  const safe = slug !== '' && slug.length <= 200 && !slug.includes('/') && !slug.includes('\\') && !slug.includes('..') && !slug.startsWith('.') && !/[\u0000-\u001f\u007f]/.test(slug)
  return safe ? slug : undefined
}

/** An instant as ISO-8601, or undefined when it is not one (a value that is no date is not a validity). */
function instantOf(value: unknown): string | undefined {
  if (typeof value !== 'string' && !(value instanceof Date)) return undefined
  const at = value instanceof Date ? value : new Date(value.trim())
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString()
}

function withoutUndefined(validity: FactValidity): FactValidity | undefined {
  const out: FactValidity = {}
  if (validity.supersededBy !== undefined) out.supersededBy = validity.supersededBy
  if (validity.supersedes !== undefined) out.supersedes = validity.supersedes
  if (validity.validFrom !== undefined) out.validFrom = validity.validFrom
  if (validity.validUntil !== undefined) out.validUntil = validity.validUntil
  return Object.keys(out).length > 0 ? out : undefined
}

/** The history fields of a document's frontmatter (`superseded_by`, `supersedes`, `valid_from`, `valid_until`). */
export function factValidityOf(frontmatter: Frontmatter): FactValidity | undefined {
  return withoutUndefined({
    supersededBy: siblingSlug(frontmatter.superseded_by),
    supersedes: siblingSlug(frontmatter.supersedes),
    validFrom: instantOf(frontmatter.valid_from),
    validUntil: instantOf(frontmatter.valid_until),
  })
}

/** The history fields the indexer put in a unit's `meta`. */
export function factValidityOfUnit(unit: { meta?: Record<string, unknown> }): FactValidity | undefined {
  const meta = unit.meta
  if (meta === undefined) return undefined
  const text = (key: string): string | undefined => (typeof meta[key] === 'string' ? (meta[key] as string) : undefined)
  return withoutUndefined({ supersededBy: text('supersededBy'), supersedes: text('supersedes'), validFrom: text('validFrom'), validUntil: text('validUntil') })
}

/**
 * Whether a unit's fact was superseded at `asOfMs`: it names a successor, and its `valid_until`,
 * when given, is not after that instant (searching as of an earlier moment, the fact still held).
 */
export function supersededAt(unit: { meta?: Record<string, unknown> }, asOfMs: number): boolean {
  const successor = unit.meta?.supersededBy
  if (typeof successor !== 'string') return false
  const until = unit.meta?.validUntil
  return typeof until !== 'string' || Date.parse(until) <= asOfMs
}

/** The source of a sibling document: `agents/a/users/ada/knowledge/old.md` + `new` → `…/knowledge/new.md`. */
export function siblingSource(source: string, slug: string): string {
  const slash = source.lastIndexOf('/')
  return `${slash < 0 ? '' : source.slice(0, slash + 1)}${slug}.md`
}

const day = (iso: string): string => iso.slice(0, 10)

/** `2026-01-03 – 2026-05-01`, `from 2026-01-03`, `until 2026-05-01`, or '' (by day). */
export function validityInterval(validFrom: string | undefined, validUntil: string | undefined): string {
  if (validFrom !== undefined && validUntil !== undefined) return `${day(validFrom)} – ${day(validUntil)}`
  if (validFrom !== undefined) return `from ${day(validFrom)}`
  if (validUntil !== undefined) return `until ${day(validUntil)}`
  return ''
}

/**
 * What a hit shows of its history, in one parenthesis, or '' for a fact without one:
 * `(superseded by knowledge/berlin.md on 2026-05-01; valid 2026-01-03 – 2026-05-01)`,
 * `(supersedes knowledge/lisbon.md; valid from 2026-05-01)`. `referenceOf` turns a sibling slug
 * into what the reader can open (a memory path for search_memory, a home-relative path in priming).
 */
export function validityNote(validity: FactValidity | undefined, referenceOf: (slug: string) => string): string {
  if (validity === undefined) return ''
  const parts: string[] = []
  const { supersededBy, supersedes, validFrom, validUntil } = validity
  if (supersededBy !== undefined) parts.push(`superseded by ${referenceOf(supersededBy)}${validUntil !== undefined ? ` on ${day(validUntil)}` : ''}`)
  else if (supersedes !== undefined) parts.push(`supersedes ${referenceOf(supersedes)}`)
  // "superseded by … on <day>" already says until when.
  const interval = supersededBy !== undefined && validFrom === undefined ? '' : validityInterval(validFrom, validUntil)
  if (interval !== '') parts.push(`valid ${interval}`)
  return parts.length > 0 ? `(${parts.join('; ')})` : ''
}
