import type { Command } from '../../command.ts'
import { cliUser, withDeclarativeMemory } from './open-declarative-memory.ts'

export const memoryContextCommand: Command = {
  path: ['memory', 'context'],
  examples: ['engram memory context', 'engram memory context --user ada'],
  async run(context) {
    return withDeclarativeMemory(context, async (_memory, mind) => {
      const built = await mind.scope(cliUser(context)).memory.buildContext()
      const summary = built.sections.map((s) => `  ${s.name.padEnd(20)} ${String(s.entries).padStart(4)} entries ${String(s.tokens).padStart(5)} tokens${s.truncated ? ' (truncated to budget)' : ''}`)
      const human = [built.text === '' ? '(no memory yet)' : built.text, '', 'sections:', ...summary].join('\n')
      return { data: built, human }
    })
  },
}
