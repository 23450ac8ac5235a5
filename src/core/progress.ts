/**
 * How a long operation (reindex, import, export, migrate, erase, consolidate, eval) tells how far
 * it is, and how it is asked to stop (decision 0073). The operation calls `onProgress` as it goes,
 * as often as once per item: the listener throttles (the CLI redraws a bar or prints a line a
 * second). It checks `signal` between items, where stopping leaves a state the next run resumes,
 * never inside one; an aborted signal makes it throw the signal's reason.
 */
import { yieldToEventLoop } from './yield.ts'

export interface ProgressEvent {
  /** What the operation is doing now, in words: "reading", "indexing", "copying documents". */
  phase: string
  /** Items of this phase done so far. */
  done: number
  /** Items of this phase in all, when known beforehand. */
  total?: number
}

export interface ProgressOptions {
  onProgress?: (event: ProgressEvent) => void
  /** Aborted (Ctrl-C): the operation stops at its next safe point, keeping what it finished. */
  signal?: AbortSignal
}

/** A phase's counter: `await checkpoint()` before each item, `step()` after it. */
export interface PhaseCounter {
  step(count?: number): void
  /**
   * A safe point, before an item: throws the signal's reason when aborted. It lets the event loop
   * run every `YIELD_EVERY_MS` first — work whose awaits all settle at once (synchronous SQLite)
   * would otherwise never let Node deliver the Ctrl-C, nor draw the progress.
   */
  checkpoint(): Promise<void>
}

/** How long a phase may keep the event loop busy before a checkpoint lets it run. */
const YIELD_EVERY_MS = 50

/** Starts a phase: reports it at 0 (so a listener shows it at once), then after every step. */
export function startPhase(options: ProgressOptions | undefined, phase: string, total?: number): PhaseCounter {
  let done = 0
  let yieldedAt = performance.now()
  const report = (): void => options?.onProgress?.(total === undefined ? { phase, done } : { phase, done, total })
  report()
  return {
    step(count = 1) {
      done += count
      report()
    },
    async checkpoint() {
      if (options?.signal === undefined) return
      if (performance.now() - yieldedAt >= YIELD_EVERY_MS) {
        await yieldToEventLoop()
        yieldedAt = performance.now()
      }
      options.signal.throwIfAborted()
    },
  }
}
