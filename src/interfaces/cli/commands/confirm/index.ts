import type { Command } from '../../command.ts'
import { withDeclarativeMemory } from '../memory/open-declarative-memory.ts'

function ids(value: unknown): string[] | 'all' {
  const text = String(value).trim()
  if (text === 'all') return 'all'
  return text.split(/[\s,]+/).filter(Boolean)
}

export const confirmCommand: Command = {
  path: ['confirm'],
  summary: 'List memories waiting for confirmation (copilot mode), or accept / reject them',
  usage: 'engram confirm [--accept IDS|all] [--reject IDS|all]   (IDS: 1,3)',
  options: {
    accept: { type: 'string', description: 'save these pending memories (comma-separated ids, or all)', valueName: 'IDS' },
    reject: { type: 'string', description: 'drop these pending memories (comma-separated ids, or all)', valueName: 'IDS' },
  },
  async run(context) {
    return withDeclarativeMemory(context, async (memory) => {
      const { accept, reject } = context.options
      if (accept === undefined && reject === undefined) {
        const pending = await memory.encoder.pendingConfirmations()
        const lines = pending.map((item) => `${item.id}. [${item.engram.kind}, ${item.engram.scope}] ${item.engram.text}   (${item.reason})`)
        return { data: { pending }, human: pending.length === 0 ? 'nothing waits for confirmation' : ['waiting for confirmation:', ...lines, '', 'engram confirm --accept 1,3 | --reject all'].join('\n') }
      }
      const accepted = accept !== undefined ? await memory.encoder.acceptConfirmations(ids(accept)) : undefined
      const rejected = reject !== undefined ? await memory.encoder.rejectConfirmations(ids(reject)) : undefined
      const data = { accepted: accepted?.accepted ?? [], saved: accepted?.report.saved.length ?? 0, rejected: rejected?.rejected ?? [], problems: accepted?.report.rejected ?? [] }
      const human = [`accepted ${data.accepted.length} (${data.saved} saved, the rest already known)`, `rejected ${data.rejected.length}`, ...data.problems.map((p) => `not saved (${p.reason}): ${p.engram.text}`)].join('\n')
      return { data, human, exitCode: data.problems.length > 0 ? 4 : 0 }
    })
  },
}
