/**
 * `recall_skill`: the model's retrieval of a procedure into working memory (Anton's striatum
 * firing a learned action sequence). A label with a typo resolves to the closest saved label, and
 * the `recommended` counter of the RESOLVED skill is credited — the classifier signal is captured
 * mechanically, whatever the spelling.
 */
import { z } from 'zod'
import { describeError } from '../core/errors.ts'
import { formatSkillProcedure } from '../memory/skills/skill-prompt.ts'
import { notFound, type SkillStore } from '../memory/skills/skill-store.ts'
import type { ToolDefinition } from './dispatcher.ts'

export const RECALL_SKILL_TOOL_NAME = 'recall_skill'

const inputSchema = z.object({
  label: z.string().min(1).describe('The skill label from the "Procedural memory" list, e.g. "csv_summary".'),
})

export type RecallSkillInput = z.infer<typeof inputSchema>

export interface RecallSkillData {
  requested: string
  label: string
  /** Set when the label was a typo resolved to the closest match. */
  resolvedFrom?: string
  recommended?: number
}

/** The tool over a skill store. Unknown labels with no close match throw `not_found` listing the labels. */
export function createRecallSkillTool(store: SkillStore): ToolDefinition<RecallSkillInput> {
  return {
    name: RECALL_SKILL_TOOL_NAME,
    description:
      'Load a saved skill (a step-by-step procedure from your procedural memory) by its label, and follow it for the rest of the task. Use it when a request matches a skill in the "Procedural memory" list.',
    inputSchema,
    async run({ label }) {
      const requested = label.trim()
      let skill = await store.load(requested)
      let resolvedFrom: string | undefined
      if (!skill) {
        const close = await store.closestMatch(requested)
        if (close) skill = await store.load(close.label)
        if (!skill) throw notFound(requested, await store.labels())
        resolvedFrom = requested
      }
      const data: RecallSkillData = { requested, label: skill.label, ...(resolvedFrom !== undefined ? { resolvedFrom } : {}) }
      let text = formatSkillProcedure(skill, requested)
      try {
        const stats = await store.incrementRecommended(skill.label, 1)
        data.recommended = stats.stage_1.recommended
      } catch (error) {
        // The procedure is what the model needs; a counter that could not be bumped is only noted.
        text += `\n\n(usage counter not updated: ${describeError(error)})`
      }
      return { text, data }
    },
  }
}
