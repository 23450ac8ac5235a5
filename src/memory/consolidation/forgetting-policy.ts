/**
 * Active forgetting (AnimaWorks' synaptic homeostasis, ../shared/seeds/003 "Active Forgetting";
 * DESIGN §5): which knowledge and procedures have stopped mattering. Pure: it reads what a memory
 * says about itself (frontmatter, body) and how it was used (access count and last access, summed
 * over its index units), and returns a verdict with its reason.
 *
 * - **Downscaling** marks a memory low-activity: knowledge unaccessed for 90 days with fewer than
 *   3 accesses; a procedure unused for 180 days with fewer than 3 uses, or at once when its utility
 *   is below 0.3 after at least 3 failures.
 * - **Complete forgetting** takes a memory that has stayed low-activity for 60 more days: it is
 *   moved to `archive/forgotten/` (restorable, decision 0023) and leaves the index. A mark is not
 *   stored: a memory unaccessed for 90 days is marked that day by the daily run, so "low-activity
 *   for 60 days" is "unaccessed for 150 days" (knowledge), 240 (procedures), or 60 days without use
 *   since a failing procedure's last outcome.
 * - **Episodes** (the seed's monthly "knowledge + episodes + procedures") are judged as knowledge
 *   is — 90 days unaccessed with fewer than 3 accesses, then 60 more — counted from their day, and
 *   only once the weekly run has compressed them (or one too short to cut is past the compression
 *   age): an episode is first shortened, then forgotten.
 * - **Protections**: `protected: true`, `[IMPORTANT]` anywhere in the memory, procedures at version
 *   3 or later (matured through reconsolidation). Skills and user profiles are never candidates.
 *
 * The daily run writes the verdict into the memory's frontmatter (`activity_level: low`,
 * `low_activity_since`, LOW_ACTIVITY_FIELDS) and clears it when the memory is used again; the
 * weekly run reads that mark (low-activity merge). Forgetting itself recomputes the verdict, so a
 * home whose daily run was skipped forgets on the same day as one where it ran.
 */
import type { Frontmatter } from '../../core/memory-doc.ts'

export const FORGETTING_THRESHOLDS = Object.freeze({
  knowledgeIdleDays: 90,
  procedureIdleDays: 180,
  /** Fewer accesses (or uses) than this is low frequency. */
  lowUses: 3,
  /** A procedure below this utility after `failures` failures is marked at once. */
  lowUtility: 0.3,
  failures: 3,
  /** How long a memory stays low-activity before it is forgotten. */
  graceDays: 60,
  /** Procedures at this version or later have matured and are kept. */
  matureVersion: 3,
})

export interface MemoryUse {
  /** Recalls of the memory (all its index units). */
  accessCount: number
  /** The latest recall, ISO-8601, when there was one. */
  lastAccessAt: string | undefined
}

/** The frontmatter fields of the low-activity mark (written daily, cleared when used again). */
export const LOW_ACTIVITY_FIELDS = Object.freeze({ level: 'activity_level', since: 'low_activity_since' })

export interface ForgettingSubject {
  docKind: 'knowledge' | 'procedure' | 'episode'
  frontmatter: Frontmatter
  body: string
  /** The file's last modification (when the frontmatter has no dates); an episode's day. */
  modifiedAt: string
  use: MemoryUse
  /** An episode: compressed by the weekly run, or older than its threshold and with nothing left to cut. */
  compressed?: boolean
}

export type ForgettingVerdict =
  | { state: 'active'; why: string }
  | { state: 'protected'; why: string }
  /** Marked by downscaling on `since`; forgotten when it stays so until `forgetOn`. */
  | { state: 'low-activity'; why: string; since: string; forgetOn: string }
  | { state: 'forget'; why: string; since: string }

const DAY_MS = 86_400_000
const IMPORTANT = /\[IMPORTANT\]/i

function instant(value: unknown): number | undefined {
  if (typeof value !== 'string' && !(value instanceof Date)) return undefined
  const ms = new Date(value).getTime()
  return Number.isFinite(ms) ? ms : undefined
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0)

