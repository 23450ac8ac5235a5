/**
 * Time is injected, never read from `Date.now()` inside the memory systems, so a test can live
 * through a month of memory (decay, forgetting, daily jobs) in seconds.
 */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that only moves when told to. Exported to users at `engram/test`. */
export class ManualClock implements Clock {
  #ms: number
  constructor(start: Date | string | number = '2026-01-01T09:00:00Z') {
    this.#ms = new Date(start).getTime()
  }
  now(): Date {
    return new Date(this.#ms)
  }
  set(at: Date | string | number): void {
    this.#ms = new Date(at).getTime()
  }
  advance(ms: number): Date {
    this.#ms += ms
    return this.now()
  }
  advanceDays(days: number): Date {
    return this.advance(days * 86_400_000)
  }
}

/** `YYYY-MM-DD` of a date in UTC (the day files and `ts:` metadata use). */
export function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10)
}

/** Whole and fractional days between two instants. */
export function ageInDays(from: Date | string, to: Date): number {
  return (to.getTime() - new Date(from).getTime()) / 86_400_000
}
