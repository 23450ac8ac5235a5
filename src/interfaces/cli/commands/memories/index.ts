/**
 * `engram memories add|search|list|get|update|delete|history`: the plain memory API
 * (`mind.memories`, decision 0065) on the command line, each for `--user ID` (their memories,
 * plus the agent's and shared ones they see) or, without it, the agent's own view. `--json` prints
 * what the API returns.
 */
import { type Confidence, CONFIDENCES, ENGRAM_KINDS, type EngramKind, isRuleKind, ruleWithPolarity } from '../../../../core/engram.ts'
import { EngramError, ErrorCode } from '../../../../core/errors.ts'
import type { MemoryChange, MemoryRecord } from '../../../../tools/memories.ts'
import { choiceOf, KIND_FAMILIES } from '../../choices.ts'
import type { Command, CommandContext, OptionSpec } from '../../command.ts'
import { withMind } from '../../open-mind.ts'
import { historyText } from '../history/index.ts'
import { cliUser } from '../memory/open-declarative-memory.ts'

const KIND_OPTION: OptionSpec = { type: 'string', description: `${ENGRAM_KINDS.join(', ')} (add: default lesson)`, valueName: 'KIND' }

function invalid(message: string, fix: string): EngramError {
  return new EngramError({ code: ErrorCode.invalidArgument, category: 'user', message, fix })
}

function kindOption(context: CommandContext): EngramKind | undefined {
  return context.options.kind === undefined ? undefined : choiceOf<EngramKind>(context.options.kind, ENGRAM_KINDS, 'kind', { families: KIND_FAMILIES })
}

function numberOption(context: CommandContext, name: string, min: number): number | undefined {
  const value = context.options[name]
  if (value === undefined) return undefined
  const number = Number(value)
  if (!Number.isInteger(number) || number < min) throw invalid(`--${name} must be a whole number of at least ${min}, not ${JSON.stringify(value)}.`, `pass --${name} ${Math.max(min, 10)}`)
  return number
}

/** The one id argument of get, update, delete and history. */
function idArgument(context: CommandContext, command: string): string {
  const id = context.args[0]?.trim() ?? ''
  if (id === '') throw invalid(`engram memories ${command} needs a memory's id.`, 'take it from `engram memories list` or `engram memories search`')
  return id
}

const scopeOf = (context: CommandContext): { user?: string } => {
  const user = cliUser(context)
  return user === undefined ? {} : { user }
}

/** One memory on one line: its id, kind, owner and text (a rule with its polarity). */
function line(memory: Pick<MemoryRecord, 'kind' | 'owner' | 'text'> & { id?: string | undefined }): string {
  const text = isRuleKind(memory.kind) ? ruleWithPolarity(memory.kind, memory.text) : memory.text
  return `${memory.id ?? '(no id)'}  [${memory.kind}, ${memory.owner}] ${text}`
}

function changeLine(change: MemoryChange): string {
  const why = change.reason ? ` (${change.reason})` : ''
  const confirm = change.confirmationId ? `; answer with engram confirm (id ${change.confirmationId})` : ''
  return `${change.event}${why}: ${line(change)}${confirm}`
}

export const memoriesAddCommand: Command = {
  path: ['memories', 'add'],
  usage: 'TEXT [--kind KIND] [--confidence LEVEL] [--user ID]',
  examples: ['engram memories add "Ada takes her tea without sugar" --user ada', 'engram memories add "Greet people by name" --kind always'],
  home: 'creates',
  options: { kind: KIND_OPTION, confidence: { type: 'string', description: 'high (default), medium or low; in copilot mode anything less waits for the user\'s yes (engram confirm)', valueName: 'LEVEL' } },
  async run(context) {
    const text = context.args.join(' ').trim()
    if (text === '') throw invalid('engram memories add needs the text of the memory.', 'engram memories add "Ada takes her tea without sugar" --user ada')
    const kind = kindOption(context)
    const confidence = context.options.confidence === undefined ? undefined : choiceOf<Confidence>(context.options.confidence, CONFIDENCES, 'confidence')
    return withMind(context, async (mind) => {
      const added = await mind.memories.add({ text, ...(kind ? { kind } : {}), ...(confidence !== undefined ? { confidence: confidence as Confidence } : {}), ...scopeOf(context) })
      return { data: added, human: added.results.map(changeLine).join('\n') }
    })
  },
}

export const memoriesSearchCommand: Command = {
  path: ['memories', 'search'],
  usage: 'QUERY [--limit N] [--kind KIND] [--user ID]',
  examples: ['engram memories search tea --user ada', 'engram memories search "deploy" --kind lesson --limit 5'],
  options: { limit: { type: 'string', description: 'most results (default 10)', valueName: 'N' }, kind: KIND_OPTION },
  async run(context) {
    const query = context.args.join(' ').trim()
    if (query === '') throw invalid('engram memories search needs what to look for.', 'engram memories search "tea" --user ada')
    const limit = numberOption(context, 'limit', 1)
    const kind = kindOption(context)
    return withMind(context, async (mind) => {
      const memories = await mind.memories.search(query, { ...scopeOf(context), ...(limit ? { limit } : {}), ...(kind ? { kinds: [kind] } : {}) })
      return { data: { memories }, human: memories.length === 0 ? `No memory matches "${query}".` : memories.map((m) => `${m.score.toFixed(3)}  ${line(m)}`).join('\n') }
    })
  },
}