/** What the memory says of itself that protects it, if anything. */
function protection(subject: ForgettingSubject): string | undefined {
  const fm = subject.frontmatter
  if (fm.protected === true || fm.protected === 'true') return 'protected: true'
  if (IMPORTANT.test(subject.body) || Object.values(fm).some((value) => typeof value === 'string' && IMPORTANT.test(value))) return 'tagged [IMPORTANT]'
  if (subject.docKind === 'procedure' && count(fm.version) >= FORGETTING_THRESHOLDS.matureVersion) return `a procedure at version ${fm.version} (matured)`
  return undefined
}

/** The verdict on `subject` at `now` (see the module comment). */
export function judgeForgetting(subject: ForgettingSubject, now: Date): ForgettingVerdict {
  const guarded = protection(subject)
  if (guarded) return { state: 'protected', why: guarded }
  const t = FORGETTING_THRESHOLDS
  const fm = subject.frontmatter
  if (subject.docKind === 'episode' && subject.compressed !== true) return { state: 'active', why: 'not compressed yet (the weekly run compresses episodes older than 30 days)' }
  // Since when it has gone unused: its last recall, else when it was last written (an episode: its day).
  const dated = subject.docKind === 'episode' ? 0 : Math.max(instant(fm.updated_at) ?? 0, instant(fm.created_at) ?? 0)
  const written = dated || (instant(subject.modifiedAt) ?? now.getTime())
  const lastUse = instant(subject.use.lastAccessAt) ?? written
  const idleDays = Math.floor((now.getTime() - Math.max(lastUse, 0)) / DAY_MS)
  const dayOf = (days: number): string => new Date(lastUse + days * DAY_MS).toISOString().slice(0, 10)

  if (subject.docKind === 'procedure') {
    const successes = count(fm.success_count)
    const failures = count(fm.failure_count)
    const uses = subject.use.accessCount + successes + failures
    const utility = successes + failures > 0 ? successes / (successes + failures) : typeof fm.confidence === 'number' ? fm.confidence : 0.5
    if (utility < t.lowUtility && failures >= t.failures) {
      // Marked the day of its last use or outcome; forgotten if nothing changes for the grace period.
      const why = `utility ${utility.toFixed(2)} after ${failures} failures`
      if (idleDays >= t.graceDays) return { state: 'forget', why: `${why}, unused for ${idleDays} days since`, since: dayOf(0) }
      return { state: 'low-activity', why, since: dayOf(0), forgetOn: dayOf(t.graceDays) }
    }
    if (idleDays >= t.procedureIdleDays && uses < t.lowUses) {
      const why = `unused for ${idleDays} days, ${uses} use${uses === 1 ? '' : 's'}`
      if (idleDays >= t.procedureIdleDays + t.graceDays) return { state: 'forget', why, since: dayOf(t.procedureIdleDays) }
      return { state: 'low-activity', why, since: dayOf(t.procedureIdleDays), forgetOn: dayOf(t.procedureIdleDays + t.graceDays) }
    }
    return { state: 'active', why: `used ${uses} time${uses === 1 ? '' : 's'}, last ${idleDays} days ago` }
  }

  const accesses = subject.use.accessCount
  if (idleDays >= t.knowledgeIdleDays && accesses < t.lowUses) {
    const why = `unaccessed for ${idleDays} days, ${accesses} access${accesses === 1 ? '' : 'es'}`
    if (idleDays >= t.knowledgeIdleDays + t.graceDays) return { state: 'forget', why, since: dayOf(t.knowledgeIdleDays) }
    return { state: 'low-activity', why, since: dayOf(t.knowledgeIdleDays), forgetOn: dayOf(t.knowledgeIdleDays + t.graceDays) }
  }
  return { state: 'active', why: `${accesses} access${accesses === 1 ? '' : 'es'}, last ${idleDays} days ago` }
}
