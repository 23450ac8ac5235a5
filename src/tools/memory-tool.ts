/**
 * The `memory` tool, generated from what the context provider can do (anna's `memory.BuildTool`):
 * `status` always; `search` with a Searcher; `describe` and `expand` with an Explorer;
 * `profile_get` and `profile_update` when the session has a user (they read and replace that
 * user's one profile, decision 0017). The JSON schema, the description and the dispatch follow the
 * same list, so a provider with fewer capabilities yields a smaller tool and the model is never
 * offered an action that cannot work. Search, describe and expand reach only the conversations of
 * the session's user and the agent's own.
 *
 * Bad arguments and failures come back as readable `isError` results that say how to fix the
 * call; `execute` never throws.
 */
import { z } from 'zod'
import { ErrorCode } from '../core/errors.ts'
import {
  type ContextProvider,
  type ContextSession,
  type ExpandedNode,
  hasExplorer,
  hasSearcher,
  type MessageDescription,
  type SummaryDescription,
} from '../memory/context/provider.ts'
import { escapeRecalled, escapeRecalledLines } from '../memory/engrams/escape-recalled.ts'
import type { UserProfiles } from '../memory/engrams/user-profiles.ts'
import { passageBounds } from '../memory/context/passages.ts'
import { DEFAULT_LIMITS } from '../config/limits.ts'
import { queryField } from './input-limits.ts'
import { type EngramTool, invalidArgumentsResult, thrownResult, toolErrorResult, toolJsonSchema, type ToolResult } from './tool.ts'

export const MEMORY_ACTIONS = ['status', 'search', 'describe', 'expand', 'profile_get', 'profile_update'] as const
export type MemoryAction = (typeof MEMORY_ACTIONS)[number]

export interface MemoryToolInput {
  action: MemoryAction
  query?: string
  id?: string
  toMessages?: boolean
  limit?: number
  content?: string
}

const ACTION_HELP: Record<MemoryAction, string> = {
  status: 'status: how many messages and tokens this conversation holds, and how much is summarized.',
  search: 'search {query}: find past messages and summaries of your conversations by words; hits give ids to describe or expand.',
  describe: 'describe {id}: what a summary (sum_…) covers — time range, depth, how it was written, what it folds.',
  expand: 'expand {id, toMessages?}: open a summary into what it folds (toMessages=true goes down to the original messages), a message (msg:<n>) into its text, or a passage of a long message (msg:<n>#p<k>) into that part.',
  profile_get: 'profile_get: read the profile of the current user (what you know about them; every agent of this home shares it).',
  profile_update: 'profile_update {content}: replace the profile of the current user with content (keep what still holds; short "Key: value" lines).',
}

/** The actions a provider supports for a session, in a stable order. */
export function memoryActionsFor(provider: ContextProvider, options: { profiles?: boolean } = {}): MemoryAction[] {
  const actions: MemoryAction[] = ['status']
  if (hasSearcher(provider)) actions.push('search')
  if (hasExplorer(provider)) actions.push('describe', 'expand')
  if (options.profiles) actions.push('profile_get', 'profile_update')
  return actions
}

// One schema per set of actions and query limit (a session builds its tool every turn).
const schemasByActions = new Map<string, z.ZodType<MemoryToolInput>>()

function inputSchemaFor(actions: MemoryAction[], maxQueryChars: number): z.ZodType<MemoryToolInput> {
  const key = `${actions.join(',')}:${maxQueryChars}`
  let known = schemasByActions.get(key)
  if (!known) {
    known = buildInputSchema(actions, maxQueryChars)
    schemasByActions.set(key, known)
  }
  return known
}

function buildInputSchema(actions: MemoryAction[], maxQueryChars: number): z.ZodType<MemoryToolInput> {
  const has = (action: MemoryAction): boolean => actions.includes(action)
  const shape: Record<string, z.ZodType> = {
    action: z.enum(actions as [MemoryAction, ...MemoryAction[]]).describe('What to do; see the tool description.'),
  }
  if (has('search')) shape.query = queryField(maxQueryChars).optional().describe('search: the words to look for.')
  if (has('search') || has('expand')) shape.limit = z.number().int().min(1).max(200).optional().describe('search / expand: at most this many results (default 10 / 50).')
  if (has('describe')) {
    shape.id = z.string().trim().min(1).max(100).optional().describe('describe / expand: a summary id (sum_…), a message id (msg:<n>) or a passage id (msg:<n>#p<k>).')
    shape.toMessages = z.boolean().optional().describe('expand: true to go all the way down to the original messages.')
  }
  if (has('profile_update')) shape.content = z.string().max(20_000).optional().describe('profile_update: the complete new profile of the user.')
  return z.object(shape).strict() as unknown as z.ZodType<MemoryToolInput>
}

