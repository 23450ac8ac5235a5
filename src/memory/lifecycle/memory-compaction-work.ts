/**
 * Memory-file compaction (Anton's synaptic homeostasis) as queued work: checked when a session
 * starts (as the seed does) and at maintenance, queued when a file is over its threshold, at most
 * once a day — the day is the job's key, so whichever process checks first queues it and the
 * others find it there.
 */
import { isoDay } from '../../core/clock.ts'
import { ownerOfUser } from '../../core/owner.ts'
import type { JobInput } from '../../storage/contracts.ts'
import { type CompactionResult, needsCompaction } from '../engrams/compaction.ts'
import type { DeclarativeMemory } from '../engrams/declarative-memory.ts'
import type { JobHandler } from './job-runner.ts'

export const MEMORY_COMPACTION_JOB = 'memory-compaction'

/** The compaction job for `at`'s day (or, forced, one of its own). */
export function memoryCompactionJob(reason: 'session-start' | 'maintenance' | 'forced', at: Date): Omit<JobInput, 'agent'> {
  const iso = at.toISOString()
  return {
    kind: MEMORY_COMPACTION_JOB,
    key: reason === 'forced' ? `${MEMORY_COMPACTION_JOB}:forced:${iso}` : `${MEMORY_COMPACTION_JOB}:${isoDay(at)}`,
    payload: { reason },
    runAfter: iso,
  }
}

/**
 * Whether a memory file of the agent's stores (and `user`'s own, at the start of their session) is
 * over the compaction threshold (reads the files; no model call).
 */
export function memoryCompactionDue(memory: DeclarativeMemory, user?: string): Promise<boolean> {
  const own = user === undefined ? undefined : memory.storesOf(ownerOfUser(user))
  return needsCompaction([memory.global, ...(memory.project ? [memory.project] : []), ...(own ? [own.global, ...(own.project ? [own.project] : [])] : [])])
}

/** A memory-compaction result as the maintenance report lists it. */
export interface CompactionSummary {
  file: string
  location: string
  kind: string
  reason?: string
}

export function summarizeCompaction(results: CompactionResult[]): CompactionSummary[] {
  return results.map((result) => ({
    file: result.file,
    location: result.location,
    kind: result.kind,
    ...('reason' in result && typeof result.reason === 'string' ? { reason: result.reason } : {}),
  }))
}

/** Compacts every memory file over the threshold; the results are the job's result. */
export function memoryCompactionHandler(memory: DeclarativeMemory): JobHandler {
  return async () => {
    const results = summarizeCompaction(await memory.compact())
    const compacted = results.some((result) => result.kind === 'compacted' || result.kind === 'unchanged')
    return compacted ? { status: 'done', result: { results } } : { status: 'skipped', reason: results[0]?.reason ?? 'nothing to compact', result: { results } }
  }
}
