/**
 * Compaction (Anton's synaptic homeostasis): when a memory file grows past a threshold, the
 * planning model points out duplicates, restatements and superseded entries, and the file is
 * rewritten without them.
 *
 * Conservative by construction. The model never writes memory text: it answers with the numbers
 * of the entries to drop and, for each, the number of the entry that makes it redundant, so a
 * compaction can only remove lines that another kept line already says; it cannot invent or
 * reword anything. Further checks refuse an answer that would drop more than half of the entries,
 * drop an entry in favour of one of another kind, or in favour of an entry that is itself dropped.
 * Entries the model does not mention are kept ("when in doubt, keep the entry").
 *
 * Safe: only one process compacts a file at a time (a lock taken without waiting: the others
 * skip), the rewrite is atomic (`rewriteAll`), entries encoded while the model was thinking are
 * kept, and any failure — no model, a 5xx, a timeout, an answer that is not JSON or breaks the
 * schema — is a `skipped` result that leaves the file exactly as it was.
 */
import { z } from 'zod'
import { dedupeKey, type EngramEntry } from '../../core/engram.ts'
import { describeError } from '../../core/errors.ts'
import { contentHash } from '../../core/hash.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { EngramFile, EngramStore, Locks } from '../../storage/contracts.ts'

/** Anton's `_COMPACTION_THRESHOLD`: a file with more entries than this is compacted. */
export const COMPACTION_THRESHOLD = 20

/** Files compaction looks at; profile.md is kept coherent by the key-prefix merge instead. */
export const COMPACTED_FILES = ['rules', 'lessons'] as const satisfies readonly EngramFile[]

/** `state`: what the file holds after the compaction (fileState), so a later check can tell it was not changed since. */
export type CompactionResult =
  | { kind: 'compacted'; file: EngramFile; location: string; before: number; after: number; removed: Array<{ entry: EngramEntry; keptInstead: EngramEntry; reason: string }>; state?: string }
  | { kind: 'unchanged'; file: EngramFile; location: string; entries: number; state?: string }
  | { kind: 'skipped'; file: EngramFile; location: string; reason: string }

export interface CompactionOptions {
  llm: Llm
  locks: Locks
  threshold?: number
  timeoutMs?: number
  /** States (fileState) a compaction already left: a file still in one is not sent to the model again. */
  settled?: ReadonlySet<string>
}

/** A digest of what one memory file holds, the same until an entry is added, removed or changed. */
export function fileState(location: string, file: EngramFile, entries: readonly EngramEntry[]): string {
  return contentHash([location, file, ...entries.map((entry) => `${entry.kind}\u0001${entry.text}`)].join('\u0000')).slice(0, 16)
}

const compactionSchema = z.object({
  drop: z
    .array(
      z.object({
        entry: z.number().int().describe('Number of an entry that is redundant and should be removed.'),
        keptInstead: z.number().int().describe('Number of the entry that stays and already says what the removed one says (or supersedes it).'),
        reason: z.enum(['duplicate', 'restatement', 'superseded']).describe('duplicate: same words; restatement: same meaning in other words; superseded: a newer, more specific entry replaces it.'),
      }),
    )
    .describe('Entries to remove. Leave out every entry you are not sure about: when in doubt, keep it.'),
})
type CompactionAnswer = z.infer<typeof compactionSchema>

const SYSTEM = [
  'You tidy an agent\'s long-term memory file. Each numbered line is one memory.',
  'List only entries that are redundant: exact duplicates, restatements of another entry (keep the clearest one),',
  'or entries superseded by a newer, more specific entry. Never remove an entry that holds information no other',
  'entry holds. When in doubt, keep the entry. You cannot change any text; you can only choose what to remove.',
].join(' ')

function describeEntries(entries: EngramEntry[]): string {
  return entries
    .map((entry, index) => {
      const meta = [entry.kind, entry.topic ? `topic ${entry.topic}` : '', entry.ts ?? ''].filter(Boolean).join(', ')
      return `${index + 1}. [${meta}] ${entry.text.replace(/\s+/g, ' ')}`
    })
    .join('\n')
}

/** Why an answer must be refused, or undefined when it is safe to apply. */
function refusal(answer: CompactionAnswer, entries: EngramEntry[]): string | undefined {
  const dropped = new Set<number>()
  for (const item of answer.drop) {
    const drop = entries[item.entry - 1]
    const keep = entries[item.keptInstead - 1]
    if (!drop || !keep) return `the model named entry ${!drop ? item.entry : item.keptInstead}, but there are only ${entries.length}`
    if (item.entry === item.keptInstead) return `the model removed entry ${item.entry} in favour of itself`
    if (drop.kind !== keep.kind) return `the model removed a ${drop.kind} entry in favour of a ${keep.kind} entry`
    dropped.add(item.entry)
  }
  for (const item of answer.drop) {
    if (dropped.has(item.keptInstead)) return `the model removed entry ${item.entry} in favour of entry ${item.keptInstead}, which it also removed`
  }
  if (dropped.size > entries.length / 2) return `the model would remove ${dropped.size} of ${entries.length} entries (more than half)`
  return undefined
}

