/**
 * `forget_memory`: the agent retires a memory that is wrong or no longer wanted (decision
 * 0023). Forgetting moves it to the archive (`archive/forgotten/`) and out of search and
 * the prompt; a person brings it back with `engram restore`. Deleting for real is not the agent's
 * to do: only `engram forget --purge`. In a conversation with a user, only that user's memories
 * can be forgotten. Never throws: a failure is an `isError` result whose text ends with the fix.
 */
import { z } from 'zod'
import { isRuleKind, ruleWithPolarity } from '../core/engram.ts'
import { describeError, EngramError } from '../core/errors.ts'
import { escapeRecalled } from '../memory/engrams/escape-recalled.ts'
import type { ForgetOutcome } from '../memory/forgetting/forget-memory.ts'
import { type ForgettingContext, forgetTarget } from './forgetting.ts'
import { type EngramTool, invalidArgumentsResult, toolJsonSchema, type ToolResult } from './tool.ts'

export const FORGET_MEMORY_TOOL_NAME = 'forget_memory'

export const forgetMemoryInputSchema = z.object({
  target: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .describe(
      'What to forget: a rule, lesson or profile fact by its text as search_memory shows it (e.g. "Never: Use tabs") or by its id; or a file by its path: "knowledge/<name>.md", "procedures/<name>.md", "memory/topics/<name>.md", or the user\'s whole profile "users/<id>.md".',
    ),
  reason: z.string().trim().min(1).max(500).optional().describe('Why it is forgotten (kept with the archived copy), e.g. "the user corrected it".'),
})
export type ForgetMemoryInput = z.infer<typeof forgetMemoryInputSchema>

const DESCRIPTION = [
  'Forget one of your memories that is wrong, outdated or that the user asked you to forget: a rule, lesson or profile fact, or a knowledge, procedure or topic file.',
  'It moves to your archive (archive/forgotten/) and out of search_memory and your prompt; a person can restore it. To correct a memory, forget the wrong one and memorize the right one.',
  'In a conversation with a user you can forget only that user\'s memories.',
].join(' ')

function done(outcome: ForgetOutcome): ToolResult {
  const said = outcome.text === undefined ? undefined : escapeRecalled(outcome.text)
  const text = said === undefined ? undefined : outcome.entryKind !== undefined && isRuleKind(outcome.entryKind) ? ruleWithPolarity(outcome.entryKind, said) : said
  const what = text !== undefined ? `${outcome.path} ("${text}")` : outcome.path
  return {
    text: `Forgot ${what}: moved to ${outcome.archive}. It is out of search_memory and your memory from now on; a person can bring it back with \`engram restore\`.`,
    data: outcome,
  }
}

/** The forget_memory tool for one viewer (its context says whose memories it may forget). */
export function buildForgetMemoryTool(context: ForgettingContext): EngramTool<ForgetMemoryInput> {
  return {
    name: FORGET_MEMORY_TOOL_NAME,
    description: DESCRIPTION,
    inputSchema: forgetMemoryInputSchema,
    jsonSchema: toolJsonSchema(forgetMemoryInputSchema),
    async execute(input) {
      const parsed = forgetMemoryInputSchema.safeParse(input)
      if (!parsed.success) {
        return invalidArgumentsResult(FORGET_MEMORY_TOOL_NAME, parsed.error.issues, 'pass {"target": "the memory\'s text as search_memory shows it, or a path like knowledge/<name>.md", "reason": "why (optional)"}.')
      }
      try {
        const outcome = await forgetTarget(context, parsed.data.target, parsed.data.reason ? { reason: parsed.data.reason } : {})
        return done(outcome)
      } catch (error) {
        if (EngramError.is(error)) return { isError: true, text: error.message, data: { code: error.code } }
        return { isError: true, text: `${FORGET_MEMORY_TOOL_NAME} failed: ${describeError(error)}\nFix: retry; if it fails again, run \`engram doctor\`.`, data: { code: 'internal' } }
      }
    },
  }
}
