/**
 * The `recall` tool: how the agent deliberately looks back at what happened in earlier sessions
 * (Anton's `recall`, with its `query` / `max_results` / `days_back` arguments). Results are ranked
 * and each names its source so the agent can open the original. Bad arguments come back as a
 * readable `isError` result with the fix, never as a thrown error.
 */
import { z } from 'zod'
import { describeError, EngramError, ErrorCode } from '../core/errors.ts'
import { escapeRecalled, escapeRecalledLines } from '../memory/engrams/escape-recalled.ts'
import { RECALL_DEFAULT_DAYS, RECALL_DEFAULT_LIMIT, RECALL_MAX_LIMIT, type Recall, type RecallResult } from '../memory/episodes/recall.ts'
import { DEFAULT_LIMITS } from '../config/limits.ts'
import { perQueryLimit, queryField } from './input-limits.ts'
import { type EngramTool, engramErrorResult, invalidArgumentsResult, toolErrorResult, toolJsonSchema } from './tool.ts'

function buildInputSchema(maxQueryChars: number) {
  return z.object({
    query: queryField(maxQueryChars).describe('What to look for: a few distinctive words (names, tools, errors, topics).'),
    max_results: z.number().int().min(1).max(RECALL_MAX_LIMIT).optional().describe(`Most results to return (default ${RECALL_DEFAULT_LIMIT}).`),
    days_back: z.number().positive().max(36_500).optional().describe(`Only look at the last N days (default ${RECALL_DEFAULT_DAYS}).`),
  })
}
export type RecallInput = z.infer<ReturnType<typeof buildInputSchema>>

// One schema per query limit (input-limits.ts).
const inputSchemaFor = perQueryLimit(buildInputSchema)

const DESCRIPTION = [
  'Search your episodic memory: summaries of past sessions and the log of what you did (messages, tool calls, errors, resolved issues).',
  'Use it when the user refers to earlier work ("last time", "what did we decide about X") or when you need what happened before.',
  'Results are ranked by relevance, newest first among equals, and each names its source file.',
].join(' ')

/**
 * Formats results for the model: one block per result with its source. What was remembered goes
 * through the one escaping rule (decision 0028): a title or log line on its numbered line, an
 * episode's lines each behind a `   | ` gutter, so none of it can start a line of its own.
 */
export function formatRecallResults(query: string, results: RecallResult[]): string {
  if (results.length === 0) return `No memories match "${escapeRecalled(query)}". Try other words or a larger days_back.`
  const blocks = results.map((result, index) => {
    const when = result.ts.slice(0, 16).replace('T', ' ')
    const head = `${index + 1}. [${when}] ${escapeRecalled(result.source === 'episode' ? result.title : result.text)}\n   source: ${escapeRecalled(result.ref)}`
    if (result.source !== 'episode') return head
    return [head, ...escapeRecalledLines(result.text, '   | ')].join('\n')
  })
  // Said once for the answer, not on each episode: which ones, and why.
  const degraded = [...new Set(results.flatMap((result) => (result.degraded !== undefined ? [result.degraded] : [])))]
  const notes = degraded.map((reason) => {
    const which = results.flatMap((result, index) => (result.degraded === reason ? [index + 1] : []))
    return `(Degraded — ${which.length === 1 ? 'result' : 'results'} ${which.join(', ')}: ${escapeRecalled(reason)}; may miss details.)`
  })
  return [`${results.length} memor${results.length === 1 ? 'y' : 'ies'} for "${escapeRecalled(query)}":`, blocks.join('\n\n'), ...notes].join('\n\n')
}

/** The recall tool over a `recall` function (`createEpisodicRecall`); queries of at most `maxQueryChars` (limits.queryChars). */
export function buildRecallTool(recall: Recall, maxQueryChars: number = DEFAULT_LIMITS.queryChars): EngramTool<RecallInput> {
  const recallInputSchema = inputSchemaFor(maxQueryChars)
  return {
    name: 'recall',
    description: DESCRIPTION,
    inputSchema: recallInputSchema,
    jsonSchema: toolJsonSchema(recallInputSchema),
    async execute(input) {
      const parsed = recallInputSchema.safeParse(input)
      if (!parsed.success) {
        return invalidArgumentsResult('recall', parsed.error.issues, `pass {"query": "words to find", "max_results": 1-${RECALL_MAX_LIMIT} (optional), "days_back": a positive number of days (optional)}.`)
      }
      const { query, max_results: limit, days_back: daysBack } = parsed.data
      try {
        const results = await recall(query, { ...(limit !== undefined ? { limit } : {}), ...(daysBack !== undefined ? { daysBack } : {}) })
        return { text: formatRecallResults(query, results), data: results }
      } catch (error) {
        if (EngramError.is(error)) return engramErrorResult(error)
        return toolErrorResult({ code: ErrorCode.internal, message: `recall failed: ${describeError(error)}`, fix: 'retry; if it fails again, run `engram doctor`.' })
      }
    },
  }
}
