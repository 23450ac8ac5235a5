/**
 * `search_memory`: the agent's deliberate search over everything it remembers — one index over
 * messages, summaries, episodes, rules, lessons, topics, knowledge, procedures, skills and user
 * profiles (DESIGN.md §5 "Retrieval"). The tool is a shell: ranking belongs to the retrieval
 * engine, injected as a `MemorySearch` function. Each hit names a source that `read_memory_file`
 * opens (or, for conversation messages, an id the `memory` tool expands).
 */
import { z } from 'zod'
import { describeError, EngramError, ErrorCode } from '../core/errors.ts'
import type { Viewer } from '../core/owner.ts'
import type { HomeLayout } from '../storage/home-layout.ts'
import { UNIT_KINDS, type UnitKind } from '../storage/contracts.ts'
import { DEFAULT_LIMITS } from '../config/limits.ts'
import { perQueryLimit, queryField } from './input-limits.ts'
import { escapeRecalled } from '../memory/engrams/escape-recalled.ts'
import { type FactValidity, factValidityOfUnit, siblingSource, validityNote } from '../memory/retrieval/fact-history.ts'
import type { GatheredHit } from '../memory/threads/thread-search.ts'
import { memoryPathOfSource } from '../memory/tree/memory-paths.ts'
import { type EngramTool, engramErrorResult, invalidArgumentsResult, toolErrorResult, toolJsonSchema, type ToolResult } from './tool.ts'

export const SEARCH_MEMORY_TOOL_NAME = 'search_memory'
export const SEARCH_DEFAULT_LIMIT = 10
export const SEARCH_MAX_LIMIT = 50
/** Characters of a hit's text shown inline; the full text is one read_memory_file away. */
const SNIPPET_CHARS = 320

/** One ranked result of the retrieval engine. */
export interface MemorySearchHit {
  /** Index unit id, e.g. `agents/default/knowledge/tea.md#0`, `msg:12`. */
  id: string
  kind: UnitKind
  text: string
  /** The unit's source: a home-relative file path, `project:.engram/memory/…`, or `conv:<id>`. */
  source: string
  /** Higher is better; only the order matters to the tool. */
  score: number
  createdAt?: string
  /** Ids of the messages or documents the unit stands for. */
  provenance?: string[]
  /**
   * A knowledge document's place in a history of facts (decision 0033): the slug that superseded
   * it or that it supersedes, in the same folder, and when it held.
   */
  history?: FactValidity
  /**
   * Listed because this thread (its subject's slug) holds the turn: a query that asks for order,
   * change or the whole story lists its thread's turns first, in time order (decision 0080).
   */
  thread?: string
  /** How many turns the recalled threads hold (more than listed when the limit cut them). */
  threadTurns?: number
}

/** A retrieval hit as search_memory and `engram search` show it. */
export function memorySearchHitOf(hit: GatheredHit): MemorySearchHit {
  const history = factValidityOfUnit(hit.unit)
  return {
    id: hit.unit.id,
    kind: hit.unit.kind,
    text: hit.unit.text,
    source: hit.unit.source,
    score: hit.score,
    createdAt: hit.unit.createdAt,
    provenance: hit.provenance,
    ...(history ? { history } : {}),
    ...(hit.thread !== undefined ? { thread: hit.thread, threadTurns: hit.threadTurns } : {}),
  }
}

export interface MemorySearchOptions {
  kinds?: UnitKind[]
  limit: number
  /** Conversation message ids to leave out (the messages of the turn being answered). */
  excludeMessageIds?: number[]
}

/** The retrieval engine as the tool sees it. Must not apply a threshold that silently empties results. */
export type MemorySearch = (query: string, options: MemorySearchOptions) => Promise<MemorySearchHit[]>

function buildInputSchema(maxQueryChars: number) {
  return z.object({
    query: queryField(maxQueryChars).describe('What to look for: a few distinctive words (names, topics, errors, tools).'),
    kinds: z
      .array(z.enum(UNIT_KINDS))
      .min(1)
      .optional()
      .describe(`Only these kinds of memory (default: all): ${UNIT_KINDS.join(', ')}.`),
    limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).optional().describe(`Most results to return (default ${SEARCH_DEFAULT_LIMIT}).`),
  })
}
export type SearchMemoryInput = z.infer<ReturnType<typeof buildInputSchema>>

// One schema per query limit (input-limits.ts).
const inputSchemaFor = perQueryLimit(buildInputSchema)

/** Where the agent can open a hit: a memory path (with its anchor) or the raw source. */
export function hitReference(hit: Pick<MemorySearchHit, 'source'>, layout: HomeLayout, viewer?: Viewer): string {
  const hash = hit.source.indexOf('#')
  const file = hash < 0 ? hit.source : hit.source.slice(0, hash)
  const anchor = hash < 0 ? '' : hit.source.slice(hash)
  const path = memoryPathOfSource(file, layout, viewer)
  if (path !== undefined) return `${path}${anchor}`
  return hit.source
}

/** ` (superseded by users/ada/knowledge/berlin.md on 2026-05-01; valid …)`, or '' for a hit without a history of facts. */
function historyNote(hit: MemorySearchHit, layout: HomeLayout, viewer?: Viewer): string {
  const note = validityNote(hit.history, (slug) => hitReference({ source: siblingSource(hit.source, slug) }, layout, viewer))
  return note === '' ? '' : ` ${escapeRecalled(note)}`
}

