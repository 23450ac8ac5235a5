/**
 * Profile facts (`profile.md`) are `Key: value` lines, a coherent snapshot of who the user is
 * (Anton's Default Mode Network). A new fact replaces the old one with the same key ("Name:
 * Jorge" replaces "Name: George") instead of piling up beside it.
 */
import { dedupeKey, type EngramEntry } from '../../core/engram.ts'

// A key is a short label before the first colon; longer prefixes are sentences that happen to
// contain a colon ("Note: the user said …" is still keyed, "Remember that at 10:30 …" is not).
const KEYED = /^\s*([\p{L}\p{N}][\p{L}\p{N} _/&'-]{0,39}?)\s*:\s*(\S.*)$/u

/** The normalised key of a `Key: value` fact, or undefined for free text. */
export function profileKey(text: string): string | undefined {
  const match = KEYED.exec(text)
  if (!match?.[1]) return undefined
  // "10:30" and URLs are not keys.
  if (/^\d+$/.test(match[1]) || /^(https?|ftp|file)$/i.test(match[1])) return undefined
  return match[1].toLowerCase().replace(/\s+/g, ' ').trim()
}

export type ProfileMerge =
  | { kind: 'added'; entries: EngramEntry[]; entry: EngramEntry }
  | { kind: 'replaced'; entries: EngramEntry[]; entry: EngramEntry; replaced: EngramEntry[] }
  | { kind: 'duplicate'; entries: EngramEntry[]; existing: EngramEntry }

/**
 * Merges one fact into the profile: an identical fact is a duplicate; a fact whose key is
 * already there takes the place of the first entry with that key (later ones with the same key
 * are dropped, so the snapshot stays coherent); anything else is appended.
 */
export function mergeProfileFact(current: EngramEntry[], fact: EngramEntry): ProfileMerge {
  const same = current.find((entry) => dedupeKey(entry.text) === dedupeKey(fact.text))
  if (same) return { kind: 'duplicate', entries: current, existing: same }
  const key = profileKey(fact.text)
  if (key === undefined) return { kind: 'added', entries: [...current, fact], entry: fact }
  const replaced = current.filter((entry) => profileKey(entry.text) === key)
  if (replaced.length === 0) return { kind: 'added', entries: [...current, fact], entry: fact }
  const entries: EngramEntry[] = []
  let placed = false
  for (const entry of current) {
    if (profileKey(entry.text) !== key) entries.push(entry)
    else if (!placed) {
      entries.push(fact)
      placed = true
    }
  }
  return { kind: 'replaced', entries, entry: fact, replaced }
}
