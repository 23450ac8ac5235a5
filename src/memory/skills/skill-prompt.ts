/**
 * How skills appear to the model: a compact list in every prompt (labels and cues only, ~50 tokens
 * per skill), and the full procedure only when `recall_skill` pulls it into working memory.
 */
import { countTokens, truncateToTokens } from '../../core/tokens.ts'
import { escapeRecalled } from '../engrams/escape-recalled.ts'
import type { Skill, SkillSummary } from './skill.ts'

/** Tokens one skill's line may take in the prompt (the seed's budget: ~50 per skill). */
export const SKILL_LINE_TOKENS = 50

/**
 * The `## Procedural memory` section: one line `- <label> — <when_to_use>` per skill, each within
 * ~50 tokens, plus how to retrieve one. Empty string when there are no skills (no empty section).
 */
export function compactSkillList(summaries: readonly SkillSummary[], options: { lineTokens?: number } = {}): string {
  if (summaries.length === 0) return ''
  const budget = options.lineTokens ?? SKILL_LINE_TOKENS
  const lines = summaries.map((summary) => {
    const prefix = `- ${escapeRecalled(summary.label)} — `
    // Remembered text, escaped like every other (a cue cannot open a tag, a heading or a line of its own).
    const cue = escapeRecalled(summary.when_to_use)
    const room = Math.max(8, budget - countTokens(prefix))
    return `${prefix}${countTokens(cue) > room ? `${truncateToTokens(cue, room - 1)}…` : cue}`
  })
  return [
    '## Procedural memory',
    'Skills you have saved. When a request matches one, call `recall_skill` with its label to load the procedure.',
    ...lines,
  ].join('\n')
}

/**
 * The tool result `recall_skill` returns: the skill's name, cue and stage-1 procedure, plus the
 * stage-2 recipes and stage-3 file list when present. `requested` differs from the label when a
 * typo was resolved; the model is told which skill it got.
 */
export function formatSkillProcedure(skill: Skill, requested?: string): string {
  const parts: string[] = []
  if (requested !== undefined && requested !== skill.label) {
    parts.push(`Note: no skill is labelled "${requested}"; this is the closest match, "${skill.label}".`)
  }
  // Remembered text never sits in a heading of ours: the name and cue are lines of their own, escaped.
  // The procedure is the skill's file, loaded because the model asked for it (as read_memory_file reads one).
  parts.push(`# Skill ${skill.label}`, `Name: ${escapeRecalled(skill.meta.name)}`, `When to use: ${escapeRecalled(skill.meta.when_to_use)}`, '', '## Procedure', skill.declarative.trim())
  if (skill.chunks?.trim()) parts.push('', '## Recipes', skill.chunks.trim())
  if (skill.codeFiles.length > 0) parts.push('', `## Helper code (in ${skill.dir}/code)`, ...skill.codeFiles.map((file) => `- ${file}`))
  return parts.join('\n')
}
