/**
 * The one user profile (decision 0017): `shared/users/<key>.md`, the seed's interpersonal memory.
 * It belongs to its user and is shared by every agent of the home, never with other users.
 * Identity extraction and `memorize {kind: 'profile'}` in a session with that user merge
 * `Key: value` facts into it ("Timezone: CET" replaces "Timezone: PST"); the `memory` tool's
 * `profile_update` replaces it whole; priming and the memory context read it.
 *
 * A profile is markdown a person can edit: facts are the `- ` lines, anything else (headings,
 * paragraphs a person or the agent wrote) is kept as it is through every merge. Every rewrite is
 * versioned by the document store (`shared/archive/versions/user/`).
 */
import type { Clock } from '../../core/clock.ts'
import { dedupeKey, type EngramEntry } from '../../core/engram.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { MemoryDoc } from '../../core/memory-doc.ts'
import { userKey, validateUserId } from '../../core/owner.ts'
import type { DocumentStore, Locks } from '../../storage/contracts.ts'
import { profileKey } from './profile-facts.ts'

/** Largest profile kept, in characters (a profile is a snapshot, not a diary). */
export const PROFILE_MAX_CHARS = 20_000

export interface UserProfiles {
  /** The user's profile, or null when there is none yet. */
  read(user: string): Promise<MemoryDoc | null>
  /** The profile's facts: its `- ` lines, without metadata comments. */
  facts(user: string): Promise<EngramEntry[]>
  /** Merge one fact by key; `duplicate` when the profile already says it. */
  mergeFact(user: string, text: string, reason?: string): Promise<{ kind: 'added' | 'replaced' | 'duplicate'; path: string }>
  /**
   * Takes out every line that says `text` (a `- ` fact or a line of prose, as `profileFacts` reads
   * them), keeping the rest as it is; returns how many lines went (0: nothing written). The
   * rewrite is versioned like any other (forgetting on request, forget-memory.ts).
   */
  removeFact(user: string, text: string, reason?: string): Promise<number>
  /** Replace the whole profile body (the `memory` tool's profile_update). */
  replace(user: string, body: string, reason?: string): Promise<MemoryDoc>
  /** Home-relative path of the profile file. */
  path(user: string): string
}

export interface UserProfilesDeps {
  /** A document store of the agent (user documents live under `shared/users/` whatever its owner). */
  documents: DocumentStore
  locks: Locks
  clock: Clock
}

const BULLET = /^(\s*[-*]\s+)(.*?)(\s*<!--.*-->)?\s*$/

/**
 * What a profile says, line by line: its `- ` facts and any other line of text a person or the
 * agent wrote (headings and metadata comments left out), in file order.
 */
export function profileFacts(body: string): EngramEntry[] {
  const facts: EngramEntry[] = []
  for (const line of body.split('\n')) {
    const text = factOfLine(line)
    if (text) facts.push({ text, kind: 'profile', meta: {} })
  }
  return facts
}

/** The text of one profile line as `profileFacts` reads it ('' for headings and blank lines). */
function factOfLine(line: string): string {
  if (/^\s*#{1,6}\s/.test(line)) return ''
  const match = BULLET.exec(line)
  return (match ? (match[2] ?? '') : line.replace(/\s*<!--.*-->\s*$/, '')).trim()
}

/**
 * `body` with `fact` merged: an identical fact is a duplicate; a fact whose key is there replaces
 * the first line with that key (later ones with the same key go); anything else is appended after
 * the last fact line.
 */
export function mergeFactIntoBody(body: string, fact: string): { kind: 'added' | 'replaced' | 'duplicate'; body: string } {
  const lines = body === '' ? [] : body.replace(/\n+$/, '').split('\n')
  const key = profileKey(fact)
  let lastBullet = -1
  let replacedAt = -1
  const drop = new Set<number>()
  for (const [i, line] of lines.entries()) {
    const match = BULLET.exec(line)
    if (!match) continue
    lastBullet = i
    const text = (match[2] ?? '').trim()
    if (dedupeKey(text) === dedupeKey(fact)) return { kind: 'duplicate', body }
    if (key !== undefined && profileKey(text) === key) {
      if (replacedAt < 0) replacedAt = i
      else drop.add(i)
    }
  }
  if (replacedAt >= 0) {
    const next = lines.map((line, i) => (i === replacedAt ? `- ${fact}` : line)).filter((_, i) => !drop.has(i))
    return { kind: 'replaced', body: `${next.join('\n')}\n` }
  }
  const at = lastBullet < 0 ? lines.length : lastBullet + 1
  const next = [...lines.slice(0, at), `- ${fact}`, ...lines.slice(at)]
  return { kind: 'added', body: `${next.join('\n')}\n` }
}

function tooLong(user: string, length: number): EngramError {
  return new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `The profile of ${JSON.stringify(user)} would be ${length} characters, more than ${PROFILE_MAX_CHARS}.`,
    fix: 'keep the profile to short facts about who the user is; move longer notes into knowledge/ with write_memory_file',
    details: { user, length },
  })
}