function identity(entry: EngramEntry): string {
  return `${entry.kind}\u0000${dedupeKey(entry.text)}`
}

/** Compacts one file of one store. Never throws for a model failure: that is a `skipped` result. */
export async function compactFile(store: EngramStore, file: EngramFile, options: CompactionOptions): Promise<CompactionResult> {
  const location = store.location
  const threshold = options.threshold ?? COMPACTION_THRESHOLD
  const skipped = (reason: string): CompactionResult => ({ kind: 'skipped', file, location, reason })
  if (!options.llm.available) return skipped('no LLM configured')

  const before = await store.read(file)
  if (before.entries.length <= threshold) return skipped(`${before.entries.length} entries, not more than the threshold of ${threshold}`)
  if (options.settled?.has(fileState(location, file, before.entries))) return skipped('not changed since it was last compacted')

  const outcome = await options.locks.withLock(
    `compaction:${location}:${file}`,
    async (): Promise<CompactionResult> => {
      const snapshot = (await store.read(file)).entries
      let answer: CompactionAnswer
      try {
        answer = await options.llm.generateObject({
          schema: compactionSchema,
          name: 'compaction',
          system: SYSTEM,
          messages: [{ role: 'user', content: `Memory file ${file}.md, ${snapshot.length} entries:\n\n${describeEntries(snapshot)}` }],
          tier: 'planning',
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        })
      } catch (error) {
        return skipped(`the model call failed: ${describeError(error)}`)
      }
      const refused = refusal(answer, snapshot)
      if (refused) return skipped(`refused the model's answer: ${refused}`)
      if (answer.drop.length === 0) return { kind: 'unchanged', file, location, entries: snapshot.length, state: fileState(location, file, snapshot) }

      const removed = new Map<string, { entry: EngramEntry; keptInstead: EngramEntry; reason: string }>()
      for (const item of answer.drop) {
        const entry = snapshot[item.entry - 1] as EngramEntry
        const keptInstead = snapshot[item.keptInstead - 1] as EngramEntry
        removed.set(identity(entry), { entry, keptInstead, reason: item.reason })
      }
      // Applied to the file as it is inside the store's lock: entries encoded while the model was
      // thinking (by this or another process) survive. Only lines that were in the snapshot and
      // that the model named are removed (each exactly once, so a duplicate pair loses one copy).
      let verdict: CompactionResult | undefined
      let before = 0
      let after = 0
      let state = ''
      await store.rewriteAll(file, (current) => {
        const toRemove = new Map<string, number>()
        for (const item of answer.drop) {
          const key = identity(snapshot[item.entry - 1] as EngramEntry)
          toRemove.set(key, (toRemove.get(key) ?? 0) + 1)
        }
        const kept: EngramEntry[] = []
        for (const entry of current) {
          const key = identity(entry)
          const left = toRemove.get(key) ?? 0
          if (left > 0) {
            toRemove.set(key, left - 1)
            continue
          }
          kept.push(entry)
        }
        // Never leave a meaning with no line at all: each removed line's keeper must still be there.
        const keptKeys = new Set(kept.map(identity))
        for (const { keptInstead } of removed.values()) {
          if (!keptKeys.has(identity(keptInstead))) {
            verdict = skipped('the file changed while compacting: an entry kept instead of a removed one is gone')
            return null
          }
        }
        if (kept.length === current.length) {
          verdict = { kind: 'unchanged', file, location, entries: current.length, state: fileState(location, file, current) }
          return null
        }
        before = current.length
        after = kept.length
        state = fileState(location, file, kept)
        return kept
      })
      if (verdict) return verdict
      return { kind: 'compacted', file, location, before, after, removed: [...removed.values()], state }
    },
    { wait: false },
  )
  if (outcome.kind === 'busy') return skipped('another process is compacting this file')
  return outcome.value
}

/** Compacts rules.md and lessons.md of every given store that is over the threshold. */
export async function compactAll(stores: EngramStore[], options: CompactionOptions): Promise<CompactionResult[]> {
  const results: CompactionResult[] = []
  for (const store of stores) {
    for (const file of COMPACTED_FILES) {
      try {
        results.push(await compactFile(store, file, options))
      } catch (error) {
        // A read or write failure of one file (permissions, a full disk) must not stop the others.
        results.push({ kind: 'skipped', file, location: store.location, reason: describeError(error) })
      }
    }
  }
  return results
}
