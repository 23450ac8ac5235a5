/**
 * Memory-file compaction (Anton's synaptic homeostasis) as queued work: checked when a session
 * starts (as the seed does, `_COMPACTION_THRESHOLD = 20`) and at maintenance, queued when a file is
 * over its threshold and changed since a compaction last left it (each compaction's job result
 * records the state it left each file in). The job's key is the day and a digest of what those
 * files hold: whichever process checks first queues it and the others find it there, so a file that
 * crosses the threshold (or grows again) after the day's compaction is compacted at the next
 * session start, not the next day, and a file as its compaction left it is not sent to the model
 * again. Without a model the key is the day alone: the skipped run is reported once a day.
 */
import { isoDay } from '../../core/clock.ts'
import { contentHash } from '../../core/hash.ts'
import { ownerOfUser } from '../../core/owner.ts'
import type { EngramStore, JobInput, Lifecycle } from '../../storage/contracts.ts'
import { COMPACTED_FILES, COMPACTION_THRESHOLD, type CompactionResult, fileState } from '../engrams/compaction.ts'
import type { DeclarativeMemory } from '../engrams/declarative-memory.ts'
import type { JobHandler } from './job-runner.ts'

export const MEMORY_COMPACTION_JOB = 'memory-compaction'

/**
 * The compaction job for `at`'s day and the files' `state` (memoryCompactionDue), or, forced, one
 * of its own.
 */
export function memoryCompactionJob(reason: 'session-start' | 'maintenance' | 'forced', at: Date, state?: string): Omit<JobInput, 'agent'> {
  const iso = at.toISOString()
  return {
    kind: MEMORY_COMPACTION_JOB,
    key: reason === 'forced' ? `${MEMORY_COMPACTION_JOB}:forced:${iso}` : `${MEMORY_COMPACTION_JOB}:${isoDay(at)}${state ? `:${state}` : ''}`,
    payload: { reason },
    runAfter: iso,
  }
}

/**
 * States (fileState) the compactions of the last weeks left files in, read from their finished job
 * rows: a file still in one has not changed since and is not compacted again.
 */
export async function settledCompactionStates(lifecycle: Lifecycle, agent: string): Promise<Set<string>> {
  const jobs = await lifecycle.jobs(agent, { kind: MEMORY_COMPACTION_JOB, status: ['done', 'skipped'] })
  const states = new Set<string>()
  for (const job of jobs) {
    const results = job.result?.results
    if (!Array.isArray(results)) continue
    for (const result of results as Array<{ state?: unknown }>) if (typeof result.state === 'string') states.add(result.state)
  }
  return states
}

/**
 * Whether a memory file of the agent's stores (and `user`'s own, at the start of their session) is
 * over the compaction threshold and changed since a compaction last left it (reads the files and,
 * only when one is over, the job rows through `settled`; no model call): undefined when none is,
 * else a digest of what those files hold. Asked at every `begin`, where no file is over in the
 * common case: reading the job rows first cost every turn a query (~0.15 ms).
 */
export async function memoryCompactionDue(memory: DeclarativeMemory, settled: () => Promise<ReadonlySet<string>>, user?: string): Promise<string | undefined> {
  const own = user === undefined ? undefined : memory.storesOf(ownerOfUser(user))
  const stores: EngramStore[] = [memory.global, ...(memory.project ? [memory.project] : []), ...(own ? [own.global, ...(own.project ? [own.project] : [])] : [])]
  const over: string[] = []
  for (const store of stores) {
    for (const file of COMPACTED_FILES) {
      const { entries } = await store.read(file)
      if (entries.length > COMPACTION_THRESHOLD) over.push(fileState(store.location, file, entries))
    }
  }
  if (over.length === 0) return undefined
  const left = await settled()
  const due = over.filter((state) => !left.has(state))
  return due.length === 0 ? undefined : contentHash(due.join(' ')).slice(0, 16)
}

/** A memory-compaction result as the maintenance report lists it. */
export interface CompactionSummary {
  file: string
  location: string
  kind: string
  reason?: string
  /** What the file holds as the compaction left it (fileState). */
  state?: string
}

export function summarizeCompaction(results: CompactionResult[]): CompactionSummary[] {
  return results.map((result) => ({
    file: result.file,
    location: result.location,
    kind: result.kind,
    ...('reason' in result && typeof result.reason === 'string' ? { reason: result.reason } : {}),
    ...('state' in result && typeof result.state === 'string' ? { state: result.state } : {}),
  }))
}

/** Compacts every memory file over the threshold and changed since it was last compacted; the results are the job's result. */
export function memoryCompactionHandler(memory: DeclarativeMemory, lifecycle: Lifecycle, agent: string): JobHandler {
  return async () => {
    const results = summarizeCompaction(await memory.compact(await settledCompactionStates(lifecycle, agent)))
    const compacted = results.some((result) => result.kind === 'compacted' || result.kind === 'unchanged')
    return compacted ? { status: 'done', result: { results } } : { status: 'skipped', reason: results[0]?.reason ?? 'nothing to compact', result: { results } }
  }
}