function requireField(input: MemoryToolInput, field: 'query' | 'id' | 'content', example: string): ToolResult | undefined {
  const value = input[field]
  if (typeof value === 'string' && (field === 'content' || value.trim() !== '')) return undefined
  return toolErrorResult({ code: ErrorCode.invalidArgument, message: `memory ${input.action} needs "${field}".`, fix: `call it as ${example}.` }, { inline: true })
}

/** Characters of one message an expand shows; a longer one is read in passages. */
const SHOWN_MESSAGE_CHARS = 8_000

/** A message as expand shows it: whole when short, its opening and how to read the rest when long, or one passage. */
/** A message as expand shows it: engram's header, then its text behind a gutter (decision 0028). */
function messageText(node: Extract<ExpandedNode, { kind: 'message' }>): string {
  const head = `msg:${node.id}${node.passage ? `#p${node.passage.index}` : ''} #${node.seq} [${node.at}] ${escapeRecalled(node.name ?? node.role)}:`
  const body = (text: string): string => [head, ...escapeRecalledLines(text, '  | ')].join('\n')
  if (node.passage) {
    const { index, count, from, to } = node.passage
    return `${body(node.content)}\n(passage ${index} of ${count} of msg:${node.id}, characters ${from}–${to}${index < count ? `; next: msg:${node.id}#p${index + 1}` : ''})`
  }
  if (node.content.length <= SHOWN_MESSAGE_CHARS) return body(node.content)
  const count = passageBounds(node.content).length
  return `${body(`${node.content.slice(0, SHOWN_MESSAGE_CHARS)}…`)}\n(msg:${node.id} is ${node.content.length} characters; this is its start. Read it in passages: expand msg:${node.id}#p1 … msg:${node.id}#p${count}.)`
}

function describeText(description: SummaryDescription | MessageDescription): string {
  if (description.kind === 'message') {
    const folded = description.foldedBy.length > 0 ? `folded into ${description.foldedBy.join(', ')}` : 'not summarized'
    const passages = description.passages > 1 ? ` (${description.chars} characters, indexed as ${description.passages} passages msg:${description.id}#p1 … #p${description.passages})` : ''
    return `message msg:${description.id} #${description.seq} by ${escapeRecalled(description.name ?? description.role)} at ${description.at}, ${description.tokenCount} tokens${passages}, ${folded}${description.inContext ? ', in your context now' : ''}.`
  }
  const range = description.seqRange ? `messages #${description.seqRange.from}–#${description.seqRange.to}` : 'no messages'
  return [
    `summary ${description.id} (${description.summaryKind}, depth ${description.depth}, written by ${description.method}${description.degraded ? ' — a fallback, not an LLM' : ''})`,
    `covers ${description.messageCount} ${range}, ${description.earliestAt} → ${description.latestAt}; ${description.tokenCount} tokens standing for ${description.sourceTokenCount}`,
    `folds ${description.children.summaryIds.length > 0 ? `summaries ${description.children.summaryIds.join(', ')}` : `${description.children.messageIds.length} messages`}`,
    description.foldedBy.length > 0 ? `folded into ${description.foldedBy.join(', ')}` : description.inContext ? 'in your context now' : 'top level',
  ].join('\n')
}

/**
 * Build the memory tool for one session over `provider`; `profiles` gives a session with a user its
 * profile actions; search queries are at most `maxQueryChars` (limits.queryChars).
 */
