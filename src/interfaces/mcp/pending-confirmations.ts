/**
 * Copilot confirmations over MCP. An MCP client has no turn to end and no answer object; what it
 * reads is the `primed_context` prompt (fetched before a new message) and its tool results. So the
 * memories waiting for the connection's user's yes or no are listed in both: after the recalled
 * memory in `primed_context`, every time; after a tool's result when one is waiting that this
 * connection has not shown yet — for the model to put to the user (the seed: shown after the
 * answer, before the next prompt), without repeating the list after every call.
 */
import { escapeRecalled } from '../../memory/engrams/escape-recalled.ts'
import type { PendingConfirmation } from '../../storage/contracts.ts'
import type { EngramTool } from '../../tools/tool.ts'

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

/**
 * `tools` whose results end with the list of what waits for `user`'s answer when something waits
 * that these tools have not shown yet (one set per connection). A failing read of the queue leaves
 * the result as it is: the list comes again with the next call or `primed_context`.
 */
export function withConfirmationsInResults(tools: readonly EngramTool[], pending: () => Promise<PendingConfirmation[]>, user: string | undefined): EngramTool[] {
  const shown = new Set<string>()
  return tools.map((tool) => ({
    ...tool,
    async execute(input: unknown) {
      const result = await tool.execute(input)
      let waiting: PendingConfirmation[]
      try {
        waiting = await pending()
      } catch {
        return result
      }
      if (waiting.every((item) => shown.has(item.id))) return result
      for (const item of waiting) shown.add(item.id)
      return { ...result, text: withPendingConfirmations(result.text, waiting, user) }
    },
  }))
}