/** A hit's text on one line, through the one escaping rule of recalled text (decision 0028), cut. */
function snippet(text: string): string {
  const flat = escapeRecalled(text)
  return flat.length <= SNIPPET_CHARS ? flat : `${flat.slice(0, SNIPPET_CHARS - 1)}…`
}

/**
 * The key of a hit that is one entry of a file of many (a rule, lesson or profile fact: its unit id
 * is `<source>#<16 hex>`), as `#<key>`; '' for a whole document or a chunk. Shown with the source,
 * it is the id `forget_memory` takes: the file's path alone would name the whole file (a user's
 * whole profile).
 */
function entryAnchor(hit: Pick<MemorySearchHit, 'id' | 'source'>): string {
  if (hit.source.includes('#') || !hit.id.startsWith(`${hit.source}#`)) return ''
  const key = hit.id.slice(hit.source.length)
  return /^#[0-9a-f]{16}$/.test(key) ? key : ''
}

/** How the agent opens a hit's full text: with its tools. */
function toolOpener(hit: MemorySearchHit, ref: string): string {
  return ref.startsWith('conv:') ? `memory tool: expand ${hit.id}` : `read_memory_file ${ref}`
}

/**
 * Compact text for the model: one line of header and one of text per hit, each with its source and
 * how to open it — with the agent's tools, or as `opener` says it for another reader (the command
 * line names its own commands, decision 0074).
 */
export function formatSearchHits(query: string, hits: MemorySearchHit[], layout: HomeLayout, viewer?: Viewer, opener: (hit: MemorySearchHit, ref: string) => string = toolOpener): string {
  if (hits.length === 0) return `Nothing in your memory matches "${escapeRecalled(query)}". Try other or fewer words, or drop the kinds filter.`
  const members = hits.filter((hit) => hit.thread !== undefined)
  const threads = [...new Set(members.map((hit) => hit.thread))]
  // A gathering query's thread turns come first in time order, not by score: the header says so, and
  // when the limit cut the story short, how much of it there is.
  const total = members[0]?.threadTurns ?? members.length
  const cut = total > members.length ? ` (${members.length} of ${total}; a larger limit lists more)` : ''
  const order = threads.length === 0 ? 'best first' : `the turns of the thread${threads.length === 1 ? '' : 's'} ${threads.map((slug) => `"${escapeRecalled(slug ?? '')}"`).join(' and ')} first, in time order${cut}; then best first`
  const lines = [`${hits.length} result${hits.length === 1 ? '' : 's'} for "${escapeRecalled(query)}" (${order}):`]
  hits.forEach((hit, index) => {
    const ref = hitReference(hit, layout, viewer)
    const when = hit.createdAt ? ` ${hit.createdAt.slice(0, 10)}` : ''
    const thread = hit.thread === undefined ? '' : `, thread ${escapeRecalled(hit.thread)}`
    lines.push(`${index + 1}. [${hit.kind}${when}${thread}] ${snippet(hit.text)}${historyNote(hit, layout, viewer)}`)
    lines.push(`   source: ${escapeRecalled(ref)}${entryAnchor(hit)} (open with ${escapeRecalled(opener(hit, ref))})`)
  })
  return lines.join('\n')
}

/** The search_memory tool over a retrieval function. */
export function buildSearchMemoryTool(deps: {
  search: MemorySearch
  layout: HomeLayout
  viewer?: Viewer
  maxQueryChars?: number
  /**
   * The messages of the turn in progress (the user's message being answered): never a result. The
   * agent has them in front of it, and the message repeats the very words it searches for, so it
   * would rank first and fill a small `limit` with nothing new.
   */
  currentTurnMessages?: () => Promise<number[]>
}): EngramTool<SearchMemoryInput> {
  const searchMemoryInputSchema = inputSchemaFor(deps.maxQueryChars ?? DEFAULT_LIMITS.queryChars)
  return {
    name: SEARCH_MEMORY_TOOL_NAME,
    description: [
      'Search everything you remember — rules, lessons, topics, knowledge, procedures, skills, user profiles, episodes and past conversations — by relevance.',
      'Use it before answering when earlier knowledge could matter. Each result names its source; open the full text with read_memory_file.',
    ].join(' '),
    inputSchema: searchMemoryInputSchema,
    jsonSchema: toolJsonSchema(searchMemoryInputSchema),
    async execute(input): Promise<ToolResult> {
      const parsed = searchMemoryInputSchema.safeParse(input)
      if (!parsed.success) {
        return invalidArgumentsResult('search_memory', parsed.error.issues, `pass {"query": "words to find", "kinds": ["knowledge", "lesson", …] (optional), "limit": 1-${SEARCH_MAX_LIMIT} (optional)}.`)
      }
      const { query, kinds } = parsed.data
      const limit = parsed.data.limit ?? SEARCH_DEFAULT_LIMIT
      try {
        const current = (await deps.currentTurnMessages?.()) ?? []
        const hits = (await deps.search(query, { ...(kinds ? { kinds } : {}), limit, ...(current.length > 0 ? { excludeMessageIds: current } : {}) })).slice(0, limit)
        return { text: formatSearchHits(query, hits, deps.layout, deps.viewer), data: { hits: hits.map((hit) => ({ ...hit, ref: hitReference(hit, deps.layout, deps.viewer) })) } }
      } catch (error) {
        if (EngramError.is(error)) return engramErrorResult(error, { withCode: true })
        return toolErrorResult(
          { code: ErrorCode.internal, message: `search_memory failed: ${describeError(error)}`, fix: 'retry; if it fails again, run `engram reindex` and `engram doctor`.' },
          { data: { code: ErrorCode.internal } },
        )
      }
    },
  }
}