export function buildMemoryTool(provider: ContextProvider, session: ContextSession, profiles?: UserProfiles, maxQueryChars: number = DEFAULT_LIMITS.queryChars): EngramTool<MemoryToolInput> {
  const user = session.user
  const actions = memoryActionsFor(provider, { profiles: profiles !== undefined && user !== undefined })
  // Everything this tool reads is what the session's viewer may see (decision 0017).
  const reader = { agent: session.agent, ...(user !== undefined ? { user } : {}) }
  const inputSchema = inputSchemaFor(actions, maxQueryChars)
  const description = [
    'Your working memory of this and earlier conversations: nothing said is ever lost, older turns are folded into summaries you can open again.',
    'Actions:',
    ...actions.map((action) => `- ${ACTION_HELP[action]}`),
  ].join('\n')

  async function run(input: MemoryToolInput): Promise<ToolResult> {
    switch (input.action) {
      case 'status': {
        const stats = await provider.stats(session)
        return {
          text: `${stats.messages} messages (${stats.messageTokens} tokens) stored; context window: ${stats.items} items, ${stats.contextTokens} tokens, ${stats.summaries} summaries (max depth ${stats.maxDepth}${stats.degradedSummaries > 0 ? `, ${stats.degradedSummaries} written by a fallback` : ''}).`,
          data: stats,
        }
      }
      case 'search': {
        if (!hasSearcher(provider)) break
        const missing = requireField(input, 'query', '{"action": "search", "query": "words to find"}')
        if (missing) return missing
        const result = await provider.search(reader, input.query!, { limit: input.limit ?? 10 })
        const note = result.via === 'scan' ? ' (substring scan: full-text search is unavailable)' : ''
        if (result.hits.length === 0) return { text: `No messages or summaries match "${input.query}"${note}.`, data: result }
        const lines = result.hits.map((hit) => `${hit.id} [${hit.kind}, session ${escapeRecalled(hit.sessionId)}, ${hit.at}] ${escapeRecalled(hit.snippet)}`)
        return { text: `${result.hits.length} hits${note}:\n${lines.join('\n')}`, data: result }
      }
      case 'describe': {
        if (!hasExplorer(provider)) break
        const missing = requireField(input, 'id', '{"action": "describe", "id": "sum_…"}')
        if (missing) return missing
        const description = await provider.describe(reader, input.id!)
        return { text: describeText(description), data: description }
      }
      case 'expand': {
        if (!hasExplorer(provider)) break
        const missing = requireField(input, 'id', '{"action": "expand", "id": "sum_…"}')
        if (missing) return missing
        const expansion = await provider.expand(reader, input.id!, { toMessages: input.toMessages ?? false, limit: input.limit ?? 50 })
        // What was said is shown line by line behind a gutter, through the one escaping rule (decision
        // 0028): its own lines keep their shape (code stays code) and none starts a line of the result.
        const lines = expansion.nodes.map((node) =>
          node.kind === 'message'
            ? messageText(node)
            : [`${node.id} [summary, depth ${node.depth}, ${node.method}${node.degraded ? ', fallback' : ''}, ${node.earliestAt} → ${node.latestAt}]`, ...escapeRecalledLines(node.content, '  | ')].join('\n'),
        )
        if (expansion.truncated) lines.push('(more: raise limit to see the rest)')
        return { text: lines.join('\n'), data: expansion }
      }
      case 'profile_get': {
        if (!profiles || user === undefined) break
        const doc = await profiles.read(user)
        const notes = doc && doc.body.trim() !== '' ? doc.body.trim() : null
        return { text: notes ?? 'No profile of this user yet.', data: { notes, path: profiles.path(user) } }
      }
      case 'profile_update': {
        if (!profiles || user === undefined) break
        const missing = requireField(input, 'content', '{"action": "profile_update", "content": "the complete profile"}')
        if (missing) return missing
        const doc = await profiles.replace(user, input.content!, 'profile_update by the agent')
        return { text: `Saved the profile of ${user} (${input.content!.length} characters, ${doc.path}).`, data: { path: doc.path } }
      }
    }
    return toolErrorResult({ code: ErrorCode.unsupported, message: `memory ${input.action} is not available here.`, fix: `use one of ${actions.join(', ')}.` }, { inline: true })
  }

  return {
    name: 'memory',
    description,
    inputSchema,
    jsonSchema: toolJsonSchema(inputSchema),
    async execute(input) {
      const parsed = inputSchema.safeParse(input)
      if (!parsed.success) {
        return invalidArgumentsResult('memory', parsed.error.issues, `pass {"action": one of ${actions.map((a) => `"${a}"`).join(', ')}, …} with the fields that action needs.`)
      }
      try {
        return await run(parsed.data)
      } catch (error) {
        return thrownResult(`memory ${parsed.data.action} failed: `, error)
      }
    },
  }
}
