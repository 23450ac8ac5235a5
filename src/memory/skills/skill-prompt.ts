/**
 * How skills appear to the model: a compact list in every prompt (labels and cues only, ~50 tokens
 * per skill), and the full procedure only when `recall_skill` pulls it into working memory.
 */
import { countTokens, truncateToTokens } from '../../core/tokens.ts'
import type { Skill, SkillSummary } from './skill.ts'

/** Tokens one skill's line may take in the prompt (the seed's budget: ~50 per skill). */
export const SKILL_LINE_TOKENS = 50

/** Collapses line breaks and markdown headings so a cue cannot open a section of its own. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/^#+\s*/, '').trim()
}

/**
 * The `## Procedural memory` section: one line `- <label> — <when_to_use>` per skill, each within
 * ~50 tokens, plus how to retrieve one. Empty string when there are no skills (no empty section).
 */
export function compactSkillList(summaries: readonly SkillSummary[], options: { lineTokens?: number } = {}): string {
  if (summaries.length === 0) return ''
  const budget = options.lineTokens ?? SKILL_LINE_TOKENS
  const lines = summaries.map((summary) => {
    const prefix = `- ${summary.label} — `
    const cue = oneLine(summary.when_to_use)
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
  parts.push(`# Skill: ${skill.meta.name} (${skill.label})`, `When to use: ${oneLine(skill.meta.when_to_use)}`, '', '## Procedure', skill.declarative.trim())
  if (skill.chunks?.trim()) parts.push('', '## Recipes', skill.chunks.trim())
  if (skill.codeFiles.length > 0) parts.push('', `## Helper code (in ${skill.dir}/code)`, ...skill.codeFiles.map((file) => `- ${file}`))
  return parts.join('\n')
}