export function createUserProfiles(deps: UserProfilesDeps): UserProfiles {
  const { documents, locks, clock } = deps

  async function locked<T>(user: string, fn: () => Promise<T>): Promise<T> {
    const outcome = await locks.withLock(`user-profile:${userKey(user)}`, fn)
    if (outcome.kind === 'done') return outcome.value
    throw new EngramError({ code: ErrorCode.lockBusy, category: 'system', message: `The profile of ${user} is being written by another process.`, fix: 'Try again in a moment.' })
  }

  function frontmatterOf(existing: MemoryDoc | null, user: string): Record<string, unknown> {
    return { ...(existing?.frontmatter ?? {}), user, updated_at: clock.now().toISOString() }
  }

  const profiles: UserProfiles = {
    path: (user) => `shared/users/${userKey(user)}.md`,
    read: (user) => documents.read('user', userKey(validateUserId(user))),
    async facts(user) {
      const doc = await profiles.read(user)
      return doc ? profileFacts(doc.body) : []
    },
    async mergeFact(user, text, reason) {
      validateUserId(user)
      const fact = text.replace(/\s+/g, ' ').trim()
      return locked(user, async () => {
        const existing = await documents.read('user', userKey(user))
        const merged = mergeFactIntoBody(existing?.body ?? '', fact)
        if (merged.kind === 'duplicate') return { kind: 'duplicate', path: profiles.path(user) }
        if (merged.body.length > PROFILE_MAX_CHARS) throw tooLong(user, merged.body.length)
        const doc = await documents.write('user', userKey(user), frontmatterOf(existing, user), merged.body, { reason: reason ?? `profile fact: ${fact}` })
        return { kind: merged.kind, path: doc.path }
      })
    },
    async removeFact(user, text, reason) {
      validateUserId(user)
      const wanted = dedupeKey(text)
      return locked(user, async () => {
        const existing = await documents.read('user', userKey(user))
        if (!existing) return 0
        const lines = existing.body.split('\n')
        const kept = lines.filter((line) => {
          const fact = factOfLine(line)
          return fact === '' || dedupeKey(fact) !== wanted
        })
        const removed = lines.length - kept.length
        if (removed > 0) await documents.write('user', userKey(user), frontmatterOf(existing, user), kept.join('\n'), { reason: reason ?? 'profile fact forgotten' })
        return removed
      })
    },
    async replace(user, body, reason) {
      validateUserId(user)
      if (typeof body !== 'string') {
        throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'A profile must be text.', fix: 'pass the whole profile as a string' })
      }
      if (body.length > PROFILE_MAX_CHARS) throw tooLong(user, body.length)
      return locked(user, async () => {
        const existing = await documents.read('user', userKey(user))
        return documents.write('user', userKey(user), frontmatterOf(existing, user), body.endsWith('\n') || body === '' ? body : `${body}\n`, { reason: reason ?? 'profile replaced' })
      })
    },
  }
  return profiles
}
