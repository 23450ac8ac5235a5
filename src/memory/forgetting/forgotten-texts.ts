/**
 * What an owner has forgotten must not reach the model again through the activity log. The log is
 * the record of what happened and is never rewritten, so the save of a rule, lesson or profile fact
 * (its `memory_write` event), the tool call that saved it and the search that showed it all still
 * carry its text after `forget_memory`. Priming reads the texts of the entries the viewer's owners
 * forgot (their archives of forgotten entries, on either backend) and keeps them out of the recent
 * activity it shows: a save of one is dropped, and the text inside any other line is replaced.
 * Restoring an entry takes it out of the archive, and so out of this list.
 */
import type { ActivityRecord, EngramArchive } from '../../storage/contracts.ts'

/** Archive names (relative to `archive/`, without `.md`) that hold forgotten entries, of either scope. */
const ENTRY_ARCHIVES = ['forgotten/rules', 'forgotten/lessons', 'forgotten/profile', 'forgotten/project/rules', 'forgotten/project/lessons']
const ENTRY_LINE = /^\s*[-*]\s+(.*?)\s*(?:<!--.*-->)?\s*$/
/**
 * Shorter texts are not redacted: a word or two ("Yes", "Use tabs") is no fact on its own and would
 * cut the same words out of unrelated lines.
 */
const MIN_REDACTED_CHARS = 8
export const FORGOTTEN_MARK = '[forgotten]'

/** The texts of the entries forgotten in `archives` (rules, lessons, profile facts), longest first. */
export async function forgottenEntryTexts(archives: readonly EngramArchive[]): Promise<string[]> {
  // Read by name, all at once: priming waits for this, and listing an archive walks its versions too.
  const files = await Promise.all(archives.flatMap((archive) => ENTRY_ARCHIVES.map((name) => archive.read(name))))
  const texts = new Set<string>()
  for (const text of files) {
    for (const line of (text ?? '').split('\n')) {
      const entry = ENTRY_LINE.exec(line)?.[1]?.trim()
      if (entry !== undefined && entry.length >= MIN_REDACTED_CHARS) texts.add(entry)
    }
  }
  // Longest first: a text that contains another is replaced whole.
  return [...texts].sort((a, b) => b.length - a.length)
}

/** A forgetting on request or by monthly forgetting (`forget-memory.ts` logs each as a `memory_write` with `action: forget`). */
export function isForgetRecord(record: ActivityRecord): boolean {
  return record.type === 'memory_write' && record.meta?.action === 'forget'
}

/**
 * `records` without the saves of `forgotten` texts, and with those texts replaced by
 * `[forgotten]` wherever else they appear (contents, summaries, logged tool inputs and results, in
 * whatever escaping the log kept them).
 */
export function withoutForgotten(records: readonly ActivityRecord[], forgotten: readonly string[]): ActivityRecord[] {
  if (forgotten.length === 0) return [...records]
  const saved = new Set(forgotten.map((text) => text.toLowerCase()))
  // The forms a text takes inside the record's JSON: as a string, and as a string of JSON in a string.
  const forms = forgotten.flatMap((text) => {
    const once = JSON.stringify(text).slice(1, -1)
    const twice = JSON.stringify(once).slice(1, -1)
    return once === twice ? [once] : [twice, once]
  })
  return records
    .filter((record) => !(record.type === 'memory_write' && typeof record.content === 'string' && saved.has(record.content.trim().toLowerCase())))
    .map((record) => {
      const json = JSON.stringify(record)
      let redacted = json
      for (const form of forms) redacted = redacted.split(form).join(FORGOTTEN_MARK)
      return redacted === json ? record : (JSON.parse(redacted) as ActivityRecord)
    })
}
