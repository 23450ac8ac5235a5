/**
 * The one write path for declarative memory. Every producer — the `memorize` tool, consolidation,
 * the error learner, the pattern monitor, identity extraction, `write_memory_file`, an import —
 * hands Engrams to an `Encoder`; it applies the encoding gate and routes each engram to the store
 * of its scope. (Implementation: `encode.ts`.)
 */
import type { Engram, EngramEntry } from '../../core/engram.ts'
import type { PendingConfirmation, PendingMemory } from '../../storage/contracts.ts'

export type { PendingConfirmation }

export interface EncodeReport {
  /** Written to a store. */
  saved: Array<{ engram: Engram; entry: EngramEntry }>
  /** Already known (deduplicated); nothing written. */
  duplicates: Engram[]
  /** Held for confirmation (copilot mode); shown after the answer, before the next prompt. */
  pending: PendingMemory[]
  /** Not saved because the memory mode is `off`. */
  suppressed: Engram[]
  /** Refused as invalid (empty text, project scope without a project, …), with the reason. */
  rejected: Array<{ engram: Engram; reason: string }>
}

/** Who is encoding: the user of the session the engrams come from (decision 0017). */
export interface EncodeContext {
  /** The session's user; a copilot-mode promotion to another owner waits for this user's yes. */
  user?: string
}

export interface Encoder {
  encode(engrams: Engram[], context?: EncodeContext): Promise<EncodeReport>
}
