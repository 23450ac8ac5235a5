/**
 * Events only the host sees. The agent loop is the host's: engram cannot see that it repaired the
 * conversation history (a tool call left without a result, a malformed result it had to seal) or
 * that it stopped at its round cap. The seed emitted these from its own chat loop; here the host
 * reports them through `session.report()`, and two of the monitor's nine detectors
 * (`repair_churn`, `cap_exhausted`) read them.
 */
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { SEVERITY } from './pattern-events.ts'
import type { PatternMonitor } from './pattern-monitor.ts'

export const HOST_EVENT_KINDS = ['history_repair', 'cap_exhausted'] as const

/** What a host reports. `round` is the tool-call round of the turn it happened in (default 0). */
export type HostEvent =
  /** The host repaired the history before its next model call; `reason` says what was broken. */
  | { kind: 'history_repair'; reason?: string; round?: number }
  /** The host stopped the turn at its cap of tool rounds (or steps) with the work unfinished. */
  | { kind: 'cap_exhausted'; round?: number }

/**
 * Records a host event in the monitor. Throws `invalid_argument` for a kind that is not a host
 * event (tool calls are seen by the dispatcher; reporting them too would count them twice).
 */
export function observeHostEvent(monitor: PatternMonitor, event: HostEvent): void {
  const kind = (event as { kind?: unknown } | undefined)?.kind
  const round = event?.round ?? 0
  if (kind === 'history_repair') {
    const reason = (event as { reason?: unknown }).reason
    monitor.observe('history_repair', typeof reason === 'string' && reason !== '' ? { reason } : {}, { severity: SEVERITY.warning, round })
    return
  }
  if (kind === 'cap_exhausted') {
    monitor.observe('cap_exhausted', {}, { severity: SEVERITY.cap, round })
    return
  }
  throw new EngramError({
    code: ErrorCode.invalidArgument,
    category: 'user',
    message: `session.report() got ${JSON.stringify(kind)}, which is not an event the host reports.`,
    fix: `report one of: ${HOST_EVENT_KINDS.join(', ')} (tool calls are observed by session.execute and turn.tools already)`,
    details: { kind },
  })
}
