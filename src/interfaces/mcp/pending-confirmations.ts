/**
 * Copilot confirmations over MCP. An MCP client has no turn to end and no answer object; what it
 * fetches before each new message is the `primed_context` prompt. So the memories waiting for the
 * connection's user's yes or no are listed there, after the recalled memory, for the model to put
 * to the user before it goes on (the seed: shown after the answer, before the next prompt).
 */
import { escapeRecalled } from '../../memory/engrams/escape-recalled.ts'
import type { PendingConfirmation } from '../../storage/contracts.ts'

/** The heading of the list; recalled text is escaped and cannot forge it. */
const PENDING_CONFIRMATIONS_HEADING = "## Waiting for the user's yes or no"

/** One pending confirmation as a numbered line: what would be saved, where, and why it waits. */
function confirmationLine(item: PendingConfirmation, index: number): string {
  const what = item.engram
    ? `[${item.engram.kind}, ${item.engram.scope}] ${escapeRecalled(item.engram.text)}`
    : `[file] write ${escapeRecalled(item.document?.path ?? '?')}`
  return `${index + 1}. ${what} (id ${item.id}; ${escapeRecalled(item.reason)})`
}

/**
 * `context` followed by the list of what waits for `user`'s answer, or `context` as it is when
 * nothing waits. The list says how the answer is given: in words to the agent, then by the person
 * with `engram confirm` (an MCP connection has no tool that decides for the user).
 */
export function withPendingConfirmations(context: string, pending: readonly PendingConfirmation[], user: string | undefined): string {
  if (pending.length === 0) return context
  const answer = `engram confirm${user !== undefined ? ` --user ${user}` : ''} --answer "y|n|1 3"`
  const block = [
    PENDING_CONFIRMATIONS_HEADING,
    `These memories were held for the user's confirmation (copilot mode). Before anything else, ask the user whether to save them: yes, no, or the numbers to keep. Their answer is recorded with \`${answer}\`.`,
    ...pending.map(confirmationLine),
  ].join('\n')
  return `${context}\n\n${block}`
}