export const memoriesListCommand: Command = {
  path: ['memories', 'list'],
  usage: '[--kind KIND] [--limit N] [--offset N] [--user ID]',
  examples: ['engram memories list --user ada', 'engram memories list --kind lesson --limit 20 --offset 20'],
  options: {
    kind: KIND_OPTION,
    limit: { type: 'string', description: 'a page of at most N (default 100)', valueName: 'N' },
    offset: { type: 'string', description: 'where the page starts (the next offset the page before printed)', valueName: 'N' },
  },
  async run(context) {
    const kind = kindOption(context)
    const limit = numberOption(context, 'limit', 1)
    const offset = numberOption(context, 'offset', 0)
    return withMind(context, async (mind) => {
      const page = await mind.memories.getAll({ ...scopeOf(context), ...(kind ? { kinds: [kind] } : {}), ...(limit ? { limit } : {}), ...(offset ? { offset } : {}) })
      const more = page.nextOffset === undefined ? '' : `\n(${page.total} in all; next page: --offset ${page.nextOffset})`
      return { data: page, human: page.memories.length === 0 ? 'No memories.' : `${page.memories.map(line).join('\n')}${more}` }
    })
  },
}

export const memoriesGetCommand: Command = {
  path: ['memories', 'get'],
  usage: 'ID [--user ID]',
  examples: ['engram memories get mem_bWVtb3J5L2xlc3NvbnMubWQjMDEyMzQ1Njc4OWFiY2RlZg --user ada'],
  async run(context) {
    const id = idArgument(context, 'get')
    return withMind(context, async (mind) => {
      const memory = await mind.memories.get(id, scopeOf(context))
      return { data: memory, human: `${line(memory)}\npath: ${memory.path}${memory.createdAt ? `\nencoded: ${memory.createdAt}` : ''}` }
    })
  },
}

export const memoriesUpdateCommand: Command = {
  path: ['memories', 'update'],
  usage: 'ID TEXT [--user ID]',
  examples: ['engram memories update mem_bWVtb3J5L2xlc3NvbnMubWQjMDEyMzQ1Njc4OWFiY2RlZg "Ada takes her tea with honey" --user ada'],
  async run(context) {
    const id = idArgument(context, 'update')
    const text = context.args.slice(1).join(' ').trim()
    if (text === '') throw invalid('engram memories update needs the new text after the id.', 'engram memories update ID "the memory as it should read now"')
    return withMind(context, async (mind) => {
      const change = await mind.memories.update(id, text, scopeOf(context))
      return { data: change, human: changeLine(change) }
    })
  },
}

export const memoriesDeleteCommand: Command = {
  path: ['memories', 'delete'],
  usage: 'ID [--purge] [--reason TEXT] [--user ID]',
  examples: ['engram memories delete mem_bWVtb3J5L2xlc3NvbnMubWQjMDEyMzQ1Njc4OWFiY2RlZg --user ada --reason "she said so"'],
  options: {
    purge: { type: 'boolean', description: 'delete for real, archived copies included; default: forgotten (archived, restorable with engram restore)' },
    reason: { type: 'string', description: 'why (kept with the archived copy)', valueName: 'TEXT' },
  },
  async run(context) {
    const id = idArgument(context, 'delete')
    const reason = typeof context.options.reason === 'string' && context.options.reason.trim() !== '' ? context.options.reason.trim() : undefined
    return withMind(context, async (mind) => {
      const outcome = await mind.memories.delete(id, { ...scopeOf(context), ...(context.options.purge === true ? { purge: true } : {}), ...(reason ? { reason } : {}) })
      const human = outcome.action === 'purged' ? `Deleted ${outcome.path} for real.` : `Forgot ${outcome.path}: moved to ${outcome.archive}. Bring it back with: engram restore ${JSON.stringify(outcome.path)}`
      return { data: outcome, human }
    })
  },
}

export const memoriesHistoryCommand: Command = {
  path: ['memories', 'history'],
  usage: 'ID [--user ID]',
  examples: ['engram memories history mem_bWVtb3J5L2xlc3NvbnMubWQjMDEyMzQ1Njc4OWFiY2RlZg --user ada'],
  async run(context) {
    const id = idArgument(context, 'history')
    return withMind(context, async (mind) => {
      const history = await mind.memories.history(id, scopeOf(context))
      return { data: history, human: historyText(history) }
    })
  },
}
