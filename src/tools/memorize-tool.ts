/**
 * The `memorize` tool: how the agent deliberately saves a memory mid-conversation (Anton's
 * memorize). Explicit calls are trusted — confidence high, source user — and go through the
 * same `encode()` and gate as every other memory. Bad arguments come back as a readable
 * `isError` result that says how to fix the call, never as a thrown error.
 */
import { z } from 'zod'
import { type Confidence, type Engram, ENGRAM_KINDS, ENGRAM_SCOPES, isRuleKind, ruleWithPolarity } from '../core/engram.ts'
import { OWNER_CHOICES, resolveOwnerChoice, type Viewer } from '../core/owner.ts'
import type { Encoder, EncodeReport } from '../memory/engrams/encoder.ts'
import { escapeRecalled } from '../memory/engrams/escape-recalled.ts'
import { type EngramTool, invalidArgumentsResult, thrownResult, toolJsonSchema } from './tool.ts'

export const memorizeInputSchema = z.object({
  entries: z
    .array(
      z.object({
        text: z.string().trim().min(1).max(2000).describe('The memory, one line of plain text.'),
        kind: z
          .enum(ENGRAM_KINDS)
          .describe('always / never: something to always or never do; when: a conditional rule ("if X then Y"); lesson: a fact learned; profile: a fact about the user ("Key: value").'),
        scope: z.enum(ENGRAM_SCOPES).optional().describe('global (default): useful in any project; project: only in this project.'),
        topic: z.string().trim().min(1).max(80).optional().describe('Lessons: a short topic slug, e.g. "api-coingecko"; the lesson is also filed under that topic.'),
        owner: z
          .enum(OWNER_CHOICES)
          .optional()
          .describe(
            'Whose memory it is. Default: the user you are talking to (only their sessions see it). "agent": yours, seen with every user; "shared": every agent of this home. Never promote what the user told you in confidence.',
          ),
        tool: z
          .string()
          .trim()
          .min(1)
          .max(80)
          .optional()
          .describe('when rules and lessons about using one tool: its name. They are then shown in that tool\'s description, where you read them as you call it.'),
      }),
    )
    .min(1)
    .max(50)
    .describe('The memories to save.'),
})
export type MemorizeInput = z.infer<typeof memorizeInputSchema>

const DESCRIPTION = [
  'Save something to your long-term memory so it is there in future sessions.',
  'Use it for durable things: rules the user gives you (always/never/when), facts you learned (lesson), and facts about the user (profile).',
  'Do not save passing details of the current task.',
].join(' ')

/**
 * A rule with its polarity ("Never: …"), anything else as written: this text is read back later
 * (recall, episodes). Escaped like all remembered text the model reads (decision 0028).
 */
function shown(engram: Engram): string {
  const text = escapeRecalled(engram.text)
  return isRuleKind(engram.kind) ? ruleWithPolarity(engram.kind, text) : text
}

function summarize(report: EncodeReport): string {
  const lines: string[] = []
  for (const { engram } of report.saved) lines.push(`saved [${engram.kind}, ${engram.scope}] ${shown(engram)}`)
  for (const engram of report.duplicates) lines.push(`already remembered: ${shown(engram)}`)
  for (const item of report.pending) lines.push(`waiting for the user's confirmation (${item.reason}): ${shown(item.engram)}`)
  for (const engram of report.suppressed) lines.push(`not saved, memory mode is off: ${shown(engram)}`)
  for (const { engram, reason } of report.rejected) lines.push(`not saved (${reason}): ${shown(engram)}`)
  return lines.join('\n')
}

/**
 * The memorize tool over an encoder; a successful call's `data` is the encode report. With a
 * viewer, each entry's `owner` is resolved against it (decision 0017); without one, everything is
 * the agent's.
 */
export function buildMemorizeTool(encoder: Encoder, viewer?: Viewer): EngramTool<MemorizeInput> {
  return {
    name: 'memorize',
    description: DESCRIPTION,
    inputSchema: memorizeInputSchema,
    jsonSchema: toolJsonSchema(memorizeInputSchema),
    async execute(input) {
      const parsed = memorizeInputSchema.safeParse(input)
      if (!parsed.success) {
        return invalidArgumentsResult(
          'memorize',
          parsed.error.issues,
          `pass {"entries": [{"text": "...", "kind": "${ENGRAM_KINDS.join('|')}", "scope": "global|project", "topic": "optional-slug", "tool": "optional tool name", "owner": "${OWNER_CHOICES.join('|')} (optional)"}]} with non-empty text.`,
        )
      }
      try {
        const engrams: Engram[] = parsed.data.entries.map((entry) => ({
          text: entry.text,
          kind: entry.kind,
          scope: entry.scope ?? 'global',
          confidence: 'high' satisfies Confidence,
          source: 'user',
          ...(entry.topic ? { topic: entry.topic } : {}),
          ...(entry.tool ? { tool: entry.tool } : {}),
          owner: viewer ? resolveOwnerChoice(entry.owner, viewer) : entry.owner === 'shared' ? 'shared' : 'agent',
        }))
        const report = await encoder.encode(engrams, viewer?.user === undefined ? {} : { user: viewer.user })
        const failed = report.rejected.length > 0 && report.saved.length + report.duplicates.length + report.pending.length === 0
        return { ...(failed ? { isError: true } : {}), text: summarize(report), data: report }
      } catch (error) {
        return thrownResult('memorize failed: ', error)
      }
    },
  }
}
