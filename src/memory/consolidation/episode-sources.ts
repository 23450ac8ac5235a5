/**
 * What daily consolidation reads: the episode sections of each owner's tree (the seed's "episode
 * collection"), each with a stable id so that a section is consolidated once, and the seed's
 * procedural classification (regular expressions; an episode that says how something is done
 * feeds procedure distillation, the rest knowledge extraction).
 *
 * Sections are read per owner and never mixed: what is derived from a user's episodes is that
 * user's (owners carry over; decision 0017).
 */
import { contentHash } from '../../core/hash.ts'
import { type Owner, ownerOfUser } from '../../core/owner.ts'
import type { Backend } from '../../storage/contracts.ts'
import { detectLanguage } from '../../text/languages/detect.ts'
import { normaliseForMatching } from '../../text/languages/language.ts'
import { parseEpisodeSections } from '../episodes/episode-format.ts'

export interface EpisodeSource {
  /** Stable: the section's session and turns when it has a marker, else its heading and text. */
  id: string
  owner: Owner
  day: string
  heading: string
  text: string
  /** Resolved issues the section records (the seed's layer 3, injected into extraction). */
  resolved: string[]
  /** Where it is (`episodes/2026-03-02.md#14:30 — Fixed the deploy`), for `sources` in frontmatter. */
  ref: string
  /** When what it tells happened (the marker's last event, else noon of its day). */
  at: string
}

/** The seed's procedural classification: twelve patterns of how-to content. */
export const PROCEDURAL_PATTERNS: readonly RegExp[] = [
  /\bprocedure\b/i,
  /\bstep[- ]by[- ]step\b|\bsteps?\s+\d/i,
  /\bhow to\b/i,
  /\bset(?:ting)?[- ]?up\b/i,
  /\binstall(?:ed|ing|ation)?\b/i,
  /\bcommand\b/i,
  /\bworkflow\b/i,
  /\bdeploy(?:ed|ing|ment)?\b/i,
  /\bconfigur(?:e|ed|ing|ation)\b/i,
  /\bchecklist\b|\brunbook\b|\brecipe\b/i,
  /^\s*\d+[.)]\s+\S/m,
  /\bfirst\b[^.]{0,120}\bthen\b/i,
]

/**
 * Whether an episode says how something is done: the seed's English patterns, and those of the
 * episode's language when a table covers it (decision 0077; the seed's own patterns include
 * Japanese ones).
 */
export function isProcedural(text: string): boolean {
  if (PROCEDURAL_PATTERNS.some((pattern) => pattern.test(text))) return true
  const language = detectLanguage(text).rules
  if (!language) return false
  const normalised = normaliseForMatching(text)
  return language.procedural.some((pattern) => pattern.test(normalised))
}

export async function episodeOwners(backend: Backend): Promise<Owner[]> {
  return ['agent', 'shared', ...(await backend.users()).map((user) => ownerOfUser(user))]
}

/** The sections of `owner`'s episode days in [from, to] (ISO days, inclusive), oldest first, minus `done` ids. */
export async function episodeSections(backend: Backend, owner: Owner, window: { from: string; to: string }, done: ReadonlySet<string>): Promise<EpisodeSource[]> {
  const documents = backend.owned(owner).documents
  const days = (await documents.slugs('episode')).filter((day) => /^\d{4}-\d{2}-\d{2}$/.test(day) && day >= window.from && day <= window.to)
  days.sort()
  const sections: EpisodeSource[] = []
  for (const day of days) {
    const doc = await documents.read('episode', day)
    if (!doc) continue
    for (const section of parseEpisodeSections(doc.body)) {
      if (section.heading === '' || section.body.trim() === '') continue
      const marker = section.marker
      const id = contentHash(marker ? `${owner}|${day}|${marker.session}|${marker.turns.join('-')}|${marker.from}` : `${owner}|${day}|${section.heading}|${section.body}`).slice(0, 24)
      if (done.has(id)) continue
      sections.push({
        id,
        owner,
        day,
        heading: section.heading,
        text: section.body,
        resolved: marker?.resolved ?? [],
        ref: `episodes/${day}.md#${section.heading}`,
        at: marker?.untilTs ?? `${day}T12:00:00.000Z`,
      })
    }
  }
  return sections
}
