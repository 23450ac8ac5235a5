/**
 * Frontmatter fields engram keeps itself. They are the record of what happened to a memory — how
 * often a procedure worked, how many versions a document has had, whether a person protected it
 * from forgetting, whether consolidation validated it — so an agent writing its own notes with
 * `write_memory_file` cannot set them: a procedure would otherwise report its own success, and a
 * note exempt itself from forgetting. Each field says how it does change.
 */
import { EngramError, ErrorCode } from '../core/errors.ts'
import type { Frontmatter } from '../core/memory-doc.ts'

interface OwnedField {
  /** How the field changes, in a sentence the agent reads. */
  how: string
  /** What the agent can do instead. */
  instead: string
}

const REPORT_OUTCOME = 'report_procedure_outcome'

// A connection that does not offer report_procedure_outcome (MCP's essential tools, decision 0067)
// is told what happens in words: an error names only tools the caller has (decision 0070).
const counted = (what: string, reports: boolean): OwnedField => ({
  how: reports
    ? `engram counts the ${what} reported with ${REPORT_OUTCOME}, and those it sees at the end of a session that followed the procedure`
    : `engram counts the ${what} it sees at the end of a session that followed the procedure`,
  instead: reports ? `call ${REPORT_OUTCOME} after following the procedure` : 'follow the procedure in a session and let engram count how it went',
})

const ownedFields = (reports: boolean): Readonly<Record<string, OwnedField>> => ({
  success_count: counted('successes', reports),
  failure_count: counted('failures', reports),
  confidence: {
    how: `engram computes it: successes / (successes + failures)${reports ? ` reported with ${REPORT_OUTCOME}` : ''} for a procedure, validation against its sources for knowledge`,
    instead: reports ? `report outcomes with ${REPORT_OUTCOME}` : 'let engram count how the procedure went',
  },
  version: { how: 'engram adds one on every overwrite and keeps the previous version in archive/versions/', instead: 'overwrite the file; the version follows' },
  protected: { how: 'only a person protects a memory from forgetting, by editing the file by hand', instead: 'ask the user to protect it' },
  validated: { how: 'consolidation sets it once it has checked the memory against its sources', instead: 'leave it out' },
  validation: { how: 'consolidation records which of its checks approved the memory (entailed by its sources, or the model)', instead: 'leave it out' },
  auto_distilled: { how: 'engram records whether consolidation wrote the procedure', instead: 'leave it out' },
  auto_consolidated: { how: 'engram records whether consolidation wrote the knowledge', instead: 'leave it out' },
})
const OWNED_FRONTMATTER = ownedFields(true)

/** The owned field names, for the tool's description. */
export const OWNED_FRONTMATTER_FIELDS: readonly string[] = Object.keys(OWNED_FRONTMATTER)

/**
 * The frontmatter an agent may write: `given` without the owned fields it merely restated (same
 * value as stored, so engram's own bookkeeping — a version bump — still applies). Throws
 * `invalid_argument` naming every owned field `given` would change, and how each does change;
 * the caller writes nothing then. `offers` says which tools the caller has (all by default).
 */
export function agentFrontmatter(given: Frontmatter, stored: Frontmatter | undefined, path: string, tool: string, offers: (tool: string) => boolean = () => true): Frontmatter {
  const kept: Frontmatter = { ...given }
  const changed: string[] = []
  for (const field of Object.keys(given)) {
    if (!Object.hasOwn(OWNED_FRONTMATTER, field)) continue
    delete kept[field]
    if (stored === undefined || !Object.hasOwn(stored, field) || !sameValue(given[field], stored[field])) changed.push(field)
  }
  if (changed.length === 0) return kept
  const fields = offers(REPORT_OUTCOME) ? OWNED_FRONTMATTER : ownedFields(false)
  const owned = changed.map((field) => ({ field, ...(fields[field] as OwnedField) }))
  const instead = [...new Set(owned.map((entry) => entry.instead))]
  throw new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `${tool} cannot set ${changed.join(', ')} in ${path}; nothing was written. ${owned.map((entry) => `${entry.field}: ${entry.how}.`).join(' ')}`,
    fix: `leave ${changed.join(', ')} out of the frontmatter (restating a field unchanged is fine); to change ${changed.length === 1 ? 'it' : 'them'}: ${instead.join('; ')}`,
    details: { path, fields: changed },
  })
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}
