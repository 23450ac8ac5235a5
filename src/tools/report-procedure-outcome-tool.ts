/**
 * `report_procedure_outcome`: the agent says whether following a procedure worked. Each report
 * reinforces or weakens the procedure (AnimaWorks' success/failure tracking):
 * confidence = successes / max(1, successes + failures).
 */
import { z } from 'zod'
import { REPORT_OUTCOME_TOOL } from '../memory/procedures/outcome-tracking.ts'
import type { ProcedureStore } from '../memory/procedures/procedure-store.ts'
import type { ToolDefinition } from './dispatcher.ts'

/** Named where outcome tracking reads it: a procedure the agent reported is not judged again at the boundary. */
export const REPORT_PROCEDURE_OUTCOME_TOOL_NAME = REPORT_OUTCOME_TOOL

const inputSchema = z.object({
  procedure: z.string().min(1).describe('The procedure name (its file name without .md), as it was shown to you.'),
  success: z.boolean().describe('true when following the procedure achieved its goal, false when it did not.'),
  note: z.string().max(500).optional().describe('What went wrong or right, in one sentence (optional).'),
})

export type ReportProcedureOutcomeInput = z.infer<typeof inputSchema>

/** The tool over a procedure store. An unknown procedure throws `not_found` with the closest name. */
export function createReportProcedureOutcomeTool(procedures: ProcedureStore): ToolDefinition<ReportProcedureOutcomeInput> {
  return {
    name: REPORT_PROCEDURE_OUTCOME_TOOL_NAME,
    description:
      'Report whether following a procedure from your memory succeeded or failed. Call it once, after finishing a task where you followed a procedure, so that reliable procedures gain confidence and broken ones lose it.',
    inputSchema,
    async run({ procedure, success, note }) {
      const outcome = await procedures.reportOutcome(procedure.trim(), success, note)
      const total = outcome.successCount + outcome.failureCount
      return {
        text: `Recorded a ${success ? 'success' : 'failure'} for "${outcome.slug}": ${outcome.successCount} of ${total} reported runs succeeded (confidence ${outcome.confidence.toFixed(2)}).`,
        data: outcome,
      }
    },
  }
}
