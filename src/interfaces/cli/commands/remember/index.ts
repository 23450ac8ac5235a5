import { CONFIDENCES, type Confidence, type Engram, ENGRAM_KINDS, ENGRAM_SCOPES, type EngramKind, type EngramScope } from '../../../../core/engram.ts'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import { choiceOf, KIND_FAMILIES } from '../../choices.ts'
import type { Command } from '../../command.ts'
import { OWNER_CHOICES, type OwnerChoice, resolveOwnerChoice } from '../../../../core/owner.ts'
import { cliUser, withDeclarativeMemory } from '../memory/open-declarative-memory.ts'

export const rememberCommand: Command = {
  path: ['remember'],
  usage: 'TEXT --kind always|never|when|lesson|profile [--scope global|project] [--topic T] [--confidence high|medium|low] [--user ID [--owner user|agent|shared]]',
  examples: ['engram remember "Use httpx instead of requests" --kind always', 'engram remember "The CI runner has 2 cores" --kind lesson --topic ci', 'engram remember "Prefers metric units" --kind profile --user ada'],
  home: 'creates',
  options: {
    kind: { type: 'string', description: 'always, never, when, lesson or profile', valueName: 'KIND' },
    scope: { type: 'string', description: 'global (default) or project', valueName: 'SCOPE' },
    topic: { type: 'string', description: 'lessons: topic slug (cross-filed into topics/)', valueName: 'TOPIC' },
    confidence: { type: 'string', description: 'high (default), medium or low; in copilot mode only high is saved at once', valueName: 'LEVEL' },
    owner: { type: 'string', description: 'whose memory: user (with --user; the default then), agent (the default without --user) or shared', valueName: 'OWNER' },
  },
  async run(context) {
    const text = context.args.join(' ').trim()
    if (text === '') {
      throw new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message: 'remember needs the text of the memory.', fix: 'engram remember "Use httpx instead of requests" --kind always' })
    }
    const engram: Engram = {
      text,
      kind: choiceOf<EngramKind>(context.options.kind, ENGRAM_KINDS, 'kind', { families: KIND_FAMILIES }),
      scope: choiceOf<EngramScope>(context.options.scope, ENGRAM_SCOPES, 'scope', { fallback: 'global' }),
      confidence: choiceOf<Confidence>(context.options.confidence, CONFIDENCES, 'confidence', { fallback: 'high' }),
      source: 'user',
      ...(typeof context.options.topic === 'string' ? { topic: context.options.topic } : {}),
    }
    const user = cliUser(context)
    const choice = context.options.owner === undefined ? undefined : choiceOf<OwnerChoice>(context.options.owner, OWNER_CHOICES, 'owner')
    return withDeclarativeMemory(context, async (memory, mind) => {
      engram.owner = resolveOwnerChoice(choice, { agent: mind.agent, ...(user !== undefined ? { user } : {}) })
      const report = await memory.encoder.encode([engram], user === undefined ? {} : { user })
      let human: string
      if (report.saved.length > 0) human = `saved [${engram.kind}, ${engram.scope}] ${text}`
      else if (report.duplicates.length > 0) human = `already remembered: ${text}`
      else if (report.pending.length > 0) human = `waiting for confirmation (id ${report.pending[0]?.id}, ${report.pending[0]?.reason}); run engram confirm`
      else if (report.suppressed.length > 0) human = 'not saved: memory mode is off (ENGRAM_MEMORY_MODE / --set memory.mode=autopilot)'
      else human = `not saved: ${report.rejected[0]?.reason ?? 'unknown reason'}`
      return { data: report, human, exitCode: report.rejected.length > 0 ? 3 : 0 }
    })
  },
}
