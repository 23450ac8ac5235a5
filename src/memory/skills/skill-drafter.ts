/**
 * Drafting a skill: from recent activity with the LLM (Anton's `/skill save`: the model reads
 * what just happened and writes the procedure), or offline from a markdown file a person wrote.
 */
import { z } from 'zod'
import { ACTIVITY_LABELS } from '../../core/activity.ts'
import { EngramError, ErrorCode } from '../../core/errors.ts'
import { parseFrontmatter } from '../../core/frontmatter.ts'
import type { Llm } from '../../llm/contracts.ts'
import type { ActivityLog, ActivityRecord } from '../../storage/contracts.ts'
import { describeToolCall } from '../priming/activity-format.ts'
import { slugify } from './labels.ts'

/** What a draft holds before it gets a unique label and is saved. */
export interface SkillDraft {
  label: string
  name: string
  whenToUse: string
  declarative: string
}

/** The seed's `_SkillDraft`. */
export const skillDraftSchema = z.object({
  label: z.string().min(1).max(64).describe('snake_case identifier for the skill, e.g. "csv_summary".'),
  name: z.string().min(1).max(80).describe('Human-readable name, e.g. "CSV Summary".'),
  when_to_use: z.string().min(10).max(300).describe('One sentence: the kind of request this skill applies to. It is the retrieval cue.'),
  declarative_md: z
    .string()
    .min(20)
    .describe('The procedure as markdown: numbered steps someone can follow to do the same kind of task again, with the pitfalls met along the way. General, not tied to this one file or dataset.'),
})

/** Recent events read for a draft by default. */
export const DEFAULT_DRAFT_EVENTS = 50
const EVENT_TEXT_LIMIT = 400

function formatEvent(record: ActivityRecord): string {
  const label = ACTIVITY_LABELS[record.type] ?? record.type
  // A tool call as priming shows it: its input and how it ended (a call over MCP logs no content).
  const text = (record.type === 'tool_use' ? describeToolCall(record) : (record.summary ?? record.content ?? '')).replace(/\s+/g, ' ').trim()
  const tool = record.tool ? ` ${record.tool}` : ''
  return `${record.ts} ${label}${tool}: ${text.length > EVENT_TEXT_LIMIT ? `${text.slice(0, EVENT_TEXT_LIMIT)}…` : text}`
}

/**
 * Ask the model to draft a skill from the last `events` activity events (chronological in the
 * prompt). Throws `llm_not_configured` offline (with the `--from` alternative), `invalid_argument`
 * when there is no activity, and the model's error when the call fails or the answer is invalid.
 */
export async function draftSkillFromActivity(options: { llm: Llm; activity: ActivityLog; events?: number; nameHint?: string; signal?: AbortSignal }): Promise<SkillDraft> {
  if (!options.llm.available) {
    throw new EngramError({
      code: ErrorCode.llmNotConfigured,
      category: 'user',
      message: 'Drafting a skill from recent activity needs an LLM, and none is configured.',
      fix: 'write the procedure in a markdown file and run `engram skills save --from FILE.md`, or configure a model with ENGRAM_LLM_PROVIDER (llm.provider) and ENGRAM_LLM_MODEL',
    })
  }
  const recent = await options.activity.read({ limit: options.events ?? DEFAULT_DRAFT_EVENTS })
  if (recent.length === 0) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: 'There is no recent activity to draft a skill from.',
      fix: 'do the task first (its tool calls and messages are logged), or save a skill written by hand with `engram skills save --from FILE.md`',
    })
  }
  const timeline = [...recent].reverse().map(formatEvent).join('\n')
  const hint = options.nameHint?.trim() ? `\nThe user calls this skill: "${options.nameHint.trim()}".` : ''
  const answer = await options.llm.generateObject({
    schema: skillDraftSchema,
    name: 'skill_draft',
    system:
      'You turn a successful piece of recent work into a reusable skill: a procedure the agent can follow the next time a similar request comes. Write it for the general case.',
    messages: [{ role: 'user', content: `Recent activity (oldest first):\n${timeline}${hint}` }],
    tier: 'planning',
    ...(options.signal ? { signal: options.signal } : {}),
  })
  return {
    label: slugify(options.nameHint?.trim() || answer.label),
    name: options.nameHint?.trim() || answer.name.trim(),
    whenToUse: answer.when_to_use.replace(/\s+/g, ' ').trim(),
    declarative: answer.declarative_md.trim(),
  }
}

/**
 * A draft from a markdown file written by hand. The name comes from `name` (the `--name` flag),
 * else frontmatter `name`, else the first `# heading`, else the file name; the cue from frontmatter
 * `when_to_use` (or `description`), else a `When to use: …` line. The rest is the procedure.
 * Throws `invalid_argument` naming what is missing.
 */
export function draftSkillFromMarkdown(text: string, options: { fileName: string; name?: string }): SkillDraft {
  const parsed = parseFrontmatter(text)
  if (parsed.problem) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${options.fileName}: ${parsed.problem.reason} (line ${parsed.problem.line}).`,
      fix: 'fix the YAML between the --- lines, or remove the frontmatter and put a "When to use: …" line in the text',
    })
  }
  const fm = parsed.frontmatter
  let body = parsed.body
  const str = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined)

  let whenToUse = str(fm.when_to_use) ?? str(fm.description)
  if (!whenToUse) {
    const cue = /^[ \t]*(?:\*\*)?when to use(?:\*\*)?[ \t]*:[ \t]*(.+)$/im.exec(body)
    if (cue?.[1]) {
      whenToUse = cue[1].replace(/\*\*/g, '').trim()
      body = body.replace(cue[0], '').replace(/\n{3,}/g, '\n\n')
    }
  }
  const heading = /^#[ \t]+(.+)$/m.exec(body)?.[1]?.trim()
  const baseName = options.fileName.replace(/^.*[\\/]/, '').replace(/\.(md|markdown)$/i, '')
  const name = options.name?.trim() || str(fm.name) || heading || baseName
  if (!whenToUse) {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${options.fileName} does not say when the skill applies.`,
      fix: 'add a line "When to use: <the kind of request this skill is for>" (or when_to_use in frontmatter) to the file',
    })
  }
  const declarative = body.trim()
  if (declarative === '') {
    throw new EngramError({
      code: ErrorCode.invalidArgument,
      category: 'user',
      message: `${options.fileName} has no procedure text.`,
      fix: 'write the steps of the procedure in the file, below the "When to use:" line',
    })
  }
  return { label: slugify(str(fm.label) ?? name), name, whenToUse: whenToUse.replace(/\s+/g, ' '), declarative }
}
