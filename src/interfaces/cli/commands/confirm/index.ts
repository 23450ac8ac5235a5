import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { parseConfirmationAnswer } from '../../../../memory/engrams/confirmation-answer.ts'
import type { Command } from '../../command.ts'
import { cliUser, withDeclarativeMemory } from '../memory/open-declarative-memory.ts'

function ids(value: unknown): string[] | 'all' {
  const text = String(value).trim()
  if (text === 'all') return 'all'
  return text.split(/[\s,]+/).filter(Boolean)
}

export const confirmCommand: Command = {
  path: ['confirm'],
  usage: '[--user ID] [--accept IDS|all] [--reject IDS|all] [--answer "y|n|1 3"]   (IDS: 1,3)',
  examples: ['engram confirm', 'engram confirm --accept 1,3 --reject 2', 'engram confirm --user ada --answer y'],
  options: {
    accept: { type: 'string', description: 'save these pending memories (comma-separated ids, or all)', valueName: 'IDS' },
    reject: { type: 'string', description: 'drop these pending memories (comma-separated ids, or all)', valueName: 'IDS' },
    answer: { type: 'string', description: 'answer the list as Anton asks it: y (all), n (none) or the numbers to keep, in list order', valueName: 'TEXT' },
  },
  async run(context) {
    // A user answers what their own sessions asked (decision 0017); without --user, the agent's own queue.
    const user = cliUser(context)
    return withDeclarativeMemory(context, async (memory, mind) => {
      let { accept, reject } = context.options as { accept?: unknown; reject?: unknown }
      if (typeof context.options.answer === 'string') {
        const pending = await memory.encoder.pendingConfirmations(user)
        const answer = parseConfirmationAnswer(context.options.answer, pending)
        if (!answer) {
          throw new EngramError({
            code: ErrorCode.invalidArgument,
            category: 'user',
            message: `"${context.options.answer}" is not an answer to the ${pending.length} pending memories.`,
            fix: 'answer y (save all), n (save none), or the numbers of the ones to save in list order, e.g. --answer "1 3"',
          })
        }
        accept = answer.accept.length > 0 ? answer.accept.join(',') : undefined
        reject = answer.reject.length > 0 ? answer.reject.join(',') : undefined
        if (accept === undefined && reject === undefined) return { data: { accepted: [], saved: 0, rejected: [], problems: [] }, human: 'nothing waits for confirmation' }
      }
      if (accept === undefined && reject === undefined) {
        const pending = await memory.encoder.pendingConfirmations(user)
        const lines = pending.map((item, index) =>
          item.engram
            ? `${index + 1}. (id ${item.id}) [${item.engram.kind}, ${item.engram.scope}, ${item.engram.owner ?? 'agent'}] ${item.engram.text}   (${item.reason})`
            : `${index + 1}. (id ${item.id}) [file, ${item.document?.owner}] write ${item.document?.path} (${item.document?.content.length} characters)   (${item.reason})`,
        )
        return {
          data: { pending },
          human: pending.length === 0 ? 'nothing waits for confirmation' : ['waiting for confirmation:', ...lines, '', 'save to memory? engram confirm --answer "y|n|1 3"  (or --accept IDS | --reject all)'].join('\n'),
        }
      }
      // Memories are encoded, promoted memory files written (mind.confirm does both).
      const outcome = await mind.confirm({ ...(accept !== undefined ? { accept: ids(accept) } : {}), ...(reject !== undefined ? { reject: ids(reject) } : {}), ...(user !== undefined ? { user } : {}) })
      const data = { accepted: outcome.accepted, saved: outcome.saved, rejected: outcome.rejected, problems: outcome.problems }
      const human = [`accepted ${data.accepted.length} (${data.saved} saved, the rest already known)`, `rejected ${data.rejected}`, ...data.problems.map((p) => `not saved (id ${p.id}): ${p.reason}`)].join('\n')
      return { data, human, exitCode: data.problems.length > 0 ? 4 : 0 }
    })
  },
}
