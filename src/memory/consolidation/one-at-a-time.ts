/**
 * One consolidation at a time per agent (DESIGN §5: "only one process at a time per agent"): the
 * daily, weekly and monthly runs read an owner's documents, plan, and write; two at once (in two
 * processes, or a scheduled run and `engram consolidate`) could each write over what the other
 * just wrote. They queue behind one named lock; a holder that keeps it for longer than a run with
 * a slow model may take makes the waiter fail with `lock_busy`, and the job runner tries again.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import type { Backend } from '../../storage/contracts.ts'

const HOLD_LIMIT_MS = 15 * 60_000

/** The lock every consolidation of `agent` holds. */
export const consolidationLockName = (agent: string): string => `consolidation:${agent}`

export async function oneConsolidationAtATime<T>(backend: Backend, agent: string, run: () => Promise<T>): Promise<T> {
  const outcome = await backend.locks.withLock(consolidationLockName(agent), run, { wait: true, timeoutMs: HOLD_LIMIT_MS })
  if (outcome.kind === 'done') return outcome.value
  // withLock with wait throws lock_busy rather than return busy; this is its contract's other arm.
  throw new EngramError({
    code: ErrorCode.lockBusy,
    category: 'system',
    message: `another consolidation of agent ${agent} holds the lock${outcome.holder ? ` (${outcome.holder})` : ''}`,
    fix: 'wait for it to finish; a scheduled run is tried again by the next maintain',
  })
}
