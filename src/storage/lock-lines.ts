/**
 * The line callers of one process stand in for a lock, on every backend (file locks and
 * PostgreSQL advisory locks): one caller at a time asks the operating system or the server, the
 * others wait their turn here in arrival order. A wait times out only after `timeoutMs` in which the
 * lock did not change hands (`progressAt`), so a caller behind many short holders is never turned
 * away.
 */
import { setTimeout as sleep } from 'node:timers/promises'

/** The callers of this process waiting for one lock. */
export interface Line {
  waiting: Array<() => void>
  /** When the lock last changed hands (performance.now()): here, or a new holder seen in another process. */
  progressAt: number
  /** Who holds it, when this process does (for `busy` answers to callers in this process). */
  holder?: string
  /** The next caller here tries no earlier than this (performance.now()): another process's turn first (file locks). */
  yieldUntil?: number
}

/** The line of `key` in `lines`, made when nobody stands in it. */
export function lineOf(lines: Map<string, Line>, key: string): Line {
  let line = lines.get(key)
  if (!line) {
    line = { waiting: [], progressAt: performance.now() }
    lines.set(key, line)
  }
  return line
}

/** Joins `line` (of `key`): the turn comes when every caller before has left; `leave` gives it to the next (and drops an empty line). */
export function joinLine(lines: Map<string, Line>, key: string, line: Line): { turn: Promise<void>; leave(): void } {
  let giveTurn!: () => void
  const turn = new Promise<void>((resolve) => {
    giveTurn = resolve
  })
  line.waiting.push(giveTurn)
  if (line.waiting.length === 1) {
    line.progressAt = performance.now()
    giveTurn()
  }
  return {
    turn,
    leave() {
      const at = line.waiting.indexOf(giveTurn)
      if (at >= 0) line.waiting.splice(at, 1)
      if (at === 0) line.waiting[0]?.()
      if (line.waiting.length === 0) lines.delete(key)
    },
  }
}

/** Waits for this caller's turn in its process; false when it was not given within the timeout. */
export async function turnInLine(line: Line, turn: Promise<void>, timeoutMs: number): Promise<boolean> {
  let given = false
  const mine = turn.then(() => {
    given = true
  })
  while (!given) {
    const quiet = performance.now() - line.progressAt
    if (quiet >= timeoutMs) return false
    const controller = new AbortController()
    // Timers take at most 2^31 - 1 ms; a longer timeout is checked again after that.
    await Promise.race([mine, sleep(Math.min(timeoutMs - quiet, 2 ** 31 - 1), undefined, { signal: controller.signal }).catch(() => {})])
    controller.abort()
  }
  return true
}
